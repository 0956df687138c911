#include "tools/model_flags.h"

#include <memory>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "graph/builder/optimizers.h"
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"
#include "tools/local_devices.h"

namespace weft {

const char kModelFlagsUsage[] =
    "  --model M        mlp, cnn or transformer (8x8 images, 10 classes)\n"
    "  --batch B        examples per step (default 32)\n"
    "  --optimizer O    sgd (default), momentum, nesterov or adam\n"
    "  --lr X           learning rate (default: sgd 0.1, momentum and\n"
    "                   nesterov 0.05, adam 0.01)\n"
    "  --variables K    resource (default) or ref (TF1 VariableV2)\n"
    "  --hidden H       hidden width / transformer model width (default 64)\n"
    "  --seed S         initializer seed (default 1)\n"
    "  --devices LIST   devices to spread the model over, comma-separated:\n"
    "                   cpu:0,cpu:1, gpu:0 (ops without a GPU kernel run\n"
    "                   on the CPU), or task devices such as\n"
    "                   /job:worker/task:1 for graphgen\n"
    "  --mode M         single (default: one device), in-graph (one tower per\n"
    "                   device on its slice of the batch, gradients averaged\n"
    "                   on the parameter device) or model-parallel\n"
    "                   (consecutive layers on consecutive devices; mlp, cnn);\n"
    "                   weft train also takes between-async, between-sync,\n"
    "                   allreduce and hybrid (allreduce over the workers,\n"
    "                   each one's layers over its --devices, default\n"
    "                   cpu:0,cpu:1; mlp, cnn)\n"
    "                   (with --cluster: this process is one worker task)\n"
    "  --param-device D in-graph: where variables and the update live\n"
    "                   (default: the first of --devices)\n";

void AddModelFlags(std::map<std::string, FlagKind>* flags) {
  for (const char* name : {"model", "batch", "optimizer", "lr", "variables",
                           "hidden", "seed", "devices", "mode",
                           "param-device"}) {
    (*flags)[name] = kValue;
  }
}

namespace {

// --param-device (one device), or `fallback` without it.
absl::StatusOr<std::string> ParamDevice(const CommandLine& cl, const std::string& fallback) {
  if (!cl.Has("param-device")) return fallback;
  WEFT_ASSIGN_OR_RETURN(std::vector<std::string> p, ParseDeviceList(cl.Get("param-device")));
  if (p.size() != 1) {
    return absl::InvalidArgumentError("--param-device takes one device");
  }
  return p[0];
}

// --mode hybrid's --devices: this worker's own (cpu:0,cpu:1 when not
// given), at least 2, without a job or task.
absl::StatusOr<std::vector<std::string>> HybridDevices(const CommandLine& cl) {
  if (cl.Has("param-device")) {
    return absl::InvalidArgumentError("--param-device goes with --mode in-graph");
  }
  std::vector<std::string> devices = {"/device:CPU:0", "/device:CPU:1"};
  if (cl.Has("devices")) {
    WEFT_ASSIGN_OR_RETURN(devices, ParseDeviceList(cl.Get("devices")));
  }
  for (const std::string& d : devices) {
    WEFT_ASSIGN_OR_RETURN(DeviceSpec spec, ParseDeviceSpec(d));
    if (spec.job || spec.replica || spec.task) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mode hybrid spreads each worker's layers over its own devices: "
          "give them without a job or task (cpu:0,cpu:1), not '", d, "'"));
    }
  }
  if (devices.size() < 2) {
    return absl::InvalidArgumentError(
        "--mode hybrid needs 2 or more --devices to split the layers over");
  }
  return devices;
}

absl::Status ParseParallelFlags(const CommandLine& cl, ModelChoice* c) {
  if (cl.Has("devices")) {
    WEFT_ASSIGN_OR_RETURN(c->devices, ParseDeviceList(cl.Get("devices")));
  }
  const size_t n = c->devices.size();
  c->mode = cl.Get("mode", n > 1 ? "" : "single");
  if (c->mode == "hybrid") {
    // Layers over this worker's own devices; the rest as allreduce.
    WEFT_ASSIGN_OR_RETURN(c->devices, HybridDevices(cl));
    c->options.layer_devices = c->devices;
    return ValidateModelOptions(c->kind, c->options);
  }
  if (IsBetweenGraph(*c)) {
    // Placement comes from the cluster (distributed/training/trainer.h).
    if (n > 0 || cl.Has("param-device")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mode ", c->mode, c->mode == "allreduce"
              ? " places the whole model on this worker"
              : " places variables on the ps tasks and the rest on this worker",
          ": leave out --devices and --param-device"));
    }
    return absl::OkStatus();
  }
  if (c->mode.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--devices lists ", n,
        " devices: say how to use them with --mode in-graph or "
        "--mode model-parallel"));
  }
  if (c->mode != "single" && c->mode != "in-graph" &&
      c->mode != "model-parallel") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--mode must be single, in-graph, model-parallel, between-async, "
        "between-sync, allreduce or hybrid, "
        "not '", c->mode,
        "'"));
  }
  if (c->mode == "single" && n > 1) {
    return absl::InvalidArgumentError(
        "--mode single takes at most one device in --devices");
  }
  if (c->mode != "single" && n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mode ", c->mode, " needs --devices, e.g. cpu:0,cpu:1"));
  }
  if (cl.Has("param-device") && c->mode != "in-graph") {
    return absl::InvalidArgumentError("--param-device goes with --mode in-graph");
  }
  if (c->mode == "in-graph") {
    WEFT_ASSIGN_OR_RETURN(c->param_device, ParamDevice(cl, c->devices[0]));
  }
  if (c->mode == "in-graph" && c->options.batch % static_cast<int64_t>(n) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--batch ", c->options.batch, " must be a multiple of the ", n,
        " devices of --mode in-graph (each tower takes an equal slice)"));
  }
  if (c->mode == "model-parallel") {
    c->options.layer_devices = c->devices;
    WEFT_RETURN_IF_ERROR(ValidateModelOptions(c->kind, c->options));
  }
  return absl::OkStatus();
}

