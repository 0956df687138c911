// ParameterizedTruncatedNormal (stateful, seed attrs) and
// StatelessParameterizedTruncatedNormal (a seed input) on the CPU, for
// half, float and double (TensorFlow has no bfloat16 CPU kernel either).
//
// The numbers are TensorFlow's for the same seeds: the parameter sets
// ("batches") are sampled in order from one Philox stream by
// truncated_normal::SampleBatch, as TensorFlow's kernel does when it runs
// on one thread. (TensorFlow's threaded runs restart the stream at each
// shard's own offset, so its numbers depend on its thread count; Weft gives
// the one-thread numbers whatever its pool, and so samples sequentially.)
//   - Stateful: shape[0] batches of prod(shape[1:]) samples each, with
//     scalar or [shape[0]] parameters; with every parameter a scalar (or
//     [1] mean and stddev) the output is cut into batches of 100 instead.
//     Each step reserves TensorFlow's stretch of the kernel's stream,
//     batches * 2000 * (samples_per_batch + 3) / 4 blocks (in int32, as
//     TensorFlow computes it), so successive steps match too.
//   - Stateless: the parameters broadcast together to a shape the output
//     shape must end with; sample s of parameter set b lands at
//     s * num_batches + b.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/philox_random.h"
#include "ops/cpu/random_distributions.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {

// ops/cpu/stateless_random_kernels.cc: the generator of a stateless op's
// seed input (declared here, not in a header: every header of ops/cpu is
// an input of every kernel's compilation).
absl::StatusOr<philox::PhiloxRandom> StatelessGeneratorFromSeed(const Tensor& seed);

