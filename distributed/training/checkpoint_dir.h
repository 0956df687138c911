// weft train's checkpoint directory, laid out as TensorFlow's Saver lays
// it out: DIR/model-<global step> (V2 checkpoints, written by the graph's
// saver ops, graph/builder/saver.h) and DIR/checkpoint, the text
// CheckpointState naming the latest, so tf.train.latest_checkpoint(DIR)
// and tf.train.load_checkpoint(DIR) find it. The state file is written to
// a temporary name and renamed, after the checkpoint it names is complete:
// a crash at any point leaves DIR naming a whole checkpoint (or none). The
// five newest are kept, as the Saver's max_to_keep.
//
// Thread safety: one writer per directory (the chief); functions are
// otherwise independent.
#ifndef WEFT_DISTRIBUTED_TRAINING_CHECKPOINT_DIR_H_
#define WEFT_DISTRIBUTED_TRAINING_CHECKPOINT_DIR_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "graph/builder/saver.h"
#include "runtime/session.h"

namespace weft {

// The prefix of the newest checkpoint in `dir` (DIR/model-300), nullopt
// when there is none; DATA_LOSS naming the file for an unreadable state.
absl::StatusOr<std::optional<std::string>> LatestCheckpoint(const std::string& dir);

// Runs the saver for global step `step`; returns the prefix written. With
// `step_tensor` (the checkpoint's name for the global step variable) the
// checkpoint is named by the step it holds, which in asynchronous training
// may be past `step` by the time the ps tasks save.
absl::StatusOr<std::string> SaveCheckpoint(Session* session, const SaverNodes& saver,
                                           const std::string& dir, int64_t step,
                                           const std::string& step_tensor = "");

// Assigns every variable from the checkpoint at `prefix`.
absl::Status RestoreCheckpoint(Session* session, const SaverNodes& saver,
                               const std::string& prefix);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_CHECKPOINT_DIR_H_
