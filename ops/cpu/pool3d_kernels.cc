// The volumetric pools on CPU (NDHWC), computed in CalcType (float for half
// and bfloat16, calc_type.h), with TensorFlow's CPU semantics:
//   MaxPool3D / AvgPool3D: max / mean over the window clipped to the input
//     (AvgPool3D divides by the clipped window's size);
//   MaxPool3DGrad(orig_input, orig_output, grad): every window entry equal
//     to orig_output gets that window's gradient (ties all do);
//   AvgPool3DGrad: each window's gradient / its clipped size to every entry;
//   MaxPool3DGradGrad(orig_input, orig_output, grad): per window, grad at
//     the first entry (plane, row, col order) equal to orig_output.
// Forward ops run over output rows in parallel. The gradients are gathered:
// each input row sums, in output order, what the windows covering it send,
// so threads own disjoint rows and the sums are added in TensorFlow's order.
#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/calc_type.h"
#include "ops/cpu/conv3d_geometry.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/nn3d_kernels.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

// Output positions [lo, hi] of dim k whose windows hold input position i.
void Covering(const Window3Dims& d, int k, int64_t i, int64_t* lo, int64_t* hi) {
  const int64_t num = i + d.pad[k] - d.win[k] + 1;
  *lo = num <= 0 ? 0 : (num + d.stride[k] - 1) / d.stride[k];
  *hi = std::min(d.out[k] - 1, (i + d.pad[k]) / d.stride[k]);
}

// The clipped window of output pixel (op, oh, ow).
struct Box {
  int64_t lo[3], hi[3];
  int64_t Size() const { return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
};
Box BoxAt(const Window3Dims& d, int64_t op, int64_t oh, int64_t ow) {
  Box b;
  const int64_t o[3] = {op, oh, ow};
  for (int k = 0; k < 3; ++k) WindowRange(d, k, o[k], &b.lo[k], &b.hi[k]);
  return b;
}

// Calls fn(ip, ih, iw) for every input pixel of the box, in order.
template <typename Fn>
void ForEachInBox(const Box& b, Fn fn) {
  for (int64_t p = b.lo[0]; p < b.hi[0]; ++p) {
    for (int64_t h = b.lo[1]; h < b.hi[1]; ++h) {
      for (int64_t w = b.lo[2]; w < b.hi[2]; ++w) fn(p, h, w);
    }
  }
}

class Pool3DBase : public OpKernel {
 public:
  explicit Pool3DBase(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ParseWindow3Attrs(c, /*pool=*/true, &attrs_));
    set_expensive(true);
  }

 protected:
  absl::StatusOr<Window3Dims> Dims(const TensorShape& in) const {
    if (in.dims() != 5) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input must be 5-dimensional (NDHWC), got shape ", in.DebugString()));
    }
    return ComputeWindow3Dims(attrs_, in, attrs_.ksize, in.dim_size(4));
  }

  // MaxPool3DGrad / MaxPool3DGradGrad(orig_input, orig_output, grad):
  // checks the shapes (grad pooled, or orig_input's), allocates output 0
  // (the other shape) and reads the inputs as CalcType into in[0..2].
  // False when there is nothing to do (an error set, or an empty output).
  template <typename T>
  bool MaxGradInputs(OpKernelContext* c, bool grad_pooled, Window3Dims* d,
                     CalcBuffer<T> in[3], CalcBuffer<T>* out, Tensor** out_tensor) {
    const Tensor& input = c->input(0);
    absl::StatusOr<Window3Dims> dims = Dims(input.shape());
    if (!dims.ok()) {
      c->SetStatus(dims.status());
      return false;
    }
    *d = *dims;
    const TensorShape pooled = d->OutShape();
    absl::Status s = CheckShape(c->input(1), pooled, "orig_output");
    if (s.ok()) s = CheckShape(c->input(2), grad_pooled ? pooled : input.shape(), "grad");
    if (s.ok()) s = c->allocate_output(0, grad_pooled ? input.shape() : pooled, out_tensor);
    if (!s.ok() || (*out_tensor)->NumElements() == 0) {
      c->SetStatus(s);
      return false;
    }
    for (int i = 0; i < 3 && s.ok(); ++i) s = CalcInput<T>(c, c->input(i), &in[i]);
    if (s.ok()) s = CalcOutput<T>(c, *out_tensor, out);
    c->SetStatus(s);
    return s.ok();
  }
  Window3Attrs attrs_;
};

