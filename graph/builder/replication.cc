#include "graph/builder/replication.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

Scope OnDevice(const Scope& s, const std::string& device) {
  return device.empty() ? s : s.WithDevice(device);
}

// INVALID_ARGUMENT if `input` is a Placeholder whose static batch size is
// not a multiple of `towers` (Split would fail at run time).
absl::Status CheckSplits(const Scope& scope, const Output& input, int towers) {
  const tensorflow::NodeDef* node = scope.FindNode(input.node);
  if (node == nullptr || node->op() != "Placeholder") return absl::OkStatus();
  auto it = node->attr().find("shape");
  if (it == node->attr().end() || it->second.shape().unknown_rank() ||
      it->second.shape().dim_size() == 0) {
    return absl::OkStatus();
  }
  const int64_t batch = it->second.shape().dim(0).size();
  if (batch >= 0 && batch % towers != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "replication: the batch of '", input.node, "' (", batch,
        ") does not split evenly into ", towers, " towers"));
  }
  return absl::OkStatus();
}

// The mean of `xs` (one per tower): AddN then divide by their count.
Output Average(const Scope& s, const std::vector<Output>& xs) {
  if (xs.size() == 1) return xs[0];
  Output sum = AddN(s, xs);
  Output n = Const(s.WithOpName("count"), static_cast<float>(xs.size()));
  if (xs[0].dtype != DT_FLOAT) n = Cast(s, n, xs[0].dtype);
  return RealDiv(s, sum, n);
}

}  // namespace

absl::StatusOr<ReplicatedStep> BuildReplicatedStep(
    const Scope& scope, const ReplicationOptions& options,
    const std::vector<Output>& batch_inputs,
    const std::vector<TrainableVariable>& vars, const TowerFn& tower,
    Optimizer* optimizer, const TrainableVariable* global_step) {
  WEFT_RETURN_IF_ERROR(scope.status());
  const int k = static_cast<int>(options.tower_devices.size());
  if (k == 0) {
    return absl::InvalidArgumentError("replication: no tower devices");
  }
  if (optimizer == nullptr || !tower) {
    return absl::InvalidArgumentError(
        "replication: an optimizer and a tower function are required");
  }
  const Scope params = OnDevice(scope, options.param_device);

  // slices[i][j]: tower i's slice of input j.
  std::vector<std::vector<Output>> slices(k);
  Scope split = params.NewSubScope("split");
  for (const Output& input : batch_inputs) {
    WEFT_RETURN_IF_ERROR(CheckSplits(scope, input, k));
    if (k == 1) {
      slices[0].push_back(input);
      continue;
    }
    std::vector<Output> parts =
        AddNode(split, "Split", {Const(split, 0), input},
                {{"num_split", Attr(k)}});
    WEFT_RETURN_IF_ERROR(scope.status());
    for (int i = 0; i < k; ++i) slices[i].push_back(parts[i]);
  }

  ReplicatedStep step;
  std::vector<std::vector<GradAndVar>> tower_grads;
  for (int i = 0; i < k; ++i) {
    Scope t = scope.NewSubScope(absl::StrCat("tower_", i))
                  .WithDevice(options.tower_devices[i]);
    const std::string where =
        absl::StrCat("tower ", i, " on '", options.tower_devices[i], "'");
    absl::StatusOr<TowerOutputs> out = tower(t, i, slices[i]);
    if (!out.ok()) {
      scope.UpdateStatus(out.status());
      return WithContext(out.status(), where);
    }
    WEFT_RETURN_IF_ERROR(WithContext(scope.status(), where));
    if (!out->loss.valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat("replication: ", where, " returned no loss"));
    }
    if (i > 0 && (out->metrics.size() != step.towers[0].metrics.size() ||
                  out->per_example.size() !=
                      step.towers[0].per_example.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replication: ", where,
          " returned a different number of outputs than tower 0"));
    }
    WEFT_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                          optimizer->ComputeGradients(t, out->loss, vars));
    tower_grads.push_back(std::move(grads));
    step.towers.push_back(*std::move(out));
  }

  Scope avg = params.NewSubScope("average");
  auto gather = [&](auto member) {
    std::vector<Output> xs;
    for (const TowerOutputs& t : step.towers) xs.push_back(member(t));
    return xs;
  };
  step.loss = Average(avg.NewSubScope("loss"),
                      gather([](const TowerOutputs& t) { return t.loss; }));
  for (size_t m = 0; m < step.towers[0].metrics.size(); ++m) {
    step.metrics.push_back(
        Average(avg.NewSubScope("metric"),
                gather([m](const TowerOutputs& t) { return t.metrics[m]; })));
  }
  for (size_t m = 0; m < step.towers[0].per_example.size(); ++m) {
    std::vector<Output> parts =
        gather([m](const TowerOutputs& t) { return t.per_example[m]; });
    step.per_example.push_back(
        k == 1 ? parts[0] : ConcatV2(avg, parts, Const(avg, 0)));
  }
  for (size_t v = 0; v < vars.size(); ++v) {
    std::vector<Output> grads;
    for (const auto& g : tower_grads) grads.push_back(g[v].grad);
    step.grads.push_back(
        {Average(avg.NewSubScope(absl::StrCat(vars[v].name, "_grad")), grads),
         vars[v]});
  }
  WEFT_RETURN_IF_ERROR(scope.status());
  WEFT_ASSIGN_OR_RETURN(step.train_op,
                        optimizer->ApplyGradients(params, step.grads,
                                                  global_step));
  return step;
}

}  // namespace weft
