// RandomUniform, RandomStandardNormal, TruncatedNormal, RandomUniformInt,
// RandomShuffle, RandomGamma, RandomPoisson and RandomPoissonV2 on the CPU.
//
// Each kernel owns a Philox stream keyed by its (seed, seed2) attrs (both 0:
// a random key). Every step reserves the next stretch of the stream under a
// mutex, 256 blocks per output element, so successive steps give successive
// samples and the numbers match TensorFlow's bit for bit for the same attrs.
// (RandomShuffle reserves n - 1 words for a dim of n.) Within a step,
// disjoint groups of outputs are filled in parallel from
// their own positions in the reserved stretch, so the result does not
// depend on the thread count.
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/philox_random.h"
#include "ops/cpu/random_bounds.h"
#include "ops/cpu/random_distributions.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"

namespace weft {

// ops/cpu/parameterized_truncated_normal_kernels.cc (declared here rather
// than in ops/registration.h, which every kernel includes).
void RegisterParameterizedTruncatedNormalKernels(KernelRegistry* r);

namespace {

using philox::PhiloxRandom;

// A Philox stream shared by the steps of one kernel.
class GuardedPhiloxRandom {
 public:
  void Init(int64_t seed, int64_t seed2) {
    absl::MutexLock lock(&mu_);
    gen_ = philox::SeededGenerator(seed, seed2);
  }

  // The stream's current position; skips it ahead by `blocks`.
  PhiloxRandom Reserve(uint64_t blocks) {
    absl::MutexLock lock(&mu_);
    PhiloxRandom local = gen_;
    gen_.Skip(blocks);
    return local;
  }

 private:
  absl::Mutex mu_;
  PhiloxRandom gen_ ABSL_GUARDED_BY(mu_);
};

// Blocks reserved per output element, as TensorFlow reserves (its
// multiplier must stay 256 for the streams to line up).
constexpr uint64_t kBlocksPerOutput = 256;

// What the random kernels share: a Philox stream keyed by the seed attrs,
// and the output shaped by input 0.
class PhiloxKernel : public OpKernel {
 protected:
  explicit PhiloxKernel(OpKernelConstruction* c) : OpKernel(c) {
    int64_t seed = 0, seed2 = 0;
    absl::Status s = c->GetAttr("seed", &seed);
    if (s.ok()) s = c->GetAttr("seed2", &seed2);
    c->SetStatus(s);
    generator_.Init(seed, seed2);
    set_expensive(true);
  }

  // The stream's next `blocks` blocks.
  PhiloxRandom Reserve(uint64_t blocks) { return generator_.Reserve(blocks); }

  // The output, shaped as input 0 says.
  absl::Status AllocateOutput(OpKernelContext* c, Tensor** out) {
    std::vector<int64_t> dims;
    WEFT_RETURN_IF_ERROR(ReadIntVector(c->input(0), "shape", &dims));
    TensorShape shape;
    WEFT_RETURN_IF_ERROR(ShapeFromDims(dims, "shape", &shape));
    return c->allocate_output(0, shape, out);
  }

  // For the samplers of a distribution per parameter (RandomGamma,
  // RandomPoisson): allocates `*out`, shaped `shape` (input 0) + the
  // parameters' shape (input 1), and calls sample(j, index, &gen) for
  // sample i of parameter j, output index i * num_params + j, with `gen` at
  // its own stretch of the stream (output k = j * num_samples + i starts
  // k * kBlocksPerOutput blocks in, as TensorFlow's), in parallel.
  template <typename F>
  absl::Status ForEachSample(OpKernelContext* c, Tensor** out, const F& sample) {
    std::vector<int64_t> dims;
    WEFT_RETURN_IF_ERROR(ReadIntVector(c->input(0), "shape", &dims));
    TensorShape shape;
    WEFT_RETURN_IF_ERROR(ShapeFromDims(dims, "shape", &shape));
    const int64_t num_samples = shape.num_elements();
    const Tensor& params = c->input(1);
    const int64_t num_params = params.NumElements();
    for (int d = 0; d < params.dims(); ++d) shape.AddDim(params.dim_size(d));
    WEFT_RETURN_IF_ERROR(c->allocate_output(0, shape, out));
    if (shape.num_elements() == 0) return absl::OkStatus();
    const PhiloxRandom base = Reserve(
        static_cast<uint64_t>(num_samples * num_params) * kBlocksPerOutput);
    c->intra_op_pool()->ParallelFor(
        num_samples * num_params, 300, [&](int64_t begin, int64_t end) {
          for (int64_t k = begin; k < end; ++k) {
            const int64_t j = k / num_samples;
            PhiloxRandom gen = base;
            gen.Skip(kBlocksPerOutput * static_cast<uint64_t>(k));
            sample(j, (k % num_samples) * num_params + j, &gen);
          }
        });
    return absl::OkStatus();
  }

