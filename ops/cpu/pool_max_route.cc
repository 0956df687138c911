// Compiled once per ISA (simd_target.h): the float kernel of the AVX-512
// and AVX2 compilations (weft::avx512::RouteToMaxFloat, ...), and in the
// baseline compilation RouteToMax, which calls the one for the CPU
// (cpu_isa.h) or the scalar loop.
#include "ops/cpu/pool_max_route.h"

#include "ops/cpu/simd_target.h"

#include <type_traits>

#include "runtime/core/cpu_isa.h"

namespace weft {
// False (nothing written) for a window too large for the vector kernel.
using RouteToMaxFloatFn = bool(const WindowDims& d, const PoolWindow& w,
                               const float* image, MaxRoute route,
                               const float* src, float* dst);
WEFT_SIMD_DECLARE(RouteToMaxFloatFn, RouteToMaxFloat)
}  // namespace weft

#if defined(WEFT_SIMD_HAS_ISA)

WEFT_SIMD_BEGIN
#include "ops/cpu/simd_isa.h"

namespace weft {
namespace WEFT_SIMD_NS {
namespace {

using Isa = simd::TargetIsa;
using Vec = Isa::Vec;

// Window positions are counted in floats: exact up to 2^24.
constexpr int64_t kMaxVectorWindow = int64_t{1} << 24;

// Channels [i0, i0 + kLanes) of one window, or the first `m` lanes of them
// (kTail): whole vectors use plain loads, which AVX2 runs faster than
// masked ones.
template <bool kTail>
struct ChannelBlock {
  Isa::Mask m;
  Vec Load(const float* p) const {
    if constexpr (kTail) return Isa::MaskLoad(m, p);
    return Isa::LoadU(p);
  }
  void Store(float* p, Vec v) const {
    if constexpr (kTail) {
      Isa::MaskStore(p, m, v);
    } else {
      Isa::StoreU(p, v);
    }
  }
};

template <bool kTail>
void RouteBlock(const WindowDims& d, const PoolWindow& w, const float* image,
                MaxRoute route, const float* src, float* dst, int64_t i0,
                ChannelBlock<kTail> lanes) {
  const int64_t depth = d.in_depth;
  const int64_t first = (w.h0 * d.in_cols + w.w0) * depth + i0;
  const int64_t row_step = d.in_cols * depth;
  const int64_t cols = w.w1 - w.w0;
  // The arg max as the position in the window (row-major, from 0). The
  // first entry compares equal to itself, so needs no special case.
  Vec best = lanes.Load(image + first);
  Vec arg = Isa::Zero();
  float p = 0;
  for (int64_t h = w.h0; h < w.h1; ++h) {
    const float* x = image + first + (h - w.h0) * row_step;
    for (int64_t col = 0; col < cols; ++col, p += 1, x += depth) {
      const Vec v = lanes.Load(x);
      const Isa::Mask take = Isa::Less(best, v);
      best = Isa::Select(take, v, best);
      arg = Isa::Select(take, Isa::Broadcast(p), arg);
    }
  }
  // Every window position meets every lane; the lanes whose arg max is
  // elsewhere add (or take) nothing.
  p = 0;
  if (route == MaxRoute::kScatterAdd) {
    const Vec g = lanes.Load(src + i0);
    const Vec zero = Isa::Zero();
    for (int64_t h = w.h0; h < w.h1; ++h) {
      float* y = dst + first + (h - w.h0) * row_step;
      for (int64_t col = 0; col < cols; ++col, p += 1, y += depth) {
        const Vec add = Isa::Select(Isa::Equal(arg, Isa::Broadcast(p)), g, zero);
        lanes.Store(y, Isa::Add(lanes.Load(y), add));
      }
    }
  } else {
    Vec out = Isa::Zero();
    for (int64_t h = w.h0; h < w.h1; ++h) {
      const float* s = src + first + (h - w.h0) * row_step;
      for (int64_t col = 0; col < cols; ++col, p += 1, s += depth) {
        out = Isa::Select(Isa::Equal(arg, Isa::Broadcast(p)), lanes.Load(s), out);
      }
    }
    lanes.Store(dst + i0, out);
  }
}

}  // namespace

bool RouteToMaxFloat(const WindowDims& d, const PoolWindow& w,
                     const float* image, MaxRoute route, const float* src,
                     float* dst) {
  if ((w.h1 - w.h0) * (w.w1 - w.w0) > kMaxVectorWindow) return false;
  const int64_t depth = d.in_depth;
  int64_t i0 = 0;
  for (; i0 + Isa::kLanes <= depth; i0 += Isa::kLanes) {
    RouteBlock(d, w, image, route, src, dst, i0, ChannelBlock<false>{});
  }
  if (i0 < depth) {
    RouteBlock(d, w, image, route, src, dst, i0,
               ChannelBlock<true>{Isa::Lanes(depth - i0)});
  }
  return true;
}

}  // namespace WEFT_SIMD_NS
}  // namespace weft
WEFT_SIMD_END

#else  // the baseline compilation: the scalar loop and the dispatcher

namespace weft {
namespace {

// The scalar loop: the first entry seeds the maxima and later ones replace
// them only when strictly greater (the first, compared with itself, never
// does). Written as selects, not branches: on real
// data the comparison is a coin toss.
template <typename T>
void RouteToMaxScalar(const WindowDims& d, const PoolWindow& w, const T* image,
                      MaxRoute route, const T* src, T* dst,
                      MaxRouteScratch<T>* scratch) {
  const int64_t depth = d.in_depth;
  scratch->arg.resize(depth);
  scratch->best.resize(depth);
  int64_t* arg = scratch->arg.data();
  T* best = scratch->best.data();
  const int64_t first = (w.h0 * d.in_cols + w.w0) * depth;
  for (int64_t i = 0; i < depth; ++i) {
    best[i] = image[first + i];
    arg[i] = first + i;
  }
  for (int64_t h = w.h0; h < w.h1; ++h) {
    for (int64_t col = w.w0; col < w.w1; ++col) {
      const int64_t base = (h * d.in_cols + col) * depth;
      for (int64_t i = 0; i < depth; ++i) {
        const T v = image[base + i];
        const bool take = best[i] < v;
        best[i] = take ? v : best[i];
        arg[i] = take ? base + i : arg[i];
      }
    }
  }
  if (route == MaxRoute::kScatterAdd) {
    for (int64_t i = 0; i < depth; ++i) dst[arg[i]] += src[i];
  } else {
    for (int64_t i = 0; i < depth; ++i) dst[i] = src[arg[i]];
  }
}

}  // namespace

template <typename T>
void RouteToMax(const WindowDims& d, const PoolWindow& w, const T* image,
                MaxRoute route, const T* src, T* dst,
                MaxRouteScratch<T>* scratch) {
  if constexpr (std::is_same_v<T, float>) {
    auto* f = WEFT_SIMD_CHOOSE(RouteToMaxFloat);
    if (f != nullptr && f(d, w, image, route, src, dst)) return;
  }
  RouteToMaxScalar(d, w, image, route, src, dst, scratch);
}

template void RouteToMax<float>(const WindowDims&, const PoolWindow&,
                                const float*, MaxRoute, const float*, float*,
                                MaxRouteScratch<float>*);
template void RouteToMax<double>(const WindowDims&, const PoolWindow&,
                                 const double*, MaxRoute, const double*,
                                 double*, MaxRouteScratch<double>*);

}  // namespace weft

#endif  // WEFT_SIMD_HAS_ISA
