// FusedBatchNorm, FusedBatchNormV2/V3 and FusedBatchNormGrad/V2/V3 on CPU,
// with TensorFlow's formulas (its Eigen CPU kernels):
//
//   training:  mean = sum(x) / n, var = sum((x - mean)^2) / n over every axis
//              but the channel axis (n elements a channel);
//              y = (x - mean) * (rsqrt(var + eps) * scale) + offset;
//              batch_mean = mean, batch_variance = var * n / (n - 1)
//              (Bessel; n = 1 divides by 1), or with exponential_avg_factor
//              f != 1: (1 - f) * old + f * new for both; reserve_space_1/2
//              = mean and the biased var (what the gradient reads).
//   inference: y as above with the given mean and variance, which
//              batch_mean / batch_variance (and here the reserve spaces,
//              which TensorFlow's CPU kernel leaves unwritten) repeat.
//   empty x:   batch_mean and batch_variance are NaN.
//   V3's reserve_space_3 is a scalar 0.
//   grad, training (reserve spaces = batch mean and biased variance):
//     dx = scale * r * (dy - mean(dy) - (x - mean) * r^2 * mean(dy * (x - mean)))
//     dscale = r * sum(dy * (x - mean)), doffset = sum(dy), r = rsqrt(var + eps)
//   grad, inference (the population mean and variance): dx = dy * scale * r,
//     same dscale and doffset; NHWC / NDHWC only, as TensorFlow's.
//
// T is float or half (computed in float and rounded once, as Eigen::half
// casts do), the statistics float. The layouts need no transposes: x is
// viewed as [outer, channels, inner] (channels last: inner = 1; channels
// first: outer = batch). Per-channel sums accumulate in double over blocks
// whose partition depends only on the shape (so results do not depend on
// the thread count) and are added in block order; element-wise passes run
// over rows or planes on the intra-op pool, with inner loops the compiler
// vectorises for float.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/float_convert.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

// x as [outer, channels, inner].
struct Layout {
  int64_t outer = 0, channels = 0, inner = 1;
  int64_t per_channel() const { return outer * inner; }
};

Layout MakeLayout(const TensorShape& s, bool channels_first) {
  Layout l;
  const int c = channels_first ? 1 : s.dims() - 1;
  l.channels = s.dim_size(c);
  l.outer = 1;
  for (int i = 0; i < c; ++i) l.outer *= s.dim_size(i);
  for (int i = c + 1; i < s.dims(); ++i) l.inner *= s.dim_size(i);
  return l;
}

// Rows of this many elements or more make one block of a channel sum.
constexpr int64_t kBlockElements = 1 << 14;

// sums[ch] = sum of fn(i, ch) over the elements i of channel ch, in double.
template <typename Fn>
std::vector<double> ChannelSums(OpKernelContext* c, const Layout& l, Fn fn) {
  const int64_t channels = l.channels;
  std::vector<double> sums(channels, 0.0);
  if (l.inner == 1) {
    // Blocks of whole rows, a partial sum per channel each.
    const int64_t rows = l.outer;
    const int64_t block = std::max<int64_t>(1, kBlockElements / channels);
    const int64_t blocks = (rows + block - 1) / block;
    std::vector<double> partial(blocks * channels, 0.0);
    ParallelRange(c, blocks, block * channels * 3, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        double* acc = partial.data() + b * channels;
        const int64_t end = std::min(rows, (b + 1) * block);
        for (int64_t r = b * block; r < end; ++r) {
          const int64_t base = r * channels;
          for (int64_t ch = 0; ch < channels; ++ch) acc[ch] += fn(base + ch, ch);
        }
      }
    });
    for (int64_t b = 0; b < blocks; ++b) {
      for (int64_t ch = 0; ch < channels; ++ch) sums[ch] += partial[b * channels + ch];
    }
  } else {
    // Each (outer, channel) plane is contiguous: one sum a plane.
    const int64_t planes = l.outer * channels;
    std::vector<double> partial(planes, 0.0);
    ParallelRange(c, planes, l.inner * 3, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t ch = p % channels;
        const int64_t base = p * l.inner;
        double acc = 0;
        for (int64_t s = 0; s < l.inner; ++s) acc += fn(base + s, ch);
        partial[p] = acc;
      }
    });
    for (int64_t p = 0; p < planes; ++p) sums[p % channels] += partial[p];
  }
  return sums;
}

