#include "ops/cpu/resource_variable.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "runtime/core/status.h"

namespace weft {

std::string VarLabel(const ResourceHandle& h) {
  return absl::StrCat("variable '", h.name, "' (container '", h.container, "')");
}

absl::Status GetHandle(OpKernelContext* c, int i, ResourceHandle* out) {
  const Tensor& t = c->input(i);
  if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", i, " must be a scalar resource handle, got ", t.DebugString()));
  }
  *out = t.data<ResourceHandle>()[0];
  if (!out->device.empty() && out->device != c->device()->name()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to access ", VarLabel(*out), " located on device ",
        out->device, " from device ", c->device()->name(),
        "; place the op on the variable's device"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Var>> LookupVar(OpKernelContext* c,
                                               const ResourceHandle& h) {
  absl::StatusOr<std::shared_ptr<Var>> var =
      c->resource_manager()->Lookup<Var>(h.container, h.name);
  if (!var.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Could not find ", VarLabel(h),
        ". It has not been initialized (run its initializer or assign it "
        "first), or it was deleted."));
  }
  return var;
}

absl::Status CheckDtype(const ResourceHandle& h, const Var& var, DataType want,
                        absl::string_view what) {
  if (var.dtype() == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Trying to ", what, " ", VarLabel(h), " with wrong dtype. Expected ",
      DataTypeString(var.dtype()), " got ", DataTypeString(want)));
}

absl::StatusOr<std::shared_ptr<Var>> LookupVarInput(OpKernelContext* c, int i,
                                                    DataType dtype,
                                                    absl::string_view what,
                                                    std::string* label) {
  ResourceHandle h;
  WEFT_RETURN_IF_ERROR(GetHandle(c, i, &h));
  if (label != nullptr) *label = VarLabel(h);
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Var> var, LookupVar(c, h));
  WEFT_RETURN_IF_ERROR(CheckDtype(h, *var, dtype, what));
  return var;
}

absl::StatusOr<Tensor> ReadVariable(OpKernelContext* c, int i, DataType dtype,
                                    std::string* label) {
  ResourceHandle h;
  WEFT_RETURN_IF_ERROR(GetHandle(c, i, &h));
  if (label != nullptr) *label = VarLabel(h);
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Var> var, LookupVar(c, h));
  WEFT_RETURN_IF_ERROR(CheckDtype(h, *var, dtype, "read"));
  Tensor value;
  {
    absl::ReaderMutexLock lock(var->mu());
    value = *var->tensor();
  }
  if (!value.IsInitialized()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Attempting to use uninitialized value ", h.name, " (", VarLabel(h), ")"));
  }
  return value;
}

}  // namespace weft
