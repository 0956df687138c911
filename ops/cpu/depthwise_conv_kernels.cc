// DepthwiseConv2dNative and its two backprops on CPU (NHWC), float and
// double. Input [N, H, W, C], filter [KH, KW, C, M], output [N, OH, OW, C*M]:
//   out[n, oh, ow, c*M + m] = sum over (kh, kw) of
//       x[n, oh*s - pad + kh*d, ow*s - pad + kw*d, c] * f[kh, kw, c, m]
// Each channel has its own small filter, so there is no GEMM to hand the
// work to (MobileNet's and EfficientNet's layers): the loops walk output
// pixels and accumulate whole channel vectors, contiguous in the input, the
// filter and the output alike, with Eigen doing the vector arithmetic (M = 1,
// by far the common case, is one multiply-add per vector lane).
//   forward:         threads take output rows (n, oh);
//   backprop input:  threads take input rows (n, ih), each gathering the
//                    output pixels whose windows cover it (no write races,
//                    no col2im);
//   backprop filter: threads take output rows into partial filter sums,
//                    added at the end.
#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/conv_im2col.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/fused_epilogue.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"

namespace weft {
namespace {

// The window position (kh or kw) reaches input index `i` from output index
// `o`: i = o * stride - pad + k * dil.
struct Axis {
  int64_t stride, dil, pad, in_size, out_size;
  int64_t In(int64_t o, int64_t k) const { return o * stride - pad + k * dil; }
  // The output index whose window puts tap k on input i, or -1.
  int64_t Out(int64_t i, int64_t k) const {
    const int64_t num = i + pad - k * dil;
    if (num < 0 || num % stride != 0) return -1;
    const int64_t o = num / stride;
    return o < out_size ? o : -1;
  }
};

struct Geometry {
  WindowDims d;
  int64_t mult;  // M, the filter's channel multiplier
  Axis rows() const {
    return {d.stride_rows, d.dil_rows, d.pad_top, d.in_rows, d.out_rows};
  }
  Axis cols() const {
    return {d.stride_cols, d.dil_cols, d.pad_left, d.in_cols, d.out_cols};
  }
};

absl::Status CheckFilter(const TensorShape& filter, int64_t in_depth,
                         const char* what) {
  if (filter.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be 4-dimensional [rows, cols, in_depth, multiplier], "
              "got shape ", filter.DebugString()));
  }
  if (filter.dim_size(2) != in_depth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input and ", what, " must have the same depth: ", in_depth, " vs ",
        filter.dim_size(2)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Geometry> MakeGeometry(const WindowAttrs& attrs,
                                      const TensorShape& input,
                                      const TensorShape& filter,
                                      const char* filter_what) {
  if (input.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must be 4-dimensional (NHWC), got shape ", input.DebugString()));
  }
  WEFT_RETURN_IF_ERROR(CheckFilter(filter, input.dim_size(3), filter_what));
  Geometry g;
  g.mult = filter.dim_size(3);
  WEFT_ASSIGN_OR_RETURN(
      g.d, ComputeWindowDims(attrs, input, filter.dim_size(0), filter.dim_size(1),
                             input.dim_size(3) * g.mult));
  return g;
}

// acc[c*M + m] += x[c] * f[c*M + m] over C channels (the forward tap), or,
// with kTransposed, acc[c] += sum over m of x[c*M + m] * f[c*M + m] (the
// input gradient's tap).
template <typename T, bool kTransposed>
inline void Tap(const T* x, const T* f, int64_t channels, int64_t mult, T* acc) {
  if (mult == 1) {
    ArrayMap<T>(acc, channels) +=
        ConstArrayMap<T>(x, channels) * ConstArrayMap<T>(f, channels);
    return;
  }
  for (int64_t ch = 0; ch < channels; ++ch) {
    const T* fc = f + ch * mult;
    if (kTransposed) {
      const T* xc = x + ch * mult;
      T s = acc[ch];
      for (int64_t m = 0; m < mult; ++m) s += xc[m] * fc[m];
      acc[ch] = s;
    } else {
      T* ac = acc + ch * mult;
      for (int64_t m = 0; m < mult; ++m) ac[m] += x[ch] * fc[m];
    }
  }
}

// Calls fn(in_offset, tap, out_offset) for every filter tap of output row
// r = (n, oh) that lands inside the input: the tap's input pixel, its index
// kh * win_cols + kw, and the output pixel, as element offsets of the
// pixels' channel vectors.
template <typename Fn>
inline void ForEachTap(const Geometry& g, int64_t r, Fn fn) {
  const WindowDims& d = g.d;
  const Axis rows = g.rows(), cols = g.cols();
  const int64_t n = r / d.out_rows, oh = r % d.out_rows;
  for (int64_t kh = 0; kh < d.win_rows; ++kh) {
    const int64_t ih = rows.In(oh, kh);
    if (ih < 0 || ih >= d.in_rows) continue;
    const int64_t in_row = (n * d.in_rows + ih) * d.in_cols;
    for (int64_t ow = 0; ow < d.out_cols; ++ow) {
      for (int64_t kw = 0; kw < d.win_cols; ++kw) {
        const int64_t iw = cols.In(ow, kw);
        if (iw < 0 || iw >= d.in_cols) continue;
        fn((in_row + iw) * d.in_depth, kh * d.win_cols + kw,
           (r * d.out_cols + ow) * d.out_depth);
      }
    }
  }
}

template <typename T>
void Forward(OpKernelContext* c, const Geometry& g, const T* x, const T* f, T* y) {
  const WindowDims& d = g.d;
  const int64_t cost = d.out_cols * d.win_rows * d.win_cols * d.out_depth;
  ParallelRange(c, d.batch * d.out_rows, cost, [&](int64_t b, int64_t e) {
    std::fill(y + b * d.out_cols * d.out_depth, y + e * d.out_cols * d.out_depth, T(0));
    for (int64_t r = b; r < e; ++r) {
      ForEachTap(g, r, [&](int64_t in, int64_t tap, int64_t out) {
        Tap<T, false>(x + in, f + tap * d.out_depth, d.in_depth, g.mult, y + out);
      });
    }
  });
}

template <typename T>
void BackpropInput(OpKernelContext* c, const Geometry& g, const T* f,
                   const T* dy, T* dx) {
  const WindowDims& d = g.d;
  const Axis rows = g.rows(), cols = g.cols();
  const int64_t depth = d.in_depth, out_depth = d.out_depth;
  const int64_t cost = d.in_cols * d.win_rows * d.win_cols * out_depth;
  ParallelRange(c, d.batch * d.in_rows, cost, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / d.in_rows, ih = r % d.in_rows;
      T* dx_row = dx + r * d.in_cols * depth;
      std::fill(dx_row, dx_row + d.in_cols * depth, T(0));
      for (int64_t kh = 0; kh < d.win_rows; ++kh) {
        const int64_t oh = rows.Out(ih, kh);
        if (oh < 0) continue;
        const T* dy_row = dy + (n * d.out_rows + oh) * d.out_cols * out_depth;
        for (int64_t iw = 0; iw < d.in_cols; ++iw) {
          for (int64_t kw = 0; kw < d.win_cols; ++kw) {
            const int64_t ow = cols.Out(iw, kw);
            if (ow < 0) continue;
            Tap<T, true>(dy_row + ow * out_depth,
                         f + (kh * d.win_cols + kw) * out_depth, depth, g.mult,
                         dx_row + iw * depth);
          }
        }
      }
    }
  });
}

