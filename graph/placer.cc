#include "graph/placer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/colocation.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// A device the placer may choose.
struct Target {
  const std::string* name;
  DeviceSpec spec;
  int type_index;  // into Placer::types_
};

// What a colocation group asks for: the merge of its members' requests.
struct Request {
  DeviceSpec spec;
  const Node* source = nullptr;  // the first member that asked for anything
};

std::string RequestText(const Request& r) {
  return r.source == nullptr ? "(none)"
                             : absl::StrCat("'", r.spec.ToString(), "'");
}

// Higher when `d` agrees with the default device on more important fields.
int Score(const DeviceSpec& d, const DeviceSpec& def) {
  int s = 0;
  if (def.job && d.job == def.job) s += 16;
  if (def.replica && d.replica == def.replica) s += 8;
  if (def.task && d.task == def.task) s += 4;
  if (def.type && d.type == def.type) s += 2;
  if (def.id && d.id == def.id) s += 1;
  return s;
}

class Placer {
 public:
  Placer(const PlacerOptions& options, Graph* graph)
      : options_(options), graph_(graph) {}

  absl::Status Run() {
    if (options_.devices.empty()) {
      return absl::FailedPreconditionError(
          "cannot place the graph: no devices are available");
    }
    for (const std::string& name : options_.devices) {
      WEFT_ASSIGN_OR_RETURN(DeviceSpec spec, ParseDeviceSpec(name));
      if (!spec.IsFull()) {
        return absl::InvalidArgumentError(
            absl::StrCat("placer: '", name, "' is not a full device name"));
      }
      int type_index = 0;
      while (type_index < static_cast<int>(types_.size()) &&
             types_[type_index] != *spec.type) {
        ++type_index;
      }
      if (type_index == static_cast<int>(types_.size())) {
        types_.push_back(*spec.type);
      }
      devices_.push_back(Target{&name, spec, type_index});
    }
    WEFT_ASSIGN_OR_RETURN(default_,
                          ParseDeviceSpec(options_.default_device.empty()
                                              ? options_.devices.front()
                                              : options_.default_device));
    // TensorFlow's order: nodes by id, generators after everything else;
    // the first member placed fixes its whole group's device.
    ColocationGroups groups(*graph_);
    std::vector<const Target*> group_device(groups.groups().size(), nullptr);
    std::vector<Node*> second_pass;
    auto place = [&](Node* n, bool second) -> absl::Status {
      const int g = groups.group_of(n->id());
      if (group_device[g] == nullptr) {
        const ColocationGroup& group = groups.groups()[g];
        WEFT_ASSIGN_OR_RETURN(std::vector<const Target*> candidates,
                              Candidates(group));
        const Target* chosen = Neighbour(*n, second, candidates);
        group_device[g] = chosen != nullptr ? chosen : candidates.front();
      }
      n->set_assigned_device(*group_device[g]->name);
      return absl::OkStatus();
    };
    for (Node* n : graph_->nodes()) {
      if (IsGenerator(*n)) {
        second_pass.push_back(n);
        continue;
      }
      WEFT_RETURN_IF_ERROR(place(n, /*second=*/false));
    }
    for (Node* n : second_pass) {
      WEFT_RETURN_IF_ERROR(place(n, /*second=*/true));
    }
    if (options_.log) {
      for (Node* n : graph_->nodes()) {
        const std::string note = SoftPlacementNote(*n);
        options_.log(absl::StrCat(n->name(), " (", n->type_string(), "): ",
                                  n->assigned_device(),
                                  note.empty() ? "" : " (", note,
                                  note.empty() ? "" : ")"));
      }
    }
    return absl::OkStatus();
  }