// Runs fn(b, op, oh, ow, out_pixel_index) for every output pixel, output
// rows (b, op, oh) in parallel.
template <typename Fn>
void ForEachOutputPixel(OpKernelContext* c, const Window3Dims& d, Fn fn) {
  const int64_t rows = d.batch * d.out[0] * d.out[1];
  const int64_t cost = std::max<int64_t>(1, d.out[2] * d.WinSize() * d.in_depth);
  ParallelRange(c, rows, cost, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t oh = r % d.out[1], op = (r / d.out[1]) % d.out[0],
                    b = r / (d.out[1] * d.out[0]);
      for (int64_t ow = 0; ow < d.out[2]; ++ow) fn(b, op, oh, ow, r * d.out[2] + ow);
    }
  });
}

// MaxPool3D (kMax) and AvgPool3D.
template <typename T, bool kMax>
class Pool3DOp : public Pool3DBase {
 public:
  using Pool3DBase::Pool3DBase;
  void Compute(OpKernelContext* c) override {
    using C = CalcType<T>;
    const Tensor& input = c->input(0);
    absl::StatusOr<Window3Dims> dims = Dims(input.shape());
    OP_REQUIRES_OK(c, dims.status());
    const Window3Dims& d = *dims;
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, d.OutShape(), &out));
    if (out->NumElements() == 0) return;
    CalcBuffer<T> x, y;
    OP_REQUIRES_OK(c, CalcInput<T>(c, input, &x));
    OP_REQUIRES_OK(c, CalcOutput<T>(c, out, &y));
    const int64_t depth = d.in_depth;
    ForEachOutputPixel(c, d, [&](int64_t b, int64_t op, int64_t oh, int64_t ow,
                                 int64_t o) {
      C* dst = y.out + o * depth;
      std::fill(dst, dst + depth, kMax ? std::numeric_limits<C>::lowest() : C(0));
      const Box box = BoxAt(d, op, oh, ow);
      ForEachInBox(box, [&](int64_t p, int64_t h, int64_t w) {
        const C* src = x.data + (((b * d.in[0] + p) * d.in[1] + h) * d.in[2] + w) * depth;
        for (int64_t i = 0; i < depth; ++i) {
          dst[i] = kMax ? std::max(dst[i], src[i]) : dst[i] + src[i];
        }
      });
      if (!kMax) {
        const C count = static_cast<C>(box.Size());
        for (int64_t i = 0; i < depth; ++i) dst[i] /= count;
      }
    });
    FinishCalcOutput<T>(y, out);
  }
};

// Runs fn(b, ip, ih, iw, out_lo, out_hi) for every input pixel, input rows
// in parallel, with the ranges of outputs whose windows cover it.
template <typename Fn>
void ForEachInputPixel(OpKernelContext* c, const Window3Dims& d, Fn fn) {
  const int64_t rows = d.batch * d.in[0] * d.in[1];
  const int64_t cost = std::max<int64_t>(1, d.in[2] * d.WinSize() * d.in_depth);
  ParallelRange(c, rows, cost, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t ih = r % d.in[1], ip = (r / d.in[1]) % d.in[0],
                    b = r / (d.in[1] * d.in[0]);
      Box outs;
      Covering(d, 0, ip, &outs.lo[0], &outs.hi[0]);
      Covering(d, 1, ih, &outs.lo[1], &outs.hi[1]);
      for (int64_t iw = 0; iw < d.in[2]; ++iw) {
        Covering(d, 2, iw, &outs.lo[2], &outs.hi[2]);
        fn(b, ip, ih, iw, r * d.in[2] + iw, outs);  // outs: inclusive ranges
      }
    }
  });
}

// Calls fn(o) for every output pixel index in the inclusive ranges, in order.
template <typename Fn>
void ForEachCovering(const Window3Dims& d, int64_t b, const Box& outs, Fn fn) {
  for (int64_t p = outs.lo[0]; p <= outs.hi[0]; ++p) {
    for (int64_t h = outs.lo[1]; h <= outs.hi[1]; ++h) {
      for (int64_t w = outs.lo[2]; w <= outs.hi[2]; ++w) {
        fn(((b * d.out[0] + p) * d.out[1] + h) * d.out[2] + w, p, h, w);
      }
    }
  }
}

template <typename T>
class MaxPool3DGradOp : public Pool3DBase {
 public:
  using Pool3DBase::Pool3DBase;
  void Compute(OpKernelContext* c) override {
    using C = CalcType<T>;
    Window3Dims d;
    CalcBuffer<T> in[3], dx;
    Tensor* out;
    if (!MaxGradInputs<T>(c, /*grad_pooled=*/true, &d, in, &dx, &out)) return;
    const CalcBuffer<T>& x = in[0], &y = in[1], &g = in[2];
    const int64_t depth = d.in_depth;
    ForEachInputPixel(c, d, [&](int64_t b, int64_t, int64_t, int64_t, int64_t i,
                                const Box& outs) {
      C* dst = dx.out + i * depth;
      const C* src = x.data + i * depth;
      std::fill(dst, dst + depth, C(0));
      ForEachCovering(d, b, outs, [&](int64_t o, int64_t, int64_t, int64_t) {
        for (int64_t ch = 0; ch < depth; ++ch) {
          if (src[ch] == y.data[o * depth + ch]) dst[ch] += g.data[o * depth + ch];
        }
      });
    });
    FinishCalcOutput<T>(dx, out);
  }
};

