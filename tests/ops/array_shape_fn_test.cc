// Shape functions of the array, state, control-flow and random ops.
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_registry.h"
#include "ops/framework/shape_inference.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::Scalar;
using testing_util::Vec;

// Runs the op's shape function; returns the outputs' DebugStrings joined by
// ";", or the error.
absl::StatusOr<std::string> Infer(const NodeBuilder& builder, std::vector<PartialShape> inputs,
                                  std::vector<const Tensor*> constants = {}) {
  tensorflow::NodeDef node = builder.Build();
  absl::StatusOr<const OpRegistration*> reg = GlobalOpRegistry().LookUp(node.op());
  if (!reg.ok()) return reg.status();
  AddDefaultsToNodeDef((*reg)->op_def, &node);
  DataTypeVector in_types, out_types;
  absl::Status s = InOutTypesForNode(node, (*reg)->op_def, &in_types, &out_types);
  if (!s.ok()) return s;
  if (in_types.size() != inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("test gave ", inputs.size(), " input shapes for ",
                                                   in_types.size(), " inputs"));
  }
  constants.resize(inputs.size(), nullptr);
  InferenceContext c(node, std::move(inputs), std::move(constants), in_types,
                     static_cast<int>(out_types.size()));
  s = (*reg)->shape_fn(&c);
  if (!s.ok()) return s;
  std::vector<std::string> out;
  for (int i = 0; i < c.num_outputs(); ++i) out.push_back(c.output(i).DebugString());
  return absl::StrJoin(out, ";");
}

#define EXPECT_SHAPES(expr, expected)              \
  do {                                             \
    absl::StatusOr<std::string> got_ = (expr);     \
    ASSERT_TRUE(got_.ok()) << got_.status();       \
    EXPECT_EQ(*got_, expected);                    \
  } while (0)

const PartialShape kUnknown = PartialShape::UnknownRank();

TEST(ArrayShapeFnTest, ConstPlaceholderIdentity) {
  EXPECT_SHAPES(Infer(NodeBuilder("c", "Const").Attr("dtype", DT_FLOAT).Attr(
                          "value", MakeTensor<float>({2, 3}, {})),
                      {}),
                "[2,3]");
  EXPECT_SHAPES(Infer(NodeBuilder("p", "Placeholder").Attr("dtype", DT_FLOAT).ShapeAttr("shape", {-1, 3}), {}),
                "[?,3]");
  EXPECT_SHAPES(Infer(NodeBuilder("p", "Placeholder").Attr("dtype", DT_FLOAT), {}), "<unknown>");
  EXPECT_SHAPES(Infer(NodeBuilder("p", "PlaceholderWithDefault").Attr("dtype", DT_FLOAT).ShapeAttr("shape", {-1}),
                      {PartialShape({4})}),
                "[?]");
  EXPECT_FALSE(Infer(NodeBuilder("p", "PlaceholderWithDefault").Attr("dtype", DT_FLOAT).ShapeAttr("shape", {3}),
                     {PartialShape({4})})
                   .ok());
  EXPECT_SHAPES(Infer(NodeBuilder("i", "Identity").Attr("T", DT_FLOAT), {PartialShape({-1, 2})}), "[?,2]");
  EXPECT_SHAPES(Infer(NodeBuilder("i", "IdentityN").Attr("T", DataTypeVector{DT_FLOAT, DT_INT32}),
                      {PartialShape({1}), PartialShape({})}),
                "[1];[]");
}

