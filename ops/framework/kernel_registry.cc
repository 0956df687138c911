#include "ops/framework/kernel_registry.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/core/status.h"

namespace weft {

std::string KernelDef::DebugString() const {
  std::vector<std::string> parts;
  for (const auto& [attr, types] : constraints_) {
    parts.push_back(absl::StrCat(attr, "=", DataTypeVectorString(types)));
  }
  return absl::StrCat(device_type_, "[", absl::StrJoin(parts, "; "), "]");
}

void KernelRegistry::Register(KernelDef def, KernelFactory factory) {
  kernels_[def.op()].push_back(Entry{std::move(def), std::move(factory)});
}

absl::StatusOr<const KernelRegistry::Entry*> KernelRegistry::Find(
    const tensorflow::NodeDef& node, absl::string_view device_type) const {
  auto it = kernels_.find(node.op());
  if (it == kernels_.end()) {
    return absl::UnimplementedError(absl::StrCat(
        "no kernel for op '", node.op(), "' on any device (node '",
        node.name(), "')"));
  }
  std::vector<std::string> registered;
  // Each mismatching attr once ("T=int32"), however many kernels reject it.
  std::vector<std::string> rejected_attrs;
  std::string attr_values;
  for (const Entry& e : it->second) {
    registered.push_back(e.def.DebugString());
    if (e.def.device_type() != device_type) continue;
    bool match = true;
    for (const auto& [attr, allowed] : e.def.constraints()) {
      DataType dt;
      if (!GetNodeAttr(node, attr, &dt).ok()) {
        match = false;
        break;
      }
      if (std::find(allowed.begin(), allowed.end(), dt) == allowed.end()) {
        if (std::find(rejected_attrs.begin(), rejected_attrs.end(), attr) ==
            rejected_attrs.end()) {
          rejected_attrs.push_back(attr);
          absl::StrAppend(&attr_values, attr_values.empty() ? "" : ", ",
                          attr, "=", DataTypeString(dt));
        }
        match = false;
        break;
      }
    }
    if (match) return &e;
  }
  return absl::NotFoundError(absl::StrCat(
      "no ", device_type, " kernel for op '", node.op(), "'",
      attr_values.empty() ? "" : absl::StrCat(" with ", attr_values),
      " (node '", node.name(), "'); registered: ",
      absl::StrJoin(registered, ", ")));
}

absl::StatusOr<const KernelDef*> KernelRegistry::FindKernelDef(
    const tensorflow::NodeDef& node, absl::string_view device_type) const {
  WEFT_ASSIGN_OR_RETURN(const Entry* e, Find(node, device_type));
  return &e->def;
}

absl::StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(
    const tensorflow::NodeDef& node, const tensorflow::OpDef& op_def,
    Device* device) const {
  WEFT_ASSIGN_OR_RETURN(const Entry* e, Find(node, device->device_type()));
  DataTypeVector inputs, outputs;
  WEFT_RETURN_IF_ERROR(InOutTypesForNode(node, op_def, &inputs, &outputs));
  OpKernelConstruction construction(node, op_def, device, std::move(inputs),
                                    std::move(outputs));
  std::unique_ptr<OpKernel> kernel = e->factory(&construction);
  if (!construction.status().ok()) {
    // Errors from GetNodeAttr already start with the node's label.
    const absl::Status& s = construction.status();
    const std::string label = NodeLabel(node);
    if (absl::StartsWith(s.message(), label)) return s;
    return WithContext(s, label);
  }
  return kernel;
}

std::vector<std::string> KernelRegistry::OpNames() const {
  std::vector<std::string> names;
  for (const auto& [name, entries] : kernels_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace weft