template <typename T>
class AvgPool3DGradOp : public Pool3DBase {
 public:
  using Pool3DBase::Pool3DBase;
  void Compute(OpKernelContext* c) override {
    using C = CalcType<T>;
    TensorShape in_shape;
    OP_REQUIRES_OK(c, ReadSizes5(c->input(0), "orig_input_shape", &in_shape));
    absl::StatusOr<Window3Dims> dims = Dims(in_shape);
    OP_REQUIRES_OK(c, dims.status());
    const Window3Dims& d = *dims;
    OP_REQUIRES_OK(c, CheckShape(c->input(1), d.OutShape(), "grad"));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in_shape, &out));
    if (out->NumElements() == 0) return;
    CalcBuffer<T> g, dx;
    OP_REQUIRES_OK(c, CalcInput<T>(c, c->input(1), &g));
    OP_REQUIRES_OK(c, CalcOutput<T>(c, out, &dx));
    const int64_t depth = d.in_depth;
    ForEachInputPixel(c, d, [&](int64_t b, int64_t, int64_t, int64_t, int64_t i,
                                const Box& outs) {
      C* dst = dx.out + i * depth;
      std::fill(dst, dst + depth, C(0));
      ForEachCovering(d, b, outs, [&](int64_t o, int64_t p, int64_t h, int64_t w) {
        const C count = static_cast<C>(BoxAt(d, p, h, w).Size());
        for (int64_t ch = 0; ch < depth; ++ch) dst[ch] += g.data[o * depth + ch] / count;
      });
    });
    FinishCalcOutput<T>(dx, out);
  }
};

template <typename T>
class MaxPool3DGradGradOp : public Pool3DBase {
 public:
  using Pool3DBase::Pool3DBase;
  void Compute(OpKernelContext* c) override {
    using C = CalcType<T>;
    Window3Dims d;
    CalcBuffer<T> in[3], dy;
    Tensor* out;
    if (!MaxGradInputs<T>(c, /*grad_pooled=*/false, &d, in, &dy, &out)) return;
    const CalcBuffer<T>& x = in[0], &y = in[1], &g = in[2];
    const int64_t depth = d.in_depth;
    ForEachOutputPixel(c, d, [&](int64_t b, int64_t op, int64_t oh, int64_t ow,
                                 int64_t o) {
      C* dst = dy.out + o * depth;
      const C* want = y.data + o * depth;
      std::fill(dst, dst + depth, C(0));
      std::vector<bool> found(depth, false);
      ForEachInBox(BoxAt(d, op, oh, ow), [&](int64_t p, int64_t h, int64_t w) {
        const int64_t i = (((b * d.in[0] + p) * d.in[1] + h) * d.in[2] + w) * depth;
        for (int64_t ch = 0; ch < depth; ++ch) {
          if (!found[ch] && x.data[i + ch] == want[ch]) {
            found[ch] = true;
            dst[ch] = g.data[i + ch];
          }
        }
      });
    });
    FinishCalcOutput<T>(dy, out);
  }
};

template <template <typename> class K, typename... Ts>
void AddAll(KernelRegistry* r, const char* op, bool tinput = false,
            const char* host = nullptr) {
  (
      [&] {
        KernelDef def(op, kDeviceTypeCpu);
        def.TypeConstraint("T", DataTypeToEnum<Ts>::value);
        if (tinput) def.TypeConstraint("TInput", DataTypeToEnum<Ts>::value);
        if (host != nullptr) def.HostMemory(host);
        r->Register(def, MakeKernel<K<Ts>>);
      }(),
      ...);
}

template <typename T>
using MaxPool3DOp = Pool3DOp<T, true>;
template <typename T>
using AvgPool3DOp = Pool3DOp<T, false>;

}  // namespace

void RegisterPool3DKernels(KernelRegistry* r) {
  AddAll<MaxPool3DOp, float, Half, BFloat16>(r, "MaxPool3D");
  AddAll<AvgPool3DOp, float, double, Half, BFloat16>(r, "AvgPool3D");
  AddAll<MaxPool3DGradOp, float, Half, BFloat16>(r, "MaxPool3DGrad", true);
  AddAll<AvgPool3DGradOp, float, double, Half, BFloat16>(r, "AvgPool3DGrad", false,
                                                          "orig_input_shape");
  AddAll<MaxPool3DGradGradOp, float, double, Half, BFloat16>(r, "MaxPool3DGradGrad");
}

}  // namespace weft