TEST(ArrayShapeFnTest, Reshape) {
  Tensor target = Vec<int32_t>({-1, 3});
  EXPECT_SHAPES(Infer(NodeBuilder("r", "Reshape").Attr("T", DT_FLOAT), {PartialShape({2, 6}), PartialShape({2})},
                      {nullptr, &target}),
                "[4,3]");
  EXPECT_SHAPES(Infer(NodeBuilder("r", "Reshape").Attr("T", DT_FLOAT), {PartialShape({-1, 6}), PartialShape({2})},
                      {nullptr, &target}),
                "[?,3]");
  EXPECT_SHAPES(Infer(NodeBuilder("r", "Reshape").Attr("T", DT_FLOAT), {PartialShape({2, 6}), PartialShape({3})}),
                "[?,?,?]");
  Tensor bad = Vec<int32_t>({5});
  absl::StatusOr<std::string> s = Infer(NodeBuilder("r", "Reshape").Attr("T", DT_FLOAT),
                                        {PartialShape({2, 3}), PartialShape({1})}, {nullptr, &bad});
  EXPECT_STATUS(s.status(), absl::StatusCode::kInvalidArgument,
                "cannot reshape a tensor of shape [2,3] (6 elements) to shape [5]");
  // Claimed sizes whose product passes int64 are errors, not overflows
  // (found by the shape_inference fuzzer).
  Tensor huge = Vec<int64_t>({int64_t{1} << 40, int64_t{1} << 40});
  s = Infer(NodeBuilder("r", "Reshape").Attr("T", DT_FLOAT).Attr("Tshape", DT_INT64),
            {PartialShape({2, 3}), PartialShape({2})}, {nullptr, &huge});
  EXPECT_STATUS(s.status(), absl::StatusCode::kInvalidArgument,
                "shape [1099511627776,1099511627776] has more than 2^63 elements");
  Tensor two = Vec<int32_t>({-1, 2});
  s = Infer(NodeBuilder("r", "Reshape").Attr("T", DT_FLOAT),
            {PartialShape({int64_t{1} << 40, int64_t{1} << 40}), PartialShape({2})},
            {nullptr, &two});
  EXPECT_FALSE(s.ok());
}

TEST(ArrayShapeFnTest, ShapeSizeRankFill) {
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Shape").Attr("T", DT_FLOAT), {PartialShape({-1, 2, 3})}), "[3]");
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Shape").Attr("T", DT_FLOAT), {kUnknown}), "[?]");
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Size").Attr("T", DT_FLOAT), {kUnknown}), "[]");
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Rank").Attr("T", DT_FLOAT), {kUnknown}), "[]");
  Tensor dims = Vec<int32_t>({2, 5});
  EXPECT_SHAPES(Infer(NodeBuilder("f", "Fill").Attr("T", DT_FLOAT), {PartialShape({2}), PartialShape({})},
                      {&dims, nullptr}),
                "[2,5]");
  EXPECT_SHAPES(Infer(NodeBuilder("f", "Fill").Attr("T", DT_FLOAT), {PartialShape({2}), PartialShape({})}),
                "[?,?]");
  EXPECT_FALSE(Infer(NodeBuilder("f", "Fill").Attr("T", DT_FLOAT), {PartialShape({2}), PartialShape({2})}).ok());
}

TEST(ArrayShapeFnTest, ExpandDimsSqueezeTranspose) {
  Tensor dim = Scalar<int32_t>(-1);
  EXPECT_SHAPES(Infer(NodeBuilder("e", "ExpandDims").Attr("T", DT_FLOAT), {PartialShape({2, -1}), PartialShape({})},
                      {nullptr, &dim}),
                "[2,?,1]");
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Squeeze").Attr("T", DT_FLOAT), {PartialShape({1, 2, 1})}), "[2]");
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Squeeze").Attr("T", DT_FLOAT), {PartialShape({1, -1})}), "<unknown>");
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Squeeze").Attr("T", DT_FLOAT).Attr("squeeze_dims", std::vector<int64_t>{0}),
                      {PartialShape({-1, -1})}),
                "[?]");
  EXPECT_FALSE(Infer(NodeBuilder("s", "Squeeze").Attr("T", DT_FLOAT).Attr("squeeze_dims", std::vector<int64_t>{0}),
                     {PartialShape({3})})
                   .ok());
  Tensor perm = Vec<int32_t>({2, 0, 1});
  EXPECT_SHAPES(Infer(NodeBuilder("t", "Transpose").Attr("T", DT_FLOAT), {PartialShape({2, -1, 4}), PartialShape({3})},
                      {nullptr, &perm}),
                "[4,2,?]");
  EXPECT_SHAPES(Infer(NodeBuilder("t", "Transpose").Attr("T", DT_FLOAT), {PartialShape({2, 3}), PartialShape({2})}),
                "[?,?]");
}

