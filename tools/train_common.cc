#include "tools/train_common.h"

#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/core/status.h"

namespace weft {

absl::StatusOr<GraphInfo> InspectGraph(const tensorflow::GraphDef& graph,
                                       const std::string& source) {
  GraphInfo info;
  std::map<std::string, const tensorflow::NodeDef*> nodes;
  for (const auto& n : graph.node()) nodes[n.name()] = &n;
  for (const char* name : {"images", "labels", "loss", "train_op", "init"}) {
    if (!nodes.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, " has no node '", name,
          "'; weft train needs the node names 'weft graphgen' writes"));
    }
  }
  info.has_accuracy = nodes.count("accuracy") > 0;
  const tensorflow::NodeDef& images = *nodes["images"];
  auto it = images.attr().find("shape");
  if (images.op() != "Placeholder" || it == images.attr().end() ||
      it->second.shape().dim_size() != 2 ||
      it->second.shape().dim(0).size() < 1 ||
      it->second.shape().dim(1).size() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": node 'images' must be a Placeholder of static shape "
                "[batch, features]"));
  }
  info.batch = it->second.shape().dim(0).size();
  info.features = it->second.shape().dim(1).size();
  return info;
}

absl::StatusOr<Dataset> LoadData(const std::string& which, int64_t features,
                                 uint64_t seed) {
  if (which == "digits") {
    WEFT_ASSIGN_OR_RETURN(Dataset d, LoadDigits(DefaultDigitsPath()));
    if (d.features() != features) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the digits have ", d.features(), " features, the graph's 'images' ",
          features));
    }
    return d;
  }
  SyntheticOptions o;
  o.seed = seed;
  if (features != o.rows * o.cols) {
    o.rows = features;
    o.cols = 1;
  }
  return MakeSyntheticDataset(o);
}

void PrintProgressLine(const std::string& line, bool rewrite) {
  // On a terminal: whether the last line printed is a progress line still
  // open (no newline after it).
  static bool open = false;
  const bool progress = absl::StartsWith(line, "step ");
  if (rewrite && progress) {
    std::printf("\r%s\033[K", line.c_str());
    open = true;
  } else {
    if (open) std::printf("\n");
    open = false;
    std::printf("%s\n", line.c_str());
  }
  std::fflush(stdout);
}

}  // namespace weft
