// What each `weft train` step feeds, whichever mode runs it:
//
// - the built-in graphs ("images" / "labels", models.h): batches of --data
//   (synthetic or digits); worker w of W trains on the examples i with
//   i mod W == w, shuffled by its own seed;
// - a graph the user brings (--graph with --loss): every input placeholder
//   the loss depends on, from a .npy file (--input NAME=FILE, examples along
//   the first axis) or, without one, seeded synthetic values of its dtype
//   and shape (floats uniform in [0, 1), integers in [0, synthetic_classes),
//   bools either way). Step k's global batch is examples
//   [k * B * W, (k + 1) * B * W) (modulo each file's length), of which
//   worker w takes the w-th slice of B: the workers of a step see disjoint
//   slices of one global batch, in the same order as one process training
//   on batches of B * W would.
//
// The StepFeeds the CLI's flags describe. A StepFeeds is used from one
// thread. Errors name the flag, file or input.
#ifndef WEFT_TOOLS_STEP_FEEDS_H_
#define WEFT_TOOLS_STEP_FEEDS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/training/step_feeds.h"
#include "graph/models/imported_model.h"
#include "tools/model_flags.h"
#include "proto/graph.pb.h"
#include "runtime/core/tensor.h"

namespace weft {

// class StepFeeds: distributed/training/step_feeds.h.

struct FeedOptions {
  std::string data = "synthetic";  // built-in graphs: synthetic or digits
  uint64_t seed = 1;
  std::map<std::string, std::string> input_files;  // placeholder -> .npy
  int64_t batch = 0;  // user's graph: examples per worker step (0: from
                      // the placeholders' first dimension)
  int64_t synthetic_classes = 2;
  int64_t max_file_bytes = int64_t{1} << 32;
  int shards = 0, shard = 0;  // W workers and this one's index (0: one process)
};

// The built-in graphs' feeds (the graph's "images" fixes the batch and the
// feature count).
absl::StatusOr<std::unique_ptr<StepFeeds>> DatasetFeeds(
    const tensorflow::GraphDef& graph, const std::string& source,
    const FeedOptions& options);

// A user's graph's feeds for `inputs` (InspectForwardGraph). Every input
// file must name an input and hold at least one example of the input's
// dtype and per-example shape; the batch must be known (options.batch or
// the placeholders' first dimension) and agree with static placeholders.
absl::StatusOr<std::unique_ptr<StepFeeds>> InputFeeds(
    const std::vector<ModelInput>& inputs, const FeedOptions& options);

// InputFeeds of the inputs of the forward graph the user brought
// (choice.forward; INTERNAL without one).
absl::StatusOr<std::unique_ptr<StepFeeds>> ModelFeeds(const ModelChoice& choice,
                                                      const FeedOptions& options);

// Parses "NAME=FILE" (--input) into `files`; INVALID_ARGUMENT naming the
// flag otherwise.
absl::Status ParseInputFlag(const std::string& flag,
                            std::map<std::string, std::string>* files);

}  // namespace weft

#endif  // WEFT_TOOLS_STEP_FEEDS_H_
