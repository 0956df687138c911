// What each element-wise op computes, as functors over Eigen array
// expressions (see cwise_ops.h for the kernels that apply them).
//
// Semantics follow TensorFlow's CPU kernels: Maximum/Minimum and Max
// propagate NaN; Div on integers truncates (C) and FloorDiv floors;
// integer division by zero is an INVALID_ARGUMENT error, and INT_MIN / -1
// wraps instead of trapping; Round rounds half to even; Sign(NaN) is NaN.
//
// kCost is roughly the cycles one element takes; it decides when a kernel
// is worth sharding over threads.
#ifndef WEFT_OPS_CPU_CWISE_FUNCTORS_H_
#define WEFT_OPS_CPU_CWISE_FUNCTORS_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <Eigen/Core>  // before the EIGEN_VECTORIZE_* tests below

#include "absl/status/status.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/ieee_sqrt.h"
#include "ops/cpu/wrapping.h"

namespace weft {
namespace functor {

// ---- Arithmetic ------------------------------------------------------------
// Signed integers wrap on overflow, as in TensorFlow (wrapping.h).

struct Add : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return WrapAdd(x, y); }
};

struct Sub : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return WrapSub(x, y); }
};

struct Mul : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return WrapMul(x, y); }
};

// Floating-point division (RealDiv; Div on floats).
struct Div : BinaryFunctorBase {
  static constexpr int kCost = 4;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return x / y; }
};

struct SquaredDifference : BinaryFunctorBase {
  static constexpr int kCost = 2;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    const auto d = WrapSub(x, y);
    return WrapMul(d, d);
  }
};

// Maximum/Minimum: NaN in either operand gives NaN (as TensorFlow).
struct Maximum : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    using T = typename X::Scalar;
    return x.binaryExpr(y, Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>());
  }
};

struct Minimum : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    using T = typename X::Scalar;
    return x.binaryExpr(y, Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN>());
  }
};

// floor, ceil and rint (half to even) of an Eigen array expression, with
// IEEE results: ceil(-0.5) is -0. Eigen 3.4 emulates them on CPUs without
// SSE4.1's round instructions (the baseline x86-64 build), and its
// emulation returns +0 for -0 results; there the scalar functions run (a
// libm call each, which glibc itself runs with SSE4.1 where the CPU has it).
#if defined(EIGEN_VECTORIZE_SSE4_1) || !defined(EIGEN_VECTORIZE_SSE2)
template <typename X>
auto IeeeFloor(const X& x) { return x.floor(); }
template <typename X>
auto IeeeCeil(const X& x) { return x.ceil(); }
template <typename X>
auto IeeeRint(const X& x) { return x.rint(); }
#else
template <typename X>
auto IeeeFloor(const X& x) {
  using T = typename X::Scalar;
  return x.unaryExpr([](T v) { return std::floor(v); });
}
template <typename X>
auto IeeeCeil(const X& x) {
  using T = typename X::Scalar;
  return x.unaryExpr([](T v) { return std::ceil(v); });
}
template <typename X>
auto IeeeRint(const X& x) {
  using T = typename X::Scalar;
  return x.unaryExpr([](T v) { return std::nearbyint(v); });
}
#endif

// Floating-point FloorDiv: floor(x / y).
struct FloorDiv : BinaryFunctorBase {
  static constexpr int kCost = 5;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return IeeeFloor(x / y); }
};

template <typename T>
struct FloorModScalar {
  typedef T result_type;
  T operator()(const T& x, const T& y) const {
    const T r = std::fmod(x, y);
    return (r != 0 && ((y < 0) != (r < 0))) ? r + y : r;
  }
};

// Floating-point FloorMod: the remainder takes the sign of y.
struct FloorMod : BinaryFunctorBase {
  static constexpr int kCost = 20;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    return x.binaryExpr(y, FloorModScalar<typename X::Scalar>());
  }
};

struct Pow : BinaryFunctorBase {
  static constexpr int kCost = 30;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    using T = typename X::Scalar;
    return x.binaryExpr(y, Eigen::internal::scalar_pow_op<T, T>());
  }
};

// ---- Integer division and powers (signed types only) -----------------------

