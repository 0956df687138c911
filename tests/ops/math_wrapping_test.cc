// Signed integer overflow wraps around (two's complement) in every kernel
// that adds or multiplies integers, as TensorFlow's do: the element-wise
// ops, AddN, Sum/Prod (whole and along an axis) and Cumsum/Cumprod. The
// expected values come from unsigned arithmetic in this file. Under
// --config=asan UBSan also checks that no kernel overflows a signed type.
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Node;
using testing_util::RunOk;
using testing_util::Scalar;

template <typename T>
class WrappingTest : public ::testing::Test {};
using IntTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(WrappingTest, IntTypes);

template <typename T>
T Wrap(std::make_unsigned_t<T> u) {
  return static_cast<T>(u);
}

template <typename T>
using U = std::make_unsigned_t<T>;

// 37 values (more than a vector register holds, with a tail) near the top
// and bottom of T, so sums and products overflow.
template <typename T>
Tensor NearLimits(int sign) {
  std::vector<T> v;
  const T big = std::numeric_limits<T>::max() / 3;
  for (int i = 0; i < 37; ++i) v.push_back(static_cast<T>(sign * (big - i)));
  return MakeTensor<T>({37}, v);
}

template <typename T>
Tensor Map2(const Tensor& x, const Tensor& y, const std::function<T(T, T)>& f) {
  Tensor out(DataTypeToEnum<T>::value, x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    out.data<T>()[i] = f(x.data<T>()[i], y.data<T>()[i]);
  }
  return out;
}

TYPED_TEST(WrappingTest, ElementwiseOpsWrap) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = NearLimits<T>(1);
  const Tensor y = NearLimits<T>(-1);
  const auto add = [](T a, T b) { return Wrap<T>(U<T>(a) + U<T>(b)); };
  const auto sub = [](T a, T b) { return Wrap<T>(U<T>(a) - U<T>(b)); };
  const auto mul = [](T a, T b) { return Wrap<T>(U<T>(a) * U<T>(b)); };
  for (const char* op : {"Add", "AddV2"}) {
    ExpectTensorEqual(RunOk(Node(op, dt), {x, x}), Map2<T>(x, x, add));
  }
  ExpectTensorEqual(RunOk(Node("Sub", dt), {y, x}), Map2<T>(y, x, sub));
  ExpectTensorEqual(RunOk(Node("Mul", dt), {x, y}), Map2<T>(x, y, mul));
  ExpectTensorEqual(RunOk(Node("Square", dt), {x}), Map2<T>(x, x, mul));
  ExpectTensorEqual(RunOk(Node("SquaredDifference", dt), {x, y}),
                    Map2<T>(x, y, [&](T a, T b) {
                      const T d = sub(a, b);
                      return mul(d, d);
                    }));
  // A broadcast scalar takes the same path.
  const T top = std::numeric_limits<T>::max();
  ExpectTensorEqual(RunOk(Node("AddV2", dt), {x, Scalar<T>(top)}),
                    Map2<T>(x, Map2<T>(x, x, [&](T, T) { return top; }), add));
}

TYPED_TEST(WrappingTest, NegAndAbsOfTheMinimumAreTheMinimum) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const T min = std::numeric_limits<T>::min();
  const Tensor x = MakeTensor<T>({3}, {min, -5, 7});
  ExpectTensorEqual(RunOk(Node("Neg", dt), {x}), MakeTensor<T>({3}, {min, 5, -7}));
  ExpectTensorEqual(RunOk(Node("Abs", dt), {x}), MakeTensor<T>({3}, {min, 5, 7}));
}

TYPED_TEST(WrappingTest, AddNWraps) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = NearLimits<T>(1);
  Tensor expected = x;
  const auto add = [](T a, T b) { return Wrap<T>(U<T>(a) + U<T>(b)); };
  expected = Map2<T>(Map2<T>(x, x, add), x, add);
  ExpectTensorEqual(
      RunOk(Node("AddN", dt).Attr("N", 3), {x, x, x}), expected);
}

TYPED_TEST(WrappingTest, ReductionsWrap) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = NearLimits<T>(1);
  U<T> sum = 0, prod = 1;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    sum += U<T>(x.data<T>()[i]);
    prod *= U<T>(x.data<T>()[i]);
  }
  const Tensor axis0 = Scalar<int32_t>(0);
  ExpectTensorEqual(RunOk(Node("Sum", dt).Attr("keep_dims", false), {x, axis0}),
                    Scalar<T>(Wrap<T>(sum)));
  ExpectTensorEqual(RunOk(Node("Prod", dt).Attr("keep_dims", false), {x, axis0}),
                    Scalar<T>(Wrap<T>(prod)));
  // Along the outer axis of a [37, 2] matrix: rows accumulate into a row.
  std::vector<T> both;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    both.push_back(x.data<T>()[i]);
    both.push_back(x.data<T>()[i]);
  }
  const Tensor m = MakeTensor<T>({37, 2}, both);
  ExpectTensorEqual(RunOk(Node("Sum", dt).Attr("keep_dims", false), {m, axis0}),
                    MakeTensor<T>({2}, {Wrap<T>(sum), Wrap<T>(sum)}));
}

TYPED_TEST(WrappingTest, ScansWrap) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = NearLimits<T>(1);
  std::vector<T> sums, prods;
  U<T> sum = 0, prod = 1;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    sum += U<T>(x.data<T>()[i]);
    prod *= U<T>(x.data<T>()[i]);
    sums.push_back(Wrap<T>(sum));
    prods.push_back(Wrap<T>(prod));
  }
  const Tensor axis = Scalar<int32_t>(0);
  ExpectTensorEqual(RunOk(Node("Cumsum", dt), {x, axis}), MakeTensor<T>({37}, sums));
  ExpectTensorEqual(RunOk(Node("Cumprod", dt), {x, axis}),
                    MakeTensor<T>({37}, prods));
}

}  // namespace
}  // namespace weft
