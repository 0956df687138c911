// Multinomial (tf.random.categorical) and StatelessMultinomial on the CPU:
// `num_samples` class indices per row of `logits`, drawn as TensorFlow's
// CPU kernel draws them, so the same seeds give TensorFlow's samples:
// per row, the cumulative sum (in double) of exp(logit - max) over the
// finite logits; per sample, a uniform double from two stream words times
// the total, and the first class whose cumulative sum exceeds it. The rows
// take their words from one continuous stretch of the stream, in order
// (TensorFlow's layout when one thread does the rows); a step reserves
// rows * ceil4(num_samples) * 2 * 256 blocks, so successive steps go on.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/philox_random.h"
#include "ops/cpu/random_distributions.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using philox::PhiloxRandom;

double ToDouble(float v) { return v; }
double ToDouble(double v) { return v; }
double ToDouble(Half v) { return HalfToFloat(v); }

absl::Status CheckInputs(const Tensor& logits, const Tensor& num_samples, int32_t* n) {
  if (logits.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "logits should be a matrix, got shape ", logits.shape().DebugString()));
  }
  if (num_samples.dims() != 0 || num_samples.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_samples should be an int32 scalar, got shape ",
        num_samples.shape().DebugString()));
  }
  *n = num_samples.scalar<int32_t>();
  if (*n < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_samples should be nonnegative, got ", *n));
  }
  if (logits.dim_size(1) <= 0 && logits.dim_size(0) > 0 && *n > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_classes should be positive, got ", logits.dim_size(1)));
  }
  if (logits.dim_size(1) > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_classes should fit in an int32, got ", logits.dim_size(1)));
  }
  return absl::OkStatus();
}

// Blocks a step reserves (TensorFlow's count, so streams line up).
uint64_t BlocksFor(int64_t rows, int32_t num_samples) {
  const uint64_t ceil4 = (static_cast<uint64_t>(num_samples) + 3) / 4 * 4;
  return static_cast<uint64_t>(rows) * ceil4 * 2 * 256;
}

template <typename T, typename Out>
void Sample(const Tensor& logits, int32_t num_samples, PhiloxRandom gen, Tensor* out) {
  const int64_t rows = logits.dim_size(0);
  const int64_t classes = logits.dim_size(1);
  const T* in = logits.data<T>();
  Out* dst = out->data<Out>();
  philox::SingleSampleAdapter words(&gen);
  std::vector<double> cdf(classes);
  for (int64_t b = 0; b < rows; ++b) {
    const T* row = in + b * classes;
    double max = std::numeric_limits<double>::lowest();
    for (int64_t j = 0; j < classes; ++j) {
      const double v = ToDouble(row[j]);
      if (std::isfinite(v)) max = std::max(max, v);
    }
    double total = 0;
    for (int64_t j = 0; j < classes; ++j) {
      const double v = ToDouble(row[j]);
      if (std::isfinite(v)) total += std::exp(v - max);
      cdf[j] = total;
    }
    for (int32_t s = 0; s < num_samples; ++s) {
      const uint32_t x0 = words();
      const uint32_t x1 = words();
      const double to_find = philox::Uint64ToDouble(x0, x1) * total;
      dst[b * num_samples + s] = static_cast<Out>(
          std::upper_bound(cdf.begin(), cdf.end(), to_find) - cdf.begin());
    }
  }
}

// The output [rows, num_samples] of `output_dtype`, sampled from `gen`.
absl::Status SampleInto(OpKernelContext* c, DataType out_type, const Tensor& logits,
                        int32_t num_samples, const PhiloxRandom& gen) {
  Tensor* out;
  WEFT_RETURN_IF_ERROR(c->allocate_output(
      0, TensorShape({logits.dim_size(0), num_samples}), &out));
  if (out->NumElements() == 0) return absl::OkStatus();
  const bool i64 = out_type == DT_INT64;
  switch (logits.dtype()) {
    case DT_FLOAT:
      i64 ? Sample<float, int64_t>(logits, num_samples, gen, out)
          : Sample<float, int32_t>(logits, num_samples, gen, out);
      return absl::OkStatus();
    case DT_DOUBLE:
      i64 ? Sample<double, int64_t>(logits, num_samples, gen, out)
          : Sample<double, int32_t>(logits, num_samples, gen, out);
      return absl::OkStatus();
    case DT_HALF:
      i64 ? Sample<Half, int64_t>(logits, num_samples, gen, out)
          : Sample<Half, int32_t>(logits, num_samples, gen, out);
      return absl::OkStatus();
    default:
      return absl::UnimplementedError(absl::StrCat(
          "Multinomial logits of dtype ", DataTypeString(logits.dtype()),
          " (float, double and half are supported)"));
  }
}

class MultinomialOp : public OpKernel {
 public:
  explicit MultinomialOp(OpKernelConstruction* c) : OpKernel(c) {
    int64_t seed = 0, seed2 = 0;
    absl::Status s = c->GetAttr("seed", &seed);
    if (s.ok()) s = c->GetAttr("seed2", &seed2);
    if (s.ok()) s = c->GetAttr("output_dtype", &out_type_);
    c->SetStatus(s);
    absl::MutexLock lock(&mu_);
    gen_ = philox::SeededGenerator(seed, seed2);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& logits = c->input(0);
    int32_t n = 0;
    OP_REQUIRES_OK(c, CheckInputs(logits, c->input(1), &n));
    if (logits.dim_size(0) == 0 || n == 0) {
      OP_REQUIRES_OK(c, SampleInto(c, out_type_, logits, n, PhiloxRandom()));
      return;
    }
    PhiloxRandom gen;
    {
      absl::MutexLock lock(&mu_);
      gen = gen_;
      gen_.Skip(BlocksFor(logits.dim_size(0), n));
    }
    OP_REQUIRES_OK(c, SampleInto(c, out_type_, logits, n, gen));
  }

 private:
  DataType out_type_ = DT_INT64;
  absl::Mutex mu_;
  PhiloxRandom gen_ ABSL_GUARDED_BY(mu_);
};

class StatelessMultinomialOp : public OpKernel {
 public:
  explicit StatelessMultinomialOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("output_dtype", &out_type_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& logits = c->input(0);
    int32_t n = 0;
    OP_REQUIRES_OK(c, CheckInputs(logits, c->input(1), &n));
    const Tensor& seed = c->input(2);
    OP_REQUIRES(c, seed.dims() == 1 && seed.dim_size(0) == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "seed must have shape [2], not ", seed.shape().DebugString())));
    const uint64_t s0 = seed.dtype() == DT_INT32
                            ? static_cast<uint64_t>(int64_t{seed.data<int32_t>()[0]})
                            : static_cast<uint64_t>(seed.data<int64_t>()[0]);
    const uint64_t s1 = seed.dtype() == DT_INT32
                            ? static_cast<uint64_t>(int64_t{seed.data<int32_t>()[1]})
                            : static_cast<uint64_t>(seed.data<int64_t>()[1]);
    OP_REQUIRES_OK(c, SampleInto(c, out_type_, logits, n, philox::StatelessGenerator(s0, s1)));
  }

 private:
  DataType out_type_ = DT_INT64;
};

}  // namespace

void RegisterMultinomialKernels(KernelRegistry* r) {
  r->Register(KernelDef("Multinomial", kDeviceTypeCpu), MakeKernel<MultinomialOp>);
  r->Register(KernelDef("StatelessMultinomial", kDeviceTypeCpu),
              MakeKernel<StatelessMultinomialOp>);
}

}  // namespace weft
