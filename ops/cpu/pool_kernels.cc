// Pooling on CPU (NHWC): MaxPool, MaxPoolV2 (ksize and strides as inputs),
// MaxPoolGrad, MaxPoolGradGrad (and their V2 forms, the window as inputs),
// AvgPool,
// AvgPoolGrad, each parallelised over images or (image, output row) with the
// device's intra-op pool.
//
// Semantics follow TensorFlow's CPU kernels: MaxPool ignores padding;
// MaxPoolGrad recomputes the arg max from orig_input (the first maximum in
// row-major window order wins) and routes each gradient there;
// MaxPoolGradGrad reads, for each window, grad at that same arg max (TF looks
// for the first entry equal to orig_output, which is the same entry when
// orig_output is orig_input's max pool); both route through
// pool_max_route.h. AvgPool divides by the number of window entries inside
// the input.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/conv_kernels.h"
#include "ops/cpu/pool_max_route.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// The window of output (oh, ow), clipped to the input.
inline PoolWindow WindowAt(const WindowDims& d, int64_t oh, int64_t ow) {
  const int64_t hs = oh * d.stride_rows - d.pad_top;
  const int64_t ws = ow * d.stride_cols - d.pad_left;
  return {std::max<int64_t>(hs, 0), std::min(hs + d.win_rows, d.in_rows),
          std::max<int64_t>(ws, 0), std::min(ws + d.win_cols, d.in_cols)};
}

absl::StatusOr<WindowDims> PoolDims(const WindowAttrs& a, const Tensor& input) {
  if (input.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must be 4-dimensional (NHWC), got shape ",
        input.shape().DebugString()));
  }
  return ComputeWindowDims(a, input.shape(), a.ksize_rows, a.ksize_cols,
                           input.dim_size(3));
}

// Runs fn(b, oh) for every image and output row, in parallel.
template <typename Fn>
void ForEachOutputRow(OpKernelContext* c, const WindowDims& d, Fn fn) {
  const int64_t cost = d.out_cols * d.win_rows * d.win_cols * d.in_depth;
  c->intra_op_pool()->ParallelFor(d.batch * d.out_rows, cost,
                                  [&](int64_t begin, int64_t end) {
                                    for (int64_t i = begin; i < end; ++i) {
                                      fn(i / d.out_rows, i % d.out_rows);
                                    }
                                  });
}

class PoolOpBase : public OpKernel {
 public:
  explicit PoolOpBase(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ParseWindowAttrs(c, WindowKind::kPool, &attrs_));
    set_expensive(true);
  }

 protected:
  WindowAttrs attrs_;
};

// Output 0 of c: the max pool of input 0 under `attrs`.
template <typename T>
void MaxPoolWith(OpKernelContext* c, const WindowAttrs& attrs) {
  const Tensor& input = c->input(0);
  absl::StatusOr<WindowDims> dims = PoolDims(attrs, input);
  OP_REQUIRES_OK(c, dims.status());
  const WindowDims& d = *dims;
  Tensor* out;
  OP_REQUIRES_OK(c, c->allocate_output(
                        0, TensorShape({d.batch, d.out_rows, d.out_cols, d.in_depth}),
                        &out));
  const T* x = input.data<T>();
  T* y = out->data<T>();
  const int64_t depth = d.in_depth;
  ForEachOutputRow(c, d, [&](int64_t b, int64_t oh) {
    const T* image = x + b * d.in_rows * d.in_cols * depth;
    for (int64_t ow = 0; ow < d.out_cols; ++ow) {
      T* dst = y + ((b * d.out_rows + oh) * d.out_cols + ow) * depth;
      std::fill(dst, dst + depth, std::numeric_limits<T>::lowest());
      const PoolWindow w = WindowAt(d, oh, ow);
      for (int64_t h = w.h0; h < w.h1; ++h) {
        for (int64_t col = w.w0; col < w.w1; ++col) {
          const T* src = image + (h * d.in_cols + col) * depth;
          for (int64_t i = 0; i < depth; ++i) dst[i] = std::max(dst[i], src[i]);
        }
      }
    }
  });
}

template <typename T>
class MaxPoolOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;
  void Compute(OpKernelContext* c) override { MaxPoolWith<T>(c, attrs_); }
};