TEST(ArrayShapeFnTest, ConcatPackUnpackSplit) {
  Tensor axis = Scalar<int32_t>(-1);
  EXPECT_SHAPES(Infer(NodeBuilder("c", "ConcatV2").Attr("T", DT_FLOAT).Attr("N", 2),
                      {PartialShape({2, 3}), PartialShape({-1, 4}), PartialShape({})}, {nullptr, nullptr, &axis}),
                "[2,7]");
  EXPECT_SHAPES(Infer(NodeBuilder("c", "ConcatV2").Attr("T", DT_FLOAT).Attr("N", 2),
                      {PartialShape({2, 3}), kUnknown, PartialShape({})}),
                "[?,?]");
  EXPECT_FALSE(Infer(NodeBuilder("c", "ConcatV2").Attr("T", DT_FLOAT).Attr("N", 2),
                     {PartialShape({2, 3}), PartialShape({3, 3}), PartialShape({})}, {nullptr, nullptr, &axis})
                   .ok());
  EXPECT_SHAPES(Infer(NodeBuilder("p", "Pack").Attr("T", DT_FLOAT).Attr("N", 3).Attr("axis", 1),
                      {PartialShape({2}), PartialShape({-1}), kUnknown}),
                "[2,3]");
  EXPECT_SHAPES(Infer(NodeBuilder("u", "Unpack").Attr("T", DT_FLOAT).Attr("num", 2).Attr("axis", -1),
                      {PartialShape({3, 2})}),
                "[3];[3]");
  Tensor split_dim = Scalar<int32_t>(1);
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Split").Attr("T", DT_FLOAT).Attr("num_split", 2),
                      {PartialShape({}), PartialShape({5, 4})}, {&split_dim, nullptr}),
                "[5,2];[5,2]");
  Tensor sizes = Vec<int64_t>({1, -1});
  EXPECT_SHAPES(Infer(NodeBuilder("s", "SplitV").Attr("T", DT_FLOAT).Attr("num_split", 2),
                      {PartialShape({5, 4}), PartialShape({2}), PartialShape({})}, {nullptr, &sizes, &split_dim}),
                "[5,1];[5,3]");
}

TEST(ArrayShapeFnTest, TileSlicePadGather) {
  Tensor multiples = Vec<int32_t>({2, 3});
  EXPECT_SHAPES(Infer(NodeBuilder("t", "Tile").Attr("T", DT_FLOAT), {PartialShape({-1, 2}), PartialShape({2})},
                      {nullptr, &multiples}),
                "[?,6]");
  Tensor begin = Vec<int32_t>({1, 0});
  Tensor size = Vec<int32_t>({2, -1});
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Slice").Attr("T", DT_FLOAT).Attr("Index", DT_INT32),
                      {PartialShape({4, 5}), PartialShape({2}), PartialShape({2})}, {nullptr, &begin, &size}),
                "[2,5]");
  Tensor pads = MakeTensor<int32_t>({2, 2}, {1, 1, 0, 2});
  EXPECT_SHAPES(Infer(NodeBuilder("p", "Pad").Attr("T", DT_FLOAT), {PartialShape({3, -1}), PartialShape({2, 2})},
                      {nullptr, &pads}),
                "[5,?]");
  Tensor axis = Scalar<int32_t>(1);
  EXPECT_SHAPES(Infer(NodeBuilder("g", "GatherV2").Attr("Tparams", DT_FLOAT).Attr("Tindices", DT_INT32).Attr("Taxis", DT_INT32),
                      {PartialShape({4, 5, 6}), PartialShape({7, 8}), PartialShape({})}, {nullptr, nullptr, &axis}),
                "[4,7,8,6]");
  Tensor depth = Scalar<int32_t>(10);
  EXPECT_SHAPES(Infer(NodeBuilder("o", "OneHot").Attr("T", DT_FLOAT),
                      {PartialShape({3}), PartialShape({}), PartialShape({}), PartialShape({})},
                      {nullptr, &depth, nullptr, nullptr}),
                "[3,10]");
}