  // Fills `size` values of `data` with `dist`, from the stream's next
  // stretch (kBlocksPerOutput blocks per value), in parallel groups.
  template <typename D, typename T>
  void Fill(OpKernelContext* c, T* data, int64_t size, const D& dist) {
    const PhiloxRandom base =
        generator_.Reserve(static_cast<uint64_t>(size) * kBlocksPerOutput);
    constexpr int64_t kCostPerGroup = D::kVariableSamples ? 400 : 100;
    c->intra_op_pool()->ParallelFor(
        philox::NumGroups<D>(size), kCostPerGroup, [&](int64_t begin, int64_t end) {
          philox::FillPhilox<D>(base, data, size, begin, end, dist);
        });
  }

 private:
  GuardedPhiloxRandom generator_;
};

template <template <typename> class Dist, typename T>
class PhiloxRandomOp : public PhiloxKernel {
 public:
  explicit PhiloxRandomOp(OpKernelConstruction* c) : PhiloxKernel(c) {}

  void Compute(OpKernelContext* c) override {
    Tensor* out;
    OP_REQUIRES_OK(c, AllocateOutput(c, &out));
    Fill(c, out->data<T>(), out->NumElements(), Dist<T>());
  }
};

// RandomUniformInt: integers in [minval, maxval), from the same stream.
template <typename T>
class RandomUniformIntOp : public PhiloxKernel {
 public:
  explicit RandomUniformIntOp(OpKernelConstruction* c) : PhiloxKernel(c) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& minval = c->input(1);
    const Tensor& maxval = c->input(2);
    OP_REQUIRES_OK(c, CheckBoundsAreScalars(minval, maxval));
    Tensor* out;
    OP_REQUIRES_OK(c, AllocateOutput(c, &out));
    if (out->NumElements() == 0) return;  // before the range check, as TensorFlow
    const T lo = minval.scalar<T>();
    const T hi = maxval.scalar<T>();
    OP_REQUIRES_OK(c, CheckRange(lo, hi));
    Fill(c, out->data<T>(), out->NumElements(), philox::UniformInt<T>(lo, hi));
  }
};

// RandomShuffle: the slices along dim 0 in a random order. TensorFlow's
// Fisher-Yates order: position i (first to last but one) swaps with
// i + (word % (n - i)), one word of the stream per position; shuffling the
// indices and gathering gives the same result for every dtype.
class RandomShuffleOp : public PhiloxKernel {
 public:
  explicit RandomShuffleOp(OpKernelConstruction* c) : PhiloxKernel(c) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& value = c->input(0);
    OP_REQUIRES(c, value.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "value must be at least 1-D, got shape ",
                    value.shape().DebugString())));
    const int64_t n = value.dim_size(0);
    if (value.NumElements() <= 1 || n <= 1) {
      c->set_output(0, value);
      return;
    }
    OP_REQUIRES(c, n <= std::numeric_limits<int32_t>::max(),
                absl::InvalidArgumentError(absl::StrCat(
                    "RandomShuffle of ", n, " slices: at most 2^31 - 1")));
    const int64_t words = n - 1;
    PhiloxRandom gen = Reserve(static_cast<uint64_t>((words + 3) / 4));
    philox::SingleSampleAdapter single(&gen);
    std::vector<int64_t> order(n);
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    for (int64_t i = 0; i + 1 < n; ++i) {
      const uint32_t left = static_cast<uint32_t>(n - i);
      std::swap(order[i], order[i + single() % left]);
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, value.shape(), &out));
    const int64_t slice = value.NumElements() / n;
    for (int64_t i = 0; i < n; ++i) {
      CopyElements(value, order[i] * slice, *out, i * slice, slice);
    }
  }
};

