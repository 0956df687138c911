#include "graph/models/models.h"

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "graph/builder/replication.h"
#include "graph/models/layers.h"
#include "runtime/core/status.h"

namespace weft {

using models_internal::ParamMaker;

namespace {

// The "images" and "labels" placeholders for a batch of options.batch.
void AddInputs(const Scope& s, const ModelOptions& options, TrainingGraph* g) {
  g->images = Placeholder(s.WithOpName("images"), DT_FLOAT,
                          {options.batch, options.image_rows * options.image_cols});
  g->labels = Placeholder(s.WithOpName("labels"), DT_INT64, {options.batch});
}

// "train_op" around the optimizer's `step`, and "init".
void FinishTrainingGraph(const Scope& root, const Operation& step,
                         const Optimizer* optimizer, TrainingGraph* g) {
  g->train_op = Group(root.WithOpName("train_op"), {step});
  std::vector<Operation> inits = {g->global_step.initializer};
  for (const TrainableVariable& v : g->params.list) {
    inits.push_back(v.initializer);
  }
  for (const Operation& op : optimizer->initializers()) inits.push_back(op);
  g->init = Group(root.WithOpName("init"), inits);
}

}  // namespace

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

std::vector<std::string> ModelLayers(ModelKind kind) {
  switch (kind) {
    case ModelKind::kMlp:
      return {"hidden1", "hidden2", "output"};
    case ModelKind::kCnn:
      return {"conv1", "conv2", "dense", "output"};
    case ModelKind::kTransformer:
      return {};
  }
  return {};
}

absl::Status ValidateModelOptions(ModelKind kind, const ModelOptions& o) {
  WEFT_RETURN_IF_ERROR(ValidateModelOptions(o));
  const size_t layers = ModelLayers(kind).size();
  if (!o.layer_devices.empty() && o.layer_devices.size() > layers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model parallelism: ", ModelKindName(kind), " has ", layers,
        " layers to place, but ", o.layer_devices.size(),
        " layer devices were given",
        layers == 0 ? " (only mlp and cnn can be split by layer)" : ""));
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelParams> CreateModelParams(const Scope& scope,
                                              ModelKind kind,
                                              const ModelOptions& options) {
  WEFT_RETURN_IF_ERROR(ValidateModelOptions(kind, options));
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
  WEFT_RETURN_IF_ERROR(ValidateModelOptions(kind, options));
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
  WEFT_RETURN_IF_ERROR(ValidateModelOptions(kind, options));
  if (optimizer == nullptr) {
    return absl::InvalidArgumentError("BuildTrainingGraph: no optimizer");
  }
  TrainingGraph g;
  const std::vector<std::string>& devices = options.layer_devices;
  // Model parallelism: inputs with the first layer, loss with the last.
  const Scope first = devices.empty() ? root : root.WithDevice(devices.front());
  const Scope last = devices.empty() ? root : root.WithDevice(devices.back());
  AddInputs(first, options, &g);
  Scope model = root.NewSubScope(ModelKindName(kind));
  WEFT_ASSIGN_OR_RETURN(g.params, CreateModelParams(model, kind, options));
  WEFT_ASSIGN_OR_RETURN(Output logits,
                        ModelLogits(model, kind, options, g.params, g.images));
  g.logits = Identity(last.WithOpName("logits"), logits);
  LossAndAccuracy la = AddLossAndAccuracy(last, g.logits, g.labels);
  g.loss = la.loss;
  g.accuracy = la.accuracy;
  g.global_step = NewGlobalStep(root, options.variable_kind);
  GradientOptions grad_options;
  grad_options.colocate_with_ops = !devices.empty();
  WEFT_ASSIGN_OR_RETURN(
      std::vector<GradAndVar> grads,
      optimizer->ComputeGradients(root, g.loss, g.params.list, grad_options));
  WEFT_ASSIGN_OR_RETURN(Operation step, optimizer->ApplyGradients(
                                            root, grads, &g.global_step));
  FinishTrainingGraph(root, step, optimizer, &g);
  WEFT_RETURN_IF_ERROR(root.status());
  return g;
}

absl::StatusOr<TrainingGraph> BuildReplicatedTrainingGraph(
    const Scope& root, ModelKind kind, const ModelOptions& options,
    Optimizer* optimizer, const std::vector<std::string>& tower_devices,
    const std::string& param_device) {
  WEFT_RETURN_IF_ERROR(ValidateModelOptions(kind, options));
  if (optimizer == nullptr) {
    return absl::InvalidArgumentError(
        "BuildReplicatedTrainingGraph: no optimizer");
  }
  if (!options.layer_devices.empty()) {
    return absl::InvalidArgumentError(
        "in-graph replication and layer_devices (model parallelism) cannot "
        "be combined");
  }
  const int64_t k = static_cast<int64_t>(tower_devices.size());
  if (k == 0 || options.batch % k != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "in-graph replication: batch ", options.batch,
        " must be a positive multiple of the number of towers (", k, ")"));
  }
  TrainingGraph g;
  const Scope params =
      param_device.empty() ? root : root.WithDevice(param_device);
  AddInputs(params, options, &g);
  WEFT_ASSIGN_OR_RETURN(
      g.params,
      CreateModelParams(params.NewSubScope(ModelKindName(kind)), kind, options));
  g.global_step = NewGlobalStep(params, options.variable_kind);
  ModelOptions tower_options = options;
  tower_options.batch = options.batch / k;
  TowerFn tower = [&](const Scope& s, int,
                      const std::vector<Output>& in)
      -> absl::StatusOr<TowerOutputs> {
    WEFT_ASSIGN_OR_RETURN(
        Output logits,
        ModelLogits(s.NewSubScope(ModelKindName(kind)), kind, tower_options,
                    g.params, in[0]));
    LossAndAccuracy la = AddLossAndAccuracy(s, logits, in[1]);
    return TowerOutputs{la.loss, {la.accuracy}, {logits}};
  };
  ReplicationOptions r;
  r.tower_devices = tower_devices;
  r.param_device = param_device;
  WEFT_ASSIGN_OR_RETURN(
      ReplicatedStep step,
      BuildReplicatedStep(root, r, {g.images, g.labels}, g.params.list, tower,
                          optimizer, &g.global_step));
  g.logits = Identity(params.WithOpName("logits"), step.per_example[0]);
  g.loss = Identity(params.WithOpName("loss"), step.loss);
  g.accuracy = Identity(params.WithOpName("accuracy"), step.metrics[0]);
  FinishTrainingGraph(params, step.train_op, optimizer, &g);
  WEFT_RETURN_IF_ERROR(root.status());
  return g;
}

}  // namespace weft
