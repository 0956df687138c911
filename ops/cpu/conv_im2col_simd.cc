// Compiled once per ISA (simd_target.h): the float im2col loops of
// conv_im2col.h with vector runs in the AVX-512 and AVX2 compilations, and
// in the baseline compilation the entry points, which call the ones for the
// CPU (cpu_isa.h) or run the loops with Eigen's runs.
#include "ops/cpu/simd_target.h"

#include <algorithm>
#include <cstdint>

#include "ops/cpu/conv_geometry.h"
#include "runtime/core/cpu_isa.h"

namespace weft {
// conv_im2col.h's entry points; declared here too, so that this file does
// not include that header (its inline code must not get an ISA).
void Im2ColFloat(const WindowDims& d, const float* in, int64_t row_begin,
                 int64_t row_end, float* col);
void Col2ImAddFloat(const WindowDims& d, const float* col, int64_t row_begin,
                    int64_t row_end, float* out);
WEFT_SIMD_DECLARE(decltype(::weft::Im2ColFloat), Im2ColFloat)
WEFT_SIMD_DECLARE(decltype(::weft::Col2ImAddFloat), Col2ImAddFloat)
}  // namespace weft

#if defined(WEFT_SIMD_HAS_ISA)

WEFT_SIMD_BEGIN
#include "ops/cpu/conv_im2col_rows.h"
#include "ops/cpu/simd_isa.h"

namespace weft {
namespace WEFT_SIMD_NS {
namespace {

// Whole-vector moves with a masked tail.
struct VectorRuns {
  using Isa = simd::TargetIsa;
  static void Copy(const float* src, int64_t n, float* dst) {
    int64_t i = 0;
    for (; i + Isa::kLanes <= n; i += Isa::kLanes) Isa::StoreU(dst + i, Isa::LoadU(src + i));
    if (i < n) {
      const Isa::Mask m = Isa::Lanes(n - i);
      Isa::MaskStore(dst + i, m, Isa::MaskLoad(m, src + i));
    }
  }
  static void Add(const float* src, int64_t n, float* dst) {
    int64_t i = 0;
    for (; i + Isa::kLanes <= n; i += Isa::kLanes) {
      Isa::StoreU(dst + i, Isa::Add(Isa::LoadU(dst + i), Isa::LoadU(src + i)));
    }
    if (i < n) {
      const Isa::Mask m = Isa::Lanes(n - i);
      Isa::MaskStore(dst + i, m,
                     Isa::Add(Isa::MaskLoad(m, dst + i), Isa::MaskLoad(m, src + i)));
    }
  }
};

}  // namespace

void Im2ColFloat(const WindowDims& d, const float* in, int64_t row_begin,
                 int64_t row_end, float* col) {
  Im2ColRows<float, VectorRuns>(d, in, row_begin, row_end, col);
}

void Col2ImAddFloat(const WindowDims& d, const float* col, int64_t row_begin,
                    int64_t row_end, float* out) {
  Col2ImAddRows<float, VectorRuns>(d, col, row_begin, row_end, out);
}

}  // namespace WEFT_SIMD_NS
}  // namespace weft
WEFT_SIMD_END

#else  // the baseline compilation

#include "ops/cpu/conv_im2col_rows.h"

namespace weft {
namespace {

// Plain loops: GCC vectorizes them for the baseline's SSE2.
struct PortableRuns {
  static void Copy(const float* src, int64_t n, float* dst) {
    std::copy(src, src + n, dst);
  }
  static void Add(const float* src, int64_t n, float* dst) {
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
  }
};

}  // namespace

void Im2ColFloat(const WindowDims& d, const float* in, int64_t row_begin,
                 int64_t row_end, float* col) {
  if (auto* f = WEFT_SIMD_CHOOSE(Im2ColFloat)) return f(d, in, row_begin, row_end, col);
  baseline::Im2ColRows<float, PortableRuns>(d, in, row_begin, row_end, col);
}

void Col2ImAddFloat(const WindowDims& d, const float* col, int64_t row_begin,
                    int64_t row_end, float* out) {
  if (auto* f = WEFT_SIMD_CHOOSE(Col2ImAddFloat)) return f(d, col, row_begin, row_end, out);
  baseline::Col2ImAddRows<float, PortableRuns>(d, col, row_begin, row_end, out);
}

}  // namespace weft

#endif  // WEFT_SIMD_HAS_ISA