// sum[kh, kw, c*M + m] += x[.., c] * dy[.., c*M + m] over the output rows
// [first, last): the filter tap's gradient is the forward tap with the
// filter's place taken by dy.
template <typename T>
void FilterSums(const Geometry& g, const T* x, const T* dy, int64_t first,
                int64_t last, T* sum) {
  for (int64_t r = first; r < last; ++r) {
    ForEachTap(g, r, [&](int64_t in, int64_t tap, int64_t out) {
      Tap<T, false>(x + in, dy + out, g.d.in_depth, g.mult,
                    sum + tap * g.d.out_depth);
    });
  }
}

template <typename T>
absl::Status BackpropFilter(OpKernelContext* c, const Geometry& g, const T* x,
                            const T* dy, T* df, int64_t filter_size) {
  const int64_t out_rows = g.d.batch * g.d.out_rows;
  std::fill(df, df + filter_size, T(0));
  ThreadPool* pool = c->intra_op_pool();
  const int64_t work = out_rows * g.d.out_cols * g.d.win_rows * g.d.win_cols *
                       g.d.out_depth;
  const int64_t parts = pool == nullptr || work < kParallelMinCost
                            ? 1
                            : PartsFor(pool, out_rows);
  Tensor partial;
  if (parts > 1) {
    WEFT_RETURN_IF_ERROR(c->allocate_temp(
        DataTypeToEnum<T>::value, TensorShape({parts - 1, filter_size}), &partial));
    std::fill(partial.data<T>(), partial.data<T>() + (parts - 1) * filter_size, T(0));
  }
  ForEachPart(pool, parts, [&](int64_t p) {
    T* sum = p == 0 ? df : partial.data<T>() + (p - 1) * filter_size;
    FilterSums(g, x, dy, out_rows * p / parts, out_rows * (p + 1) / parts, sum);
  });
  for (int64_t p = 1; p < parts; ++p) {
    ArrayMap<T>(df, filter_size) +=
        ConstArrayMap<T>(partial.data<T>() + (p - 1) * filter_size, filter_size);
  }
  return absl::OkStatus();
}

class DepthwiseBase : public OpKernel {
 public:
  explicit DepthwiseBase(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ParseWindowAttrs(c, WindowKind::kConv, &attrs_));
    set_expensive(true);
  }

 protected:
  WindowAttrs attrs_;
};

