// Transpose: permutes dimensions. The permutation is first simplified (size-1
// dims dropped, runs of dims that stay adjacent merged), so most real cases
// (NHWC <-> NCHW, matrix transposes) become a batch of 2-D transposes, which
// run blocked for cache locality. A permutation that keeps every dim of size
// > 1 in place aliases the input. ConjugateTranspose is the same kernel,
// conjugating complex elements after the move.
#include <algorithm>
#include <complex>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/array_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/transpose_2d.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/thread_pool.h"

namespace weft {
namespace {

// Simplifies (dims, perm): output dim i is input dim perm[i].
void Coalesce(std::vector<int64_t>* dims, std::vector<int>* perm) {
  // Drop size-1 dims.
  std::vector<int> new_index(dims->size(), -1);
  std::vector<int64_t> kept;
  for (size_t d = 0; d < dims->size(); ++d) {
    if ((*dims)[d] != 1) {
      new_index[d] = static_cast<int>(kept.size());
      kept.push_back((*dims)[d]);
    }
  }
  std::vector<int> p;
  for (int d : *perm) {
    if (new_index[d] >= 0) p.push_back(new_index[d]);
  }
  // Merge runs of output dims whose input dims are consecutive.
  std::vector<std::pair<int, int>> groups;  // input dim ranges, output order
  for (size_t i = 0; i < p.size(); ++i) {
    if (!groups.empty() && groups.back().second + 1 == p[i]) {
      groups.back().second = p[i];
    } else {
      groups.push_back({p[i], p[i]});
    }
  }
  std::vector<int> by_input(groups.size());
  std::iota(by_input.begin(), by_input.end(), 0);
  std::sort(by_input.begin(), by_input.end(), [&](int a, int b) {
    return groups[a].first < groups[b].first;
  });
  dims->assign(groups.size(), 1);
  perm->assign(groups.size(), 0);
  for (size_t k = 0; k < by_input.size(); ++k) {
    const auto& g = groups[by_input[k]];
    for (int d = g.first; d <= g.second; ++d) (*dims)[k] *= kept[d];
    (*perm)[by_input[k]] = static_cast<int>(k);
  }
}

// Any permutation: walks output rows (all dims but the last), reading the
// input with the strides the permutation gives.
template <typename T>
void TransposeGeneric(ThreadPool* pool, const T* in, T* out,
                      const std::vector<int64_t>& dims,
                      const std::vector<int>& perm) {
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> in_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * dims[d + 1];
  std::vector<int64_t> out_dims(rank), stride(rank);
  for (int i = 0; i < rank; ++i) {
    out_dims[i] = dims[perm[i]];
    stride[i] = in_stride[perm[i]];
  }
  const int64_t inner = out_dims[rank - 1];
  const int64_t inner_stride = stride[rank - 1];
  int64_t num_rows = 1;
  for (int i = 0; i < rank - 1; ++i) num_rows *= out_dims[i];
  pool->ParallelFor(num_rows, inner * 4, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(rank, 0);
    int64_t rest = begin, offset = 0;
    for (int i = rank - 2; i >= 0; --i) {
      idx[i] = rest % out_dims[i];
      rest /= out_dims[i];
      offset += idx[i] * stride[i];
    }
    for (int64_t row = begin; row < end; ++row) {
      T* dst = out + row * inner;
      const T* src = in + offset;
      for (int64_t k = 0; k < inner; ++k) dst[k] = src[k * inner_stride];
      for (int i = rank - 2; i >= 0; --i) {  // odometer
        offset += stride[i];
        if (++idx[i] < out_dims[i]) break;
        offset -= stride[i] * out_dims[i];
        idx[i] = 0;
      }
    }
  });
}

class TransposeOp : public OpKernel {
 public:
  // `conjugate`: ConjugateTranspose, which also conjugates complex elements.
  TransposeOp(OpKernelConstruction* c, bool conjugate)
      : OpKernel(c), conjugate_(conjugate) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    const bool conj = conjugate_ && (x.dtype() == DT_COMPLEX64 ||
                                     x.dtype() == DT_COMPLEX128);
    std::vector<int64_t> perm64;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "Transpose's perm", &perm64));
    const int rank = x.dims();
    OP_REQUIRES(c, static_cast<int>(perm64.size()) == rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "transpose expects a vector of size ", rank,
                    ". But input(1) is a vector of size ", perm64.size())));
    std::vector<int> perm(rank);
    std::vector<bool> seen(rank, false);
    for (int i = 0; i < rank; ++i) {
      const int64_t d = perm64[i];
      OP_REQUIRES(c, d >= 0 && d < rank,
                  absl::InvalidArgumentError(absl::StrCat(
                      d, " is out of range [0 .. ", rank, ") in perm [",
                      absl::StrJoin(perm64, ","), "]")));
      OP_REQUIRES(c, !seen[d],
                  absl::InvalidArgumentError(absl::StrCat(
                      d, " is duplicated in perm [", absl::StrJoin(perm64, ","), "]")));
      seen[d] = true;
      perm[i] = static_cast<int>(d);
    }
    TensorShape out_shape;
    for (int i = 0; i < rank; ++i) out_shape.AddDim(x.dim_size(perm[i]));
    std::vector<int64_t> dims(x.shape().dim_sizes().begin(), x.shape().dim_sizes().end());
    Coalesce(&dims, &perm);
    if (x.NumElements() == 0 || (dims.size() <= 1 && !conj)) {
      c->set_output(0, x.Reshaped(out_shape));  // nothing actually moves
      return;
    }
    Tensor* y;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &y));
    if (dims.size() <= 1) {
      std::memcpy(y->raw_data(), x.raw_data(), x.TotalBytes());
    } else {
      OP_REQUIRES_OK(c, Move(c->intra_op_pool(), x, dims, perm, y));
    }
    if (conj) Conjugate(y);
  }

 private:
  // y = x with its (coalesced) dims permuted.
  static absl::Status Move(ThreadPool* pool, const Tensor& x,
                           const std::vector<int64_t>& dims,
                           const std::vector<int>& perm, Tensor* y) {
    const bool ok = VisitStorage(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y->data<T>();
      if (dims.size() == 2) {  // perm is [1, 0]
        BatchTranspose2D(pool, in, out, 1, dims[0], dims[1]);
      } else if (dims.size() == 3 && perm[0] == 0 && perm[1] == 2) {
        BatchTranspose2D(pool, in, out, dims[0], dims[1], dims[2]);
      } else {
        TransposeGeneric(pool, in, out, dims, perm);
      }
    });
    return ok ? absl::OkStatus() : UnsupportedDtype("Transpose", x.dtype());
  }

  static void Conjugate(Tensor* y) {
    if (y->dtype() == DT_COMPLEX64) {
      for (Complex64& v : y->flat<Complex64>()) v = std::conj(v);
    } else {
      for (Complex128& v : y->flat<Complex128>()) v = std::conj(v);
    }
  }

  const bool conjugate_;
};

}  // namespace

void RegisterArrayTransposeKernels(KernelRegistry* r) {
  r->Register(KernelDef("Transpose", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<TransposeOp>(c, /*conjugate=*/false);
              });
  r->Register(KernelDef("ConjugateTranspose", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<TransposeOp>(c, /*conjugate=*/true);
              });
}

}  // namespace weft