 private:
  // TensorFlow's placer heuristics for a node whose group has no device
  // yet, each applied only if the device it suggests is a candidate:
  //   A. (second pass) a generator (no inputs, one non-ref output, e.g.
  //      Const) goes where all its consumers are, if they agree;
  //   B. a metadata op (Shape, Size, Rank) goes where its input is;
  //   C. an unrequested Identity with one in-edge and one out-edge whose
  //      producer and consumer request the same device goes where its input
  //      is.
  static bool IsGenerator(const Node& n) {
    return n.num_inputs() == 0 && n.num_outputs() == 1 &&
           !IsRefType(n.output_type(0));
  }
  static bool IsMetadata(const Node& n) {
    const std::string& op = n.type_string();
    return op == "Shape" || op == "ShapeN" || op == "Size" || op == "Rank";
  }
  static bool IsPassThroughIdentity(const Node& n) {
    if (n.type_string() != "Identity" && n.type_string() != "RefIdentity") {
      return false;
    }
    if (!n.requested_device().empty() || n.in_edges().size() != 1 ||
        n.out_edges().size() != 1) {
      return false;
    }
    return n.in_edges().front()->src->requested_device() ==
           n.out_edges().front()->dst->requested_device();
  }
  const Target* Neighbour(const Node& n, bool second,
                          const std::vector<const Target*>& candidates) const {
    const std::string* target = nullptr;
    if (second) {
      if (n.out_edges().empty()) return nullptr;
      target = &n.out_edges().front()->dst->assigned_device();
      for (const Edge* e : n.out_edges()) {
        if (e->dst->assigned_device() != *target) return nullptr;
      }
    } else if ((IsMetadata(n) || IsPassThroughIdentity(n)) &&
               !n.in_edges().empty()) {
      target = &n.in_edges().front()->src->assigned_device();
    }
    if (target == nullptr || target->empty()) return nullptr;
    for (const Target* d : candidates) {
      if (*d->name == *target) return d;
    }
    return nullptr;
  }

  // Whether `n` takes a variable (a ref or DT_RESOURCE input) from another
  // node: such a consumer is in its group because of that edge.
  static bool ConsumesVariable(const Node& n) {
    const auto& in = n.in_edges();
    return std::any_of(in.begin(), in.end(),
                       [](const Edge* e) { return PinsConsumer(*e); });
  }