// RandomGamma: samples of Gamma(alpha, 1), shaped `shape` + alpha.shape
// (sample i of alpha j at i * num_alphas + j). TensorFlow's algorithm and
// stream, so the numbers are its own: output k = j * num_samples + i draws
// from its own stretch of the op's stream (kBlocksPerOutput blocks in), in
// double whatever T is. Alpha 1: -log1p(-u) of one uniform u. Otherwise
// Marsaglia and Tsang's transformation-rejection: a normal x (blocks of
// normals, used last first), v = (1 + c x)^3, a uniform u (likewise), kept
// when u < 1 - 0.0331 x^4 or log u < x^2 / 2 + d (1 - v + log v), with
// d = alpha - 1/3 and c = 1/3 / sqrt(d); an alpha below 1 adds 1 to d and
// scales the result by a further uniform ^ (1 / alpha).
template <typename T>
class RandomGammaOp : public PhiloxKernel {
 public:
  explicit RandomGammaOp(OpKernelConstruction* c) : PhiloxKernel(c) {}

  void Compute(OpKernelContext* c) override {
    const T* a = c->input(1).data<T>();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForEachSample(c, &out, [&](int64_t j, int64_t index, PhiloxRandom* gen) {
      const double v = Sample(ToDouble(a[j]), gen);
      if constexpr (std::is_same_v<T, Half>) {
        out->data<T>()[index] = philox::FromFloat<Half>(static_cast<float>(v));
      } else {
        out->data<T>()[index] = static_cast<T>(v);
      }
    }));
  }

 private:
  static double ToDouble(T v) {
    if constexpr (std::is_same_v<T, Half>) {
      return HalfToFloat(v);
    } else {
      return static_cast<double>(v);
    }
  }

  static double Sample(double alpha, PhiloxRandom* gen) {
    philox::Uniform<double> uniform;
    std::array<double, philox::Uniform<double>::kGroupSize> uniforms{};
    int uniforms_left = 0;
    auto next_uniform = [&] {
      if (uniforms_left == 0) {
        uniforms = uniform(gen);
        uniforms_left = static_cast<int>(uniforms.size());
      }
      return uniforms[--uniforms_left];
    };
    if (alpha == 1.0) return -std::log1p(-next_uniform());
    const bool below_one = alpha < 1;
    const double d = alpha + (below_one ? 2.0 / 3 : -1.0 / 3);
    const double c = 1.0 / 3 / std::sqrt(d);
    philox::Normal<double> normal;
    std::array<double, philox::Normal<double>::kGroupSize> normals{};
    int normals_left = 0;
    while (true) {
      if (normals_left == 0) {
        normals = normal(gen);
        normals_left = static_cast<int>(normals.size());
      }
      const double x = normals[--normals_left];
      double v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const double u = next_uniform();
      if (u < 1 - 0.0331 * (x * x) * (x * x) ||
          std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) {
        double result = d * v;
        if (below_one) result *= std::pow(next_uniform(), 1 / alpha);
        return result;
      }
    }
  }
};

