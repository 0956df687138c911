// Conv2D's gradients on CPU (NHWC), as GEMMs over L2-sized chunks of rows
// (conv_gemm.h), each chunk made and consumed on one thread:
//   Conv2DBackpropInput:  dcol = dy[M, OC] * filter[K, OC]^T, then col2im;
//                         each thread owns whole images (their windows
//                         overlap);
//   Conv2DBackpropFilter: dfilter[K, OC] = sum over chunks of
//                         col[rows, K]^T * dy[rows, OC], one partial sum per
//                         thread, added at the end.
// M = batch * out_rows * out_cols, K = filter rows * cols * in_depth.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/conv_im2col.h"
#include "ops/cpu/conv_kernels.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/cpu/conv_sliding.h"
#include "ops/cpu/transpose_2d.h"
#include "runtime/core/thread_pool.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

// For a stride-1 convolution whose input depth fills most of a vector (or is
// 1: SmallGemm then takes dot products), the geometry of
// dx = conv(dy, flipped filter): dy's windows, padded by what the forward
// padding leaves, give dx's pixels. nullopt when that does not apply
// (strides, column dilation, depths 2-7, padding past the window).
absl::optional<WindowDims> TransposedConv(const WindowDims& d) {
  if (d.stride_rows != 1 || d.stride_cols != 1 || d.dil_cols != 1 ||
      (d.in_depth < 8 && d.in_depth != 1)) {
    return absl::nullopt;
  }
  WindowDims t;
  t.batch = d.batch;
  t.in_rows = d.out_rows;
  t.in_cols = d.out_cols;
  t.in_depth = d.out_depth;
  t.win_rows = d.win_rows;
  t.win_cols = d.win_cols;
  t.dil_rows = d.dil_rows;
  t.pad_top = (d.win_rows - 1) * d.dil_rows - d.pad_top;
  t.pad_left = d.win_cols - 1 - d.pad_left;
  t.out_rows = d.in_rows;
  t.out_cols = d.in_cols;
  t.out_depth = d.in_depth;
  if (t.pad_top < 0 || t.pad_left < 0) return absl::nullopt;
  return t;
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
    const int64_t m = d.batch * d.out_rows * d.out_cols;
    const int64_t k = d.win_rows * d.win_cols * d.in_depth;
    const int64_t n = d.out_depth;
    if (m == 0 || k == 0 || n == 0) {
      std::fill(dx, dx + out->NumElements(), T(0));
      return;
    }
    const T* w = filter.data<T>();
    const T* g = dy.data<T>();
    if (absl::optional<WindowDims> t = TransposedConv(d)) {
      // Stride 1: dx is a forward convolution of dy with the filter turned
      // 180 degrees and its depths swapped, read in place (no col2im).
      Tensor flipped;
      OP_REQUIRES_OK(c, c->allocate_temp(
                            DataTypeToEnum<T>::value,
                            TensorShape({d.win_rows, d.win_cols, n, d.in_depth}), &flipped));
      T* f = flipped.data<T>();
      const int64_t c_in = d.in_depth;
      for (int64_t kh = 0; kh < d.win_rows; ++kh) {
        for (int64_t kw = 0; kw < d.win_cols; ++kw) {
          const T* src = w + ((d.win_rows - 1 - kh) * d.win_cols + (d.win_cols - 1 - kw)) * c_in * n;
          BatchTranspose2D(c->intra_op_pool(), src, f + (kh * d.win_cols + kw) * n * c_in,
                           1, c_in, n);
        }
      }
      OP_REQUIRES_OK(c, ConvWindowed(c, *t, g, f, dx));
      return;
    }
    // dcol = dy * filter^T, with the filter transposed once to [n, k] so the
    // GEMM reads it row by row.
    Tensor wt_tensor;
    OP_REQUIRES_OK(c, c->allocate_temp(DataTypeToEnum<T>::value,
                                       TensorShape({n, k}), &wt_tensor));
    T* wt = wt_tensor.data<T>();
    BatchTranspose2D(c->intra_op_pool(), w, wt, 1, k, n);
    const int64_t chunk = ConvChunkRows(d);
    ThreadPool* pool = c->intra_op_pool();
    if (ColIsInput(d)) {  // dx itself is dcol
      const int64_t chunks = (m + chunk - 1) / chunk;
      pool->ParallelFor(chunks, chunk * k * n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t r0 = i * chunk, rows = std::min(chunk, m - r0);
          SmallGemm<T>(rows, k, n, g + r0 * n, n, 1, wt, k, dx + r0 * k, k, false);
        }
      });
      return;
    }
    // col2im adds into overlapping windows of one image, so each part owns
    // whole images: it zeroes them, then makes and scatters their dcol rows
    // a chunk at a time.
    const int64_t pixels = d.out_rows * d.out_cols;
    const int64_t image_size = d.in_rows * d.in_cols * d.in_depth;
    const int64_t parts = PartsFor(pool, d.batch);
    ForEachPart(pool, parts, [&](int64_t p) {
      const int64_t b0 = d.batch * p / parts, b1 = d.batch * (p + 1) / parts;
      std::fill(dx + b0 * image_size, dx + b1 * image_size, T(0));
      std::unique_ptr<T[]> col(new T[chunk * k]);
      for (int64_t r0 = b0 * pixels; r0 < b1 * pixels; r0 += chunk) {
        const int64_t rows = std::min(chunk, b1 * pixels - r0);
        SmallGemm<T>(rows, k, n, g + r0 * n, n, 1, wt, k, col.get(), k, false);
        Col2ImAdd<T>(d, col.get(), r0, r0 + rows, dx);
      }
    });
  }

 private:
  WindowAttrs attrs_;
};