// Calls fn(i, ch) for every element i (channel ch), on the pool.
template <typename Fn>
void ForEachElement(OpKernelContext* c, const Layout& l, Fn fn) {
  const int64_t channels = l.channels;
  if (l.inner == 1) {
    ParallelRange(c, l.outer, channels * 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t base = r * channels;
        for (int64_t ch = 0; ch < channels; ++ch) fn(base + ch, ch);
      }
    });
  } else {
    ParallelRange(c, l.outer * channels, l.inner * 4,
                  [&](int64_t p0, int64_t p1) {
                    for (int64_t p = p0; p < p1; ++p) {
                      const int64_t ch = p % channels;
                      const int64_t base = p * l.inner;
                      for (int64_t s = 0; s < l.inner; ++s) fn(base + s, ch);
                    }
                  });
  }
}

absl::Status CheckRank45(const Tensor& t, const char* name) {
  if (t.dims() == 4 || t.dims() == 5) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("input must be 4 or 5-dimensional", t.shape().DebugString(),
                   " (", name, ")"));
}

absl::Status CheckVector(const Tensor& t, const char* name) {
  if (t.dims() == 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      name, " must be 1-dimensional", t.shape().DebugString()));
}

absl::Status CheckChannels(const Tensor& t, const std::string& name,
                           int64_t channels, const char* prefix = "") {
  if (t.NumElements() == channels) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      prefix, name, " must have the same number of elements as the channels "
      "of x, got ", t.NumElements(), " and ", channels));
}

// The attrs both directions read.
struct BatchNormAttrs {
  float epsilon = 1e-4f;
  float factor = 1.0f;
  bool channels_first = false;
  bool is_training = true;
};

BatchNormAttrs ReadAttrs(OpKernelConstruction* c) {
  BatchNormAttrs a;
  std::string format;
  c->SetStatus(c->GetAttr("epsilon", &a.epsilon));
  if (c->HasAttr("exponential_avg_factor")) {
    c->SetStatus(c->GetAttr("exponential_avg_factor", &a.factor));
  }
  c->SetStatus(c->GetAttr("data_format", &format));
  c->SetStatus(c->GetAttr("is_training", &a.is_training));
  if (format != "NHWC" && format != "NCHW" && format != "NDHWC" &&
      format != "NCDHW") {
    c->SetStatus(absl::InvalidArgumentError(
        absl::StrCat("Invalid data format '", format, "'")));
  }
  a.channels_first = format == "NCHW" || format == "NCDHW";
  return a;
}

inline float Rsqrt(float v) { return 1.0f / std::sqrt(v); }

