#include "graph/builder/sync_replicas.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/state_ops.h"
#include "graph/builder/variables.h"
#include "runtime/core/status.h"

namespace weft {

SyncReplicasOptimizer::SyncReplicasOptimizer(
    std::unique_ptr<Optimizer> wrapped, SyncReplicasOptions options)
    : WrappedOptimizer("SyncReplicas", std::move(wrapped)),
      options_(std::move(options)) {}

std::vector<Operation> SyncReplicasOptimizer::initializers() const {
  std::vector<Operation> ops = WrappedOptimizer::initializers();
  if (local_step_.valid()) ops.push_back(local_step_.initializer);
  return ops;
}

absl::StatusOr<Operation> SyncReplicasOptimizer::ApplyGradients(
    const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
    const TrainableVariable* global_step) {
  WEFT_RETURN_IF_ERROR(scope.status());
  const SyncReplicasOptions& o = options_;
  if (global_step == nullptr || !global_step->valid()) {
    return absl::InvalidArgumentError(
        "SyncReplicasOptimizer needs a global step");
  }
  if (o.replicas_to_aggregate < 1 || o.total_num_replicas < 1 ||
      o.init_tokens < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SyncReplicasOptimizer: replicas_to_aggregate (",
        o.replicas_to_aggregate, ") and total_num_replicas (",
        o.total_num_replicas, ") must be positive, init_tokens (",
        o.init_tokens, ") not negative"));
  }
  if (local_step_.valid()) {
    return absl::FailedPreconditionError(
        "SyncReplicasOptimizer::ApplyGradients called twice");
  }
  const Scope root = scope.WithAbsoluteNameScope("");
  const VariableKind kind = global_step->kind;
  const bool resource = kind == VariableKind::kResource;

  // This worker's local step, on the worker.
  {
    const Scope local = root.WithDevice(o.local_device);
    Output zero = Const(
        local.NewSubScope("sync_rep_local_step/Initializer").WithOpName("zeros"),
        int64_t{0});
    local_step_ = NewTrainableVariable(local.WithOpName("sync_rep_local_step"),
                                       {}, DT_INT64, zero, kind);
  }
  std::vector<Operation> chief_init = {AssignTo(
      root.WithOpName(kSyncLocalStepInit), local_step_, global_step->value)};

  // Per variable: accumulate, then take the mean of replicas_to_aggregate.
  const Scope sync = root.NewSubScope("sync_replicas");
  Output required = Const(sync.WithOpName("replicas_to_aggregate"),
                          int32_t{o.replicas_to_aggregate});
  std::vector<Operation> applies;
  std::vector<GradAndVar> aggregated;
  const std::string p = resource ? "Resource" : "";
  for (const GradAndVar& gv : grads_and_vars) {
    if (!gv.var.valid() || !gv.grad.valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SyncReplicasOptimizer: variable '", gv.var.name,
          "' or its gradient is invalid"));
    }
    const Scope at =
        sync.NewSubScope(gv.var.name).ColocateWith(gv.var.var.op());
    tensorflow::AttrValue shape = ShapeAttr(gv.var.shape);
    Output accum = AddNode1(
        at.WithOpName("grad_accum"), p + "ConditionalAccumulator", {},
        {{"dtype", Attr(gv.var.dtype)},
         {"shape", shape},
         {"shared_name", Attr(absl::StrCat(gv.var.name, "/grad_accum"))}});
    applies.push_back(AddNode0(at.WithOpName("apply"),
                               p + "AccumulatorApplyGradient",
                               {accum, local_step_.value, gv.grad},
                               {{"dtype", Attr(gv.var.dtype)}}));
    Output mean = AddNode1(at.WithOpName("take"), p + "AccumulatorTakeGradient",
                           {accum, required}, {{"dtype", Attr(gv.var.dtype)}});
    aggregated.push_back(GradAndVar{mean, gv.var});
    chief_init.push_back(AddNode0(at.WithOpName("SetGlobalStep"),
                                  p + "AccumulatorSetGlobalStep",
                                  {accum, global_step->value}));
    WEFT_RETURN_IF_ERROR(scope.status());
  }
  WEFT_ASSIGN_OR_RETURN(
      Operation update,
      wrapped()->ApplyGradients(root, aggregated, global_step));

  // The token queue and what goes through it, with the global step.
  const Scope q = root.ColocateWith(global_step->var.op());
  Output queue = AddNode1(
      q.WithOpName("sync_token_q"), "FIFOQueueV2", {},
      {{"component_types", [] {
          tensorflow::AttrValue v;
          v.mutable_list()->add_type(tensorflow::DT_INT64);
          return v;
        }()},
       {"shapes", [] {
          tensorflow::AttrValue v;
          v.mutable_list()->add_shape();
          return v;
        }()},
       {"capacity", Attr(int64_t{-1})},
       {"shared_name", Attr("sync_token_q")}});
  // n tokens holding the global step as it is when they are made (a read
  // of its own, after the scope's control dependencies).
  auto enqueue_tokens = [&](const Scope& s, const std::string& name,
                            int64_t n) {
    const Scope t = s.NewSubScope(absl::StrCat(name, "_tokens"));
    Output step = resource ? ReadVariable(t.WithOpName("global_step"),
                                          global_step->var, DT_INT64)
                           : Identity(t.WithOpName("global_step"),
                                      global_step->var);
    Output dims = Const(t.WithOpName("dims"),
                        std::vector<int32_t>{static_cast<int32_t>(n)}, {1});
    Output tokens = Fill(t.WithOpName("fill"), dims, step);
    return AddNode0(s.WithOpName(name), "QueueEnqueueManyV2",
                    {queue, std::vector<Output>{tokens}});
  };
  const int64_t per_step =
      std::max(o.total_num_replicas, o.replicas_to_aggregate);
  enqueue_tokens(q.WithControlDependencies({update}), kSyncOp, per_step);
  if (o.init_tokens > 0) {
    enqueue_tokens(q, kSyncInitTokens, o.init_tokens);
  } else {
    NoOp(q.WithOpName(kSyncInitTokens));
  }
  enqueue_tokens(q, kSyncEndTokens, per_step);
  Group(root.WithOpName(kSyncChiefInit), chief_init);

  // This worker's step: its gradients in, then a token out.
  std::vector<Output> token = AddNode(
      q.WithControlDependencies(applies).WithOpName("sync_token_q_Dequeue"),
      "QueueDequeueV2", {queue},
      {{"component_types", [] {
          tensorflow::AttrValue v;
          v.mutable_list()->add_type(tensorflow::DT_INT64);
          return v;
        }()}});
  if (token.empty()) return scope.status();
  Operation train = AssignTo(root.WithOpName("sync_rep_local_step_update"),
                             local_step_, token[0]);
  WEFT_RETURN_IF_ERROR(scope.status());
  return train;
}

}  // namespace weft
