// Placement: choosing the device every node of a graph runs on.
//
//   WEFT_RETURN_IF_ERROR(PlaceGraph(
//       {"/job:localhost/replica:0/task:0/device:CPU:0"}, graph.get()));
//
// For now every node goes to the first device given (soft placement: a
// node's requested device is recorded but not enforced). Multi-device
// placement (requested devices, colocation, kernel availability) will
// replace the body without changing the signature; partitioning is a
// separate step after it.
//
// Thread safety: mutates `graph`; the caller serialises access.
#ifndef WEFT_GRAPH_PLACER_H_
#define WEFT_GRAPH_PLACER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/graph.h"

namespace weft {

// `devices`: full device names, the default device first. FAILED_PRECONDITION
// if there is none.
absl::Status PlaceGraph(const std::vector<std::string>& devices, Graph* graph);

}  // namespace weft

#endif  // WEFT_GRAPH_PLACER_H_