template <typename T>
class DepthwiseConv2dNativeOp : public DepthwiseBase {
 public:
  using DepthwiseBase::DepthwiseBase;
  void Compute(OpKernelContext* c) override { ConvolveInto(c); }

 protected:
  // Convolves into output 0 and returns it; null, with c's status set, if
  // the inputs are refused.
  Tensor* ConvolveInto(OpKernelContext* c) {
    const Tensor& input = c->input(0);
    const Tensor& filter = c->input(1);
    absl::StatusOr<Geometry> g =
        MakeGeometry(attrs_, input.shape(), filter.shape(), "filter");
    if (!g.ok()) {
      c->SetStatus(g.status());
      return nullptr;
    }
    const WindowDims& d = g->d;
    Tensor* out;
    absl::Status s = c->allocate_output(
        0, TensorShape({d.batch, d.out_rows, d.out_cols, d.out_depth}), &out);
    if (!s.ok()) {
      c->SetStatus(s);
      return nullptr;
    }
    if (out->NumElements() > 0) Forward(c, *g, input.data<T>(), filter.data<T>(), out->data<T>());
    return out;
  }
};

// _FusedDepthwiseConv2dNative: the convolution, then the BiasAdd and
// activation TensorFlow's remapper (or Weft's, runtime/kernel_fusion.h)
// fused after it, in one pass over the output (fused_epilogue.h).
template <typename T>
class FusedDepthwiseConv2dNativeOp : public DepthwiseConv2dNativeOp<T> {
 public:
  explicit FusedDepthwiseConv2dNativeOp(OpKernelConstruction* c)
      : DepthwiseConv2dNativeOp<T>(c) {
    c->SetStatus(ParseFusedEpilogue(c, /*allow_batch_norm=*/false, &epilogue_));
  }
  void Compute(OpKernelContext* c) override {
    Tensor* out = this->ConvolveInto(c);
    if (out == nullptr || out->NumElements() == 0) return;
    const int64_t depth = out->dim_size(3);
    OP_REQUIRES_OK(c, ApplyFusedEpilogue<T>(c, epilogue_, /*first_arg=*/2,
                                            out->NumElements() / depth, depth,
                                            out->data<T>()));
  }

 private:
  FusedEpilogue epilogue_;
};

template <typename T>
class DepthwiseBackpropInputOp : public DepthwiseBase {
 public:
  using DepthwiseBase::DepthwiseBase;
  void Compute(OpKernelContext* c) override {
    TensorShape in_shape;
    OP_REQUIRES_OK(c, ReadSizes(c->input(0), "input_sizes", &in_shape));
    const Tensor& filter = c->input(1);
    const Tensor& dy = c->input(2);
    absl::StatusOr<Geometry> g =
        MakeGeometry(attrs_, in_shape, filter.shape(), "filter");
    OP_REQUIRES_OK(c, g.status());
    OP_REQUIRES_OK(c, CheckBackprop(g->d, dy));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in_shape, &out));
    if (out->NumElements() == 0) return;
    BackpropInput(c, *g, filter.data<T>(), dy.data<T>(), out->data<T>());
  }
};

template <typename T>
class DepthwiseBackpropFilterOp : public DepthwiseBase {
 public:
  using DepthwiseBase::DepthwiseBase;
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    TensorShape f_shape;
    OP_REQUIRES_OK(c, ReadSizes(c->input(1), "filter_sizes", &f_shape));
    const Tensor& dy = c->input(2);
    absl::StatusOr<Geometry> g =
        MakeGeometry(attrs_, input.shape(), f_shape, "filter_sizes");
    OP_REQUIRES_OK(c, g.status());
    OP_REQUIRES_OK(c, CheckBackprop(g->d, dy));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, f_shape, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(c, BackpropFilter(c, *g, input.data<T>(), dy.data<T>(),
                                     out->data<T>(), out->NumElements()));
  }
};

template <template <typename> class Op>
void RegisterBoth(KernelRegistry* r, const char* name) {
  r->Register(KernelDef(name, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
              MakeKernel<Op<float>>);
  r->Register(KernelDef(name, kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE),
              MakeKernel<Op<double>>);
}

}  // namespace

void RegisterDepthwiseConvKernels(KernelRegistry* r) {
  RegisterBoth<DepthwiseConv2dNativeOp>(r, "DepthwiseConv2dNative");
  // TensorFlow's CPU kernel takes float only.
  r->Register(KernelDef("_FusedDepthwiseConv2dNative", kDeviceTypeCpu)
                  .TypeConstraint("T", DT_FLOAT),
              MakeKernel<FusedDepthwiseConv2dNativeOp<float>>);
  RegisterBoth<DepthwiseBackpropInputOp>(r, "DepthwiseConv2dNativeBackpropInput");
  RegisterBoth<DepthwiseBackpropFilterOp>(r, "DepthwiseConv2dNativeBackpropFilter");
}

}  // namespace weft
