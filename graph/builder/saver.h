// Save and restore ops for every variable of a GraphDef, one shard per
// device that holds variables (per ps task once the replica device setter
// has placed them), as TensorFlow's Saver(sharded=True) builds them: each
// shard's SaveV2 runs where its variables live and writes
// <prefix>_temp/part-K-of-N; MergeV2Checkpoints (on the client) joins the
// parts into <prefix>; each shard's RestoreV2 reads <prefix> where its
// variables live and assigns them.
//
//   WEFT_ASSIGN_OR_RETURN(SaverNodes s, AddSaver(&graph_def));
//   // save:    feed s.prefix, s.parts (ShardPrefixes), run s.save
//   // restore: feed s.prefix, run s.restore
//
// Variables are the VarHandleOp and VariableV2 nodes (the optimizer's slots
// and the global step included), saved under their node names, so a
// checkpoint is TensorFlow's: tf.train.load_checkpoint reads it and a
// TensorFlow Saver over variables of those names restores it. Added nodes
// are named "save/..."; INVALID_ARGUMENT if the graph has no variables or
// already has a node of that name. Thread safety: mutates the GraphDef.
#ifndef WEFT_GRAPH_BUILDER_SAVER_H_
#define WEFT_GRAPH_BUILDER_SAVER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/graph.pb.h"

namespace weft {

struct SaverNodes {
  std::string prefix = "save/prefix";  // string scalar to feed
  std::string parts = "save/parts";    // string vector: ShardPrefixes
  std::string save = "save/save_all";       // target
  std::string restore = "save/restore_all"; // target
  int num_shards = 0;
  int num_variables = 0;
};

// Variables whose device starts with `local_prefix` (when not empty; e.g.
// "/job:worker", where SyncReplicasOptimizer's local step lives) are local
// variables, each task's own, and are left out, as TensorFlow's Saver
// leaves out its LOCAL_VARIABLES.
absl::StatusOr<SaverNodes> AddSaver(tensorflow::GraphDef* graph,
                                    const std::string& local_prefix = "");

// "<prefix>_temp/part-00000-of-00002", ...: what `parts` is fed.
std::vector<std::string> ShardPrefixes(const std::string& prefix, int num_shards);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_SAVER_H_
