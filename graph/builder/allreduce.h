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
// together, so the instance numbers of a step agree across tasks, and a
// worker that restarts from a checkpoint meets the others at the step
// where it is. The wrapped optimizer then applies the means. As long as
// every worker starts from the same variables (the same initializers and
// seed, or the same checkpoint), they stay equal: the run is the same
// computation as in-graph replication over as many towers.
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

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_ALLREDUCE_H_
