// All-reduce data parallelism without parameter servers: an optimizer
// wrapper that averages the gradients over the worker tasks before the
// wrapped optimizer applies them. Every worker task builds the same graph
// (its own copy, every variable on its own task) with its own rank:
//
//   AllReduceOptions o;
//   o.group_tasks = {"/job:worker/replica:0/task:0", ".../task:1"};
//   o.rank = 1;                                  // this task
//   AllReduceOptimizer opt(NewGradientDescentOptimizer({}), o);
//   BuildTrainingGraph(root, kind, options, &opt);   // "train_op" etc.
//
// ApplyGradients builds one _RingAllReduce (ops/collective_ops.cc) over all
// the gradients at once, named "allreduce", whose instance is the global
// step read before this step's increment: the workers' global steps move
// together, so the instance numbers of a step agree across tasks. The
// wrapped optimizer then applies the means. As long as every worker
// starts from the same variables and global step (AddBroadcastFromRankZero
// below), they stay equal: the run is the same computation as in-graph
// replication over as many towers.
//
// AddBroadcastFromRankZero makes every task's copy equal to rank 0's, as
// Horovod's broadcast of the global variables does: run once by every task
// after rank 0 initialised or restored its copy (the others initialised
// theirs), it leaves the variables, optimizer slots and global step of
// every task at rank 0's values, whatever seed or checkpoint each began
// from.
//
// Errors are recorded in the scope and returned. Thread safety: as Scope.
#ifndef WEFT_GRAPH_BUILDER_ALLREDUCE_H_
#define WEFT_GRAPH_BUILDER_ALLREDUCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/builder/optimizers.h"

namespace weft {

struct AllReduceOptions {
  std::vector<std::string> group_tasks;  // the ring, "/job:J/replica:R/task:T"
  int rank = 0;                          // this task's place in group_tasks
  int64_t chunk_bytes = 1 << 20;         // the ring's pipelining unit
};

inline constexpr char kAllReduceNode[] = "allreduce";
inline constexpr char kBroadcastNode[] = "allreduce_broadcast";
// The broadcast's collective instance: above any global step (the
// training all-reduces' instances), below the worker's bound of 2^59.
inline constexpr int64_t kBroadcastInstance = int64_t{1} << 58;

class AllReduceOptimizer final : public WrappedOptimizer {
 public:
  AllReduceOptimizer(std::unique_ptr<Optimizer> wrapped,
                     AllReduceOptions options);

  // Needs a global step (INVALID_ARGUMENT otherwise) and float or double
  // gradients of one dtype.
  absl::StatusOr<Operation> ApplyGradients(
      const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
      const TrainableVariable* global_step) override;

 private:
  const AllReduceOptions options_;
};

// Adds the target kBroadcastNode to `graph`: every variable of the graph
// (VarHandleOp or VariableV2, on whatever device it has) is set to rank
// 0's value by one fused _RingAllReduce sum over the group's tasks, to
// which every other rank contributes zeros. The values travel as doubles
// (exact for floats, and for integers below 2^53) so one all-reduce takes
// every dtype; a broadcast runs once, so the doubled bytes do not matter.
// INVALID_ARGUMENT for a variable of another dtype than float, double,
// int32 or int64, or a graph with a node named kBroadcastNode already.
absl::Status AddBroadcastFromRankZero(const AllReduceOptions& options,
                                      tensorflow::GraphDef* graph);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_ALLREDUCE_H_
