// The graph one Run signature needs: the first stage of the prepare pipeline
// that the local session and the master session share (the second is
// graph/placer.h, the third runtime/executable_graph.h).
//
//   WEFT_ASSIGN_OR_RETURN(RunSignature sig,
//                         RunSignature::Make(feed_names, fetches, targets));
//   WEFT_ASSIGN_OR_RETURN(ClientGraph client, BuildClientGraph(full, sig));
//   for (size_t i = 0; i < sig.feeds.size(); ++i)
//     WEFT_RETURN_IF_ERROR(client.feeds[i].Check(value_of_sorted_feed_i));
//
// A signature is what makes two Runs share a prepared graph: the feeds,
// canonical ("x" becomes "x:0") and sorted; the fetches in the order asked
// (a tensor may be fetched twice); the targets sorted. `sig.Key()` is the
// cache key. The client graph is the full graph pruned to what the fetches
// and targets need, with an _Arg per feed (index = position in sig.feeds)
// and a _Retval per fetch (graph/prune.h), not yet placed.
//
// Thread safety: plain values; BuildClientGraph only reads `full`.
#ifndef WEFT_RUNTIME_CLIENT_GRAPH_H_
#define WEFT_RUNTIME_CLIENT_GRAPH_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_shape.h"
#include "runtime/core/types.h"

namespace weft {

struct RunSignature {
  std::vector<std::string> feeds;    // canonical, sorted, distinct
  std::vector<std::string> fetches;  // as asked
  std::vector<std::string> targets;  // sorted
  // feed_order[i]: the position, in the caller's list, of feeds[i].
  std::vector<size_t> feed_order;

  // INVALID_ARGUMENT naming the feed if one is given twice (under either
  // spelling). Names are otherwise checked by BuildClientGraph.
  static absl::StatusOr<RunSignature> Make(
      const std::vector<std::string>& feed_names,
      const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets);

  // Equal for two signatures exactly when they prepare the same graph.
  std::string Key() const;
};

// What a feed must hold: the dtype of the fed tensor and, when it is a
// Placeholder's output, the Placeholder's `shape` attr.
struct FeedSpec {
  std::string name;
  DataType dtype = DT_INVALID;
  PartialShape shape;  // unknown rank unless a Placeholder says more
  bool is_placeholder = false;

  // INVALID_ARGUMENT naming the feed when `value` is uninitialised or has
  // another dtype or an incompatible shape.
  absl::Status Check(const Tensor& value) const;
  // As above for a value known by its dtype and shape only (a master checks
  // a feed it forwards without decoding it).
  absl::Status Check(DataType dtype, const TensorShape& shape) const;
};

struct ClientGraph {
  std::unique_ptr<Graph> graph;
  std::vector<FeedSpec> feeds;  // in signature order
  int num_fetches = 0;
};

// INVALID_ARGUMENT (from graph/prune.h) naming the feed, fetch or target
// that is not in `full`.
absl::StatusOr<ClientGraph> BuildClientGraph(const Graph& full,
                                             const RunSignature& signature);

}  // namespace weft

#endif  // WEFT_RUNTIME_CLIENT_GRAPH_H_