template <typename T, bool kV3>
class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* c)
      : OpKernel(c), a_(ReadAttrs(c)) {
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    const Tensor& scale = c->input(1);
    const Tensor& offset = c->input(2);
    const Tensor& mean_in = c->input(3);
    const Tensor& var_in = c->input(4);
    OP_REQUIRES_OK(c, CheckRank45(x, "x"));
    OP_REQUIRES_OK(c, CheckVector(scale, "scale"));
    OP_REQUIRES_OK(c, CheckVector(offset, "offset"));
    OP_REQUIRES_OK(c, CheckVector(mean_in, "estimated_mean"));
    OP_REQUIRES_OK(c, CheckVector(var_in, "estimated_variance"));
    const Layout l = MakeLayout(x.shape(), a_.channels_first);
    const int64_t channels = l.channels;
    OP_REQUIRES_OK(c, CheckChannels(scale, "scale", channels));
    OP_REQUIRES_OK(c, CheckChannels(offset, "offset", channels));
    const bool blend = a_.factor != 1.0f;
    if (!a_.is_training || blend) {
      const char* prefix = a_.is_training ? "When exponential_avg_factor != 1, "
                                          : "When is_training=false, ";
      OP_REQUIRES_OK(c, CheckChannels(mean_in, "mean", channels, prefix));
      OP_REQUIRES_OK(c, CheckChannels(var_in, "variance", channels, prefix));
    }
    Tensor* y = nullptr;
    OP_REQUIRES_OK(c, c->forward_input_or_allocate_output(0, 0, x.shape(), &y));
    Tensor* out[4] = {};
    for (int i = 0; i < 4; ++i) {
      OP_REQUIRES_OK(c, c->allocate_output(i + 1, scale.shape(), &out[i]));
    }
    if constexpr (kV3) {
      Tensor* reserve3 = nullptr;
      OP_REQUIRES_OK(c, c->allocate_output(5, TensorShape({}), &reserve3));
      reserve3->data<float>()[0] = 0.0f;
    }
    float* batch_mean = out[0]->data<float>();
    float* batch_var = out[1]->data<float>();
    float* saved_mean = out[2]->data<float>();
    float* saved_var = out[3]->data<float>();
    if (x.NumElements() == 0) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      for (Tensor* t : out) std::fill_n(t->data<float>(), channels, nan);
      return;
    }
    const T* xp = x.data<T>();
    std::vector<float> mean(channels), var(channels);
    if (a_.is_training) {
      const double n = static_cast<double>(l.per_channel());
      const std::vector<double> sum =
          ChannelSums(c, l, [&](int64_t i, int64_t) { return ToFloat(xp[i]); });
      for (int64_t ch = 0; ch < channels; ++ch) mean[ch] = sum[ch] / n;
      const std::vector<double> sq =
          ChannelSums(c, l, [&](int64_t i, int64_t ch) {
            const float d = ToFloat(xp[i]) - mean[ch];
            return static_cast<double>(d) * d;
          });
      for (int64_t ch = 0; ch < channels; ++ch) var[ch] = sq[ch] / n;
    } else {
      std::copy_n(mean_in.data<float>(), channels, mean.data());
      std::copy_n(var_in.data<float>(), channels, var.data());
    }
    // y = (x - mean) * factor + offset.
    std::vector<float> factor(channels);
    const float* sp = scale.data<float>();
    const float* op = offset.data<float>();
    for (int64_t ch = 0; ch < channels; ++ch) {
      factor[ch] = Rsqrt(var[ch] + a_.epsilon) * sp[ch];
    }
    T* yp = y->data<T>();
    ForEachElement(c, l, [&](int64_t i, int64_t ch) {
      yp[i] = FromFloat<T>((ToFloat(xp[i]) - mean[ch]) * factor[ch] + op[ch]);
    });
    std::copy(mean.begin(), mean.end(), saved_mean);
    std::copy(var.begin(), var.end(), saved_var);
    if (!a_.is_training) {
      std::copy(mean.begin(), mean.end(), batch_mean);
      std::copy(var.begin(), var.end(), batch_var);
      return;
    }
    const float n = static_cast<float>(l.per_channel());
    const float bessel = n / (l.per_channel() > 1 ? n - 1.0f : 1.0f);
    if (!blend) {
      for (int64_t ch = 0; ch < channels; ++ch) {
        batch_mean[ch] = mean[ch];
        batch_var[ch] = var[ch] * bessel;
      }
      return;
    }
    const float keep = 1.0f - a_.factor;
    const float* old_mean = mean_in.data<float>();
    const float* old_var = var_in.data<float>();
    for (int64_t ch = 0; ch < channels; ++ch) {
      batch_mean[ch] = keep * old_mean[ch] + a_.factor * mean[ch];
      batch_var[ch] = keep * old_var[ch] + (a_.factor * bessel) * var[ch];
    }
  }

 private:
  BatchNormAttrs a_;
};

