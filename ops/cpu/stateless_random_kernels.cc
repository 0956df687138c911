// TensorFlow's stateless random ops on the CPU: the output is a function of
// the shape and a seed (V1: a two-word `seed` input) or of a Philox key and
// counter (V2: made from a seed by StatelessRandomGetKeyCounter), never of
// earlier steps. Keras initialisers and dropout emit the V2 forms.
//
// The numbers are TensorFlow's, bit for bit: the seed is scrambled as
// TensorFlow scrambles it (philox::StatelessGenerator), and the output is
// filled from that generator by the same distributions and group layout as
// the stateful ops (random_distributions.h), so it does not depend on the
// thread count.
//
// Algorithms: Philox (1) and "auto select" (3, Philox on a CPU). ThreeFry
// (2) is refused, as TensorFlow's CPU kernels refuse it.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/philox_random.h"
#include "ops/cpu/random_bounds.h"
#include "ops/cpu/random_distributions.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"

namespace weft {
namespace {

// A seed input's two words, each widened to 64 bits (signed types with
// their sign, as TensorFlow widens them).
absl::Status ReadSeed(const Tensor& seed, uint64_t* s0, uint64_t* s1) {
  if (seed.dims() != 1 || seed.dim_size(0) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "seed must have shape [2], not ", seed.shape().DebugString()));
  }
  switch (seed.dtype()) {
    case DT_INT32:
      *s0 = static_cast<uint64_t>(int64_t{seed.data<int32_t>()[0]});
      *s1 = static_cast<uint64_t>(int64_t{seed.data<int32_t>()[1]});
      return absl::OkStatus();
    case DT_INT64:
      *s0 = static_cast<uint64_t>(seed.data<int64_t>()[0]);
      *s1 = static_cast<uint64_t>(seed.data<int64_t>()[1]);
      return absl::OkStatus();
    case DT_UINT32:
      *s0 = seed.data<uint32_t>()[0];
      *s1 = seed.data<uint32_t>()[1];
      return absl::OkStatus();
    case DT_UINT64:
      *s0 = seed.data<uint64_t>()[0];
      *s1 = seed.data<uint64_t>()[1];
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid seed type: ", DataTypeString(seed.dtype())));
  }
}

}  // namespace

// The generator of a stateless op's `seed` input (int32 or int64 [2]; the
// unsigned types for the ops that take them), as TensorFlow scrambles it.
// Also used by ops/cpu/parameterized_truncated_normal_kernels.cc.
absl::StatusOr<philox::PhiloxRandom> StatelessGeneratorFromSeed(const Tensor& seed) {
  uint64_t s0 = 0, s1 = 0;
  WEFT_RETURN_IF_ERROR(ReadSeed(seed, &s0, &s1));
  return philox::StatelessGenerator(s0, s1);
}

namespace {

using philox::PhiloxRandom;

constexpr int32_t kAlgPhilox = 1;
constexpr int32_t kAlgAutoSelect = 3;

// The V2 inputs: key [1] and counter [>= 2] (uint64), alg (int32 scalar).
absl::StatusOr<PhiloxRandom> GeneratorFromKeyCounter(const Tensor& key,
                                                     const Tensor& counter,
                                                     const Tensor& alg) {
  if (alg.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "alg must be a scalar, not ", alg.shape().DebugString()));
  }
  const int32_t id = alg.scalar<int32_t>();
  if (id != kAlgPhilox && id != kAlgAutoSelect) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Unsupported algorithm id: ", id,
        " (a CPU offers Philox, 1, and auto-select, 3)"));
  }
  if (key.dims() != 1 || key.dim_size(0) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "key must have shape [1], not ", key.shape().DebugString(),
        ". (Note that batched keys are not supported yet.)"));
  }
  if (counter.dims() != 1 || counter.dim_size(0) < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "counter must be a vector of at least 2 elements for Philox, not ",
        counter.shape().DebugString()));
  }
  const uint64_t k = key.data<uint64_t>()[0];
  const uint64_t c0 = counter.data<uint64_t>()[0];
  const uint64_t c1 = counter.data<uint64_t>()[1];
  return PhiloxRandom(
      PhiloxRandom::Block{static_cast<uint32_t>(c0), static_cast<uint32_t>(c0 >> 32),
                          static_cast<uint32_t>(c1), static_cast<uint32_t>(c1 >> 32)},
      PhiloxRandom::Key{static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)});
}