// The sampler (truncated_normal::SampleBatch):
// values of Normal(mean, stddev) restricted to [minval, maxval], with
// TensorFlow's algorithm and its consumption of the Philox stream, so the
// numbers are TensorFlow's for the same seeds.
//
// One parameter set (a "batch") draws its samples in turn from one stream.
// The bounds are first normalised ((bound - mean) / stddev, after swapping
// them and negating stddev when the lower bound is -inf or the upper one is
// below the mean); then one of three rejection samplers runs:
//   - normal: when the normalised interval reaches 1.3 past 0 on one side,
//     groups of standard normals (philox::Normal) are kept when inside it;
//   - uniform: when the interval is narrower than a cutoff, a group of
//     uniforms z on it and a group of uniforms u, z kept when
//     u <= exp((max(lo, 0)^2 - z^2) / 2) (lo = 0 when below 0);
//   - exponential (a far tail): pairs of uniforms, z = lo - log(r0) / alpha
//     kept when r1 <= exp(-(alpha - z)^2 / 2) and z < hi, with
//     alpha = (lo + sqrt(lo^2 + 4)) / 2.
// A group's values past the batch's last sample are dropped, and a sampler
// that rejects 1000 candidates in a row fails (INTERNAL), as TensorFlow's.
//
// TensorFlow computes in the output type: half arithmetic rounds every
// operation to half, which HalfCalc reproduces (a float holding a half
// value, each result rounded); float and double compute natively.
namespace truncated_normal {

// Half arithmetic: each result rounded to half (as float op then rounding,
// which is exact half arithmetic for + - * /, and how Eigen's half computes
// exp, log and sqrt).
struct HalfCalc {
  float v;
  static HalfCalc Round(float x) { return {HalfToFloat(FloatToHalf(x))}; }
  friend HalfCalc operator+(HalfCalc a, HalfCalc b) { return Round(a.v + b.v); }
  friend HalfCalc operator-(HalfCalc a, HalfCalc b) { return Round(a.v - b.v); }
  friend HalfCalc operator*(HalfCalc a, HalfCalc b) { return Round(a.v * b.v); }
  friend HalfCalc operator/(HalfCalc a, HalfCalc b) { return Round(a.v / b.v); }
  friend HalfCalc operator-(HalfCalc a) { return {-a.v}; }
  friend bool operator<(HalfCalc a, HalfCalc b) { return a.v < b.v; }
  friend bool operator<=(HalfCalc a, HalfCalc b) { return a.v <= b.v; }
  friend bool operator>(HalfCalc a, HalfCalc b) { return a.v > b.v; }
  friend bool operator>=(HalfCalc a, HalfCalc b) { return a.v >= b.v; }
};
inline HalfCalc Exp(HalfCalc x) { return HalfCalc::Round(std::exp(x.v)); }
inline HalfCalc Log(HalfCalc x) { return HalfCalc::Round(std::log(x.v)); }
inline HalfCalc Sqrt(HalfCalc x) { return HalfCalc::Round(std::sqrt(x.v)); }
inline bool IsInf(HalfCalc x) { return std::isinf(x.v); }
inline bool IsFinite(HalfCalc x) { return std::isfinite(x.v); }
template <typename N>
N Exp(N x) { return std::exp(x); }
template <typename N>
N Log(N x) { return std::log(x); }
template <typename N>
N Sqrt(N x) { return std::sqrt(x); }
template <typename N>
bool IsInf(N x) { return std::isinf(x); }
template <typename N>
bool IsFinite(N x) { return std::isfinite(x); }

// The computation type of a dtype and the conversions to and from it.
template <typename T>
struct Calc {
  using N = T;
  static N In(T v) { return v; }
  static T Out(N v) { return v; }
  static N Const(double d) { return static_cast<N>(d); }
};
template <>
struct Calc<Half> {
  using N = HalfCalc;
  static N In(Half v) { return {HalfToFloat(v)}; }
  static Half Out(N v) { return FloatToHalf(v.v); }
  static N Const(double d) { return N::Round(static_cast<float>(d)); }
};

inline constexpr int kMaxIterations = 1000;

// Draws `count` samples of one parameter set from `gen` (which it
// advances), calling store(i, value) for i = 0, 1, ... count - 1.
template <typename T, typename Store>
absl::Status SampleBatch(T mean_in, T stddev_in, T minval_in, T maxval_in,
                         int64_t count, philox::PhiloxRandom* gen,
                         const Store& store) {
  using C = Calc<T>;
  using N = typename C::N;
  const N zero = C::Const(0), two = C::Const(2), four = C::Const(4);
  N mean = C::In(mean_in), stddev = C::In(stddev_in);
  N minval = C::In(minval_in), maxval = C::In(maxval_in);
  if (!(stddev > zero && minval < maxval &&
        (IsFinite(minval) || IsFinite(maxval)))) {
    return absl::InvalidArgumentError("Invalid parameters");
  }
  if ((IsInf(minval) && minval < zero) || maxval < mean) {
    std::swap(minval, maxval);
    stddev = -stddev;
  }
  const N lo = (minval - mean) / stddev;
  const N hi = (maxval - mean) / stddev;
  const N sqrt_factor = Sqrt(lo * lo + four);
  const N cutoff =
      two * Exp(C::Const(0.5) + (lo * (lo - sqrt_factor)) / four) / (lo + sqrt_factor);
  const N diff = hi - lo;
  const N inside = C::Const(1.3);
  int64_t done = 0;
  int iterations = 0;
  auto emit = [&](N z) {
    store(done++, C::Out(z * stddev + mean));
    return done >= count;
  };
  if ((lo < -inside && hi >= zero) || (hi > inside && lo <= zero)) {
    const philox::Normal<T> normal;
    while (done < count) {
      for (const T v : normal(gen)) {
        const N x = C::In(v);
        if (x >= lo && x <= hi) {
          if (emit(x)) break;
          iterations = 0;
        } else if (++iterations > kMaxIterations) {
          return absl::InternalError(
              "TruncatedNormal randn rejection sampler failed to accept a sample.");
        }
      }
    }
    return absl::OkStatus();
  }
  const philox::Uniform<T> uniform;
  constexpr int kGroup = philox::Uniform<T>::kGroupSize;
  if (diff < cutoff) {
    const N plus = lo < zero ? zero : lo * lo;
    while (done < count) {
      const auto r = uniform(gen);
      std::array<N, kGroup> z, g;
      for (int i = 0; i < kGroup; ++i) {
        z[i] = C::In(r[i]) * diff + lo;
        g[i] = (plus - z[i] * z[i]) / two;
      }
      const auto u = uniform(gen);
      for (int i = 0; i < kGroup; ++i) {
        const bool accept = C::In(u[i]) <= Exp(g[i]);
        if (accept || iterations + 1 >= kMaxIterations) {
          if (!accept) {
            return absl::InternalError(
                "TruncatedNormal uniform rejection sampler failed to  accept a sample.");
          }
          if (emit(z[i])) break;
          iterations = 0;
        } else {
          ++iterations;
        }
      }
    }
    return absl::OkStatus();
  }
  const N alpha = (lo + Sqrt(lo * lo + four)) / two;
  while (done < count) {
    const auto r = uniform(gen);
    for (int i = 0; i + 1 < kGroup; i += 2) {
      const N z = -Log(C::In(r[i])) / alpha + lo;
      const N x = lo < alpha ? alpha - z : lo - alpha;
      const N g = Exp(-x * x / two);
      const bool accept = C::In(r[i + 1]) <= g && z < hi;
      if (accept || iterations + 1 >= kMaxIterations) {
        if (!accept) {
          return absl::InternalError(
              "TruncatedNormal exponential distribution rejection sampler "
              "failed to accept a sample.");
        }
        if (emit(z)) break;
        iterations = 0;
      } else {
        ++iterations;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace truncated_normal

namespace {

using philox::PhiloxRandom;

// The output shape from the `shape` input, which must be a non-empty vector.
absl::Status OutputShape(const Tensor& shape, TensorShape* out) {
  if (shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input shape should be a vector, got shape: ", shape.shape().DebugString()));
  }
  if (shape.NumElements() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shape tensor must not be empty, got ", shape.DebugString()));
  }
  std::vector<int64_t> dims;
  WEFT_RETURN_IF_ERROR(ReadIntVector(shape, "shape", &dims));
  return ShapeFromDims(dims, "shape", out);
}

template <typename T>
class ParameterizedTruncatedNormalOp : public OpKernel {
 public:
  explicit ParameterizedTruncatedNormalOp(OpKernelConstruction* c) : OpKernel(c) {
    int64_t seed = 0, seed2 = 0;
    absl::Status s = c->GetAttr("seed", &seed);
    if (s.ok()) s = c->GetAttr("seed2", &seed2);
    c->SetStatus(s);
    gen_ = philox::SeededGenerator(seed, seed2);
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    TensorShape shape;
    OP_REQUIRES_OK(c, OutputShape(c->input(0), &shape));
    // TensorFlow's int32 batch arithmetic.
    int32_t num_batches = static_cast<int32_t>(shape.dim_size(0));
    int32_t samples_per_batch = 1;
    for (int i = 1; i < shape.dims(); ++i) {
      samples_per_batch *= static_cast<int32_t>(shape.dim_size(i));
    }
    const int64_t num_elements = shape.num_elements();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    static constexpr const char* kNames[] = {"means", "stddevs", "minvals", "maxvals"};
    const Tensor* params[4];
    for (int i = 0; i < 4; ++i) {
      params[i] = &c->input(i + 1);
      OP_REQUIRES(c, params[i]->dims() <= 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Input ", kNames[i], " should be a scalar or vector, got shape: ",
                      params[i]->shape().DebugString())));
    }
    auto one = [](const Tensor* t) { return t->dims() == 0 || t->dim_size(0) == 1; };
    if (one(params[0]) && one(params[1]) && params[2]->dims() == 0 &&
        params[3]->dims() == 0) {
      constexpr int32_t kBatch = 100;
      num_batches = static_cast<int32_t>((num_elements + kBatch - 1) / kBatch);
      samples_per_batch = kBatch;
    } else {
      for (int i = 0; i < 4; ++i) {
        OP_REQUIRES(c, one(params[i]) || params[i]->dim_size(0) == num_batches,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Input ", kNames[i], " should have length 1 or shape[0], got shape: ",
                        params[i]->shape().DebugString())));
      }
    }
    const uint32_t blocks = static_cast<uint32_t>(num_batches) * 2u * 1000u *
                            static_cast<uint32_t>(samples_per_batch + 3);
    PhiloxRandom gen = Reserve(static_cast<uint64_t>(
        static_cast<int64_t>(static_cast<int32_t>(blocks) / 4)));
    T* data = out->data<T>();
    auto at = [](const Tensor* t, int64_t b) {
      return t->data<T>()[t->NumElements() == 1 ? 0 : b];
    };
    for (int64_t b = 0; b < num_batches; ++b) {
      const int64_t start = b * samples_per_batch;
      const int64_t count =
          std::max<int64_t>(0, std::min(start + samples_per_batch, num_elements) - start);
      OP_REQUIRES_OK(c, truncated_normal::SampleBatch<T>(
                            at(params[0], b), at(params[1], b), at(params[2], b),
                            at(params[3], b), count, &gen,
                            [&](int64_t i, T v) { data[start + i] = v; }));
    }
  }

 private:
  PhiloxRandom Reserve(uint64_t blocks) {
    absl::MutexLock lock(&mu_);
    PhiloxRandom local = gen_;
    gen_.Skip(blocks);
    return local;
  }

  absl::Mutex mu_;
  PhiloxRandom gen_ ABSL_GUARDED_BY(mu_);
};

// The parameters' broadcast shape, and for each of them the strides (0 on
// broadcast dims) that map a batch index to its element.
struct ParamBroadcast {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides[4];
};

absl::Status BroadcastParams(const Tensor* const params[4], ParamBroadcast* b) {
  int rank = 0;
  for (int i = 0; i < 4; ++i) rank = std::max(rank, params[i]->dims());
  b->dims.assign(rank, 1);
  for (int i = 0; i < 4; ++i) {
    const int pad = rank - params[i]->dims();
    for (int d = 0; d < params[i]->dims(); ++d) {
      const int64_t n = params[i]->dim_size(d);
      int64_t& m = b->dims[pad + d];
      if (m == 1) {
        m = n;
      } else if (n != 1 && n != m) {
        return absl::InvalidArgumentError(absl::StrCat(
            "means, stddevs, minvals, maxvals must have compatible batch dimensions: ",
            params[0]->shape().DebugString(), " vs. ", params[1]->shape().DebugString(),
            " vs. ", params[2]->shape().DebugString(), " vs. ",
            params[3]->shape().DebugString()));
      }
    }
  }
  for (int i = 0; i < 4; ++i) {
    const int pad = rank - params[i]->dims();
    b->strides[i].assign(rank, 0);
    int64_t stride = 1;
    for (int d = params[i]->dims() - 1; d >= 0; --d) {
      if (params[i]->dim_size(d) != 1) b->strides[i][pad + d] = stride;
      stride *= params[i]->dim_size(d);
    }
  }
  return absl::OkStatus();
}

template <typename T>
class StatelessParameterizedTruncatedNormalOp : public OpKernel {
 public:
  explicit StatelessParameterizedTruncatedNormalOp(OpKernelConstruction* c)
      : OpKernel(c) {
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    absl::StatusOr<PhiloxRandom> gen = StatelessGeneratorFromSeed(c->input(1));
    OP_REQUIRES_OK(c, gen.status());
    const Tensor* params[4];
    for (int i = 0; i < 4; ++i) params[i] = &c->input(i + 2);
    ParamBroadcast bcast;
    OP_REQUIRES_OK(c, BroadcastParams(params, &bcast));
    const Tensor& shape_t = c->input(0);
    OP_REQUIRES(c, shape_t.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input shape should be a vector, got shape: ",
                    shape_t.shape().DebugString())));
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(c, ReadIntVector(shape_t, "shape", &dims));
    TensorShape shape;
    OP_REQUIRES_OK(c, ShapeFromDims(dims, "shape", &shape));
    const int rank = static_cast<int>(bcast.dims.size());
    const int sample_dims = shape.dims() - rank;
    bool ends_with = sample_dims >= 0;
    for (int d = 0; ends_with && d < rank; ++d) {
      ends_with = shape.dim_size(sample_dims + d) == bcast.dims[d];
    }
    OP_REQUIRES(c, ends_with,
                absl::InvalidArgumentError(
                    "Shape passed in must end with broadcasted shape."));
    int64_t samples_per_batch = 1, num_batches = 1;
    for (int d = 0; d < shape.dims(); ++d) {
      (d < sample_dims ? samples_per_batch : num_batches) *= shape.dim_size(d);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    T* data = out->data<T>();
    PhiloxRandom g = *gen;
    std::vector<int64_t> index(rank, 0);  // batch b's coordinates
    for (int64_t b = 0; b < num_batches; ++b) {
      T v[4];
      for (int i = 0; i < 4; ++i) {
        int64_t offset = 0;
        for (int d = 0; d < rank; ++d) offset += index[d] * bcast.strides[i][d];
        v[i] = params[i]->data<T>()[offset];
      }
      OP_REQUIRES_OK(c, truncated_normal::SampleBatch<T>(
                            v[0], v[1], v[2], v[3], samples_per_batch, &g,
                            [&](int64_t s, T x) { data[s * num_batches + b] = x; }));
      for (int d = rank - 1; d >= 0 && ++index[d] == bcast.dims[d]; --d) index[d] = 0;
    }
  }
};

template <typename T>
void RegisterFor(KernelRegistry* r, DataType dtype) {
  r->Register(KernelDef("ParameterizedTruncatedNormal", kDeviceTypeCpu)
                  .TypeConstraint("dtype", dtype),
              MakeKernel<ParameterizedTruncatedNormalOp<T>>);
  r->Register(KernelDef("StatelessParameterizedTruncatedNormal", kDeviceTypeCpu)
                  .TypeConstraint("dtype", dtype),
              MakeKernel<StatelessParameterizedTruncatedNormalOp<T>>);
}

}  // namespace

void RegisterParameterizedTruncatedNormalKernels(KernelRegistry* r) {
  RegisterFor<Half>(r, DT_HALF);
  RegisterFor<float>(r, DT_FLOAT);
  RegisterFor<double>(r, DT_DOUBLE);
}

}  // namespace weft
