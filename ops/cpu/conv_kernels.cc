// Conv2D on CPU (NHWC): mostly one GEMM per output row reading the windows
// in place (ConvWindowed, conv_im2col.h); 1x1 convolutions with a filter
// larger than L2 as one packed GEMM; otherwise (column dilation) im2col +
// GEMM in L2-sized chunks of output pixels, the chunks spread over the
// device's intra-op pool, each made and multiplied (conv_gemm.h) on one
// thread, so it never leaves that core's cache and the scratch stays small.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "ops/cpu/conv_forward.h"
#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/conv_im2col.h"
#include "ops/cpu/conv_kernels.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/cpu/fused_epilogue.h"
#include "ops/cpu/matmul_gemm.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {

template <typename T>
absl::Status Conv2DForward(OpKernelContext* c, const WindowDims& d, const T* x,
                           const T* w, T* y) {
  const int64_t m = d.batch * d.out_rows * d.out_cols;
  const int64_t k = d.win_rows * d.win_cols * d.in_depth;
  const int64_t n = d.out_depth;
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {
    std::fill(y, y + m * n, T(0));
    return absl::OkStatus();
  }
  if constexpr (std::is_same_v<T, float>) {
    // A 1x1 convolution is a MatMul of the input itself; with a filter too
    // large for L2 the packed GEMM (matmul_sgemm.h), which reads it once per
    // depth block, beats reading it per output row (ResNet-50 batch 1:
    // 58.5 -> 56.7 ms a step, doc/benchmarks.md).
    if (ColIsInput(d) && ConvFilterExceedsL2<T>(k, n)) {
      return Gemm(c, false, false, m, n, k, x, w, y);
    }
  }
  if (CanReadWindowsInPlace(d)) {
    return ConvWindowed(c, d, x, w, y);
  }
  const bool col_is_input = ColIsInput(d);
  const int64_t chunk = ConvChunkRows(d);
  const int64_t chunks = (m + chunk - 1) / chunk;
  // Each shard makes its chunks of the col matrix into its own buffer and
  // multiplies them at once, while they are still in cache.
  c->intra_op_pool()->ParallelFor(chunks, chunk * k * n, [&](int64_t b, int64_t e) {
    std::unique_ptr<T[]> col(col_is_input ? nullptr : new T[chunk * k]);
    for (int64_t i = b; i < e; ++i) {
      const int64_t r0 = i * chunk, rows = std::min(chunk, m - r0);
      const T* a = ColRows(d, x, col_is_input, r0, rows, col.get());
      SmallGemm<T>(rows, n, k, a, k, 1, w, n, y + r0 * n, n, false);
    }
  });
  return absl::OkStatus();
}

template absl::Status Conv2DForward<float>(OpKernelContext*, const WindowDims&,
                                           const float*, const float*, float*);
template absl::Status Conv2DForward<double>(OpKernelContext*,
                                            const WindowDims&, const double*,
                                            const double*, double*);
template absl::Status Conv2DForward<int32_t>(OpKernelContext*,
                                             const WindowDims&, const int32_t*,
                                             const int32_t*, int32_t*);

namespace {

// The output geometry of Conv2D (and _FusedConv2D) for these inputs;
// INVALID_ARGUMENT naming the input at fault.
absl::StatusOr<WindowDims> ConvDims(const WindowAttrs& attrs, const Tensor& input,
                                    const Tensor& filter) {
  if (filter.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "filter must be 4-dimensional [rows, cols, in_depth, out_depth], got shape ",
        filter.shape().DebugString()));
  }
  if (input.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must be 4-dimensional (NHWC), got shape ", input.shape().DebugString()));
  }
  if (input.dim_size(3) != filter.dim_size(2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input depth ", input.dim_size(3), " must equal the filter's in_depth ",
        filter.dim_size(2), " (input ", input.shape().DebugString(), ", filter ",
        filter.shape().DebugString(), "; grouped convolution is not supported on CPU)"));
  }
  return ComputeWindowDims(attrs, input.shape(), filter.dim_size(0), filter.dim_size(1),
                           filter.dim_size(3));
}

// Conv2D; and _FusedConv2D (`fused`): the same, then the epilogue
// TensorFlow's remapper fused after it (fused_epilogue.h) in one pass over
// the output. host_args (quantized scales) are not read.
template <typename T>
class Conv2DOp : public OpKernel {
 public:
  Conv2DOp(OpKernelConstruction* c, bool fused) : OpKernel(c), fused_(fused) {
    c->SetStatus(ParseWindowAttrs(c, WindowKind::kConv, &attrs_));
    if (fused_) {
      std::string filter_format = "HWIO";
      if (c->HasAttr("filter_format")) c->SetStatus(c->GetAttr("filter_format", &filter_format));
      if (filter_format != "HWIO") {
        c->SetStatus(absl::UnimplementedError(absl::StrCat(
            "_FusedConv2D with filter_format ", filter_format,
            " is not supported on CPU (HWIO is)")));
      }
      c->SetStatus(ParseFusedEpilogue(c, /*allow_batch_norm=*/true, &epilogue_));
    }
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    absl::StatusOr<WindowDims> dims = ConvDims(attrs_, c->input(0), c->input(1));
    OP_REQUIRES_OK(c, dims.status());
    const WindowDims& d = *dims;
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, TensorShape({d.batch, d.out_rows, d.out_cols, d.out_depth}),
                          &out));
    T* y = out->data<T>();
    OP_REQUIRES_OK(c, Conv2DForward<T>(c, d, c->input(0).data<T>(), c->input(1).data<T>(), y));
    if constexpr (std::is_floating_point_v<T>) {
      if (fused_) {
        OP_REQUIRES_OK(c, ApplyFusedEpilogue<T>(c, epilogue_, /*first_arg=*/2,
                                                d.batch * d.out_rows * d.out_cols,
                                                d.out_depth, y));
      }
    }
  }

 private:
  const bool fused_;
  WindowAttrs attrs_;
  FusedEpilogue epilogue_;
};

// The kernel factory for Conv2D (fused = false) or _FusedConv2D.
template <typename T>
KernelFactory ConvKernel(bool fused) {
  return [fused](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
    return std::make_unique<Conv2DOp<T>>(c, fused);
  };
}

}  // namespace

void RegisterConvKernels(KernelRegistry* r) {
  r->Register(KernelDef("Conv2D", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
              ConvKernel<float>(false));
  r->Register(KernelDef("Conv2D", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE),
              ConvKernel<double>(false));
  r->Register(KernelDef("Conv2D", kDeviceTypeCpu).TypeConstraint("T", DT_INT32),
              ConvKernel<int32_t>(false));
  r->Register(KernelDef("_FusedConv2D", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
              ConvKernel<float>(true));
  r->Register(KernelDef("_FusedConv2D", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE),
              ConvKernel<double>(true));
  RegisterConvBackpropKernels(r);
  RegisterDepthwiseConvKernels(r);
  RegisterPoolKernels(r);
}

}  // namespace weft
