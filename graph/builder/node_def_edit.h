// Appending nodes to a GraphDef that is already built: the few lines every
// pass that adds nodes by hand repeats (the saver, the all-reduce
// broadcast, weft train's worker counters). Graphs built from scratch use
// the Scope builder (scope.h) instead.
//
// Pointers returned stay valid while the graph lives (protobuf keeps
// repeated messages at stable addresses). Thread-compatible.
#ifndef WEFT_GRAPH_BUILDER_NODE_DEF_EDIT_H_
#define WEFT_GRAPH_BUILDER_NODE_DEF_EDIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/graph.pb.h"
#include "runtime/core/types.h"

namespace weft {

// Appends a node named `name`, running `op` on `device`, with `inputs`
// ("x", "x:1", "^x") in order.
tensorflow::NodeDef* AppendNode(tensorflow::GraphDef* graph, std::string name,
                                std::string op, std::string device,
                                std::vector<std::string> inputs = {});

// Sets attr `attr` of `node` to the type `t`.
void SetTypeAttr(tensorflow::NodeDef* node, const char* attr, DataType t);

// Appends a scalar Const of `dtype` (DT_INT32 or DT_INT64) holding `value`.
tensorflow::NodeDef* AppendIntConst(tensorflow::GraphDef* graph, std::string name,
                                    std::string device, DataType dtype,
                                    int64_t value);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_NODE_DEF_EDIT_H_
