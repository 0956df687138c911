// Integer arithmetic that wraps around on overflow, as TensorFlow's does.
//
// TensorFlow's integer kernels wrap (two's complement): int32 2^31 - 1 plus
// 1 is -2^31, and a while loop summing squares past 2^31 keeps going. In C++
// signed overflow is undefined behaviour (UBSan stops on it, and the
// optimiser may assume it never happens), so signed integers are computed in
// the unsigned type, where wrap-around is defined, and converted back.
// Unsigned types narrower than int are promoted to (signed) int by the
// operators, where 65535 * 65535 overflows, so they take the same detour.
// Floats and the other unsigned types use the plain operators.
//
//   out = WrapAdd(x, y);          // x, y: Eigen array expressions
//   acc = WrapMul(acc, row);
//   out = x.unaryExpr(WrappingNegOp<T>());
//   T total = WrapSum(v);         // v.sum(), wrapping
//
// The functors keep Eigen's vector path: SIMD integer adds and multiplies
// wrap in hardware, so only the scalar path needs the unsigned detour.
//
// Include only from ops/cpu/*.cc and other Eigen-using headers.
#ifndef WEFT_OPS_CPU_WRAPPING_H_
#define WEFT_OPS_CPU_WRAPPING_H_

#include <type_traits>

#include <Eigen/Core>

namespace weft {

template <typename T>
inline constexpr bool kWrapsSigned =
    std::is_integral_v<T> && std::is_signed_v<T>;

// Computed in WrapUnsigned<T>: the signed integers and the unsigned ones
// narrower than int.
template <typename T>
inline constexpr bool kWrapDetour =
    kWrapsSigned<T> || (std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                        sizeof(T) < sizeof(int));

// The unsigned type to compute T in. Types narrower than int would be
// promoted back to (signed) int by the operators, so they use unsigned int.
template <typename T>
using WrapUnsigned = std::make_unsigned_t<
    std::conditional_t<(sizeof(T) < sizeof(int)), int, T>>;

template <typename T>
inline T WrappingNeg(T x) {
  static_assert(kWrapsSigned<T>, "signed integers only");
  using U = WrapUnsigned<T>;
  return static_cast<T>(U{0} - static_cast<U>(x));
}

// Binary functors: the plain operator for floats and unsigned types as wide
// as int, the unsigned detour for the others.
#define WEFT_WRAPPING_BINARY(NAME, FN, OP, PACKET_OP)                      \
  template <typename T>                                                    \
  struct NAME {                                                            \
    typedef T result_type;                                                 \
    T operator()(const T& a, const T& b) const {                           \
      if constexpr (kWrapDetour<T>) {                                      \
        using U = WrapUnsigned<T>;                                         \
        return static_cast<T>(static_cast<U>(a) OP static_cast<U>(b));     \
      } else {                                                             \
        return a OP b;                                                     \
      }                                                                    \
    }                                                                      \
    template <typename Packet>                                             \
    Packet packetOp(const Packet& a, const Packet& b) const {              \
      return Eigen::internal::PACKET_OP(a, b);                             \
    }                                                                      \
  };                                                                       \
  /* FN(x, y): x OP y over Eigen array expressions of one scalar type. */  \
  template <typename X, typename Y>                                        \
  auto FN(const X& x, const Y& y) {                                        \
    return x.binaryExpr(y, NAME<typename X::Scalar>());                    \
  }

WEFT_WRAPPING_BINARY(WrappingAddOp, WrapAdd, +, padd)
WEFT_WRAPPING_BINARY(WrappingSubOp, WrapSub, -, psub)
WEFT_WRAPPING_BINARY(WrappingMulOp, WrapMul, *, pmul)
#undef WEFT_WRAPPING_BINARY

// Unary functors: -INT_MIN and |INT_MIN| are INT_MIN, as in TensorFlow.
template <typename T>
struct WrappingNegOp {
  typedef T result_type;
  T operator()(const T& x) const {
    if constexpr (kWrapsSigned<T>) {
      return WrappingNeg(x);
    } else {
      return -x;
    }
  }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    if constexpr (std::is_floating_point_v<T>) {
      // Flip the sign bit: Eigen 3.4's AVX pnegate for double computes
      // 0 - x, which turns -0 into +0 where TensorFlow gives -0.
      return Eigen::internal::pxor(x, Eigen::internal::pset1<Packet>(T(-0.0)));
    } else {
      return Eigen::internal::pnegate(x);
    }
  }
};

template <typename T>
struct WrappingAbsOp {
  typedef T result_type;
  T operator()(const T& x) const {
    if constexpr (kWrapsSigned<T>) {
      return x < 0 ? WrappingNeg(x) : x;
    } else {
      return Eigen::numext::abs(x);
    }
  }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    return Eigen::internal::pabs(x);
  }
};

// The sum and product of all of v's elements. Integer folds are rare and
// short (shapes, indices), so they take the scalar path.
template <template <typename> class Op, typename V>
typename V::Scalar ScalarFold(const V& v, typename V::Scalar init) {
  const Op<typename V::Scalar> op;
  for (Eigen::Index i = 0; i < v.size(); ++i) init = op(init, v(i));
  return init;
}

template <typename V>
typename V::Scalar WrapSum(const V& v) {
  if constexpr (kWrapDetour<typename V::Scalar>) {
    return ScalarFold<WrappingAddOp>(v, 0);
  } else {
    return v.sum();
  }
}

template <typename V>
typename V::Scalar WrapProd(const V& v) {
  if constexpr (kWrapDetour<typename V::Scalar>) {
    return ScalarFold<WrappingMulOp>(v, 1);
  } else {
    return v.prod();
  }
}

}  // namespace weft

namespace Eigen {
namespace internal {

// Tells Eigen the wrapping functors have a vector path (where T has one).
#define WEFT_WRAPPING_TRAITS(NAME, COST, HAS)                              \
  template <typename T>                                                    \
  struct functor_traits<weft::NAME<T>> {                                   \
    enum {                                                                 \
      Cost = NumTraits<T>::COST,                                           \
      PacketAccess = packet_traits<T>::HAS                                 \
    };                                                                     \
  };
WEFT_WRAPPING_TRAITS(WrappingAddOp, AddCost, HasAdd)
WEFT_WRAPPING_TRAITS(WrappingSubOp, AddCost, HasSub)
WEFT_WRAPPING_TRAITS(WrappingMulOp, MulCost, HasMul)
WEFT_WRAPPING_TRAITS(WrappingNegOp, AddCost, HasNegate)
WEFT_WRAPPING_TRAITS(WrappingAbsOp, AddCost, HasAbs)
#undef WEFT_WRAPPING_TRAITS

}  // namespace internal
}  // namespace Eigen

#endif  // WEFT_OPS_CPU_WRAPPING_H_
