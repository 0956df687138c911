// One source, compiled once per instruction set: how Weft's hand-written
// SIMD kernels are built into a binary that runs on any x86-64 and uses
// AVX-512 or AVX2 + FMA where the CPU has them.
//
// weft_simd_library (ops/simd.bzl) compiles each of its sources three
// times, with WEFT_SIMD_AVX512, WEFT_SIMD_AVX2 or neither defined. This
// header turns that into:
//   WEFT_SIMD_NS      avx512, avx2 or baseline: the namespace the
//                     compilation's entry points go in (weft::avx2::Sgemm);
//   WEFT_SIMD_BEGIN   opens a region compiled for that ISA (GCC's target
//   WEFT_SIMD_END     pragma, clang's target attribute); no-ops in the
//                     baseline compilation;
//   WEFT_SIMD_HAS_ISA defined in the AVX-512 and AVX2 compilations.
//
//   #include "ops/cpu/simd_target.h"
//   #include <vector>                    // every other header first
//   WEFT_SIMD_BEGIN
//   #include "ops/cpu/simd_isa.h"        // ISA code only inside
//   namespace weft::WEFT_SIMD_NS { void Kernel(float* x, int64_t n); }
//   WEFT_SIMD_END
//
// Why a region and not -mavx2 on the whole file: inline and template
// functions of shared headers (the standard library, Abseil, Eigen, the
// runtime's) are emitted into every object that uses them, and the linker
// keeps one copy for the whole program; compiled with -mavx2 in one object,
// that copy could reach an older CPU. Functions defined before
// WEFT_SIMD_BEGIN stay baseline wherever they are instantiated; only what
// the region defines gets the ISA, and it lives in ISA-named namespaces or
// in types named per ISA (simd::Avx2), so no two compilations define the
// same symbol.
//
// Which compilation runs is chosen at run time by cpu_isa.h.
#ifndef WEFT_OPS_CPU_SIMD_TARGET_H_
#define WEFT_OPS_CPU_SIMD_TARGET_H_

#if defined(WEFT_SIMD_AVX512) && defined(WEFT_SIMD_AVX2)
#error "define at most one of WEFT_SIMD_AVX512 and WEFT_SIMD_AVX2"
#endif

// The features each compilation may use; cpu_isa.cc checks the same ones.
#if defined(WEFT_SIMD_AVX512)
#define WEFT_SIMD_NS avx512
#define WEFT_SIMD_TARGET_FEATURES "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma"
#elif defined(WEFT_SIMD_AVX2)
#define WEFT_SIMD_NS avx2
#define WEFT_SIMD_TARGET_FEATURES "avx2,fma"
#else
#define WEFT_SIMD_NS baseline
#endif

#if defined(WEFT_SIMD_TARGET_FEATURES)
#define WEFT_SIMD_HAS_ISA 1
// What simd_isa.h and sgemm_kernel.h include, here so that it is included
// before any region: a standard header first included inside one would
// give its inline functions the ISA.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#define WEFT_SIMD_PRAGMA(x) WEFT_SIMD_PRAGMA_TEXT(x)
#define WEFT_SIMD_PRAGMA_TEXT(x) _Pragma(#x)
#if defined(__clang__)
#define WEFT_SIMD_BEGIN                                                     \
  WEFT_SIMD_PRAGMA(clang attribute push(                                    \
      __attribute__((target(WEFT_SIMD_TARGET_FEATURES))), apply_to = function))
#define WEFT_SIMD_END WEFT_SIMD_PRAGMA(clang attribute pop)
#else
#define WEFT_SIMD_BEGIN \
  WEFT_SIMD_PRAGMA(GCC push_options) WEFT_SIMD_PRAGMA(GCC target(WEFT_SIMD_TARGET_FEATURES))
#define WEFT_SIMD_END WEFT_SIMD_PRAGMA(GCC pop_options)
#endif
#else
#define WEFT_SIMD_BEGIN
#define WEFT_SIMD_END
#endif

#endif  // WEFT_OPS_CPU_SIMD_TARGET_H_
