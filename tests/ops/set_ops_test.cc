// The set kernels' error paths and edge cases (values are checked against
// TensorFlow by tests/conformance/set_fused_ops_test): mismatched ranks and
// group shapes, bad sparse operands (out of range, unsorted or repeated
// with validate_indices, malformed shapes) and bad attrs give
// INVALID_ARGUMENT naming the input; nothing aborts.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::RunAll;
using testing_util::RunStatus;

NodeBuilder SetOp(const std::string& op, const std::string& which,
                  DataType t = DT_INT32, bool validate = true) {
  return NodeBuilder("n", op).Attr("T", t).Attr("set_operation", which)
      .Attr("validate_indices", validate);
}

Tensor I64(const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  return MakeTensor<int64_t>(dims, v);
}

Tensor I32(const std::vector<int64_t>& dims, const std::vector<int32_t>& v) {
  return MakeTensor<int32_t>(dims, v);
}

void ExpectInvalid(const absl::Status& s, const std::string& text) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find(text), std::string::npos) << s;
}

TEST(SetOpsTest, DenseToDenseUnionSortedPerRow) {
  const std::vector<Tensor> out = RunAll(
      SetOp("DenseToDenseSetOperation", "union"),
      {I32({2, 3}, {3, 1, 3, 9, 9, 9}), I32({2, 2}, {2, 1, 9, 9})});
  ExpectTensorEqual(out[0], I64({4, 2}, {0, 0, 0, 1, 0, 2, 1, 0}));
  ExpectTensorEqual(out[1], I32({4}, {1, 2, 3, 9}));
  ExpectTensorEqual(out[2], I64({2}, {2, 3}));
}

TEST(SetOpsTest, EachOperation) {
  const Tensor a = I32({1, 4}, {4, 2, 1, 2});
  const Tensor b = I32({1, 3}, {2, 5, 4});
  struct Case {
    const char* op;
    std::vector<int32_t> want;
  };
  for (const Case& k : {Case{"a-b", {1}}, Case{"b-a", {5}},
                        Case{"intersection", {2, 4}},
                        Case{"UNION", {1, 2, 4, 5}}}) {
    const std::vector<Tensor> out =
        RunAll(SetOp("DenseToDenseSetOperation", k.op), {a, b});
    const int64_t n = static_cast<int64_t>(k.want.size());
    ExpectTensorEqual(out[1], I32({n}, k.want));
    ExpectTensorEqual(out[2], I64({2}, {1, n}));
  }
}

TEST(SetOpsTest, EmptyGroupsAndEmptyResult) {
  const std::vector<Tensor> out =
      RunAll(SetOp("DenseToDenseSetOperation", "intersection"),
             {I32({2, 0}, {}), I32({2, 1}, {1, 2})});
  EXPECT_EQ(out[0].shape(), TensorShape({0, 2}));
  ExpectTensorEqual(out[2], I64({2}, {2, 0}));
  const std::vector<Tensor> none =
      RunAll(SetOp("DenseToDenseSetOperation", "union"),
             {I32({0, 3}, {}), I32({0, 2}, {})});
  ExpectTensorEqual(none[2], I64({2}, {0, 0}));
}

TEST(SetOpsTest, StringsSortBytewise) {
  const std::vector<Tensor> out = RunAll(
      SetOp("DenseToDenseSetOperation", "union", DT_STRING),
      {MakeTensor<std::string>({1, 2}, {"b", "\xff"}),
       MakeTensor<std::string>({1, 2}, {"", "ab"})});
  ExpectTensorEqual(out[1],
                    MakeTensor<std::string>({4}, {"", "ab", "b", "\xff"}));
}

TEST(SetOpsTest, DenseToDenseShapeErrors) {
  ExpectInvalid(RunStatus(SetOp("DenseToDenseSetOperation", "union"),
                          {I32({3}, {1, 2, 3}), I32({1, 3}, {1, 2, 3})}),
                "Shape [3] has rank 1 < 2 (input set1)");
  ExpectInvalid(RunStatus(SetOp("DenseToDenseSetOperation", "union"),
                          {I32({2, 1}, {1, 2}), I32({3, 1}, {1, 2, 3})}),
                "Mismatched shapes [2] vs [3]");
  ExpectInvalid(RunStatus(SetOp("DenseToDenseSetOperation", "union"),
                          {I32({1, 1, 1}, {1}), I32({1, 1}, {1})}),
                "Mismatched shapes [1,1] vs [1]");
}

TEST(SetOpsTest, BadSetOperation) {
  ExpectInvalid(RunStatus(SetOp("DenseToDenseSetOperation", "xor"),
                          {I32({1, 1}, {1}), I32({1, 1}, {1})}),
                "Invalid set_operation xor.");
}

