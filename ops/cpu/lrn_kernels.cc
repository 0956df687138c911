// Local response normalisation on CPU (NHWC, across the channels of each
// pixel), in float for half and bfloat16 (calc_type.h), TensorFlow's
// formulas with r = depth_radius and window(j) = [j - r, j + r] clipped to
// the channels:
//   LRN:     norm[j] = bias + alpha * sum_{k in window(j)} x[k]^2
//            y[j] = x[j] * norm[j]^-beta   (1 / norm for beta 1,
//                   1 / sqrt(norm) for beta 0.5, as TensorFlow's
//                   special cases)
//   LRNGrad(dy, x, y): for every j and k in window(j)
//            dx[k] += dy[j] * (x[k] * (-2 * alpha * beta * y[j]) / norm[j]
//                              + (k == j ? norm[j]^-beta : 0))
//            with y the given output_image, summed in TensorFlow's order.
// Pixels run in parallel.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ops/cpu/calc_type.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/nn3d_kernels.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

struct LrnAttrs {
  int64_t radius = 5;
  float bias = 1, alpha = 1, beta = 0.5f;

  // Channels [begin, end) of window(j) among `depth`.
  void Window(int64_t j, int64_t depth, int64_t* begin, int64_t* end) const {
    *begin = std::max<int64_t>(0, j - radius);
    *end = std::min<int64_t>(depth, j + radius + 1);
  }
  float Norm(const float* x, int64_t j, int64_t depth) const {
    int64_t b, e;
    Window(j, depth, &b, &e);
    float sum = 0;
    for (int64_t k = b; k < e; ++k) sum += x[k] * x[k];
    return sum * alpha + bias;
  }
  float Pow(float norm) const {
    if (beta == 1.0f) return 1.0f / norm;
    if (beta == 0.5f) return 1.0f / std::sqrt(norm);
    return std::exp(std::log(norm) * -beta);
  }
};

class LrnBase : public OpKernel {
 public:
  explicit LrnBase(OpKernelConstruction* c) : OpKernel(c) {
    int64_t radius = 0;
    c->SetStatus(c->GetAttr("depth_radius", &radius));
    if (radius < 0 || radius > std::numeric_limits<int32_t>::max()) {
      c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
          "depth_radius = ", radius, " must be in [0, int max]")));
    }
    attrs_.radius = radius;
    c->SetStatus(c->GetAttr("bias", &attrs_.bias));
    c->SetStatus(c->GetAttr("alpha", &attrs_.alpha));
    c->SetStatus(c->GetAttr("beta", &attrs_.beta));
  }

 protected:
  // Runs fn(pixel) over the pixels of a 4-D `t` named `what`, in parallel.
  template <typename Fn>
  absl::Status ForEachPixel(OpKernelContext* c, const Tensor& t, const char* what,
                            Fn fn) {
    if (t.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " must be 4-dimensional, got shape ", t.shape().DebugString()));
    }
    const int64_t depth = t.dim_size(3);
    const int64_t pixels = depth == 0 ? 0 : t.NumElements() / depth;
    const int64_t window = std::min<int64_t>(depth, 2 * attrs_.radius + 1);
    ParallelRange(c, pixels, depth * (window + 20), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) fn(p * depth, depth);
    });
    return absl::OkStatus();
  }
  LrnAttrs attrs_;
};

template <typename T>
class LrnOp : public LrnBase {
 public:
  using LrnBase::LrnBase;
  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    OP_REQUIRES(c, input.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be 4-dimensional, got shape ",
                    input.shape().DebugString())));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &out));
    CalcBuffer<T> x, y;
    OP_REQUIRES_OK(c, CalcInput<T>(c, input, &x));
    OP_REQUIRES_OK(c, CalcOutput<T>(c, out, &y));
    OP_REQUIRES_OK(c, ForEachPixel(c, input, "input", [&](int64_t o, int64_t depth) {
      const float* xs = x.data + o;
      for (int64_t j = 0; j < depth; ++j) {
        y.out[o + j] = xs[j] * attrs_.Pow(attrs_.Norm(xs, j, depth));
      }
    }));
    FinishCalcOutput<T>(y, out);
  }
};

template <typename T>
class LrnGradOp : public LrnBase {
 public:
  using LrnBase::LrnBase;
  void Compute(OpKernelContext* c) override {
    const Tensor& dy = c->input(0);
    const Tensor& input = c->input(1);
    const Tensor& output = c->input(2);
    OP_REQUIRES(c, dy.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input_grads must be 4-dimensional, got shape ",
                    dy.shape().DebugString())));
    OP_REQUIRES(c, input.shape() == dy.shape() && output.shape() == dy.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "input_grads ", dy.shape().DebugString(), ", input_image ",
                    input.shape().DebugString(), " and output_image ",
                    output.shape().DebugString(), " must have one shape")));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &out));
    CalcBuffer<T> g, x, y, dx;
    OP_REQUIRES_OK(c, CalcInput<T>(c, dy, &g));
    OP_REQUIRES_OK(c, CalcInput<T>(c, input, &x));
    OP_REQUIRES_OK(c, CalcInput<T>(c, output, &y));
    OP_REQUIRES_OK(c, CalcOutput<T>(c, out, &dx));
    const float ab2 = -2.0f * attrs_.alpha * attrs_.beta;
    OP_REQUIRES_OK(c, ForEachPixel(c, input, "input_image", [&](int64_t o, int64_t depth) {
      const float* xs = x.data + o;
      float* d = dx.out + o;
      std::fill(d, d + depth, 0.0f);
      for (int64_t j = 0; j < depth; ++j) {
        const float norm = attrs_.Norm(xs, j, depth);
        const float pow = attrs_.Pow(norm);
        const float act = ab2 * y.data[o + j];
        const float gs = g.data[o + j];
        int64_t b, e;
        attrs_.Window(j, depth, &b, &e);
        for (int64_t k = b; k < e; ++k) {
          float dyi = xs[k] * act / norm;
          if (k == j) dyi += pow;
          d[k] += dyi * gs;
        }
      }
    }));
    FinishCalcOutput<T>(dx, out);
  }
};

}  // namespace

void RegisterLrnKernels(KernelRegistry* r) {
  r->Register(KernelDef("LRN", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
              MakeKernel<LrnOp<float>>);
  r->Register(KernelDef("LRN", kDeviceTypeCpu).TypeConstraint("T", DT_HALF),
              MakeKernel<LrnOp<Half>>);
  r->Register(KernelDef("LRN", kDeviceTypeCpu).TypeConstraint("T", DT_BFLOAT16),
              MakeKernel<LrnOp<BFloat16>>);
  r->Register(KernelDef("LRNGrad", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
              MakeKernel<LrnGradOp<float>>);
  r->Register(KernelDef("LRNGrad", kDeviceTypeCpu).TypeConstraint("T", DT_HALF),
              MakeKernel<LrnGradOp<Half>>);
  r->Register(KernelDef("LRNGrad", kDeviceTypeCpu).TypeConstraint("T", DT_BFLOAT16),
              MakeKernel<LrnGradOp<BFloat16>>);
}

}  // namespace weft