// RandomPoisson and RandomPoissonV2: samples of Poisson(rate), shaped
// `shape` + rate.shape like RandomGamma, from TensorFlow's stream and
// algorithms in double: below rate 10, Knuth's (multiply uniforms until
// the product falls to exp(-rate)); from 10, Hormann's transformed
// rejection from pairs of uniforms. Rates and outputs of any of the
// registered dtypes go through double.
class RandomPoissonOp : public PhiloxKernel {
 public:
  explicit RandomPoissonOp(OpKernelConstruction* c) : PhiloxKernel(c) {
    c->SetStatus(c->GetAttr("dtype", &out_type_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& rate = c->input(1);
    std::vector<double> rates(rate.NumElements());
    for (size_t j = 0; j < rates.size(); ++j) rates[j] = AsDouble(rate, j);
    const double highest = Highest(out_type_);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForEachSample(c, &out, [&](int64_t j, int64_t index, PhiloxRandom* gen) {
      Store(out, index, Sample(rates[j], highest, gen));
    }));
  }

 private:
  static double AsDouble(const Tensor& t, int64_t i) {
    switch (t.dtype()) {
      case DT_HALF: return HalfToFloat(t.data<Half>()[i]);
      case DT_FLOAT: return t.data<float>()[i];
      case DT_INT32: return t.data<int32_t>()[i];
      case DT_INT64: return static_cast<double>(t.data<int64_t>()[i]);
      default: return t.data<double>()[i];
    }
  }
  static double Highest(DataType t) {
    switch (t) {
      case DT_HALF: return 65504.0;
      case DT_FLOAT: return std::numeric_limits<float>::max();
      case DT_INT32: return std::numeric_limits<int32_t>::max();
      case DT_INT64: return static_cast<double>(std::numeric_limits<int64_t>::max());
      default: return std::numeric_limits<double>::max();
    }
  }
  static void Store(Tensor* t, int64_t i, double v) {
    switch (t->dtype()) {
      case DT_HALF: t->data<Half>()[i] = philox::FromFloat<Half>(static_cast<float>(v)); break;
      case DT_FLOAT: t->data<float>()[i] = static_cast<float>(v); break;
      case DT_INT32: t->data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DT_INT64: t->data<int64_t>()[i] = static_cast<int64_t>(v); break;
      default: t->data<double>()[i] = v; break;
    }
  }

  static double Sample(double rate, double highest, PhiloxRandom* gen) {
    philox::Uniform<double> uniform;
    std::array<double, philox::Uniform<double>::kGroupSize> uniforms{};
    int left = 0;
    auto next = [&] {
      if (left == 0) {
        uniforms = uniform(gen);
        left = static_cast<int>(uniforms.size());
      }
      return uniforms[--left];
    };
    if (rate < 10) {
      const double exp_neg_rate = std::exp(-rate);
      double prod = 1, x = 0;
      while (true) {
        prod = prod * next();
        if (prod <= exp_neg_rate && x <= highest) return x;
        x += 1;
      }
    }
    const double log_rate = std::log(rate);
    const double b = 0.931 + 2.53 * std::sqrt(rate);
    const double a = -0.059 + 0.02483 * b;
    const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    while (true) {
      double u = next();
      u -= 0.5;
      const double v = next();
      const double u_shifted = 0.5 - std::abs(u);
      const double k = std::floor((2 * a / u_shifted + b) * u + rate + 0.43);
      if (k > highest) continue;  // overflow: draw again
      if (u_shifted >= 0.07 && v <= 0.9277 - 3.6224 / (b - 2)) return k;
      if (k < 0 || (u_shifted < 0.013 && v > u_shifted)) continue;
      const double s = std::log(v * inv_alpha / (a / (u_shifted * u_shifted) + b));
      const double t = -rate + k * log_rate - std::lgamma(k + 1);
      if (s <= t) return k;
    }
  }

  DataType out_type_ = DT_INVALID;
};

template <template <typename> class Dist>
void RegisterDistribution(KernelRegistry* r, const char* op) {
  r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("dtype", DT_FLOAT),
              MakeKernel<PhiloxRandomOp<Dist, float>>);
  r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("dtype", DT_DOUBLE),
              MakeKernel<PhiloxRandomOp<Dist, double>>);
  r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("dtype", DT_HALF),
              MakeKernel<PhiloxRandomOp<Dist, Half>>);
  r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("dtype", DT_BFLOAT16),
              MakeKernel<PhiloxRandomOp<Dist, BFloat16>>);
}

}  // namespace

void RegisterRandomKernels(KernelRegistry* r) {
  RegisterDistribution<philox::Uniform>(r, "RandomUniform");
  RegisterDistribution<philox::Normal>(r, "RandomStandardNormal");
  RegisterDistribution<philox::TruncatedNormal>(r, "TruncatedNormal");
  r->Register(KernelDef("RandomUniformInt", kDeviceTypeCpu).TypeConstraint("Tout", DT_INT32),
              MakeKernel<RandomUniformIntOp<int32_t>>);
  r->Register(KernelDef("RandomUniformInt", kDeviceTypeCpu).TypeConstraint("Tout", DT_INT64),
              MakeKernel<RandomUniformIntOp<int64_t>>);
  r->Register(KernelDef("RandomShuffle", kDeviceTypeCpu), MakeKernel<RandomShuffleOp>);
  r->Register(KernelDef("RandomPoisson", kDeviceTypeCpu), MakeKernel<RandomPoissonOp>);
  r->Register(KernelDef("RandomPoissonV2", kDeviceTypeCpu), MakeKernel<RandomPoissonOp>);
  r->Register(KernelDef("RandomGamma", kDeviceTypeCpu).TypeConstraint("T", DT_HALF),
              MakeKernel<RandomGammaOp<Half>>);
  r->Register(KernelDef("RandomGamma", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
              MakeKernel<RandomGammaOp<float>>);
  r->Register(KernelDef("RandomGamma", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE),
              MakeKernel<RandomGammaOp<double>>);
  RegisterStatelessRandomKernels(r);
  RegisterMultinomialKernels(r);
  RegisterParameterizedTruncatedNormalKernels(r);
}

}  // namespace weft
