#include "graph/placer.h"

namespace weft {

absl::Status PlaceGraph(const std::vector<std::string>& devices, Graph* graph) {
  if (devices.empty()) {
    return absl::FailedPreconditionError(
        "cannot place the graph: no devices are available");
  }
  for (Node* node : graph->nodes()) node->set_assigned_device(devices.front());
  return absl::OkStatus();
}

}  // namespace weft