TEST(ArrayShapeFnTest, SelectRangeBroadcast) {
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Select").Attr("T", DT_FLOAT),
                      {PartialShape({2}), PartialShape({2, -1}), PartialShape({-1, 3})}),
                "[2,3]");
  EXPECT_FALSE(Infer(NodeBuilder("s", "Select").Attr("T", DT_FLOAT),
                     {PartialShape({3}), PartialShape({2, 3}), PartialShape({2, 3})})
                   .ok());
  EXPECT_SHAPES(Infer(NodeBuilder("s", "SelectV2").Attr("T", DT_FLOAT),
                      {PartialShape({2, 1}), PartialShape({3}), PartialShape({})}),
                "[2,3]");
  Tensor start = Scalar<int32_t>(1), limit = Scalar<int32_t>(10), delta = Scalar<int32_t>(4);
  EXPECT_SHAPES(Infer(NodeBuilder("r", "Range"), {PartialShape({}), PartialShape({}), PartialShape({})},
                      {&start, &limit, &delta}),
                "[3]");
  EXPECT_SHAPES(Infer(NodeBuilder("r", "Range"), {PartialShape({}), PartialShape({}), PartialShape({})}), "[?]");
  // A NaN bound or a length no tensor can have is left to the kernel.
  Tensor nan = Scalar(std::numeric_limits<float>::quiet_NaN()), one = Scalar(1.0f);
  EXPECT_SHAPES(Infer(NodeBuilder("r", "Range").Attr("Tidx", DT_FLOAT),
                      {PartialShape({}), PartialShape({}), PartialShape({})},
                      {&nan, &one, &one}),
                "[?]");
  Tensor lo = Scalar<int64_t>(INT64_MIN), hi = Scalar<int64_t>(INT64_MAX),
         step = Scalar<int64_t>(1);
  EXPECT_SHAPES(Infer(NodeBuilder("r", "Range").Attr("Tidx", DT_INT64),
                      {PartialShape({}), PartialShape({}), PartialShape({})},
                      {&lo, &hi, &step}),
                "[?]");
  Tensor shape = Vec<int32_t>({4, 3});
  EXPECT_SHAPES(Infer(NodeBuilder("b", "BroadcastTo").Attr("T", DT_FLOAT), {PartialShape({3}), PartialShape({2})},
                      {nullptr, &shape}),
                "[4,3]");
  EXPECT_FALSE(Infer(NodeBuilder("b", "BroadcastTo").Attr("T", DT_FLOAT), {PartialShape({2}), PartialShape({2})},
                     {nullptr, &shape})
                   .ok());
  EXPECT_SHAPES(Infer(NodeBuilder("b", "BroadcastGradientArgs"), {PartialShape({2}), PartialShape({1})}), "[?];[?]");
}

struct Case {
  std::vector<int32_t> begin, end, strides;
  std::vector<int64_t> masks;
  std::vector<int64_t> shape;
  bool error;
  std::vector<int32_t> values;
};

const Case kCases[] = {
#include "tests/ops/array_strided_slice_cases.inc"
};