// --optimizer and --lr.
absl::Status ParseOptimizerFlags(const CommandLine& cl, ModelChoice* c) {
  c->optimizer = cl.Get("optimizer", "sgd");
  WEFT_RETURN_IF_ERROR(NewOptimizerByName(c->optimizer, 0.1f).status());
  c->learning_rate = c->optimizer == "sgd"    ? 0.1f
                     : c->optimizer == "adam" ? 0.01f
                                              : 0.05f;
  if (cl.Has("lr") &&
      (!absl::SimpleAtof(cl.Get("lr"), &c->learning_rate) ||
       !(c->learning_rate > 0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--lr must be a positive number, not '", cl.Get("lr"), "'"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelChoice> ParseModelFlags(const CommandLine& cl) {
  ModelChoice c;
  if (!cl.Has("model")) return absl::InvalidArgumentError("--model is required");
  WEFT_RETURN_IF_ERROR(ParseModelKind(cl.Get("model"), &c.kind));
  WEFT_ASSIGN_OR_RETURN(c.options.batch,
                        cl.GetPositiveInt("batch", c.options.batch));
  WEFT_ASSIGN_OR_RETURN(c.options.hidden,
                        cl.GetPositiveInt("hidden", c.options.hidden));
  WEFT_ASSIGN_OR_RETURN(c.options.seed,
                        cl.GetPositiveInt("seed", c.options.seed));
  WEFT_RETURN_IF_ERROR(ParseOptimizerFlags(cl, &c));
  WEFT_RETURN_IF_ERROR(
      ParseVariableKind(cl.Get("variables", "resource"), &c.options.variable_kind));
  WEFT_RETURN_IF_ERROR(ParseParallelFlags(cl, &c));
  WEFT_RETURN_IF_ERROR(ValidateModelOptions(c.options));
  return c;
}

absl::StatusOr<ModelChoice> ParseImportedModelFlags(
    const CommandLine& cl, std::shared_ptr<const tensorflow::GraphDef> forward,
    const std::string& source) {
  for (const char* f : {"model", "hidden", "seed", "variables"}) {
    if (cl.Has(f)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", f, " goes with --model: the graph '", source,
          "' already fixes its model"));
    }
  }
  ModelChoice c;
  c.forward = std::move(forward);
  c.source = source;
  c.imported.loss = cl.Get("loss");
  c.imported.init = cl.Get("init", "");
  c.imported.train_op = cl.Get("train-op", "");
  WEFT_RETURN_IF_ERROR(ParseOptimizerFlags(cl, &c));
  c.mode = cl.Get("mode", "single");
  if (!c.imported.train_op.empty()) {
    // The graph holds its optimizer: nothing to choose, nothing to average.
    for (const char* f : {"optimizer", "lr"}) {
      if (cl.Has(f)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--", f, " does not go with --train-op: the graph holds its optimizer"));
      }
    }
    if (c.mode != "single" && c.mode != "between-async") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mode ", c.mode, " needs Weft to compute the gradients: export the "
          "forward graph and give --loss alone (a graph with --train-op trains "
          "in --mode single or between-async)"));
    }
  }
  if (c.mode != "single" && c.mode != "in-graph" && c.mode != "model-parallel" &&
      c.mode != "between-async" && c.mode != "between-sync" && c.mode != "allreduce" &&
      c.mode != "hybrid") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--mode must be single, in-graph, model-parallel, between-async, "
        "between-sync, allreduce or hybrid, not '", c.mode, "'"));
  }
  if (c.mode == "hybrid") {
    // All-reduce over the workers, each worker's copy cut by estimated
    // cost over its own devices.
    WEFT_ASSIGN_OR_RETURN(c.devices, HybridDevices(cl));
    c.imported.layer_devices = c.devices;
  } else if (c.mode == "model-parallel") {
    // The forward computation cut by estimated cost, a piece per device.
    if (cl.Has("param-device")) {
      return absl::InvalidArgumentError("--param-device goes with --mode in-graph");
    }
    WEFT_ASSIGN_OR_RETURN(c.devices, ParseDeviceList(cl.Get("devices", "")));
    if (c.devices.size() < 2) {
      return absl::InvalidArgumentError(
          "--mode model-parallel needs 2 or more --devices, e.g. cpu:0,cpu:1");
    }
    c.imported.layer_devices = c.devices;
  } else if (c.mode == "in-graph") {
    // One tower per device, the variables on --param-device.
    if (!cl.Has("devices")) {
      return absl::InvalidArgumentError(
          "--mode in-graph needs --devices, e.g. cpu:0,cpu:1");
    }
    WEFT_ASSIGN_OR_RETURN(c.devices, ParseDeviceList(cl.Get("devices")));
    WEFT_ASSIGN_OR_RETURN(c.param_device, ParamDevice(cl, c.devices[0]));
  } else if (cl.Has("devices") || cl.Has("param-device")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--devices and --param-device go with --mode in-graph or "
        "model-parallel for a --graph model, not --mode ", c.mode));
  }
  // The graph must make a training graph: errors name the node now, before
  // any task starts.
  WEFT_RETURN_IF_ERROR(
      WithContext(InspectForwardGraph(*c.forward, c.imported).status(), source));
  return c;
}

}  // namespace weft
