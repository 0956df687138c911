// Random ops, with TensorFlow's OpDefs.
//  - Stateful (seed and seed2 attrs; each step draws the next numbers):
//    RandomUniform, RandomStandardNormal, TruncatedNormal, RandomUniformInt,
//    RandomShuffle, RandomGamma, RandomPoisson(V2) (ops/cpu/random_kernels.cc).
//  - Stateless (the numbers are a function of a seed input, or of a key and
//    counter): StatelessRandom{Uniform,Normal,UniformInt,UniformFullInt},
//    StatelessTruncatedNormal, their V2 forms, and the ops that make a key,
//    counter and algorithm from a seed (ops/cpu/stateless_random_kernels.cc).
// The kernels reproduce TensorFlow's numbers for the same seeds.
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

absl::Status RandomShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
  c->set_output(0, c->InputAsShape(0));
  return absl::OkStatus();
}

// RandomGamma, RandomPoisson: `shape` + the parameter's shape (input 1).
absl::Status SamplesShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
  const PartialShape samples = c->InputAsShape(0);
  const PartialShape& param = c->input(1);
  if (!samples.known_rank() || !param.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims(samples.dims().begin(), samples.dims().end());
  dims.insert(dims.end(), param.dims().begin(), param.dims().end());
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status RandomIntShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));  // minval
  WEFT_RETURN_IF_ERROR(c->WithRank(2, 0));  // maxval
  return RandomShape(c);
}

// Stateless V1: (shape, seed[2], [minval, maxval]).
absl::Status StatelessShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  const PartialShape& seed = c->input(1);
  if (seed.known_rank() && seed.rank() == 1 && seed.dim(0) >= 0 && seed.dim(0) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "seed must have shape [2], not [", seed.dim(0), "]"));
  }
  for (int i = 2; i < c->num_inputs(); ++i) {
    WEFT_RETURN_IF_ERROR(c->WithRank(i, 0));  // minval, maxval
  }
  return RandomShape(c);
}

// Stateless V2: (shape, key[1], counter, alg, [minval, maxval]).
absl::Status StatelessV2Shape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));  // key
  WEFT_RETURN_IF_ERROR(c->WithRank(2, 1));  // counter
  for (int i = 3; i < c->num_inputs(); ++i) {
    WEFT_RETURN_IF_ERROR(c->WithRank(i, 0));  // alg, minval, maxval
  }
  return RandomShape(c);
}

// StatelessRandomGetKeyCounter[Alg]: key [1], counter [2], alg [].
absl::Status KeyCounterShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
  c->set_output(0, PartialShape({1}));
  c->set_output(1, PartialShape({2}));
  if (c->num_outputs() > 2) c->set_output(2, PartialShape({}));
  return absl::OkStatus();
}

// ParameterizedTruncatedNormal: the parameters are scalars or vectors.
absl::Status ParameterizedShape(InferenceContext* c) {
  for (int i = 1; i < 5; ++i) {
    const PartialShape& p = c->input(i);
    if (p.known_rank() && p.rank() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Shape must be at most rank 1 but is rank ", p.rank(), " for input ", i));
    }
  }
  return RandomShape(c);
}

// StatelessParameterizedTruncatedNormal: (shape, seed[2], means, stddevs,
// minvals, maxvals); the parameters broadcast together.
absl::Status StatelessParameterizedShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  const PartialShape& seed = c->input(1);
  if (seed.known_rank() && seed.dim(0) >= 0 && seed.dim(0) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "seed must have shape [2], not [", seed.dim(0), "]"));
  }
  PartialShape params = c->input(2);
  for (int i = 3; i < 6; ++i) {
    absl::StatusOr<PartialShape> b = BroadcastShapes(params, c->input(i));
    WEFT_RETURN_IF_ERROR(b.status());
    params = *b;
  }
  return RandomShape(c);
}

}  // namespace

