// Conv2D on CPU (NHWC): im2col + the MatMul GEMM, in chunks of output pixels
// so the scratch matrix stays bounded. im2col is parallelised over output
// pixels and the GEMM over the device's intra-op pool.
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/conv_im2col.h"
#include "ops/cpu/conv_kernels.h"
#include "ops/cpu/matmul_gemm.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

template <typename T>
class Conv2DOp : public OpKernel {
 public:
  explicit Conv2DOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ParseWindowAttrs(c, WindowKind::kConv, &attrs_));
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& filter = c->input(1);
    OP_REQUIRES(c, filter.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "filter must be 4-dimensional [rows, cols, in_depth, "
                    "out_depth], got shape ", filter.shape().DebugString())));
    OP_REQUIRES(c, input.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be 4-dimensional (NHWC), got shape ",
                    input.shape().DebugString())));
    OP_REQUIRES(c, input.dim_size(3) == filter.dim_size(2),
                absl::InvalidArgumentError(absl::StrCat(
                    "input depth ", input.dim_size(3),
                    " must equal the filter's in_depth ", filter.dim_size(2),
                    " (input ", input.shape().DebugString(), ", filter ",
                    filter.shape().DebugString(),
                    "; grouped convolution is not supported on CPU)")));
    absl::StatusOr<WindowDims> dims = ComputeWindowDims(
        attrs_, input.shape(), filter.dim_size(0), filter.dim_size(1),
        filter.dim_size(3));
    OP_REQUIRES_OK(c, dims.status());
    const WindowDims& d = *dims;
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, TensorShape({d.batch, d.out_rows, d.out_cols, d.out_depth}),
                          &out));
    const int64_t m = d.batch * d.out_rows * d.out_cols;
    const int64_t k = d.win_rows * d.win_cols * d.in_depth;
    const int64_t n = d.out_depth;
    T* y = out->data<T>();
    if (m == 0 || n == 0) return;
    if (k == 0) {
      std::fill(y, y + m * n, T(0));
      return;
    }
    const T* x = input.data<T>();
    const T* w = filter.data<T>();
    if (ColIsInput(d)) {
      Gemm(c, false, false, m, n, k, x, w, y);
      return;
    }
    const int64_t chunk = std::min(m, ColChunkRows(d, false));
    Tensor col;
    OP_REQUIRES_OK(c, c->allocate_temp(DataTypeToEnum<T>::value,
                                       TensorShape({chunk, k}), &col));
    T* cp = col.data<T>();
    for (int64_t r0 = 0; r0 < m; r0 += chunk) {
      const int64_t rows = std::min(chunk, m - r0);
      c->intra_op_pool()->ParallelFor(rows, k, [&](int64_t b, int64_t e) {
        Im2Col<T>(d, x, r0 + b, r0 + e, cp + b * k);
      });
      Gemm(c, false, false, rows, n, k, cp, w, y + r0 * n);
    }
  }

 private:
  WindowAttrs attrs_;
};

}  // namespace

void RegisterConvKernels(KernelRegistry* r) {
  r->Register(KernelDef("Conv2D", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
              MakeKernel<Conv2DOp<float>>);
  r->Register(KernelDef("Conv2D", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE),
              MakeKernel<Conv2DOp<double>>);
  r->Register(KernelDef("Conv2D", kDeviceTypeCpu).TypeConstraint("T", DT_INT32),
              MakeKernel<Conv2DOp<int32_t>>);
  RegisterConvBackpropKernels(r);
  RegisterPoolKernels(r);
}

}  // namespace weft
