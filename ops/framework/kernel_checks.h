// Input checks shared by the CPU and GPU kernels of an op, so both devices
// report a bad input in the same words.
//
//   void Compute(OpKernelContext* c) override {
//     OP_REQUIRES_OK(c, CheckSameShape("gradients", c->input(0),
//                                      "features", c->input(1)));
//     ...
//   }
//
// Errors are INVALID_ARGUMENT and name the inputs and shapes, e.g.
// "gradients and features must have the same shape, got [2,3] and [3,2]";
// the executor adds the node. Thread safety: pure functions.
#ifndef WEFT_OPS_FRAMEWORK_KERNEL_CHECKS_H_
#define WEFT_OPS_FRAMEWORK_KERNEL_CHECKS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/core/tensor.h"

namespace weft {

// OK when inputs `a` and `b` (called `a_name` and `b_name` in the message)
// have equal shapes.
absl::Status CheckSameShape(absl::string_view a_name, const Tensor& a,
                            absl::string_view b_name, const Tensor& b);

}  // namespace weft

#endif  // WEFT_OPS_FRAMEWORK_KERNEL_CHECKS_H_