// Fails if y holds a zero: integer division by zero must not trap.
struct IntDivisorCheck {
  template <typename T>
  static absl::Status CheckInputs(const Tensor& y) {
    const T* p = y.data<T>();
    const int64_t n = y.NumElements();
    bool zero = false;
    for (int64_t i = 0; i < n; ++i) zero |= p[i] == 0;
    if (zero) return absl::InvalidArgumentError("Integer division by zero");
    return absl::OkStatus();
  }
};

template <typename T>
struct TruncDivScalar {
  typedef T result_type;
  T operator()(const T& x, const T& y) const {
    if constexpr (std::is_signed_v<T>) {
      if (y == T(-1)) return WrappingNeg(x);
    }
    return static_cast<T>(x / y);
  }
};

template <typename T>
struct FloorDivIntScalar {
  typedef T result_type;
  T operator()(const T& x, const T& y) const {
    if constexpr (!std::is_signed_v<T>) {
      return static_cast<T>(x / y);
    } else {
      if (y == -1) return WrappingNeg(x);
      const T q = x / y;
      const T r = x % y;
      return (r != 0 && ((r < 0) != (y < 0))) ? q - 1 : q;
    }
  }
};

template <typename T>
struct FloorModIntScalar {
  typedef T result_type;
  T operator()(const T& x, const T& y) const {
    if constexpr (!std::is_signed_v<T>) {
      return static_cast<T>(x % y);
    } else {
      if (y == -1) return 0;
      const T r = x % y;
      return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
    }
  }
};

// Div and TruncateDiv on integers: truncates toward zero, like C, for
// either signedness.
struct IntDiv : IntDivisorCheck {
  static constexpr int kCost = 12;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    return x.binaryExpr(y, TruncDivScalar<typename X::Scalar>());
  }
};

struct IntFloorDiv : IntDivisorCheck {
  static constexpr int kCost = 14;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    return x.binaryExpr(y, FloorDivIntScalar<typename X::Scalar>());
  }
};

struct IntFloorMod : IntDivisorCheck {
  static constexpr int kCost = 14;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    return x.binaryExpr(y, FloorModIntScalar<typename X::Scalar>());
  }
};

template <typename T>
struct IntPowScalar {
  typedef T result_type;
  T operator()(const T& x, const T& y) const {
    using U = std::make_unsigned_t<T>;
    U base = static_cast<U>(x), result = 1;
    for (T e = y; e > 0; e >>= 1) {
      if (e & 1) result *= base;
      base *= base;
    }
    return static_cast<T>(result);  // wraps on overflow, like TensorFlow
  }
};

struct IntPow {
  static constexpr int kCost = 20;
  template <typename T>
  static absl::Status CheckInputs(const Tensor& y) {
    const T* p = y.data<T>();
    bool negative = false;
    for (int64_t i = 0; i < y.NumElements(); ++i) negative |= p[i] < 0;
    if (negative) {
      return absl::InvalidArgumentError(
          "Integers to negative integer powers are not allowed");
    }
    return absl::OkStatus();
  }
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    return x.binaryExpr(y, IntPowScalar<typename X::Scalar>());
  }
};

// ---- Comparisons and logic (bool results) ----------------------------------

struct Greater : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return x > y; }
};
struct Less : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return x < y; }
};
struct GreaterEqual : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return x >= y; }
};
struct LessEqual : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return x <= y; }
};
struct Equal : BinaryFunctorBase {
  static constexpr int kCost = 1;
  static constexpr bool kIncompatible = false;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return x == y; }
};
struct NotEqual : BinaryFunctorBase {
  static constexpr int kCost = 1;
  static constexpr bool kIncompatible = true;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return x != y; }
};
struct LogicalAnd : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return x && y; }
};
struct LogicalOr : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) { return x || y; }
};

// ---- Gradients: (y, dy) for the op's output y ------------------------------