// A 4-entry window vector (MaxPoolV2's ksize or strides input), 1 in the
// batch and depth dims, each entry >= 1.
absl::Status WindowInput(const Tensor& t, const char* field, std::vector<int64_t>* v) {
  WEFT_RETURN_IF_ERROR(ReadIntVector(t, field, v));
  if (v->size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Sliding window ", field, " field must specify 4 dimensions"));
  }
  if ((*v)[0] != 1 || (*v)[3] != 1) {
    return absl::UnimplementedError(
        "Pooling is not yet supported on the batch or depth dimension.");
  }
  if ((*v)[1] < 1 || (*v)[2] < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Sliding window ", field, " must be positive, got [", absl::StrJoin(*v, ","), "]"));
  }
  return absl::OkStatus();
}

// MaxPoolV2 and its gradients: the window comes from two int32 inputs
// (ksize at `kWindowInput`, strides after it) rather than attrs; `Run` is
// the attr form's computation.
template <typename T, int kWindowInput, void (*Run)(OpKernelContext*, const WindowAttrs&)>
class WindowFromInputsOp : public OpKernel {
 public:
  explicit WindowFromInputsOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string format;
    c->SetStatus(c->GetAttr("data_format", &format));
    if (c->status().ok() && format != "NHWC") {
      c->SetStatus(absl::UnimplementedError(absl::StrCat(
          c->def().op(), " on CPU supports only data_format NHWC, got ", format)));
    }
    if (c->status().ok()) c->SetStatus(c->GetAttr("padding", &attrs_.padding));
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    std::vector<int64_t> ksize, strides;
    OP_REQUIRES_OK(c, WindowInput(c->input(kWindowInput), "ksize", &ksize));
    OP_REQUIRES_OK(c, WindowInput(c->input(kWindowInput + 1), "stride", &strides));
    WindowAttrs a = attrs_;
    a.ksize_rows = ksize[1];
    a.ksize_cols = ksize[2];
    a.stride_rows = strides[1];
    a.stride_cols = strides[2];
    Run(c, a);
  }

 private:
  WindowAttrs attrs_;
};

// The window of MaxPoolGrad / MaxPoolGradGrad(orig_input, orig_output,
// grad), with orig_output checked to have the pooled shape and grad the
// pooled shape (grad_pooled) or orig_input's.
absl::StatusOr<WindowDims> MaxPoolGradDims(const WindowAttrs& attrs,
                                           OpKernelContext* c, bool grad_pooled) {
  const Tensor& input = c->input(0);
  WEFT_ASSIGN_OR_RETURN(const WindowDims d, PoolDims(attrs, input));
  const TensorShape pooled({d.batch, d.out_rows, d.out_cols, d.in_depth});
  const TensorShape& want_grad = grad_pooled ? pooled : input.shape();
  if (c->input(1).shape() != pooled || c->input(2).shape() != want_grad) {
    return absl::InvalidArgumentError(absl::StrCat(
        "orig_output ", c->input(1).shape().DebugString(),
        " must have the pooled shape ", pooled.DebugString(), " and grad ",
        c->input(2).shape().DebugString(), " the shape ", want_grad.DebugString(),
        grad_pooled ? " (pooled)" : " (orig_input's)"));
  }
  return d;
}

template <typename T>
void MaxPoolGradWith(OpKernelContext* c, const WindowAttrs& attrs) {
    const Tensor& input = c->input(0);
    const Tensor& grad = c->input(2);
    absl::StatusOr<WindowDims> dims = MaxPoolGradDims(attrs, c, /*grad_pooled=*/true);
    OP_REQUIRES_OK(c, dims.status());
    const WindowDims& d = *dims;
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &out));
    const T* x = input.data<T>();
    const T* g = grad.data<T>();
    T* dx = out->data<T>();
    const int64_t depth = d.in_depth;
    const int64_t image_size = d.in_rows * d.in_cols * depth;
    // Windows of different output rows overlap, so parallelise over images.
    // Each image's gradient is zeroed by the thread that sums into it, in
    // parallel and just before its windows bring it back into cache.
    c->intra_op_pool()->ParallelFor(
        d.batch, d.out_rows * d.out_cols * d.win_rows * d.win_cols * depth,
        [&](int64_t begin, int64_t end) {
          MaxRouteScratch<T> scratch;
          for (int64_t b = begin; b < end; ++b) {
            const T* image = x + b * image_size;
            T* dimage = dx + b * image_size;
            std::fill(dimage, dimage + image_size, T(0));
            for (int64_t oh = 0; oh < d.out_rows; ++oh) {
              for (int64_t ow = 0; ow < d.out_cols; ++ow) {
                const PoolWindow w = WindowAt(d, oh, ow);
                if (w.h0 >= w.h1 || w.w0 >= w.w1) continue;
                const T* gsrc = g + ((b * d.out_rows + oh) * d.out_cols + ow) * depth;
                RouteToMax(d, w, image, MaxRoute::kScatterAdd, gsrc, dimage,
                           &scratch);
              }
            }
          }
        });
}

