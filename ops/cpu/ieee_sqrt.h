// Correctly rounded square roots of Eigen array expressions:
//   IeeeSqrt(x)   sqrt of each element
//   IeeeRsqrt(x)  1 / sqrt of each element (two correctly rounded steps)
//
// Why not x.sqrt() and x.rsqrt(): under EIGEN_FAST_MATH (Eigen 3.4's
// default) float packets take an rsqrt estimate and one Newton step, which
// is 1-2 bits short (Sqrt(2) = 1.4142134, TensorFlow gives 1.4142135),
// makes sqrt(+inf) NaN and flushes denormals to 0. The hardware's sqrt
// instruction (SSE2 at the baseline, AVX or AVX-512 where the build has
// them) rounds correctly; double packets were always exact. The cost is
// the sqrt instruction's latency instead of the estimate's: the element-wise
// Sqrt kernels stay memory-bound.
#ifndef WEFT_OPS_CPU_IEEE_SQRT_H_
#define WEFT_OPS_CPU_IEEE_SQRT_H_

#include <cmath>

#include <Eigen/Core>

namespace weft {
namespace ieee_internal {

// The hardware's sqrt of a float packet; Eigen's (exact) for the others.
template <typename Packet>
Packet SqrtPacket(const Packet& x) {
  return Eigen::internal::psqrt(x);
}
#if defined(EIGEN_VECTORIZE_SSE2)
inline Eigen::internal::Packet4f SqrtPacket(const Eigen::internal::Packet4f& x) {
  return _mm_sqrt_ps(x);
}
#endif
#if defined(EIGEN_VECTORIZE_AVX)
inline Eigen::internal::Packet8f SqrtPacket(const Eigen::internal::Packet8f& x) {
  return _mm256_sqrt_ps(x);
}
#endif
#if defined(EIGEN_VECTORIZE_AVX512)
inline Eigen::internal::Packet16f SqrtPacket(const Eigen::internal::Packet16f& x) {
  return _mm512_sqrt_ps(x);
}
#endif

template <typename T>
struct SqrtOp {
  T operator()(const T& x) const { return std::sqrt(x); }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    return SqrtPacket(x);
  }
};

template <typename T>
struct RsqrtOp {
  T operator()(const T& x) const { return T(1) / std::sqrt(x); }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    return Eigen::internal::pdiv(Eigen::internal::pset1<Packet>(T(1)), SqrtPacket(x));
  }
};

}  // namespace ieee_internal

template <typename X>
auto IeeeSqrt(const X& x) {
  return x.unaryExpr(ieee_internal::SqrtOp<typename X::Scalar>());
}

template <typename X>
auto IeeeRsqrt(const X& x) {
  return x.unaryExpr(ieee_internal::RsqrtOp<typename X::Scalar>());
}

}  // namespace weft

namespace Eigen {
namespace internal {

template <typename T>
struct functor_traits<weft::ieee_internal::SqrtOp<T>> {
  enum { Cost = 5 * NumTraits<T>::MulCost, PacketAccess = packet_traits<T>::HasSqrt };
};
template <typename T>
struct functor_traits<weft::ieee_internal::RsqrtOp<T>> {
  enum {
    Cost = 6 * NumTraits<T>::MulCost,
    PacketAccess = packet_traits<T>::HasSqrt && packet_traits<T>::HasDiv
  };
};

}  // namespace internal
}  // namespace Eigen

#endif  // WEFT_OPS_CPU_IEEE_SQRT_H_
