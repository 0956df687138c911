// The arg max of a max-pooling window, per channel, and the routing of
// values to or from it: the core of MaxPoolGrad and MaxPoolGradGrad (NHWC).
//
//   const PoolWindow w = ...;  // window (oh, ow) clipped to the input
//   // MaxPoolGrad: add one output pixel's gradient at each channel's arg max.
//   RouteToMax(d, w, image, MaxRoute::kScatterAdd, grad_pixel, dx_image,
//              &scratch);
//   // MaxPoolGradGrad: read each channel's gradient at its arg max.
//   RouteToMax(d, w, image, MaxRoute::kGather, grad_image, out_pixel,
//              &scratch);
//
// Semantics are TensorFlow's CPU kernels': the window is walked in row-major
// order, its first entry seeds the maximum and a later entry replaces it only
// when strictly greater, so the first maximum wins ties and a NaN is taken
// only as the first entry (and then kept).
//
// How: float, on CPUs with an ISA of ops/cpu/simd_isa.h (AVX2 + FMA or
// AVX-512; chosen at run time, runtime/core/cpu_isa.h), runs a vector of channels at a time with no gather or scatter,
// which AVX2 lacks (scatter) or runs slowly (gather): the arg max is kept
// as the window position, as a float, chosen by compare and select; then
// each window position p receives (arg == p ? gradient : 0), added a vector
// at a time (kScatterAdd), or the output takes the vector at p where
// arg == p (kGather). That costs a vector add per window entry instead of
// one scatter, which for pooling's small windows (2x2, 3x3) is cheaper.
// Other types and builds run a scalar loop written as selects.
//
// Thread safety: reentrant; concurrent calls must write disjoint dst.
#ifndef WEFT_OPS_CPU_POOL_MAX_ROUTE_H_
#define WEFT_OPS_CPU_POOL_MAX_ROUTE_H_

#include <cstdint>
#include <vector>

#include "ops/cpu/conv_geometry.h"

namespace weft {

// The window of one output pixel clipped to the input: rows [h0, h1) x
// columns [w0, w1); empty when h0 >= h1 or w0 >= w1.
struct PoolWindow {
  int64_t h0, h1, w0, w1;
};

// What to do at the arg max a_i of channel i (a_i an offset into the image):
//   kScatterAdd: dst[a_i] += src[i] (MaxPoolGrad: src is one output pixel's
//                gradient, dst the input's gradient image);
//   kGather:     dst[i] = src[a_i]  (MaxPoolGradGrad: src is the gradient
//                image, dst one output pixel).
enum class MaxRoute { kScatterAdd, kGather };

// Per-thread scratch for the scalar loop (d.in_depth entries each); reuse
// one across calls to avoid allocating per window.
template <typename T>
struct MaxRouteScratch {
  std::vector<int64_t> arg;
  std::vector<T> best;
};

// Routes between src and dst at the arg max, per channel, of window w (not
// empty) of `image`, one image of d's geometry (in_rows x in_cols x
// in_depth). T is float or double.
template <typename T>
void RouteToMax(const WindowDims& d, const PoolWindow& w, const T* image,
                MaxRoute route, const T* src, T* dst,
                MaxRouteScratch<T>* scratch);

}  // namespace weft

#endif  // WEFT_OPS_CPU_POOL_MAX_ROUTE_H_
