// Transpose: fixed cases, aliasing, errors, and every permutation of random
// shapes up to rank 5 against a naive reference (all element sizes).
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Strings;
using testing_util::Vec;

NodeBuilder Transpose(DataType t) { return NodeBuilder("t", "Transpose").Attr("T", t); }

TEST(TransposeTest, Matrix) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunOk(Transpose(DT_FLOAT), {x, Vec<int32_t>({1, 0})});
  ExpectTensorEqual(out[0], MakeTensor<float>({3, 2}, {1, 4, 2, 5, 3, 6}));
  out = RunOk(Transpose(DT_FLOAT).Attr("Tperm", DT_INT64), {x, Vec<int64_t>({-0, 1})});
  EXPECT_TRUE(out[0].SharesBufferWith(x));  // identity permutation
}

TEST(TransposeTest, MovingOnlySizeOneDimsAliases) {
  Tensor x = MakeTensor<int32_t>({1, 4, 1}, {1, 2, 3, 4});
  auto out = RunOk(Transpose(DT_INT32), {x, Vec<int32_t>({2, 1, 0})});
  EXPECT_EQ(out[0].shape().DebugString(), "[1,4,1]");
  EXPECT_TRUE(out[0].SharesBufferWith(x));
}

TEST(TransposeTest, ScalarsStringsAndEmpty) {
  auto out = RunOk(Transpose(DT_DOUBLE), {Tensor::Scalar<double>(3), Vec<int32_t>({})});
  ExpectTensorEqual(out[0], Tensor::Scalar<double>(3));
  out = RunOk(Transpose(DT_STRING), {Strings({2, 2}, {"a", "b", "c", "d"}), Vec<int32_t>({1, 0})});
  ExpectTensorEqual(out[0], Strings({2, 2}, {"a", "c", "b", "d"}));
  out = RunOk(Transpose(DT_FLOAT), {MakeTensor<float>({0, 3}, {}), Vec<int32_t>({1, 0})});
  EXPECT_EQ(out[0].shape().DebugString(), "[3,0]");
}

TEST(TransposeTest, Errors) {
  Tensor x = MakeTensor<float>({2, 3}, {});
  EXPECT_STATUS(RunStatus(Transpose(DT_FLOAT), {x, Vec<int32_t>({0, 1, 2})}),
                absl::StatusCode::kInvalidArgument, "transpose expects a vector of size 2");
  EXPECT_STATUS(RunStatus(Transpose(DT_FLOAT), {x, Vec<int32_t>({0, 0})}),
                absl::StatusCode::kInvalidArgument, "0 is duplicated");
  EXPECT_STATUS(RunStatus(Transpose(DT_FLOAT), {x, Vec<int32_t>({0, 2})}),
                absl::StatusCode::kInvalidArgument, "2 is out of range [0 .. 2)");
  EXPECT_STATUS(RunStatus(Transpose(DT_FLOAT), {x, Vec<int32_t>({-1, 0})}),
                absl::StatusCode::kInvalidArgument, "out of range");
}

// Reference: out[i_0..i_r] = in[j] with j_{perm[k]} = i_k.
template <typename T>
Tensor NaiveTranspose(const Tensor& in, const std::vector<int32_t>& perm) {
  const int rank = in.dims();
  std::vector<int64_t> out_dims(rank);
  for (int k = 0; k < rank; ++k) out_dims[k] = in.dim_size(perm[k]);
  Tensor out(in.dtype(), TensorShape(out_dims));
  std::vector<int64_t> in_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * in.dim_size(d + 1);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    int64_t rest = i, src = 0;
    for (int k = rank - 1; k >= 0; --k) {
      idx[k] = rest % out_dims[k];
      rest /= out_dims[k];
      src += idx[k] * in_stride[perm[k]];
    }
    out.data<T>()[i] = in.data<T>()[src];
  }
  return out;
}

template <typename T>
void CheckAllPermutations(std::mt19937* rng, DataType dtype, int rank) {
  std::uniform_int_distribution<int> dim(1, rank >= 4 ? 4 : 9);
  std::vector<int64_t> dims(rank);
  for (int64_t& d : dims) d = dim(*rng);
  if (rank > 0) dims[rng->operator()() % rank] = 1;  // exercise dim dropping
  Tensor x(dtype, TensorShape(dims));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<T>()[i] = static_cast<T>(i * 7 + 1);
  std::vector<int32_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  do {
    auto out = RunOk(Transpose(dtype), {x, Vec<int32_t>(perm)});
    ASSERT_EQ(out.size(), 1u);
    ExpectTensorEqual(out[0], NaiveTranspose<T>(x, perm));
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(TransposeTest, AllPermutationsMatchReference) {
  std::mt19937 rng(1234);
  for (int rank = 1; rank <= 5; ++rank) {
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    CheckAllPermutations<float>(&rng, DT_FLOAT, rank);
    CheckAllPermutations<int64_t>(&rng, DT_INT64, rank);
    CheckAllPermutations<int8_t>(&rng, DT_INT8, rank);
  }
  CheckAllPermutations<double>(&rng, DT_DOUBLE, 3);
  CheckAllPermutations<int16_t>(&rng, DT_INT16, 3);
}

TEST(TransposeTest, LargeMatrixUsesBlockedPath) {
  const int64_t rows = 257, cols = 130;
  Tensor x(DT_FLOAT, TensorShape({rows, cols}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = static_cast<float>(i);
  auto out = RunOk(Transpose(DT_FLOAT), {x, Vec<int32_t>({1, 0})});
  ExpectTensorEqual(out[0], NaiveTranspose<float>(x, {1, 0}));
  // NHWC -> NCHW: a batch of 2-D transposes after merging H and W.
  Tensor y(DT_FLOAT, TensorShape({2, 5, 7, 3}));
  for (int64_t i = 0; i < y.NumElements(); ++i) y.data<float>()[i] = static_cast<float>(i);
  out = RunOk(Transpose(DT_FLOAT), {y, Vec<int32_t>({0, 3, 1, 2})});
  ExpectTensorEqual(out[0], NaiveTranspose<float>(y, {0, 3, 1, 2}));
}

}  // namespace
}  // namespace weft
