// The flags `weft graphgen` and `weft train --model` share: which model,
// its sizes, the optimizer, and building the training graph they describe.
#ifndef WEFT_TOOLS_MODEL_FLAGS_H_
#define WEFT_TOOLS_MODEL_FLAGS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/training/training_model.h"
#include "proto/graph.pb.h"
#include "tools/command_line.h"

namespace weft {

// Usage text for the flags below (for a command's usage string).
extern const char kModelFlagsUsage[];

// Adds --model, --batch, --optimizer, --lr, --variables, --hidden, --seed,
// --devices, --mode, --param-device.
void AddModelFlags(std::map<std::string, FlagKind>* flags);

// The model the flags describe (distributed/training/training_model.h).
using ModelChoice = TrainingModel;

// INVALID_ARGUMENT (a usage error) naming the bad flag. --model is required.
absl::StatusOr<ModelChoice> ParseModelFlags(const CommandLine& cl);

// --graph FILE --loss T [--init NODE]: the user's forward graph `forward`
// (read from `source`) with --optimizer, --lr and --mode single, in-graph
// (--devices, --param-device), model-parallel (--devices: the forward
// computation split by estimated cost), between-async, between-sync or
// allreduce.
// The model-building flags (--model, --hidden, --seed, --variables) and
// the other modes are INVALID_ARGUMENT naming the flag.
absl::StatusOr<ModelChoice> ParseImportedModelFlags(
    const CommandLine& cl, std::shared_ptr<const tensorflow::GraphDef> forward,
    const std::string& source);

// BuildModelGraph, DescribeModel, IsBetweenGraph and AveragesOverRing:
// distributed/training/training_model.h.

}  // namespace weft

#endif  // WEFT_TOOLS_MODEL_FLAGS_H_
