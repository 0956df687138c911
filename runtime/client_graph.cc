#include "runtime/client_graph.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "graph/prune.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// "x" -> "x:0"; other names unchanged (errors surface when pruning).
std::string CanonicalTensorName(const std::string& name) {
  absl::StatusOr<TensorId> id = ParseTensorName(name);
  if (!id.ok() || id->is_control()) return name;
  return absl::StrCat(id->node, ":", id->index);
}

}  // namespace

absl::StatusOr<RunSignature> RunSignature::Make(
    const std::vector<std::string>& feed_names,
    const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  RunSignature sig;
  std::vector<std::string> names(feed_names.size());
  for (size_t i = 0; i < feed_names.size(); ++i) {
    names[i] = CanonicalTensorName(feed_names[i]);
  }
  sig.feed_order.resize(names.size());
  std::iota(sig.feed_order.begin(), sig.feed_order.end(), 0);
  std::sort(sig.feed_order.begin(), sig.feed_order.end(),
            [&](size_t a, size_t b) { return names[a] < names[b]; });
  sig.feeds.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    sig.feeds[i] = names[sig.feed_order[i]];
    if (i > 0 && sig.feeds[i] == sig.feeds[i - 1]) {
      return absl::InvalidArgumentError(
          absl::StrCat("feed '", sig.feeds[i], "' is given twice"));
    }
  }
  sig.fetches = fetches;
  sig.targets = targets;
  std::sort(sig.targets.begin(), sig.targets.end());
  return sig;
}

std::string RunSignature::Key() const {
  // Each name length-prefixed, so no name (whatever it holds) can make two
  // signatures share a key.
  std::string key;
  for (const std::vector<std::string>* group : {&feeds, &fetches, &targets}) {
    absl::StrAppend(&key, group->size(), "|");
    for (const std::string& name : *group) {
      absl::StrAppend(&key, name.size(), ":", name);
    }
  }
  return key;
}

absl::Status FeedSpec::Check(const Tensor& value) const {
  if (!value.IsInitialized()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feed '", name, "' is an empty (uninitialized) tensor"));
  }
  return Check(value.dtype(), value.shape());
}

absl::Status FeedSpec::Check(DataType value_dtype,
                             const TensorShape& value_shape) const {
  const char* what = is_placeholder ? "the placeholder" : "the fed tensor";
  if (value_dtype != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feed '", name, "' has dtype ", DataTypeString(value_dtype), " but ",
        what, " expects ", DataTypeString(dtype)));
  }
  if (!shape.IsCompatibleWith(value_shape)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feed '", name, "' has shape ", value_shape.DebugString(), " but ",
        what, " expects shape ", shape.DebugString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<ClientGraph> BuildClientGraph(const Graph& full,
                                             const RunSignature& signature) {
  ClientGraph client;
  WEFT_ASSIGN_OR_RETURN(client.graph,
                        PruneGraph(full, signature.feeds, signature.fetches,
                                   signature.targets));
  for (const std::string& name : signature.feeds) {
    // PruneGraph has checked the name.
    const TensorId id = *ParseTensorName(name);
    const Node* node = full.FindNode(id.node);
    FeedSpec spec;
    spec.name = name;
    spec.dtype = BaseType(node->output_type(id.index));
    spec.is_placeholder = node->IsPlaceholder();
    if (spec.is_placeholder) {
      (void)GetNodeAttr(node->def(), "shape", &spec.shape);
    }
    client.feeds.push_back(std::move(spec));
  }
  client.num_fetches = static_cast<int>(signature.fetches.size());
  return client;
}

}  // namespace weft