template <typename T>
class MaxPoolGradOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;
  void Compute(OpKernelContext* c) override { MaxPoolGradWith<T>(c, attrs_); }
};

// MaxPoolGradGrad(orig_input, orig_output, grad): output[b, oh, ow, ch] =
// grad[b, h, w, ch] at the arg max (h, w) of orig_input's window (oh, ow).
template <typename T>
void MaxPoolGradGradWith(OpKernelContext* c, const WindowAttrs& attrs) {
    const Tensor& input = c->input(0);
    const Tensor& grad = c->input(2);
    absl::StatusOr<WindowDims> dims = MaxPoolGradDims(attrs, c, /*grad_pooled=*/false);
    OP_REQUIRES_OK(c, dims.status());
    const WindowDims& d = *dims;
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, TensorShape({d.batch, d.out_rows, d.out_cols, d.in_depth}),
                          &out));
    const T* x = input.data<T>();
    const T* g = grad.data<T>();
    T* y = out->data<T>();
    const int64_t depth = d.in_depth;
    const int64_t image_size = d.in_rows * d.in_cols * depth;
    ForEachOutputRow(c, d, [&](int64_t b, int64_t oh) {
      MaxRouteScratch<T> scratch;
      for (int64_t ow = 0; ow < d.out_cols; ++ow) {
        T* dst = y + ((b * d.out_rows + oh) * d.out_cols + ow) * depth;
        const PoolWindow w = WindowAt(d, oh, ow);
        if (w.h0 >= w.h1 || w.w0 >= w.w1) {
          std::fill(dst, dst + depth, T(0));
          continue;
        }
        RouteToMax(d, w, x + b * image_size, MaxRoute::kGather,
                   g + b * image_size, dst, &scratch);
      }
    });
}

template <typename T>
class MaxPoolGradGradOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;
  void Compute(OpKernelContext* c) override { MaxPoolGradGradWith<T>(c, attrs_); }
};

template <typename T>
class AvgPoolOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    absl::StatusOr<WindowDims> dims = PoolDims(attrs_, input);
    OP_REQUIRES_OK(c, dims.status());
    const WindowDims& d = *dims;
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, TensorShape({d.batch, d.out_rows, d.out_cols, d.in_depth}),
                          &out));
    const T* x = input.data<T>();
    T* y = out->data<T>();
    const int64_t depth = d.in_depth;
    ForEachOutputRow(c, d, [&](int64_t b, int64_t oh) {
      const T* image = x + b * d.in_rows * d.in_cols * depth;
      for (int64_t ow = 0; ow < d.out_cols; ++ow) {
        T* dst = y + ((b * d.out_rows + oh) * d.out_cols + ow) * depth;
        std::fill(dst, dst + depth, T(0));
        const PoolWindow w = WindowAt(d, oh, ow);
        for (int64_t h = w.h0; h < w.h1; ++h) {
          for (int64_t col = w.w0; col < w.w1; ++col) {
            const T* src = image + (h * d.in_cols + col) * depth;
            for (int64_t i = 0; i < depth; ++i) dst[i] += src[i];
          }
        }
        const T count = static_cast<T>((w.h1 - w.h0) * (w.w1 - w.w0));
        if (count > 0) {
          for (int64_t i = 0; i < depth; ++i) dst[i] /= count;
        }
      }
    });
  }
};

