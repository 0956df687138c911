// Internal to the partitioner (partition.cc): the while-loop structure of a
// placed graph, and TensorFlow's colocation of loop plumbing.
//
// A frame is named by its Enters' `frame_name`; "" is the root. As in
// TensorFlow's control-flow info, an Enter belongs to the frame it enters
// and an Exit to the frame it leaves, so an edge's two ends are in one frame
// when OutputFrame(src) == InputFrame(dst).
#ifndef WEFT_GRAPH_PARTITION_LOOPS_H_
#define WEFT_GRAPH_PARTITION_LOOPS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace weft {
namespace partition_internal {

class LoopFrames {
 public:
  struct Frame {
    std::string parent;               // "" for a top-level loop
    const Node* loop_cond = nullptr;  // the loop's LoopCond (its pivot)
    int64_t parallel_iterations = 10;
  };

  // INVALID_ARGUMENT naming the node for a malformed loop (an Exit outside
  // any loop, an Enter without frame_name).
  static absl::StatusOr<LoopFrames> Find(const Graph& graph);

  bool has_loops() const { return !frames_.empty(); }
  // The frame `node` belongs to.
  const std::string& NodeFrame(const Node& node) const {
    return node_frame_[node.id()];
  }
  // Where `node`'s outputs live: an Exit's go to its parent frame.
  const std::string& OutputFrame(const Node& node) const;
  // Where `node`'s inputs come from: an Enter's from its parent frame.
  const std::string& InputFrame(const Node& node) const;
  // Null for "" or an unknown name.
  const Frame* frame(const std::string& name) const;

 private:
  std::vector<std::string> node_frame_;  // by node id
  std::map<std::string, Frame> frames_;
  std::vector<std::string> enter_parent_;  // by node id, Enters only
};

// TensorFlow moves loop plumbing next to the data it steers before
// partitioning, so that the back edge of a loop variable never crosses
// devices and fewer devices take part in a loop: a Switch goes to the
// device of its data input, an Exit to that of its input, a NextIteration
// and a non-ref Enter to that of their first data consumer. Overwrites
// `device` (by node id) for those nodes.
absl::Status ColocateLoopPlumbing(const Graph& graph,
                                  std::vector<std::string>* device);

}  // namespace partition_internal
}  // namespace weft

#endif  // WEFT_GRAPH_PARTITION_LOOPS_H_
