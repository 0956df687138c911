// MaxPoolWithArgmax and MaxPoolGradWithArgmax on CPU (NHWC), TensorFlow's
// semantics: each window's max over the window clipped to the input, the
// first maximum in (row, col) order winning ties (a NaN wins only as the
// window's first entry), and its flat index
//   ((b * height + y) * width + x) * channels + c
// (b * ... only with include_batch_in_index). MaxPoolGradWithArgmax adds
// each gradient, in pooled order, at its arg max within the image. Half and
// bfloat16 compare in float (calc_type.h); windows of output rows, or
// images for the gradient, run in parallel.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "ops/cpu/calc_type.h"
#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/nn3d_kernels.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

class ArgmaxPoolBase : public OpKernel {
 public:
  explicit ArgmaxPoolBase(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ParseWindowAttrs(c, WindowKind::kPool, &attrs_));
    c->SetStatus(c->GetAttr("include_batch_in_index", &include_batch_));
    set_expensive(true);
  }

 protected:
  absl::StatusOr<WindowDims> Dims(const Tensor& input) const {
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input must be 4-dimensional (NHWC), got shape ",
          input.shape().DebugString()));
    }
    return ComputeWindowDims(attrs_, input.shape(), attrs_.ksize_rows,
                             attrs_.ksize_cols, input.dim_size(3));
  }
  static TensorShape Pooled(const WindowDims& d) {
    return TensorShape({d.batch, d.out_rows, d.out_cols, d.in_depth});
  }
  WindowAttrs attrs_;
  bool include_batch_ = false;
};

template <typename T, typename Targmax>
class MaxPoolWithArgmaxOp : public ArgmaxPoolBase {
 public:
  using ArgmaxPoolBase::ArgmaxPoolBase;
  void Compute(OpKernelContext* c) override {
    using C = CalcType<T>;
    const Tensor& input = c->input(0);
    absl::StatusOr<WindowDims> dims = Dims(input);
    OP_REQUIRES_OK(c, dims.status());
    const WindowDims& d = *dims;
    Tensor *out, *argmax;
    OP_REQUIRES_OK(c, c->allocate_output(0, Pooled(d), &out));
    OP_REQUIRES_OK(c, c->allocate_output(1, Pooled(d), &argmax));
    if (out->NumElements() == 0) return;
    CalcBuffer<T> x, y;
    OP_REQUIRES_OK(c, CalcInput<T>(c, input, &x));
    OP_REQUIRES_OK(c, CalcOutput<T>(c, out, &y));
    Targmax* arg = argmax->data<Targmax>();
    const int64_t depth = d.in_depth, rows = d.batch * d.out_rows;
    ParallelRange(c, rows, d.out_cols * d.win_rows * d.win_cols * depth,
                  [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = r / d.out_rows, oh = r % d.out_rows;
        const int64_t base = include_batch_ ? b * d.in_rows * d.in_cols * depth : 0;
        const int64_t h0 = oh * d.stride_rows - d.pad_top;
        const int64_t h_lo = std::max<int64_t>(h0, 0),
                      h_hi = std::min(h0 + d.win_rows, d.in_rows);
        for (int64_t ow = 0; ow < d.out_cols; ++ow) {
          const int64_t o = (r * d.out_cols + ow) * depth;
          const int64_t w0 = ow * d.stride_cols - d.pad_left;
          const int64_t w_lo = std::max<int64_t>(w0, 0),
                        w_hi = std::min(w0 + d.win_cols, d.in_cols);
          for (int64_t ch = 0; ch < depth; ++ch) {
            C best = C(0);
            int64_t best_at = -1;
            for (int64_t h = h_lo; h < h_hi; ++h) {
              for (int64_t w = w_lo; w < w_hi; ++w) {
                const int64_t i = ((b * d.in_rows + h) * d.in_cols + w) * depth + ch;
                if (best_at < 0 || best < x.data[i]) {
                  best = x.data[i];
                  best_at = i;
                }
              }
            }
            y.out[o + ch] = best;
            arg[o + ch] = static_cast<Targmax>(
                best_at < 0 ? -1 : best_at - b * d.in_rows * d.in_cols * depth + base);
          }
        }
      }
    });
    FinishCalcOutput<T>(y, out);
  }
};