template <typename T>
class AvgPoolGradOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;
  void Compute(OpKernelContext* c) override {
    const Tensor& sizes = c->input(0);
    const Tensor& grad = c->input(1);
    OP_REQUIRES(c, sizes.dims() == 1 && sizes.NumElements() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "orig_input_shape must be a 1-D tensor of 4 sizes, got ",
                    sizes.DebugString())));
    std::vector<int64_t> v(sizes.data<int32_t>(), sizes.data<int32_t>() + 4);
    absl::StatusOr<TensorShape> in_shape = TensorShape::Build(v);
    OP_REQUIRES(c, in_shape.ok(),
                absl::InvalidArgumentError(absl::StrCat(
                    "orig_input_shape holds invalid sizes [",
                    absl::StrJoin(v, ","), "]")));
    absl::StatusOr<WindowDims> dims = ComputeWindowDims(
        attrs_, *in_shape, attrs_.ksize_rows, attrs_.ksize_cols, v[3]);
    OP_REQUIRES_OK(c, dims.status());
    const WindowDims& d = *dims;
    const TensorShape out_shape({d.batch, d.out_rows, d.out_cols, d.in_depth});
    OP_REQUIRES(c, grad.shape() == out_shape,
                absl::InvalidArgumentError(absl::StrCat(
                    "AvgPoolGrad: grad has shape ", grad.shape().DebugString(),
                    " but the pooled shape is ", out_shape.DebugString())));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, *in_shape, &out));
    const T* g = grad.data<T>();
    T* dx = out->data<T>();
    std::fill(dx, dx + out->NumElements(), T(0));
    const int64_t depth = d.in_depth;
    const int64_t image_size = d.in_rows * d.in_cols * depth;
    c->intra_op_pool()->ParallelFor(
        d.batch, d.out_rows * d.out_cols * d.win_rows * d.win_cols * depth,
        [&](int64_t begin, int64_t end) {
          for (int64_t b = begin; b < end; ++b) {
            T* dimage = dx + b * image_size;
            for (int64_t oh = 0; oh < d.out_rows; ++oh) {
              for (int64_t ow = 0; ow < d.out_cols; ++ow) {
                const PoolWindow w = WindowAt(d, oh, ow);
                const T count = static_cast<T>((w.h1 - w.h0) * (w.w1 - w.w0));
                if (count <= 0) continue;
                const T* gsrc = g + ((b * d.out_rows + oh) * d.out_cols + ow) * depth;
                for (int64_t h = w.h0; h < w.h1; ++h) {
                  for (int64_t col = w.w0; col < w.w1; ++col) {
                    T* dst = dimage + (h * d.in_cols + col) * depth;
                    for (int64_t i = 0; i < depth; ++i) dst[i] += gsrc[i] / count;
                  }
                }
              }
            }
          }
        });
  }
};

template <typename T>
using MaxPoolV2Op = WindowFromInputsOp<T, 1, MaxPoolWith<T>>;
template <typename T>
using MaxPoolGradV2Op = WindowFromInputsOp<T, 3, MaxPoolGradWith<T>>;
template <typename T>
using MaxPoolGradGradV2Op = WindowFromInputsOp<T, 3, MaxPoolGradGradWith<T>>;

template <template <typename> class K, typename T>
void Add(KernelRegistry* r, const char* op) {
  KernelDef def(op, kDeviceTypeCpu);
  def.TypeConstraint("T", DataTypeToEnum<T>::value);
  if (std::string(op) == "AvgPoolGrad") def.HostMemory("orig_input_shape");
  if (absl::EndsWith(op, "V2")) def.HostMemory("ksize").HostMemory("strides");
  r->Register(def, MakeKernel<K<T>>);
}

}  // namespace

void RegisterPoolKernels(KernelRegistry* r) {
  Add<MaxPoolOp, float>(r, "MaxPool");
  Add<MaxPoolOp, double>(r, "MaxPool");
  Add<MaxPoolOp, int32_t>(r, "MaxPool");
  Add<MaxPoolOp, int64_t>(r, "MaxPool");
  Add<MaxPoolV2Op, float>(r, "MaxPoolV2");
  Add<MaxPoolV2Op, double>(r, "MaxPoolV2");
  Add<MaxPoolV2Op, int32_t>(r, "MaxPoolV2");
  Add<MaxPoolV2Op, int64_t>(r, "MaxPoolV2");
  Add<MaxPoolGradOp, float>(r, "MaxPoolGrad");
  Add<MaxPoolGradOp, double>(r, "MaxPoolGrad");
  Add<MaxPoolGradGradOp, float>(r, "MaxPoolGradGrad");
  Add<MaxPoolGradGradOp, double>(r, "MaxPoolGradGrad");
  Add<MaxPoolGradV2Op, float>(r, "MaxPoolGradV2");
  Add<MaxPoolGradV2Op, double>(r, "MaxPoolGradV2");
  Add<MaxPoolGradGradV2Op, float>(r, "MaxPoolGradGradV2");
  Add<MaxPoolGradGradV2Op, double>(r, "MaxPoolGradGradV2");
  Add<AvgPoolOp, float>(r, "AvgPool");
  Add<AvgPoolOp, double>(r, "AvgPool");
  Add<AvgPoolGradOp, float>(r, "AvgPoolGrad");
  Add<AvgPoolGradOp, double>(r, "AvgPoolGrad");
}

}  // namespace weft
