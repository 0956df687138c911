// Conv2D's gradients on CPU (NHWC), both through the MatMul GEMM:
//   Conv2DBackpropInput:  dcol = dy[M, OC] * filter[K, OC]^T, then col2im
//                         (chunks of whole images, col2im parallel per image);
//   Conv2DBackpropFilter: dfilter[K, OC] = sum over chunks of
//                         col[rows, K]^T * dy[rows, OC].
// M = batch * out_rows * out_cols, K = filter rows * cols * in_depth.
#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/conv_im2col.h"
#include "ops/cpu/conv_kernels.h"
#include "ops/cpu/matmul_gemm.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

// Reads a 1-D int32 sizes input of 4 entries.
absl::Status ReadSizes(const Tensor& t, const char* name, TensorShape* shape) {
  if (t.dims() != 1 || t.dtype() != DT_INT32 || t.NumElements() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be a 1-D int32 tensor of 4 sizes, got ", t.DebugString()));
  }
  std::vector<int64_t> v(t.data<int32_t>(), t.data<int32_t>() + 4);
  absl::StatusOr<TensorShape> s = TensorShape::Build(v);
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " holds invalid sizes [", absl::StrJoin(v, ","), "]"));
  }
  *shape = *s;
  return absl::OkStatus();
}

// Checks out_backprop's shape is what the forward conv would have produced.
absl::Status CheckBackprop(const WindowDims& d, const Tensor& dy) {
  const TensorShape want({d.batch, d.out_rows, d.out_cols, d.out_depth});
  if (dy.shape() != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "out_backprop has shape ", dy.shape().DebugString(),
        " but the convolution's output would have shape ", want.DebugString(),
        " (check strides, padding, dilations and the sizes input)"));
  }
  return absl::OkStatus();
}

template <typename T>
class Conv2DBackpropInputOp : public OpKernel {
 public:
  explicit Conv2DBackpropInputOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ParseWindowAttrs(c, WindowKind::kConv, &attrs_));
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    TensorShape in_shape;
    OP_REQUIRES_OK(c, ReadSizes(c->input(0), "input_sizes", &in_shape));
    const Tensor& filter = c->input(1);
    const Tensor& dy = c->input(2);
    OP_REQUIRES(c, filter.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "filter must be 4-dimensional, got shape ",
                    filter.shape().DebugString())));
    OP_REQUIRES(c, in_shape.dim_size(3) == filter.dim_size(2),
                absl::InvalidArgumentError(absl::StrCat(
                    "input_sizes depth ", in_shape.dim_size(3),
                    " must equal the filter's in_depth ", filter.dim_size(2))));
    absl::StatusOr<WindowDims> dims = ComputeWindowDims(
        attrs_, in_shape, filter.dim_size(0), filter.dim_size(1),
        filter.dim_size(3));
    OP_REQUIRES_OK(c, dims.status());
    const WindowDims& d = *dims;
    OP_REQUIRES_OK(c, CheckBackprop(d, dy));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in_shape, &out));
    T* dx = out->data<T>();
    std::fill(dx, dx + out->NumElements(), T(0));
    const int64_t m = d.batch * d.out_rows * d.out_cols;
    const int64_t k = d.win_rows * d.win_cols * d.in_depth;
    const int64_t n = d.out_depth;
    if (m == 0 || k == 0 || n == 0) return;
    const T* w = filter.data<T>();
    const T* g = dy.data<T>();
    if (ColIsInput(d)) {
      Gemm(c, false, true, m, k, n, g, w, dx);
      return;
    }
    const int64_t pixels = d.out_rows * d.out_cols;
    const int64_t chunk = std::min(m, ColChunkRows(d, true));
    Tensor col;
    OP_REQUIRES_OK(c, c->allocate_temp(DataTypeToEnum<T>::value,
                                       TensorShape({chunk, k}), &col));
    T* cp = col.data<T>();
    for (int64_t r0 = 0; r0 < m; r0 += chunk) {
      const int64_t rows = std::min(chunk, m - r0);
      Gemm(c, false, true, rows, k, n, g + r0 * n, w, cp);
      const int64_t images = rows / pixels;
      c->intra_op_pool()->ParallelFor(images, pixels * k, [&](int64_t b, int64_t e) {
        Col2ImAdd<T>(d, cp + b * pixels * k, r0 + b * pixels, r0 + e * pixels, dx);
      });
    }
  }

 private:
  WindowAttrs attrs_;
};