// dw += the partial sums of parts 1 .. parts-1 (rows of `partial`), dw's
// ranges spread over the pool.
template <typename T>
void AddPartials(ThreadPool* pool, const Tensor& partial, int64_t parts, int64_t size,
                 T* dw) {
  if (parts <= 1) return;
  pool->ParallelFor(size, parts, [&](int64_t b, int64_t e) {
    for (int64_t p = 1; p < parts; ++p) {
      AddRun(partial.data<T>() + (p - 1) * size + b, e - b, dw + b);
    }
  });
}

// Conv2DBackpropFilter reading windows in place (no im2col), the parts
// splitting the images: for image b and window row kh,
//   dw[kh][kw * in_depth + ch, :] += sum over (oh, ow) of
//       x_windowed[b, oh * stride + kh * dil, ow * stride + kw, ch] * dy[b, oh, ow, :]
// is one GEMM whose depth is the output pixels, one segment per output row.
template <typename T>
absl::Status WindowedBackpropFilter(OpKernelContext* c, const WindowDims& d,
                                    const T* x, const T* g, T* dw) {
  WindowedInput<T> in;
  WEFT_RETURN_IF_ERROR(MakeWindowedInput(c, d, x, &in));
  const int64_t c_in = d.in_depth, n = d.out_depth;
  const int64_t row_k = d.win_cols * c_in;  // dw rows per window row
  const int64_t k = d.win_rows * row_k;
  const int64_t pixels = d.out_rows * d.out_cols;
  const GemmALayout la{1, d.stride_cols * c_in, d.out_cols,
                       d.stride_rows * in.cols * c_in};
  ThreadPool* pool = c->intra_op_pool();
  const int64_t parts = PartsFor(pool, d.batch);
  Tensor partial;
  if (parts > 1) {
    WEFT_RETURN_IF_ERROR(c->allocate_temp(DataTypeToEnum<T>::value,
                                          TensorShape({parts - 1, k * n}), &partial));
  }
  ForEachPart(pool, parts, [&](int64_t p) {
    T* sum = p == 0 ? dw : partial.data<T>() + (p - 1) * k * n;
    const int64_t b0 = d.batch * p / parts, b1 = d.batch * (p + 1) / parts;
    for (int64_t b = b0; b < b1; ++b) {
      for (int64_t kh = 0; kh < d.win_rows; ++kh) {
        const T* a = in.data + ((b * in.rows + kh * d.dil_rows) * in.cols) * c_in;
        // Stride 1 with 32 output channels: each input value broadcast once
        // for every window column it meets (conv_sliding.h).
        if constexpr (std::is_same_v<T, float>) {
          if (d.stride_cols == 1 &&
              SlidingFilterGradRow(d.out_rows, d.out_cols, n, d.win_cols, c_in, a,
                                   d.stride_rows * in.cols * c_in, g + b * pixels * n,
                                   d.out_cols * n, sum + kh * row_k * n, b > b0)) {
            continue;
          }
        }
        SmallGemm<T>(row_k, n, pixels, a, la, g + b * pixels * n, n,
                     sum + kh * row_k * n, n, b > b0);
      }
    }
  });
  AddPartials(c->intra_op_pool(), partial, parts, k * n, dw);
  return absl::OkStatus();
}

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
    // Each part sums col^T * dy over its share into its own [k, n] (part 0
    // straight into dw); the parts are added at the end.
    ThreadPool* pool = c->intra_op_pool();
    if (CanReadWindowsInPlace(d) && d.batch >= pool->NumThreads()) {
      OP_REQUIRES_OK(c, WindowedBackpropFilter(c, d, x, g, dw));
      return;
    }
    const bool col_is_input = ColIsInput(d);
    const int64_t chunk = ConvChunkRows(d);
    const int64_t chunks = (m + chunk - 1) / chunk;
    const int64_t parts = PartsFor(pool, chunks);
    Tensor partial;
    if (parts > 1) {
      OP_REQUIRES_OK(c, c->allocate_temp(DataTypeToEnum<T>::value,
                                         TensorShape({parts - 1, k * n}), &partial));
    }
    ForEachPart(pool, parts, [&](int64_t p) {
      T* sum = p == 0 ? dw : partial.data<T>() + (p - 1) * k * n;
      std::unique_ptr<T[]> col(col_is_input ? nullptr : new T[chunk * k]);
      const int64_t first = chunks * p / parts, last = chunks * (p + 1) / parts;
      for (int64_t i = first; i < last; ++i) {
        const int64_t r0 = i * chunk, rows = std::min(chunk, m - r0);
        const T* a = ColRows(d, x, col_is_input, r0, rows, col.get());
        // sum[k, n] += a[rows, k]^T * dy[rows, n]
        SmallGemm<T>(k, n, rows, a, 1, k, g + r0 * n, n, sum, n, i > first);
      }
    });
    AddPartials(c->intra_op_pool(), partial, parts, k * n, dw);
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
