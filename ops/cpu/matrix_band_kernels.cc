// MatrixBandPart (keeps each innermost matrix's band, zeros the rest; the
// builder's triangular masks), Diag (a tensor on the diagonal of a
// [d..., d...] zero tensor) and DiagPart (its inverse). All move elements
// without arithmetic, so they are written once per element size
// (VisitStorage); MatrixBandPart copies each row's band with std::copy and
// shares matrices out over the intra-op pool.
#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_index_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

class MatrixBandPartOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES_OK(c, RequireMatrices(in));
    const int64_t m = in.dim_size(in.dims() - 2);
    const int64_t n = in.dim_size(in.dims() - 1);
    int64_t lower = 0, upper = 0;
    OP_REQUIRES_OK(c, ReadBound(c->input(1), "num_lower", "rows", m, &lower));
    OP_REQUIRES_OK(c, ReadBound(c->input(2), "num_upper", "columns", n, &upper));
    if (lower < 0) lower = m;
    if (upper < 0) upper = n;
    if ((lower >= m - 1 && upper >= n - 1) || in.NumElements() == 0) {
      c->set_output(0, in);  // the whole matrix is the band
      return;
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    const int64_t matrices = in.NumElements() / (m * n);
    VisitStorage(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = in.data<T>();
      T* dst = out->data<T>();
      ParallelRange(c, matrices * m, n, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t i = r % m;  // row within its matrix
          // Kept: columns j with i - j <= lower and j - i <= upper.
          const int64_t lo = std::clamp<int64_t>(i - lower, 0, n);
          const int64_t hi = std::clamp<int64_t>(i + upper + 1, lo, n);
          T* o = dst + r * n;
          std::fill(o, o + lo, T{});
          std::copy(src + r * n + lo, src + r * n + hi, o + lo);
          std::fill(o + hi, o + n, T{});
        }
      });
    });
  }

 private:
  static absl::Status ReadBound(const Tensor& t, const char* what,
                                const char* dim, int64_t size, int64_t* out) {
    if (t.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " must be scalar, got shape ", t.shape().DebugString()));
    }
    absl::Status s = ReadIntScalar(t, what, out);
    if (!s.ok()) return s;
    if (*out > size) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be negative or less or equal to number of ",
                       dim, " (", size, ") got: ", *out));
    }
    return absl::OkStatus();
  }
};

class DiagOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES(c, in.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input must be at least rank 1, got ", in.dims())));
    TensorShape shape = in.shape();
    for (int64_t d : in.shape().dim_sizes()) shape.AddDim(d);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const int64_t size = in.NumElements();
    VisitStorage(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = in.data<T>();
      T* dst = out->data<T>();
      ParallelRange(c, size, size, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          std::fill(dst + i * size, dst + (i + 1) * size, T{});
          dst[i * size + i] = src[i];
        }
      });
    });
  }
};

class DiagPartOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const int rank = in.dims();
    OP_REQUIRES(c, rank > 0 && rank % 2 == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "The rank of the tensor should be even and positive, got "
                    "shape ", in.shape().DebugString())));
    const int half = rank / 2;
    TensorShape shape;
    for (int i = 0; i < half; ++i) {
      OP_REQUIRES(c, in.dim_size(i) == in.dim_size(i + half),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Invalid shape ", in.shape().DebugString(), ": dimensions ",
                      i, " and ", i + half, " do not match.")));
      shape.AddDim(in.dim_size(i));
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const int64_t size = shape.num_elements();
    VisitStorage(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = in.data<T>();
      T* dst = out->data<T>();
      for (int64_t i = 0; i < size; ++i) dst[i] = src[i * size + i];
    });
  }
};

}  // namespace

void RegisterMatrixBandKernels(KernelRegistry* r) {
  r->Register(KernelDef("MatrixBandPart", kDeviceTypeCpu).TypeConstraint("T", PodTypes()),
              MakeKernel<MatrixBandPartOp>);
  const DataTypeVector diag_types = {DT_HALF,  DT_FLOAT,     DT_DOUBLE,
                                     DT_INT32, DT_INT64,     DT_COMPLEX64,
                                     DT_COMPLEX128};
  r->Register(KernelDef("Diag", kDeviceTypeCpu).TypeConstraint("T", diag_types),
              MakeKernel<DiagOp>);
  r->Register(KernelDef("DiagPart", kDeviceTypeCpu).TypeConstraint("T", diag_types),
              MakeKernel<DiagPartOp>);
}

}  // namespace weft
