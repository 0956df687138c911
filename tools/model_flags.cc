#include "tools/model_flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "graph/builder/optimizers.h"
#include "runtime/status.h"

namespace weft {

const char kModelFlagsUsage[] =
    "  --model M        mlp, cnn or transformer (8x8 images, 10 classes)\n"
    "  --batch B        examples per step (default 32)\n"
    "  --optimizer O    sgd (default), momentum, nesterov or adam\n"
    "  --lr X           learning rate (default: sgd 0.1, momentum and\n"
    "                   nesterov 0.05, adam 0.01)\n"
    "  --variables K    resource (default) or ref (TF1 VariableV2)\n"
    "  --hidden H       hidden width / transformer model width (default 64)\n"
    "  --seed S         initializer seed (default 1)\n";

void AddModelFlags(std::map<std::string, FlagKind>* flags) {
  for (const char* name : {"model", "batch", "optimizer", "lr", "variables",
                           "hidden", "seed"}) {
    (*flags)[name] = kValue;
  }
}

namespace {
absl::Status PositiveInt(const CommandLine& cl, const char* flag,
                         int64_t* out) {
  if (!cl.Has(flag)) return absl::OkStatus();
  if (!absl::SimpleAtoi(cl.Get(flag), out) || *out < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " must be a positive integer, not '", cl.Get(flag), "'"));
  }
  return absl::OkStatus();
}
}  // namespace

absl::StatusOr<ModelChoice> ParseModelFlags(const CommandLine& cl) {
  ModelChoice c;
  if (!cl.Has("model")) return absl::InvalidArgumentError("--model is required");
  WEFT_RETURN_IF_ERROR(ParseModelKind(cl.Get("model"), &c.kind));
  WEFT_RETURN_IF_ERROR(PositiveInt(cl, "batch", &c.options.batch));
  WEFT_RETURN_IF_ERROR(PositiveInt(cl, "hidden", &c.options.hidden));
  WEFT_RETURN_IF_ERROR(PositiveInt(cl, "seed", &c.options.seed));
  c.optimizer = cl.Get("optimizer", "sgd");
  WEFT_RETURN_IF_ERROR(NewOptimizerByName(c.optimizer, 0.1f).status());
  c.learning_rate = c.optimizer == "sgd"    ? 0.1f
                    : c.optimizer == "adam" ? 0.01f
                                            : 0.05f;
  if (cl.Has("lr") &&
      (!absl::SimpleAtof(cl.Get("lr"), &c.learning_rate) ||
       !(c.learning_rate > 0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--lr must be a positive number, not '", cl.Get("lr"), "'"));
  }
  WEFT_RETURN_IF_ERROR(
      ParseVariableKind(cl.Get("variables", "resource"), &c.options.variable_kind));
  WEFT_RETURN_IF_ERROR(ValidateModelOptions(c.options));
  return c;
}

absl::StatusOr<tensorflow::GraphDef> BuildModelGraph(const ModelChoice& c) {
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> opt,
                        NewOptimizerByName(c.optimizer, c.learning_rate));
  Scope root = Scope::NewRoot();
  WEFT_RETURN_IF_ERROR(
      BuildTrainingGraph(root, c.kind, c.options, opt.get()).status());
  return root.ToGraphDef();
}

std::string DescribeModel(const ModelChoice& c) {
  return absl::StrCat(
      ModelKindName(c.kind), ", batch ", c.options.batch, ", ",
      c.options.image_rows * c.options.image_cols, " features, ",
      c.options.num_classes, " classes, ", c.optimizer, " (lr ",
      c.learning_rate, "), ",
      c.options.variable_kind == VariableKind::kRef ? "ref" : "resource",
      " variables");
}

}  // namespace weft
