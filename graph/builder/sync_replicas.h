// Synchronous between-graph training: TensorFlow's SyncReplicasOptimizer,
// wrapping another optimizer. Every worker task builds the same graph (its
// own copy); gradients are aggregated per step on the ps tasks, and the
// chief applies their mean once per step.
//
//   SyncReplicasOptions o;
//   o.replicas_to_aggregate = 2;   // of o.total_num_replicas = 3 workers
//   o.total_num_replicas = 3;
//   SyncReplicasOptimizer sync(NewGradientDescentOptimizer({}), o);
//   BuildTrainingGraph(root, kind, options, &sync);   // "train_op" etc.
//
// What ApplyGradients builds, per variable v (colocated with v, so on v's
// ps task once the replica device setter has run):
//   sync_replicas/<v>/grad_accum   a conditional accumulator (resource form
//                                  for resource variables, ref form for
//                                  ref ones), shared_name "<v>/grad_accum"
//   .../apply   AccumulatorApplyGradient(grad, sync_rep_local_step)
//   .../take    AccumulatorTakeGradient(replicas_to_aggregate)
// and, colocated with the global step:
//   sync_token_q        FIFOQueueV2 of int64 tokens, shared_name
//                       "sync_token_q"
//   <wrapped optimizer> the update from the taken gradients, then
//                       global_step += 1
//   sync_op             enqueues max(total, to_aggregate) tokens holding
//                       the new global step, after the update
//   sync_init_tokens    enqueues init_tokens tokens (a NoOp when 0)
//   sync_end_tokens     enqueues max(total, to_aggregate) tokens holding
//                       the global step as it is: run by the chief once the
//                       last step is done, so that no worker waits for a
//                       token that would never come
//   sync_chief_init     AccumulatorSetGlobalStep(global_step) on every
//                       accumulator, and sync_rep_local_step_init
// and on the worker itself (options.local_device):
//   sync_rep_local_step       int64 variable: the step this worker's
//                             gradients are for
//   sync_rep_local_step_init  local_step = global_step
// The returned op (what BuildTrainingGraph calls "train_op") applies this
// worker's gradients to the accumulators, then waits for a token and sets
// the local step to it.
//
// The protocol: every worker runs sync_rep_local_step_init once (the chief
// runs sync_chief_init), then train_op per step, fetching the token
// ("sync_token_q_Dequeue": the global step its next gradients are for) to
// know where the job stands; the chief also runs sync_init_tokens once and
// sync_op in a loop of its own (fetching "sync_op_tokens/global_step", the
// global step after the update), and sync_end_tokens at the end. A gradient whose
// local step is older than the accumulator's global step is dropped, so
// with total > to_aggregate the first to_aggregate gradients of a step win
// (backup workers). With init_tokens 0 (the default here; TensorFlow's
// hook puts replicas_to_aggregate tokens in) every gradient is computed
// from the step's current variables: the run is the same computation as
// in-graph replication over as many towers.
//
// Errors are recorded in the scope and returned. Thread safety: as Scope.
#ifndef WEFT_GRAPH_BUILDER_SYNC_REPLICAS_H_
#define WEFT_GRAPH_BUILDER_SYNC_REPLICAS_H_

#include <memory>
#include <string>
#include <vector>

#include "graph/builder/optimizers.h"

namespace weft {

struct SyncReplicasOptions {
  int replicas_to_aggregate = 1;
  int total_num_replicas = 1;
  int init_tokens = 0;
  // Where each worker's local step lives: the replica device setter fills
  // in the task.
  std::string local_device = "/job:worker";
};

// Names the tools run.
inline constexpr char kSyncOp[] = "sync_op";
inline constexpr char kSyncInitTokens[] = "sync_init_tokens";
inline constexpr char kSyncEndTokens[] = "sync_end_tokens";
inline constexpr char kSyncChiefInit[] = "sync_chief_init";
inline constexpr char kSyncLocalStepInit[] = "sync_rep_local_step_init";

class SyncReplicasOptimizer final : public WrappedOptimizer {
 public:
  SyncReplicasOptimizer(std::unique_ptr<Optimizer> wrapped,
                        SyncReplicasOptions options);

  // Needs a global step (INVALID_ARGUMENT otherwise); one call per graph.
  absl::StatusOr<Operation> ApplyGradients(
      const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
      const TrainableVariable* global_step) override;
  // The wrapped optimizer's, and the local step's.
  std::vector<Operation> initializers() const override;

 private:
  const SyncReplicasOptions options_;
  TrainableVariable local_step_;
};

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_SYNC_REPLICAS_H_
