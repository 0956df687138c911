#include "ops/framework/op_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace weft {

void OpRegistry::Register(const OpDefBuilder& builder, ShapeFn shape_fn) {
  OpRegistration reg;
  absl::Status s = builder.Finalize(&reg.op_def);
  if (!s.ok()) {
    if (status_.ok()) status_ = s;
    return;
  }
  reg.shape_fn = shape_fn ? std::move(shape_fn) : UnknownShape;
  const std::string name = reg.op_def.name();
  if (!ops_.emplace(name, std::move(reg)).second && status_.ok()) {
    status_ = absl::AlreadyExistsError(
        absl::StrCat("op '", name, "' is registered twice"));
  }
}

absl::StatusOr<const OpRegistration*> OpRegistry::LookUp(
    absl::string_view op) const {
  auto it = ops_.find(op);
  if (it == ops_.end()) {
    return absl::UnimplementedError(
        absl::StrCat("op '", op, "' is not registered in Weft"));
  }
  return &it->second;
}

const tensorflow::OpDef* OpRegistry::LookUpOpDef(absl::string_view op) const {
  auto it = ops_.find(op);
  return it == ops_.end() ? nullptr : &it->second.op_def;
}

std::vector<std::string> OpRegistry::OpNames() const {
  std::vector<std::string> names;
  for (const auto& [name, reg] : ops_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace weft