template <typename T, typename Targmax>
class MaxPoolGradWithArgmaxOp : public ArgmaxPoolBase {
 public:
  using ArgmaxPoolBase::ArgmaxPoolBase;
  void Compute(OpKernelContext* c) override {
    using C = CalcType<T>;
    const Tensor& input = c->input(0);
    const Tensor& grad = c->input(1);
    const Tensor& argmax = c->input(2);
    absl::StatusOr<WindowDims> dims = Dims(input);
    OP_REQUIRES_OK(c, dims.status());
    const WindowDims& d = *dims;
    OP_REQUIRES(c, grad.shape() == Pooled(d) && argmax.shape() == Pooled(d),
                absl::InvalidArgumentError(absl::StrCat(
                    "grad ", grad.shape().DebugString(), " and argmax ",
                    argmax.shape().DebugString(), " must have the pooled shape ",
                    Pooled(d).DebugString())));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &out));
    if (out->NumElements() == 0) return;
    CalcBuffer<T> g, dx;
    OP_REQUIRES_OK(c, CalcInput<T>(c, grad, &g));
    OP_REQUIRES_OK(c, CalcOutput<T>(c, out, &dx));
    const Targmax* arg = argmax.data<Targmax>();
    const int64_t image = d.in_rows * d.in_cols * d.in_depth;
    const int64_t pooled = d.out_rows * d.out_cols * d.in_depth;
    // The first bad index, per image (-1: none), reported after the loop.
    std::vector<int64_t> bad(d.batch, -1);
    ParallelRange(c, d.batch, pooled + image, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        C* dst = dx.out + b * image;
        std::fill(dst, dst + image, C(0));
        const int64_t offset = include_batch_ ? b * image : 0;
        for (int64_t i = b * pooled; i < (b + 1) * pooled; ++i) {
          const int64_t at = static_cast<int64_t>(arg[i]) - offset;
          if (at < 0 || at >= image) {
            if (bad[b] < 0) bad[b] = i;
            continue;
          }
          dst[at] += g.data[i];
        }
      }
    });
    for (int64_t b = 0; b < d.batch; ++b) {
      OP_REQUIRES(c, bad[b] < 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Received argmax index out of range: argmax[", bad[b],
                      "] = ", static_cast<int64_t>(arg[std::max<int64_t>(bad[b], 0)]),
                      " is outside image ", b, " of input ",
                      input.shape().DebugString(),
                      include_batch_ ? " (include_batch_in_index)" : "")));
    }
    FinishCalcOutput<T>(dx, out);
  }
};

template <typename T, typename Targmax>
void RegisterFor(KernelRegistry* r) {
  const DataType t = DataTypeToEnum<T>::value, ta = DataTypeToEnum<Targmax>::value;
  r->Register(KernelDef("MaxPoolWithArgmax", kDeviceTypeCpu)
                  .TypeConstraint("T", t)
                  .TypeConstraint("Targmax", ta),
              MakeKernel<MaxPoolWithArgmaxOp<T, Targmax>>);
  r->Register(KernelDef("MaxPoolGradWithArgmax", kDeviceTypeCpu)
                  .TypeConstraint("T", t)
                  .TypeConstraint("Targmax", ta),
              MakeKernel<MaxPoolGradWithArgmaxOp<T, Targmax>>);
}

template <typename T>
void RegisterFor(KernelRegistry* r) {
  RegisterFor<T, int64_t>(r);
  RegisterFor<T, int32_t>(r);
}

}  // namespace

void RegisterPoolArgmaxKernels(KernelRegistry* r) {
  RegisterFor<float>(r);
  RegisterFor<double>(r);
  RegisterFor<Half>(r);
  RegisterFor<BFloat16>(r);
  RegisterFor<int32_t>(r);
  RegisterFor<int64_t>(r);
  RegisterFor<uint8_t>(r);
  RegisterFor<int16_t>(r);
  RegisterFor<int8_t>(r);
  RegisterFor<uint16_t>(r);
  RegisterFor<uint32_t>(r);
  RegisterFor<uint64_t>(r);
}

}  // namespace weft