template <typename T>
class FusedBatchNormGradOp : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(OpKernelConstruction* c)
      : OpKernel(c), a_(ReadAttrs(c)) {
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& dy = c->input(0);
    const Tensor& x = c->input(1);
    const Tensor& scale = c->input(2);
    const Tensor& mean_in = c->input(3);
    const Tensor& var_in = c->input(4);
    OP_REQUIRES_OK(c, CheckRank45(dy, "y_backprop"));
    OP_REQUIRES_OK(c, CheckRank45(x, "x"));
    OP_REQUIRES_OK(c, CheckVector(scale, "scale"));
    OP_REQUIRES_OK(c, CheckVector(mean_in, "saved mean"));
    OP_REQUIRES_OK(c, CheckVector(var_in, "saved variance"));
    OP_REQUIRES(c, x.shape() == dy.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "x and y_backprop must have same shape, but x has shape ",
                    x.shape().DebugString(), " and y_backprop has shape ",
                    dy.shape().DebugString())));
    const Layout l = MakeLayout(x.shape(), a_.channels_first);
    const int64_t channels = l.channels;
    OP_REQUIRES_OK(c, CheckChannels(scale, "scale", channels));
    OP_REQUIRES_OK(c, CheckChannels(mean_in, "reserve_space_1", channels));
    OP_REQUIRES_OK(c, CheckChannels(var_in, "reserve_space_2", channels));
    Tensor *dx = nullptr, *dscale = nullptr, *doffset = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, x.shape(), &dx));
    OP_REQUIRES_OK(c, c->allocate_output(1, scale.shape(), &dscale));
    OP_REQUIRES_OK(c, c->allocate_output(2, scale.shape(), &doffset));
    for (int i = 3; i <= 4; ++i) {
      Tensor* placeholder = nullptr;
      OP_REQUIRES_OK(c, c->allocate_output(i, TensorShape({0}), &placeholder));
    }
    float* dscale_p = dscale->data<float>();
    float* doffset_p = doffset->data<float>();
    if (x.NumElements() == 0) {
      std::fill_n(dscale_p, channels, 0.0f);
      std::fill_n(doffset_p, channels, 0.0f);
      return;
    }
    OP_REQUIRES(c, a_.is_training || !a_.channels_first,
                absl::InvalidArgumentError(
                    "The implementation of FusedBatchNormGrad with "
                    "is_training=False only support NHWC tensor format for "
                    "now."));
    const T* dyp = dy.data<T>();
    const T* xp = x.data<T>();
    const float* mean = mean_in.data<float>();
    const float* sp = scale.data<float>();
    std::vector<float> r(channels);
    for (int64_t ch = 0; ch < channels; ++ch) {
      r[ch] = Rsqrt(var_in.data<float>()[ch] + a_.epsilon);
    }
    const std::vector<double> sum_dy =
        ChannelSums(c, l, [&](int64_t i, int64_t) { return ToFloat(dyp[i]); });
    const std::vector<double> sum_dy_xc =
        ChannelSums(c, l, [&](int64_t i, int64_t ch) {
          return static_cast<double>(ToFloat(dyp[i])) * (ToFloat(xp[i]) - mean[ch]);
        });
    for (int64_t ch = 0; ch < channels; ++ch) {
      doffset_p[ch] = static_cast<float>(sum_dy[ch]);
      dscale_p[ch] = static_cast<float>(sum_dy_xc[ch] * r[ch]);
    }
    T* dxp = dx->data<T>();
    if (!a_.is_training) {
      std::vector<float> k(channels);
      for (int64_t ch = 0; ch < channels; ++ch) k[ch] = r[ch] * sp[ch];
      ForEachElement(c, l, [&](int64_t i, int64_t ch) {
        dxp[i] = FromFloat<T>(ToFloat(dyp[i]) * k[ch]);
      });
      return;
    }
    const double n = static_cast<double>(l.per_channel());
    std::vector<float> dy_mean(channels), coef1(channels), coef2(channels);
    for (int64_t ch = 0; ch < channels; ++ch) {
      dy_mean[ch] = static_cast<float>(sum_dy[ch] / n);
      coef1[ch] = sp[ch] * r[ch];
      coef2[ch] = r[ch] * r[ch] * static_cast<float>(sum_dy_xc[ch] / n);
    }
    ForEachElement(c, l, [&](int64_t i, int64_t ch) {
      const float xc = ToFloat(xp[i]) - mean[ch];
      dxp[i] = FromFloat<T>(coef1[ch] * ((ToFloat(dyp[i]) - dy_mean[ch]) - xc * coef2[ch]));
    });
  }

 private:
  BatchNormAttrs a_;
};

template <typename Kernel>
void RegisterTU(KernelRegistry* r, const char* op, DataType t, bool has_u) {
  KernelDef def(op, kDeviceTypeCpu);
  def.TypeConstraint("T", t);
  if (has_u) def.TypeConstraint("U", DT_FLOAT);
  r->Register(std::move(def), MakeKernel<Kernel>);
}

template <typename T>
void RegisterVersions(KernelRegistry* r) {
  const DataType t = DataTypeToEnum<T>::value;
  RegisterTU<FusedBatchNormOp<T, false>>(r, "FusedBatchNormV2", t, true);
  RegisterTU<FusedBatchNormOp<T, true>>(r, "FusedBatchNormV3", t, true);
  RegisterTU<FusedBatchNormGradOp<T>>(r, "FusedBatchNormGradV2", t, true);
  RegisterTU<FusedBatchNormGradOp<T>>(r, "FusedBatchNormGradV3", t, true);
}

}  // namespace

void RegisterBatchNormKernels(KernelRegistry* r) {
  RegisterTU<FusedBatchNormOp<float, false>>(r, "FusedBatchNorm", DT_FLOAT,
                                             false);
  RegisterTU<FusedBatchNormGradOp<float>>(r, "FusedBatchNormGrad", DT_FLOAT,
                                          false);
  RegisterVersions<float>(r);
  RegisterVersions<Half>(r);
}

}  // namespace weft
