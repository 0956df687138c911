// What a between-graph worker (trainer.h) says when a step's loss is not
// finite: the model's variables that hold nan or inf, read in one step,
// with their devices (TensorFlow's NanTensorHook, with the culprit named).
#ifndef WEFT_DISTRIBUTED_TRAINING_NUMERICS_H_
#define WEFT_DISTRIBUTED_TRAINING_NUMERICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "distributed/cluster_spec.h"
#include "proto/graph.pb.h"
#include "runtime/session.h"

namespace weft {

// How to read one variable of a graph.
struct VariableRead {
  std::string fetch;   // the node to fetch: the VariableV2, or a read
  std::string name;    // the variable
  std::string device;  // where it is
};

// Every VariableV2 (fetched itself), then every resource variable
// (VarHandleOp) that a ReadVariableOp reads (the first such read).
std::vector<VariableRead> VariableReads(const tensorflow::GraphDef& graph);

// Why a step's loss was not finite, read through `session` (one step, 30 s
// deadline): "variables holding non-finite values: w on /job:ps/task:0,
// ...", or that every variable is finite, or that they could not be read.
std::string NonFiniteVariables(Session* session,
                               const tensorflow::GraphDef& graph);

// FAILED_PRECONDITION: `task`'s loss is `loss` at `global_step` (its own
// step `local_step`), `why` (NonFiniteVariables), and what to do.
absl::Status NonFiniteLoss(const TaskId& task, double loss, int64_t global_step,
                           int64_t local_step, const std::string& why);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_NUMERICS_H_
