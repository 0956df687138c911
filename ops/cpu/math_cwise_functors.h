// What the element-wise ops of ops/math_cwise_ops.cc compute, as functors
// over Eigen array expressions (the form cwise_ops.h's UnaryOp / BinaryOp
// apply). The special functions (Erf, Lgamma, Igamma, ...) need Eigen's
// SpecialFunctions module and live in math_special_kernels.cc instead.
//
// Semantics are TensorFlow's CPU kernels': the Eigen array functions it uses
// (Eigen's vectorised sin, cos, tan, ... for float), Xlogy/Xdivy/Xlog1py
// 0 where x == 0, shifts with the amount clamped to [0, bits - 1] (signed
// right shifts arithmetic), TruncateDiv/TruncateMod on integers an error
// on a zero divisor and wrapping for INT_MIN / -1.
//
// Include only from ops/cpu/*.cc.
#ifndef WEFT_OPS_CPU_MATH_CWISE_FUNCTORS_H_
#define WEFT_OPS_CPU_MATH_CWISE_FUNCTORS_H_

#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"

namespace weft {
namespace functor {

WEFT_UNARY_FUNCTOR(Sin, 20, x.sin());
WEFT_UNARY_FUNCTOR(Cos, 20, x.cos());
WEFT_UNARY_FUNCTOR(Tan, 30, x.tan());
WEFT_UNARY_FUNCTOR(Asin, 30, x.asin());
WEFT_UNARY_FUNCTOR(Acos, 30, x.acos());
WEFT_UNARY_FUNCTOR(Atan, 30, x.atan());
WEFT_UNARY_FUNCTOR(Sinh, 30, x.sinh());
WEFT_UNARY_FUNCTOR(Cosh, 30, x.cosh());
WEFT_UNARY_FUNCTOR(Asinh, 40, x.asinh());
WEFT_UNARY_FUNCTOR(Acosh, 40, x.acosh());
WEFT_UNARY_FUNCTOR(Atanh, 40, x.atanh());
WEFT_UNARY_FUNCTOR(Expm1, 20, x.expm1());
WEFT_UNARY_FUNCTOR(Log1p, 20, x.log1p());
WEFT_UNARY_FUNCTOR(Rint, 1, IeeeRint(x));  // half to even
WEFT_UNARY_FUNCTOR(IsFinite, 1, x.isFinite());
WEFT_UNARY_FUNCTOR(IsNan, 1, x.isNaN());
WEFT_UNARY_FUNCTOR(IsInf, 1, x.isInf());
WEFT_UNARY_FUNCTOR(Invert, 1, x.unaryExpr([](T v) { return T(~v); }));

// The functions above that float, double and half all have, and the
// predicates (bool results), as lists: X(Name) for each, Name being both the
// functor and the op (math_unary_kernels.cc and math_half_kernels.cc
// register them from here).
#define WEFT_MATH_UNARY_FUNCTIONS(X)                                         \
  X(Sin) X(Cos) X(Tan) X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh)     \
  X(Acosh) X(Atanh) X(Expm1) X(Log1p)
#define WEFT_MATH_PREDICATES(X) X(IsFinite) X(IsNan) X(IsInf)

// PopulationCount: the set bits of the two's-complement pattern, as uint8.
struct PopulationCount {
  static constexpr int kCost = 2;
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return x.unaryExpr([](T v) {
      using U = std::make_unsigned_t<T>;
      return static_cast<uint8_t>(__builtin_popcountll(static_cast<U>(v)));
    });
  }
};

// Atan2(y, x), std::atan2 per element.
struct Atan2 : BinaryFunctorBase {
  static constexpr int kCost = 40;
  template <typename Y, typename X>
  static auto Apply(const Y& y, const X& x) {
    using T = typename X::Scalar;
    return y.binaryExpr(x, [](T a, T b) { return std::atan2(a, b); });
  }
};

// x op f(y), 0 wherever x == 0 (even where f(y) is inf or NaN).
#define WEFT_X_OP_Y(NAME, COST, EXPR)                       \
  struct NAME : BinaryFunctorBase {                         \
    static constexpr int kCost = COST;                      \
    template <typename X, typename Y>                       \
    static auto Apply(const X& x, const Y& y) {             \
      using T = typename X::Scalar;                         \
      return (x == T(0)).select(T(0), EXPR);                \
    }                                                       \
  }
WEFT_X_OP_Y(Xdivy, 5, x / y);
WEFT_X_OP_Y(Xlogy, 12, x * y.log());
WEFT_X_OP_Y(Xlog1py, 22, x * y.log1p());
#undef WEFT_X_OP_Y

// Floating-point TruncateDiv: x / y rounded toward zero.
struct TruncateDivReal : BinaryFunctorBase {
  static constexpr int kCost = 5;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    using T = typename X::Scalar;
    return (x / y).unaryExpr([](T v) { return std::trunc(v); });
  }
};

// Floating-point TruncateMod: fmod, the remainder with x's sign.
struct TruncateModReal : BinaryFunctorBase {
  static constexpr int kCost = 20;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    using T = typename X::Scalar;
    return x.binaryExpr(y, [](T a, T b) { return std::fmod(a, b); });
  }
};

// Integer x % y truncating (C's), any signedness; a signed INT_MIN % -1 is
// 0 instead of a trap. (x / y is cwise_functors.h's IntDiv.)
template <typename T>
struct TruncModAnyScalar {
  typedef T result_type;
  T operator()(const T& x, const T& y) const {
    if constexpr (std::is_signed_v<T>) {
      if (y == T(-1)) return T(0);
    }
    return static_cast<T>(x % y);
  }
};
struct TruncateModInt : IntDivisorCheck {
  static constexpr int kCost = 12;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    return x.binaryExpr(y, TruncModAnyScalar<typename X::Scalar>());
  }
};

// ---- Bitwise ---------------------------------------------------------------

#define WEFT_BITWISE(NAME, OP)                                  \
  struct NAME : BinaryFunctorBase {                             \
    static constexpr int kCost = 1;                             \
    template <typename X, typename Y>                           \
    static auto Apply(const X& x, const Y& y) {                 \
      using T = typename X::Scalar;                             \
      return x.binaryExpr(y, [](T a, T b) { return T(a OP b); }); \
    }                                                           \
  }
WEFT_BITWISE(BitwiseAnd, &);
WEFT_BITWISE(BitwiseOr, |);
WEFT_BITWISE(BitwiseXor, ^);
#undef WEFT_BITWISE

// The shift amount TensorFlow uses: y clamped to [0, bits - 1].
template <typename T>
inline int ClampedShift(T y) {
  constexpr int kMax = static_cast<int>(sizeof(T) * CHAR_BIT) - 1;
  if constexpr (std::is_signed_v<T>) {
    if (y < 0) return 0;
  }
  return y > T(kMax) ? kMax : static_cast<int>(y);
}

// x << y in the unsigned type (no overflow), converted back.
struct LeftShift : BinaryFunctorBase {
  static constexpr int kCost = 2;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    using T = typename X::Scalar;
    return x.binaryExpr(y, [](T a, T b) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) << ClampedShift(b)));
    });
  }
};

// x >> y: arithmetic for signed types (the sign fills in), logical else.
struct RightShift : BinaryFunctorBase {
  static constexpr int kCost = 2;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    using T = typename X::Scalar;
    return x.binaryExpr(y, [](T a, T b) {
      return static_cast<T>(a >> ClampedShift(b));
    });
  }
};

}  // namespace functor
}  // namespace weft

#endif  // WEFT_OPS_CPU_MATH_CWISE_FUNCTORS_H_