  // The group's merged request. As in TensorFlow, a node that is in the
  // group only as a variable's consumer (report_uninitialized_variables'
  // VarIsInitializedOp under a worker's device scope, reading a ps
  // variable) yields its conflicting request to the variable's: the
  // producers' requests merge first, and a consumer that conflicts with
  // them is left out. Conflicts among the rest (`_class` attrs) are errors
  // unless soft placement is allowed.
  absl::StatusOr<Request> MergeRequests(const ColocationGroup& group) const {
    Request r;
    std::vector<const Node*> order, consumers;
    for (const Node* n : group.members) {
      (ConsumesVariable(*n) ? consumers : order).push_back(n);
    }
    const size_t producers = order.size();
    order.insert(order.end(), consumers.begin(), consumers.end());
    for (size_t i = 0; i < order.size(); ++i) {
      const Node* n = order[i];
      if (n->requested_device().empty()) continue;
      absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(n->requested_device());
      if (!spec.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(NodeLabel(n->def()), ": ", spec.status().message()));
      }
      if (r.source == nullptr) {
        r.spec = *spec;
        r.source = n;
        continue;
      }
      DeviceSpec merged = r.spec;
      absl::Status s = merged.MergeFrom(*spec);
      if (s.ok()) {
        r.spec = merged;
      } else if (!options_.allow_soft_placement && i < producers) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot place ", NodeLabel(n->def()), " on its requested device '",
            n->requested_device(), "': it must be colocated with node '",
            r.source->name(), "', which requests '",
            r.source->requested_device(),
            "' (conflicting colocation: nodes are colocated by `_class` "
            "loc:@ attrs and by consuming a variable through a ref or "
            "resource input): ",
            s.message()));
      }  // soft placement: the earlier members' request wins
    }
    return r;
  }

  // Why no device of type `t` can run the group: the first member without a
  // kernel there, in the kernel registry's words. OK if all have one.
  absl::Status KernelStatus(const ColocationGroup& group, int t) const {
    if (options_.kernels == nullptr) return absl::OkStatus();
    for (const Node* n : group.members) {
      absl::StatusOr<const KernelDef*> k =
          options_.kernels->FindKernelDef(n->def(), types_[t]);
      if (!k.ok()) return k.status();
    }
    return absl::OkStatus();
  }

  // The supported devices satisfying `spec`, best first (see Score; ties
  // keep the order of `devices`).
  std::vector<const Target*> Ranked(const DeviceSpec& spec,
                                    const std::vector<bool>& supported) const {
    std::vector<const Target*> out;
    for (const Target& d : devices_) {
      if (supported[d.type_index] && spec.Matches(d.spec)) out.push_back(&d);
    }
    std::stable_sort(
        out.begin(), out.end(), [&](const Target* a, const Target* b) {
          return Score(a->spec, default_) > Score(b->spec, default_);
        });
    return out;
  }

  // The devices the group may go to, best first; never empty.
  absl::StatusOr<std::vector<const Target*>> Candidates(
      const ColocationGroup& group) const {
    WEFT_ASSIGN_OR_RETURN(Request request, MergeRequests(group));
    std::vector<bool> supported(types_.size());
    std::vector<absl::Status> why(types_.size());
    bool any = false;
    for (size_t t = 0; t < types_.size(); ++t) {
      why[t] = KernelStatus(group, static_cast<int>(t));
      supported[t] = why[t].ok();
      any |= supported[t];
    }
    const Node* culprit =
        request.source != nullptr ? request.source : group.members.front();
    if (!any) {
      // No device type can run it: keep the registry's code and words.
      const absl::Status& s = why.front();
      return absl::Status(
          s.code(), absl::StrCat("cannot place ", NodeLabel(culprit->def()),
                                 ": ", s.message()));
    }
    std::vector<const Target*> found = Ranked(request.spec, supported);
    if (!found.empty()) return found;
    if (options_.allow_soft_placement) {
      DeviceSpec relaxed = request.spec;
      relaxed.type.reset();
      relaxed.id.reset();
      found = Ranked(relaxed, supported);
      if (found.empty()) found = Ranked(DeviceSpec(), supported);
      if (!found.empty()) return found;
    }
    // Explain: is there no such device at all, or no kernel on it?
    std::vector<bool> all(types_.size(), true);
    found = Ranked(request.spec, all);
    if (found.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot place ", NodeLabel(culprit->def()), ": requested device ",
          RequestText(request),
          " matches no device (and allow_soft_placement is off); devices: ",
          absl::StrJoin(options_.devices, ", ")));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot place ", NodeLabel(culprit->def()), " on requested device ",
        RequestText(request), ": ", why[found.front()->type_index].message(),
        " (and allow_soft_placement is off)"));
  }

  const PlacerOptions& options_;
  Graph* const graph_;
  std::vector<std::string> types_;  // distinct device types, in device order
  std::vector<Target> devices_;
  DeviceSpec default_;
};

}  // namespace

absl::Status PlaceGraph(const PlacerOptions& options, Graph* graph) {
  return Placer(options, graph).Run();
}

absl::Status PlaceGraph(const std::vector<std::string>& devices, Graph* graph) {
  PlacerOptions options;
  options.devices = devices;
  options.allow_soft_placement = true;
  return PlaceGraph(options, graph);
}

std::string SoftPlacementNote(const Node& node) {
  if (node.requested_device().empty() || node.assigned_device().empty()) {
    return "";  // nothing asked for, or not placed
  }
  absl::StatusOr<DeviceSpec> want = ParseDeviceSpec(node.requested_device());
  absl::StatusOr<DeviceSpec> got = ParseDeviceSpec(node.assigned_device());
  if (!want.ok() || !got.ok() || want->Matches(*got)) return "";
  return absl::StrCat("requested ", node.requested_device(), ", soft-placed");
}

}  // namespace weft
