// Integer MatMul: rare in graphs, so a plain loop nest (row of a times b,
// accumulated a row of the output at a time) rather than another Eigen GEMM
// instantiation. Arithmetic wraps, as TensorFlow's.
#include <algorithm>
#include <type_traits>

#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/matmul_gemm.h"

namespace weft {
namespace {

template <typename T>
void IntGemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
             int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* out) {
  using U = std::make_unsigned_t<T>;  // wrap-around without UB
  ParallelRange(c, m, n * k, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      U* row = reinterpret_cast<U*>(out + i * n);
      std::fill(row, row + n, U{0});
      for (int64_t p = 0; p < k; ++p) {
        const U aip = static_cast<U>(transpose_a ? a[p * m + i] : a[i * k + p]);
        if (!transpose_b) {
          const T* brow = b + p * n;
          for (int64_t j = 0; j < n; ++j) row[j] += aip * static_cast<U>(brow[j]);
        } else {
          for (int64_t j = 0; j < n; ++j) {
            row[j] += aip * static_cast<U>(b[j * k + p]);
          }
        }
      }
    }
  });
}

}  // namespace

absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const int32_t* a,
                  const int32_t* b, int32_t* out) {
  IntGemm(c, transpose_a, transpose_b, m, n, k, a, b, out);
  return absl::OkStatus();
}

absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const int64_t* a,
                  const int64_t* b, int64_t* out) {
  IntGemm(c, transpose_a, transpose_b, m, n, k, a, b, out);
  return absl::OkStatus();
}

}  // namespace weft
