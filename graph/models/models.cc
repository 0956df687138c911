#include "graph/models/models.h"

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "graph/models/layers.h"
#include "runtime/status.h"

namespace weft {

using models_internal::ParamMaker;

absl::Status ParseModelKind(absl::string_view text, ModelKind* kind) {
  if (text == "mlp") {
    *kind = ModelKind::kMlp;
  } else if (text == "cnn") {
    *kind = ModelKind::kCnn;
  } else if (text == "transformer") {
    *kind = ModelKind::kTransformer;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown model '", text, "' (mlp, cnn or transformer)"));
  }
  return absl::OkStatus();
}

const char* ModelKindName(ModelKind kind) {
  switch (kind) {
    case ModelKind::kMlp:
      return "mlp";
    case ModelKind::kCnn:
      return "cnn";
    case ModelKind::kTransformer:
      return "transformer";
  }
  return "?";
}

absl::Status ValidateModelOptions(const ModelOptions& o) {
  for (auto [name, value] :
       {std::pair<const char*, int64_t>{"batch", o.batch},
        {"image_rows", o.image_rows},
        {"image_cols", o.image_cols},
        {"num_classes", o.num_classes},
        {"hidden", o.hidden},
        {"heads", o.heads}}) {
    if (value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("model option ", name, " must be positive, got ", value));
    }
  }
  if (o.hidden % o.heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model option heads (", o.heads, ") must divide hidden (", o.hidden,
        ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelParams> CreateModelParams(const Scope& scope,
                                              ModelKind kind,
                                              const ModelOptions& options) {
  WEFT_RETURN_IF_ERROR(ValidateModelOptions(options));
  ModelParams params;
  ParamMaker maker(scope, options, &params);
  switch (kind) {
    case ModelKind::kMlp:
      WEFT_RETURN_IF_ERROR(models_internal::CreateMlpParams(&maker, options));
      break;
    case ModelKind::kCnn:
      WEFT_RETURN_IF_ERROR(models_internal::CreateCnnParams(&maker, options));
      break;
    case ModelKind::kTransformer:
      WEFT_RETURN_IF_ERROR(
          models_internal::CreateTransformerParams(&maker, options));
      break;
  }
  WEFT_RETURN_IF_ERROR(scope.status());
  return params;
}

absl::StatusOr<Output> ModelLogits(const Scope& scope, ModelKind kind,
                                   const ModelOptions& options,
                                   const ModelParams& params,
                                   const Output& images) {
  WEFT_RETURN_IF_ERROR(ValidateModelOptions(options));
  Output logits;
  switch (kind) {
    case ModelKind::kMlp:
      logits = models_internal::MlpLogits(scope, options, params, images);
      break;
    case ModelKind::kCnn:
      logits = models_internal::CnnLogits(scope, options, params, images);
      break;
    case ModelKind::kTransformer:
      logits =
          models_internal::TransformerLogits(scope, options, params, images);
      break;
  }
  WEFT_RETURN_IF_ERROR(scope.status());
  if (!logits.valid()) {
    return absl::InternalError(absl::StrCat(ModelKindName(kind),
                                            ": building the logits failed"));
  }
  return logits;
}

LossAndAccuracy AddLossAndAccuracy(const Scope& scope, const Output& logits,
                                   const Output& labels) {
  LossAndAccuracy out;
  Output xent = SparseSoftmaxCrossEntropyWithLogits(scope, logits, labels).loss;
  out.loss = Mean(scope.WithOpName("loss"), xent, Const(scope, 0));
  Output predicted = ArgMax(scope, logits, Const(scope, 1), labels.dtype);
  Output hit = Cast(scope, Equal(scope, predicted, labels), DT_FLOAT);
  out.accuracy = Mean(scope.WithOpName("accuracy"), hit, Const(scope, 0));
  return out;
}

absl::StatusOr<TrainingGraph> BuildTrainingGraph(const Scope& root,
                                                 ModelKind kind,
                                                 const ModelOptions& options,
                                                 Optimizer* optimizer) {
  WEFT_RETURN_IF_ERROR(ValidateModelOptions(options));
  if (optimizer == nullptr) {
    return absl::InvalidArgumentError("BuildTrainingGraph: no optimizer");
  }
  TrainingGraph g;
  g.images = Placeholder(root.WithOpName("images"), DT_FLOAT,
                         {options.batch, options.image_rows * options.image_cols});
  g.labels = Placeholder(root.WithOpName("labels"), DT_INT64, {options.batch});
  Scope model = root.NewSubScope(ModelKindName(kind));
  WEFT_ASSIGN_OR_RETURN(g.params, CreateModelParams(model, kind, options));
  WEFT_ASSIGN_OR_RETURN(Output logits,
                        ModelLogits(model, kind, options, g.params, g.images));
  g.logits = Identity(root.WithOpName("logits"), logits);
  LossAndAccuracy la = AddLossAndAccuracy(root, g.logits, g.labels);
  g.loss = la.loss;
  g.accuracy = la.accuracy;
  g.global_step = NewGlobalStep(root, options.variable_kind);
  WEFT_ASSIGN_OR_RETURN(
      Operation step,
      optimizer->Minimize(root, g.loss, g.params.list, &g.global_step));
  g.train_op = Group(root.WithOpName("train_op"), {step});
  std::vector<Operation> inits = {g.global_step.initializer};
  for (const TrainableVariable& v : g.params.list) inits.push_back(v.initializer);
  for (const Operation& op : optimizer->initializers()) inits.push_back(op);
  g.init = Group(root.WithOpName("init"), inits);
  WEFT_RETURN_IF_ERROR(root.status());
  return g;
}

}  // namespace weft