void RegisterRandomOps(OpRegistry* r) {
  for (const char* op :
       {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    r->Register(OpDefBuilder(op)
                    .Input("shape: T")
                    .Output("output: dtype")
                    .Attr("seed: int = 0")
                    .Attr("seed2: int = 0")
                    .Attr("dtype: {half, bfloat16, float, double}")
                    .Attr("T: {int32, int64}")
                    .SetIsStateful(),
                RandomShape);
  }
  r->Register(OpDefBuilder("RandomGamma")
                  .Input("shape: S")
                  .Input("alpha: T")
                  .Output("output: T")
                  .Attr("seed: int = 0")
                  .Attr("seed2: int = 0")
                  .Attr("S: {int32, int64}")
                  .Attr("T: {half, float, double}")
                  .SetIsStateful(),
              SamplesShape);
  r->Register(OpDefBuilder("RandomPoisson")
                  .Input("shape: S")
                  .Input("rate: dtype")
                  .Output("output: dtype")
                  .Attr("seed: int = 0")
                  .Attr("seed2: int = 0")
                  .Attr("S: {int32, int64}")
                  .Attr("dtype: {half, float, double}")
                  .SetIsStateful(),
              SamplesShape);
  r->Register(OpDefBuilder("RandomPoissonV2")
                  .Input("shape: S")
                  .Input("rate: R")
                  .Output("output: dtype")
                  .Attr("seed: int = 0")
                  .Attr("seed2: int = 0")
                  .Attr("S: {int32, int64}")
                  .Attr("R: {half, float, double, int32, int64} = DT_DOUBLE")
                  .Attr("dtype: {half, float, double, int32, int64} = DT_INT64")
                  .SetIsStateful(),
              SamplesShape);
  r->Register(OpDefBuilder("RandomUniformInt")
                  .Input("shape: T")
                  .Input("minval: Tout")
                  .Input("maxval: Tout")
                  .Output("output: Tout")
                  .Attr("seed: int = 0")
                  .Attr("seed2: int = 0")
                  .Attr("Tout: {int32, int64}")
                  .Attr("T: {int32, int64}")
                  .SetIsStateful(),
              RandomIntShape);
  r->Register(OpDefBuilder("RandomShuffle")
                  .Input("value: T")
                  .Output("output: T")
                  .Attr("seed: int = 0")
                  .Attr("seed2: int = 0")
                  .Attr("T: type")
                  .SetIsStateful(),
              [](InferenceContext* c) {
                WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
                return UnchangedShape(c);
              });

  r->Register(OpDefBuilder("ParameterizedTruncatedNormal")
                  .Input("shape: T")
                  .Input("means: dtype")
                  .Input("stdevs: dtype")
                  .Input("minvals: dtype")
                  .Input("maxvals: dtype")
                  .Output("output: dtype")
                  .Attr("seed: int = 0")
                  .Attr("seed2: int = 0")
                  .Attr("dtype: {half, bfloat16, float, double}")
                  .Attr("T: {int32, int64}")
                  .SetIsStateful(),
              ParameterizedShape);
  r->Register(OpDefBuilder("StatelessParameterizedTruncatedNormal")
                  .Input("shape: S")
                  .Input("seed: Tseed")
                  .Input("means: dtype")
                  .Input("stddevs: dtype")
                  .Input("minvals: dtype")
                  .Input("maxvals: dtype")
                  .Output("output: dtype")
                  .Attr("S: {int32, int64}")
                  .Attr("Tseed: {int32, int64} = DT_INT64")
                  .Attr("dtype: {half, float, double}"),
              StatelessParameterizedShape);
  r->Register(OpDefBuilder("RandomGammaGrad")
                  .Input("alpha: T")
                  .Input("sample: T")
                  .Output("output: T")
                  .Attr("T: {float, double}"),
              BroadcastBinaryOpShape);

  constexpr const char* kFloats = "dtype: {half, bfloat16, float, double} = DT_FLOAT";
  for (const char* op : {"StatelessRandomUniform", "StatelessRandomNormal",
                         "StatelessTruncatedNormal"}) {
    r->Register(OpDefBuilder(op)
                    .Input("shape: T")
                    .Input("seed: Tseed")
                    .Output("output: dtype")
                    .Attr(kFloats)
                    .Attr("T: {int32, int64} = DT_INT32")
                    .Attr("Tseed: {int32, int64} = DT_INT64"),
                StatelessShape);
  }
  r->Register(OpDefBuilder("StatelessRandomUniformInt")
                  .Input("shape: T")
                  .Input("seed: Tseed")
                  .Input("minval: dtype")
                  .Input("maxval: dtype")
                  .Output("output: dtype")
                  .Attr("dtype: {int32, int64}")
                  .Attr("T: {int32, int64}")
                  .Attr("Tseed: {int32, int64} = DT_INT64"),
              StatelessShape);
  r->Register(OpDefBuilder("StatelessRandomUniformFullInt")
                  .Input("shape: T")
                  .Input("seed: Tseed")
                  .Output("output: dtype")
                  .Attr("dtype: {int32, int64, uint32, uint64} = DT_UINT64")
                  .Attr("T: {int32, int64} = DT_INT32")
                  .Attr("Tseed: {int32, int64, uint32, uint64} = DT_INT64"),
              StatelessShape);

  for (const char* op : {"StatelessRandomUniformV2", "StatelessRandomNormalV2",
                         "StatelessTruncatedNormalV2"}) {
    r->Register(OpDefBuilder(op)
                    .Input("shape: Tshape")
                    .Input("key: uint64")
                    .Input("counter: uint64")
                    .Input("alg: int32")
                    .Output("output: dtype")
                    .Attr(kFloats)
                    .Attr("Tshape: {int32, int64} = DT_INT32"),
                StatelessV2Shape);
  }
  r->Register(OpDefBuilder("StatelessRandomUniformIntV2")
                  .Input("shape: Tshape")
                  .Input("key: uint64")
                  .Input("counter: uint64")
                  .Input("alg: int32")
                  .Input("minval: dtype")
                  .Input("maxval: dtype")
                  .Output("output: dtype")
                  .Attr("dtype: {int32, int64, uint32, uint64}")
                  .Attr("Tshape: {int32, int64} = DT_INT32"),
              StatelessV2Shape);
  r->Register(OpDefBuilder("StatelessRandomUniformFullIntV2")
                  .Input("shape: Tshape")
                  .Input("key: uint64")
                  .Input("counter: uint64")
                  .Input("alg: int32")
                  .Output("output: dtype")
                  .Attr("dtype: {int32, int64, uint32, uint64} = DT_UINT64")
                  .Attr("Tshape: {int32, int64} = DT_INT32"),
              StatelessV2Shape);

  // Multinomial, StatelessMultinomial: [batch, num_samples] class indices.
  constexpr const char* kLogitTypes =
      "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, "
      "half, uint32, uint64}";
  auto multinomial_shape = [](InferenceContext* c) {
    WEFT_RETURN_IF_ERROR(c->WithRank(0, 2));
    WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));
    const PartialShape& logits = c->input(0);
    int64_t n = -1;
    if (const Tensor* t = c->input_tensor(1); t != nullptr && t->dtype() == DT_INT32) {
      n = t->scalar<int32_t>();
    }
    c->set_output(0, PartialShape({logits.known_rank() ? logits.dim(0) : -1, n}));
    return absl::OkStatus();
  };
  r->Register(OpDefBuilder("Multinomial")
                  .Input("logits: T")
                  .Input("num_samples: int32")
                  .Output("output: output_dtype")
                  .Attr("seed: int = 0")
                  .Attr("seed2: int = 0")
                  .Attr(kLogitTypes)
                  .Attr("output_dtype: {int32, int64} = DT_INT64")
                  .SetIsStateful(),
              multinomial_shape);
  r->Register(OpDefBuilder("StatelessMultinomial")
                  .Input("logits: T")
                  .Input("num_samples: int32")
                  .Input("seed: Tseed")
                  .Output("output: output_dtype")
                  .Attr(kLogitTypes)
                  .Attr("Tseed: {int32, int64} = DT_INT64")
                  .Attr("output_dtype: {int32, int64} = DT_INT64"),
              multinomial_shape);

  r->Register(OpDefBuilder("StatelessRandomGetKeyCounter")
                  .Input("seed: Tseed")
                  .Output("key: uint64")
                  .Output("counter: uint64")
                  .Attr("Tseed: {int32, int64} = DT_INT64"),
              KeyCounterShape);
  r->Register(OpDefBuilder("StatelessRandomGetKeyCounterAlg")
                  .Input("seed: Tseed")
                  .Output("key: uint64")
                  .Output("counter: uint64")
                  .Output("alg: int32")
                  .Attr("Tseed: {int32, int64} = DT_INT64"),
              KeyCounterShape);
  // Stateful in TensorFlow: the algorithm may depend on the device.
  r->Register(OpDefBuilder("StatelessRandomGetAlg").Output("alg: int32").SetIsStateful(),
              ScalarShape);
}

}  // namespace weft