TEST(ArrayShapeFnTest, StridedSliceAgreesWithTensorFlowsOutputs) {
  int checked = 0;
  for (const Case& c : kCases) {
    if (c.error) continue;
    Tensor b = Vec(c.begin), e = Vec(c.end), s = Vec(c.strides);
    auto node = NodeBuilder("ss", "StridedSlice")
                    .Attr("T", DT_INT32)
                    .Attr("Index", DT_INT32)
                    .Attr("begin_mask", c.masks[0])
                    .Attr("end_mask", c.masks[1])
                    .Attr("ellipsis_mask", c.masks[2])
                    .Attr("new_axis_mask", c.masks[3])
                    .Attr("shrink_axis_mask", c.masks[4]);
    const PartialShape index({static_cast<int64_t>(c.begin.size())});
    absl::StatusOr<std::string> got =
        Infer(node, {PartialShape({3, 4, 5}), index, index, index}, {nullptr, &b, &e, &s});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, TensorShape(c.shape).DebugString())
        << "begin [" << absl::StrJoin(c.begin, ",") << "] end [" << absl::StrJoin(c.end, ",")
        << "] strides [" << absl::StrJoin(c.strides, ",") << "] masks ["
        << absl::StrJoin(c.masks, ",") << "]";
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

TEST(StateShapeFnTest, Variables) {
  EXPECT_SHAPES(Infer(NodeBuilder("v", "VariableV2").Attr("dtype", DT_FLOAT).ShapeAttr("shape", {2, 3}), {}), "[2,3]");
  EXPECT_SHAPES(Infer(NodeBuilder("a", "Assign").Attr("T", DT_FLOAT), {PartialShape({2, 3}), PartialShape({2, -1})}),
                "[2,3]");
  EXPECT_FALSE(Infer(NodeBuilder("a", "Assign").Attr("T", DT_FLOAT), {PartialShape({2, 3}), PartialShape({3})}).ok());
  EXPECT_SHAPES(Infer(NodeBuilder("a", "Assign").Attr("T", DT_FLOAT).Attr("validate_shape", false),
                      {PartialShape({2, 3}), PartialShape({3})}),
                "[3]");
  EXPECT_SHAPES(Infer(NodeBuilder("g", "ApplyGradientDescent").Attr("T", DT_FLOAT),
                      {PartialShape({2}), PartialShape({}), PartialShape({2})}),
                "[2]");
  EXPECT_SHAPES(Infer(NodeBuilder("h", "VarHandleOp").Attr("dtype", DT_FLOAT).ShapeAttr("shape", {2}), {}), "[]");
  EXPECT_SHAPES(Infer(NodeBuilder("i", "VarIsInitializedOp"), {PartialShape({})}), "[]");
}

TEST(ControlFlowShapeFnTest, SwitchMergeLoops) {
  EXPECT_SHAPES(Infer(NodeBuilder("s", "Switch").Attr("T", DT_FLOAT), {PartialShape({2, -1}), PartialShape({})}),
                "[2,?];[2,?]");
  EXPECT_FALSE(Infer(NodeBuilder("s", "Switch").Attr("T", DT_FLOAT), {PartialShape({2}), PartialShape({2})}).ok());
  EXPECT_SHAPES(Infer(NodeBuilder("m", "Merge").Attr("T", DT_FLOAT).Attr("N", 2),
                      {PartialShape({2, 3}), PartialShape({2, 4})}),
                "[2,?];[]");
  EXPECT_SHAPES(Infer(NodeBuilder("m", "Merge").Attr("T", DT_FLOAT).Attr("N", 2),
                      {PartialShape({2, 3}), PartialShape({2})}),
                "<unknown>;[]");
  EXPECT_SHAPES(Infer(NodeBuilder("e", "Enter").Attr("T", DT_FLOAT).Attr("frame_name", "f"), {PartialShape({7})}),
                "[7]");
  EXPECT_SHAPES(Infer(NodeBuilder("c", "LoopCond"), {PartialShape({})}), "[]");
}

TEST(RandomShapeFnTest, ShapeFromInput) {
  Tensor shape = Vec<int32_t>({3, 4});
  EXPECT_SHAPES(Infer(NodeBuilder("r", "RandomUniform").Attr("dtype", DT_FLOAT).Attr("T", DT_INT32),
                      {PartialShape({2})}, {&shape}),
                "[3,4]");
  EXPECT_SHAPES(Infer(NodeBuilder("r", "TruncatedNormal").Attr("dtype", DT_FLOAT).Attr("T", DT_INT32),
                      {PartialShape({2})}),
                "[?,?]");
}

}  // namespace
}  // namespace weft
