// What the kernels of resource variables share: the Var a DT_RESOURCE
// handle input names, looked up in the device's ResourceMgr, with errors
// that name the variable (and its container).
//
// The returned Var is shared (the ResourceMgr keeps it too); read or change
// its tensor only under Var::mu(), as state_update.h says.
#ifndef WEFT_OPS_CPU_RESOURCE_VARIABLE_H_
#define WEFT_OPS_CPU_RESOURCE_VARIABLE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/resource_mgr.h"

namespace weft {

// "variable 'w' (container 'c')".
std::string VarLabel(const ResourceHandle& h);

// The scalar handle in input i. INVALID_ARGUMENT if the input is not one,
// or names a variable on another device.
absl::Status GetHandle(OpKernelContext* c, int i, ResourceHandle* out);

// The Var `h` names; FAILED_PRECONDITION (saying how to initialize it) if
// there is none.
absl::StatusOr<std::shared_ptr<Var>> LookupVar(OpKernelContext* c,
                                               const ResourceHandle& h);

// INVALID_ARGUMENT unless the variable holds `want`; `what` is the verb of
// the message ("read", "update", ...).
absl::Status CheckDtype(const ResourceHandle& h, const Var& var, DataType want,
                        absl::string_view what);

// The three above for input i: the Var, of dtype `dtype`; *label (if not
// null) is set to VarLabel of the handle once it is read.
absl::StatusOr<std::shared_ptr<Var>> LookupVarInput(OpKernelContext* c, int i,
                                                    DataType dtype,
                                                    absl::string_view what,
                                                    std::string* label = nullptr);

// A snapshot of input i's variable (of dtype `dtype`): the tensor shares
// the variable's buffer, and later writers copy on write, so it keeps its
// values. FAILED_PRECONDITION naming the variable if it is uninitialized.
absl::StatusOr<Tensor> ReadVariable(OpKernelContext* c, int i, DataType dtype,
                                    std::string* label = nullptr);

}  // namespace weft

#endif  // WEFT_OPS_CPU_RESOURCE_VARIABLE_H_