struct TanhGrad : BinaryFunctorBase {  // dy * (1 - y^2)
  static constexpr int kCost = 3;
  template <typename X, typename Y>
  static auto Apply(const X& y, const Y& dy) {
    using T = typename X::Scalar;
    return dy * (T(1) - y.square());
  }
};
struct SigmoidGrad : BinaryFunctorBase {  // dy * y * (1 - y)
  static constexpr int kCost = 3;
  template <typename X, typename Y>
  static auto Apply(const X& y, const Y& dy) {
    using T = typename X::Scalar;
    return dy * (y * (T(1) - y));
  }
};
// RsqrtGrad and SqrtGrad are 0 where dy is 0, whatever y (inf, NaN, 0),
// as TensorFlow's.
struct RsqrtGrad : BinaryFunctorBase {  // -0.5 * dy * y^3
  static constexpr int kCost = 5;
  template <typename X, typename Y>
  static auto Apply(const X& y, const Y& dy) {
    using T = typename X::Scalar;
    return (dy == T(0)).select(T(0), (y * y.square()) * dy * T(-0.5));
  }
};
struct SqrtGrad : BinaryFunctorBase {  // 0.5 * dy / y
  static constexpr int kCost = 6;
  template <typename X, typename Y>
  static auto Apply(const X& y, const Y& dy) {
    using T = typename X::Scalar;
    return (dy == T(0)).select(T(0), (dy * T(0.5)) / y);
  }
};
// ReluGrad(gradients, features): gradients where features > 0, else 0.
struct ReluGrad : BinaryFunctorBase {
  static constexpr int kCost = 2;
  template <typename X, typename Y>
  static auto Apply(const X& g, const Y& f) {
    using T = typename X::Scalar;
    return (f > T(0)).select(g, T(0));
  }
};

// ---- Unary -----------------------------------------------------------------

#define WEFT_UNARY_FUNCTOR(NAME, COST, EXPR)   \
  struct NAME {                                \
    static constexpr int kCost = COST;         \
    template <typename X>                      \
    static auto Apply(const X& x) {            \
      using T = typename X::Scalar;            \
      (void)sizeof(T);                         \
      return EXPR;                             \
    }                                          \
  }

// -INT_MIN and |INT_MIN| are INT_MIN, as in TensorFlow (wrapping.h).
WEFT_UNARY_FUNCTOR(Neg, 1, x.unaryExpr(WrappingNegOp<T>()));
WEFT_UNARY_FUNCTOR(Abs, 1, x.unaryExpr(WrappingAbsOp<T>()));
WEFT_UNARY_FUNCTOR(Square, 1, WrapMul(x, x));
WEFT_UNARY_FUNCTOR(Sqrt, 4, IeeeSqrt(x));  // correctly rounded (ieee_sqrt.h)
WEFT_UNARY_FUNCTOR(Rsqrt, 5, IeeeRsqrt(x));
WEFT_UNARY_FUNCTOR(Exp, 10, x.exp());
WEFT_UNARY_FUNCTOR(Log, 10, x.log());
WEFT_UNARY_FUNCTOR(Tanh, 12, x.tanh());
WEFT_UNARY_FUNCTOR(Sigmoid, 12, x.logistic());
WEFT_UNARY_FUNCTOR(Reciprocal, 4, x.inverse());
WEFT_UNARY_FUNCTOR(Floor, 1, IeeeFloor(x));
WEFT_UNARY_FUNCTOR(Ceil, 1, IeeeCeil(x));
WEFT_UNARY_FUNCTOR(Round, 1, IeeeRint(x));  // half to even
WEFT_UNARY_FUNCTOR(Identity, 1, x);
WEFT_UNARY_FUNCTOR(LogicalNot, 1, !x);
// max(x, 0), keeping NaN (as TensorFlow).
WEFT_UNARY_FUNCTOR(Relu, 1,
                   x.binaryExpr(EigenArray<T>::Zero(x.size()),
                                (Eigen::internal::scalar_max_op<
                                    T, T, Eigen::PropagateNaN>())));
// WEFT_UNARY_FUNCTOR stays defined for math_cwise_functors.h and
// math_special_kernels.cc.

template <typename T>
struct SignScalar {
  typedef T result_type;
  T operator()(const T& x) const {
    if (x > T(0)) return T(1);
    if (x < T(0)) return T(-1);
    return x == T(0) ? T(0) : x;  // +0 for +-0; NaN stays NaN
  }
};
struct Sign {
  static constexpr int kCost = 2;
  template <typename X>
  static auto Apply(const X& x) {
    return x.unaryExpr(SignScalar<typename X::Scalar>());
  }
};

}  // namespace functor
}  // namespace weft

#endif  // WEFT_OPS_CPU_CWISE_FUNCTORS_H_