// Input layout of the two forms: V1 (shape, seed, [minval, maxval]) and
// V2 (shape, key, counter, alg, [minval, maxval]).
enum class Form { kV1, kV2 };

class StatelessKernel : public OpKernel {
 public:
  StatelessKernel(OpKernelConstruction* c, Form form)
      : OpKernel(c), form_(form) {
    set_expensive(true);
  }

 protected:
  // Index of minval (maxval follows).
  int bounds_input() const { return form_ == Form::kV1 ? 2 : 4; }

  // The generator the inputs name and the output, shaped by input 0.
  // *out is null when the output is empty.
  absl::Status Prepare(OpKernelContext* c, PhiloxRandom* gen, Tensor** out) {
    std::vector<int64_t> dims;
    WEFT_RETURN_IF_ERROR(ReadIntVector(c->input(0), "shape", &dims));
    TensorShape shape;
    WEFT_RETURN_IF_ERROR(ShapeFromDims(dims, "shape", &shape));
    absl::StatusOr<PhiloxRandom> g =
        form_ == Form::kV1
            ? StatelessGeneratorFromSeed(c->input(1))
            : GeneratorFromKeyCounter(c->input(1), c->input(2), c->input(3));
    WEFT_RETURN_IF_ERROR(g.status());
    *gen = *g;
    WEFT_RETURN_IF_ERROR(c->allocate_output(0, shape, out));
    if ((*out)->NumElements() == 0) *out = nullptr;
    return absl::OkStatus();
  }

  template <typename D, typename T>
  static void Fill(OpKernelContext* c, const PhiloxRandom& gen, T* data,
                   int64_t size, const D& dist) {
    constexpr int64_t kCostPerGroup = D::kVariableSamples ? 400 : 100;
    c->intra_op_pool()->ParallelFor(
        philox::NumGroups<D>(size), kCostPerGroup,
        [&](int64_t begin, int64_t end) {
          philox::FillPhilox<D>(gen, data, size, begin, end, dist);
        });
  }

 private:
  const Form form_;
};

// Uniform, Normal, TruncatedNormal, UniformFullInt: no parameters.
template <template <typename> class Dist, typename T>
class StatelessOp : public StatelessKernel {
 public:
  StatelessOp(OpKernelConstruction* c, Form form) : StatelessKernel(c, form) {}

  void Compute(OpKernelContext* c) override {
    PhiloxRandom gen;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, Prepare(c, &gen, &out));
    if (out == nullptr) return;
    Fill(c, gen, out->data<T>(), out->NumElements(), Dist<T>());
  }
};

// UniformInt: integers in [minval, maxval).
template <typename T>
class StatelessUniformIntOp : public StatelessKernel {
 public:
  StatelessUniformIntOp(OpKernelConstruction* c, Form form)
      : StatelessKernel(c, form) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& minval = c->input(bounds_input());
    const Tensor& maxval = c->input(bounds_input() + 1);
    OP_REQUIRES_OK(c, CheckBoundsAreScalars(minval, maxval));
    PhiloxRandom gen;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, Prepare(c, &gen, &out));
    if (out == nullptr) return;  // before the range check, as TensorFlow
    const T lo = minval.scalar<T>();
    const T hi = maxval.scalar<T>();
    OP_REQUIRES_OK(c, CheckRange(lo, hi));
    Fill(c, gen, out->data<T>(), out->NumElements(), philox::UniformInt<T>(lo, hi));
  }
};

// StatelessRandomGetKeyCounter[Alg]: the V2 inputs for a seed.
class GetKeyCounterOp : public OpKernel {
 public:
  GetKeyCounterOp(OpKernelConstruction* c, bool with_alg)
      : OpKernel(c), with_alg_(with_alg) {}