TEST(SetOpsTest, DenseToSparse) {
  // set2 = [[5, _], [_, _], [1, 2]] as a SparseTensor.
  const std::vector<Tensor> out = RunAll(
      SetOp("DenseToSparseSetOperation", "a-b"),
      {I32({3, 2}, {5, 6, 7, 7, 1, 3}), I64({3, 2}, {0, 0, 2, 0, 2, 1}),
       I32({3}, {5, 1, 2}), I64({2}, {3, 2})});
  ExpectTensorEqual(out[0], I64({3, 2}, {0, 0, 1, 0, 2, 0}));
  ExpectTensorEqual(out[1], I32({3}, {6, 7, 3}));
  ExpectTensorEqual(out[2], I64({2}, {3, 1}));
}

TEST(SetOpsTest, SparseIndexErrorsNameTheInput) {
  const Tensor dense = I32({2, 2}, {1, 2, 3, 4});
  auto run = [&](const Tensor& ix, const Tensor& shape, bool validate) {
    return RunStatus(
        SetOp("DenseToSparseSetOperation", "union", DT_INT32, validate),
        {dense, ix, I32({2}, {1, 2}), shape});
  };
  const Tensor shape = I64({2}, {2, 3});
  ExpectInvalid(run(I64({2, 2}, {0, 0, 2, 0}), shape, true),
                "indices[1] = [2,0] is out of bounds: need 0 <= index < [2,3] "
                "(input set2_indices)");
  ExpectInvalid(run(I64({2, 2}, {0, 0, 0, -1}), shape, false),
                "is out of bounds");
  ExpectInvalid(run(I64({2, 2}, {1, 0, 0, 0}), shape, true),
                "indices[1] = [0,0] is out of order");
  ExpectInvalid(run(I64({2, 2}, {0, 1, 0, 1}), shape, true),
                "indices[1] = [0,1] is repeated");
  EXPECT_TRUE(run(I64({2, 2}, {0, 1, 0, 1}), shape, false).ok());
  ExpectInvalid(run(I64({2, 2}, {0, 0, 0, 1}), I64({2}, {3, 3}), true),
                "Mismatched shapes [2] vs [3]");
  ExpectInvalid(run(I64({2, 2}, {0, 0, 0, 1}), I64({2}, {2, -3}), true),
                "(input set2_shape)");
  ExpectInvalid(run(I64({2, 2}, {0, 0, 0, 1}), I64({1, 2}, {2, 3}), true),
                "Shape must be a 1D tensor");
  ExpectInvalid(run(I64({2, 2}, {0, 0, 0, 1}), I64({3}, {2, 3, 1}), true),
                "Index rank must be SparseTensor rank");
  ExpectInvalid(run(I64({2}, {0, 0}), shape, true), "(input set2_indices)");
  ExpectInvalid(
      RunStatus(SetOp("DenseToSparseSetOperation", "union"),
                {dense, I64({1, 2}, {0, 0}), I32({2}, {1, 2}), shape}),
      "indices and values rows (indexing dimension) must match");
}

TEST(SetOpsTest, SparseToSparseMergesGroups) {
  // set1 rows 0 and 2, set2 rows 1 and 2; shape [3, 4].
  const std::vector<Tensor> out = RunAll(
      SetOp("SparseToSparseSetOperation", "union"),
      {I64({2, 2}, {0, 0, 2, 3}), I32({2}, {8, 4}), I64({2}, {3, 4}),
       I64({2, 2}, {1, 1, 2, 0}), I32({2}, {7, 4}), I64({2}, {3, 2})});
  ExpectTensorEqual(out[0], I64({3, 2}, {0, 0, 1, 0, 2, 0}));
  ExpectTensorEqual(out[1], I32({3}, {8, 7, 4}));
  ExpectTensorEqual(out[2], I64({2}, {3, 1}));
  ExpectInvalid(
      RunStatus(SetOp("SparseToSparseSetOperation", "union"),
                {I64({1, 2}, {0, 0}), I32({1}, {1}), I64({1}, {3}),
                 I64({1, 2}, {0, 0}), I32({1}, {1}), I64({2}, {3, 2})}),
      "Invalid rank 1. (input set1_shape)");
}

TEST(SetOpsTest, SetSize) {
  const std::vector<Tensor> out = RunAll(
      NodeBuilder("n", "SetSize").Attr("T", DT_INT64),
      {I64({4, 3}, {0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1}),
       I64({4}, {7, 7, 3, 3}), I64({3}, {2, 2, 5})});
  ExpectTensorEqual(out[0], I32({2, 2}, {1, 1, 0, 1}));
  ExpectInvalid(
      RunStatus(NodeBuilder("n", "SetSize").Attr("T", DT_INT64),
                {I64({1, 2}, {0, 9}), I64({1}, {1}), I64({2}, {2, 2})}),
      "(input set_indices)");
}

}  // namespace
}  // namespace weft