template <typename T>
class Conv2DBackpropFilterOp : public OpKernel {
 public:
  explicit Conv2DBackpropFilterOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ParseWindowAttrs(c, WindowKind::kConv, &attrs_));
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    TensorShape f_shape;
    OP_REQUIRES_OK(c, ReadSizes(c->input(1), "filter_sizes", &f_shape));
    const Tensor& dy = c->input(2);
    OP_REQUIRES(c, input.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be 4-dimensional (NHWC), got shape ",
                    input.shape().DebugString())));
    OP_REQUIRES(c, input.dim_size(3) == f_shape.dim_size(2),
                absl::InvalidArgumentError(absl::StrCat(
                    "input depth ", input.dim_size(3),
                    " must equal filter_sizes' in_depth ", f_shape.dim_size(2))));
    absl::StatusOr<WindowDims> dims = ComputeWindowDims(
        attrs_, input.shape(), f_shape.dim_size(0), f_shape.dim_size(1),
        f_shape.dim_size(3));
    OP_REQUIRES_OK(c, dims.status());
    const WindowDims& d = *dims;
    OP_REQUIRES_OK(c, CheckBackprop(d, dy));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, f_shape, &out));
    T* dw = out->data<T>();
    const int64_t m = d.batch * d.out_rows * d.out_cols;
    const int64_t k = d.win_rows * d.win_cols * d.in_depth;
    const int64_t n = d.out_depth;
    std::fill(dw, dw + out->NumElements(), T(0));
    if (m == 0 || k == 0 || n == 0) return;
    const T* x = input.data<T>();
    const T* g = dy.data<T>();
    if (ColIsInput(d)) {
      Gemm(c, true, false, k, n, m, x, g, dw);
      return;
    }
    const int64_t chunk = std::min(m, ColChunkRows(d, false));
    Tensor col, part;
    OP_REQUIRES_OK(c, c->allocate_temp(DataTypeToEnum<T>::value,
                                       TensorShape({chunk, k}), &col));
    if (chunk < m) {
      OP_REQUIRES_OK(c, c->allocate_temp(DataTypeToEnum<T>::value,
                                         TensorShape({k, n}), &part));
    }
    T* cp = col.data<T>();
    for (int64_t r0 = 0; r0 < m; r0 += chunk) {
      const int64_t rows = std::min(chunk, m - r0);
      c->intra_op_pool()->ParallelFor(rows, k, [&](int64_t b, int64_t e) {
        Im2Col<T>(d, x, r0 + b, r0 + e, cp + b * k);
      });
      if (r0 == 0) {
        Gemm(c, true, false, k, n, rows, cp, g, dw);
      } else {
        T* pp = part.data<T>();
        Gemm(c, true, false, k, n, rows, cp, g + r0 * n, pp);
        for (int64_t i = 0; i < k * n; ++i) dw[i] += pp[i];
      }
    }
  }

 private:
  WindowAttrs attrs_;
};

}  // namespace

void RegisterConvBackpropKernels(KernelRegistry* r) {
  r->Register(KernelDef("Conv2DBackpropInput", kDeviceTypeCpu)
                  .TypeConstraint("T", DT_FLOAT)
                  .HostMemory("input_sizes"),
              MakeKernel<Conv2DBackpropInputOp<float>>);
  r->Register(KernelDef("Conv2DBackpropInput", kDeviceTypeCpu)
                  .TypeConstraint("T", DT_DOUBLE)
                  .HostMemory("input_sizes"),
              MakeKernel<Conv2DBackpropInputOp<double>>);
  r->Register(KernelDef("Conv2DBackpropFilter", kDeviceTypeCpu)
                  .TypeConstraint("T", DT_FLOAT)
                  .HostMemory("filter_sizes"),
              MakeKernel<Conv2DBackpropFilterOp<float>>);
  r->Register(KernelDef("Conv2DBackpropFilter", kDeviceTypeCpu)
                  .TypeConstraint("T", DT_DOUBLE)
                  .HostMemory("filter_sizes"),
              MakeKernel<Conv2DBackpropFilterOp<double>>);
}

}  // namespace weft