  void Compute(OpKernelContext* c) override {
    absl::StatusOr<PhiloxRandom> gen = StatelessGeneratorFromSeed(c->input(0));
    OP_REQUIRES_OK(c, gen.status());
    const PhiloxRandom::Key& k = gen->key();
    const PhiloxRandom::Block& n = gen->counter();
    Tensor* key;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({1}), &key));
    key->data<uint64_t>()[0] = k[0] | (static_cast<uint64_t>(k[1]) << 32);
    Tensor* counter;
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({2}), &counter));
    counter->data<uint64_t>()[0] = n[0] | (static_cast<uint64_t>(n[1]) << 32);
    counter->data<uint64_t>()[1] = n[2] | (static_cast<uint64_t>(n[3]) << 32);
    if (with_alg_) {
      Tensor* alg;
      OP_REQUIRES_OK(c, c->allocate_output(2, TensorShape({}), &alg));
      alg->scalar<int32_t>() = kAlgPhilox;
    }
  }

 private:
  const bool with_alg_;
};

class GetAlgOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    Tensor* alg;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({}), &alg));
    alg->scalar<int32_t>() = kAlgPhilox;
  }
};

template <typename K>
KernelFactory With(Form form) {
  return [form](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
    return std::make_unique<K>(c, form);
  };
}

template <template <typename> class Dist>
void RegisterFloats(KernelRegistry* r, const std::string& op) {
  for (Form form : {Form::kV1, Form::kV2}) {
    const std::string name = form == Form::kV1 ? op : op + "V2";
    r->Register(KernelDef(name, kDeviceTypeCpu).TypeConstraint("dtype", DT_FLOAT),
                With<StatelessOp<Dist, float>>(form));
    r->Register(KernelDef(name, kDeviceTypeCpu).TypeConstraint("dtype", DT_DOUBLE),
                With<StatelessOp<Dist, double>>(form));
    r->Register(KernelDef(name, kDeviceTypeCpu).TypeConstraint("dtype", DT_HALF),
                With<StatelessOp<Dist, Half>>(form));
    r->Register(KernelDef(name, kDeviceTypeCpu).TypeConstraint("dtype", DT_BFLOAT16),
                With<StatelessOp<Dist, BFloat16>>(form));
  }
}

}  // namespace

void RegisterStatelessRandomKernels(KernelRegistry* r) {
  RegisterFloats<philox::Uniform>(r, "StatelessRandomUniform");
  RegisterFloats<philox::Normal>(r, "StatelessRandomNormal");
  RegisterFloats<philox::TruncatedNormal>(r, "StatelessTruncatedNormal");
  for (Form form : {Form::kV1, Form::kV2}) {
    const std::string v = form == Form::kV1 ? "" : "V2";
    const std::string uniform_int = "StatelessRandomUniformInt" + v;
    r->Register(KernelDef(uniform_int, kDeviceTypeCpu).TypeConstraint("dtype", DT_INT32),
                With<StatelessUniformIntOp<int32_t>>(form));
    r->Register(KernelDef(uniform_int, kDeviceTypeCpu).TypeConstraint("dtype", DT_INT64),
                With<StatelessUniformIntOp<int64_t>>(form));
    const std::string full = "StatelessRandomUniformFullInt" + v;
    r->Register(KernelDef(full, kDeviceTypeCpu).TypeConstraint("dtype", DT_INT32),
                With<StatelessOp<philox::UniformFullInt, int32_t>>(form));
    r->Register(KernelDef(full, kDeviceTypeCpu).TypeConstraint("dtype", DT_INT64),
                With<StatelessOp<philox::UniformFullInt, int64_t>>(form));
    r->Register(KernelDef(full, kDeviceTypeCpu).TypeConstraint("dtype", DT_UINT32),
                With<StatelessOp<philox::UniformFullInt, uint32_t>>(form));
    r->Register(KernelDef(full, kDeviceTypeCpu).TypeConstraint("dtype", DT_UINT64),
                With<StatelessOp<philox::UniformFullInt, uint64_t>>(form));
  }
  r->Register(KernelDef("StatelessRandomGetKeyCounter", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<GetKeyCounterOp>(c, false);
              });
  r->Register(KernelDef("StatelessRandomGetKeyCounterAlg", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<GetKeyCounterOp>(c, true);
              });
  r->Register(KernelDef("StatelessRandomGetAlg", kDeviceTypeCpu),
              MakeKernel<GetAlgOp>);
}

}  // namespace weft
