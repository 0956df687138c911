// The arithmetic and checks shared by the ref (Apply*) and resource
// (ResourceApply*) optimizer kernels.
//
//   OptimizerSlots slots = {{var_tensor, "w"}, {accum_tensor, "w/Momentum"}};
//   // ... with every slot's mutex held exclusively (SlotLocks) ...
//   WEFT_RETURN_IF_ERROR(ApplyOptimizer(Optimizer::kMomentum, nesterov,
//                                       slots, {&lr, &momentum}, grad));
//
// Updates follow TensorFlow's training_ops formulas and write each slot as
// its kind of variable does (OptimizerSlot::writes, state_update.h): a ref
// variable in place, a resource one copy-on-write.
#ifndef WEFT_OPS_CPU_TRAINING_APPLY_H_
#define WEFT_OPS_CPU_TRAINING_APPLY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "ops/cpu/state_update.h"
#include "runtime/core/tensor.h"
#include "runtime/core/types.h"

namespace weft {

class OpKernelContext;

enum class Optimizer {
  kMomentum,  // slots {var, accum}; scalars {lr, momentum}
  kAdam,      // slots {var, m, v}; scalars {beta1_power, beta2_power, lr,
              //                             beta1, beta2, epsilon}
};

// One variable the optimizer changes, with the name used in errors.
struct OptimizerSlot {
  Tensor* tensor;
  std::string name;
  Writes writes = Writes::kCopyOnWrite;  // kInPlace for a ref variable's
};

// Dtypes ApplyOptimizer supports: TensorFlow's CPU dtypes for momentum and
// Adam (half, bfloat16, float, double, complex64, complex128).
DataTypeVector OptimizerTypes();

// Checks the slots are initialized and shaped like `grad`, the scalars are
// scalars, then applies the update. Every slot's mutex must be held
// exclusively. Errors name the slot or the scalar input.
//
// With `indices` (a vector; momentum only, TensorFlow's SparseApply*),
// grad holds rows: row i updates the slots' row indices[i], in order (a
// row named twice is updated twice), and grad is [n] + var.shape[1:];
// an index outside var is INVALID_ARGUMENT naming it, and nothing changes.
absl::Status ApplyOptimizer(Optimizer opt, bool use_nesterov,
                            absl::Span<const OptimizerSlot> slots,
                            absl::Span<const Tensor* const> scalars,
                            const Tensor& grad, const Tensor* indices = nullptr);

// The checks ApplyOptimizer makes, for every optimizer kernel: slots
// initialized, of grad's dtype (one of OptimizerTypes()) and shape (sparse: of
// var's shape, grad [n] + var.shape[1:], indices a vector of rows inside
// var, which `rows` receives), the scalars scalars. Errors name the slot,
// the scalar (scalar_names[i]) or the offending index.
absl::Status CheckOptimizerInputs(absl::Span<const OptimizerSlot> slots,
                                  absl::Span<const Tensor* const> scalars,
                                  absl::Span<const char* const> scalar_names,
                                  const Tensor& grad, const Tensor* indices,
                                  std::vector<int64_t>* rows);

// A half or bfloat16 update computed in float: `apply` runs on float
// copies of the slots, scalars and grad, and the slots (already readied for
// writing) get the results rounded once. TensorFlow's Eigen::half rounds
// after every operation instead, so the two agree to about one unit in the
// last place of the narrow type.
using FloatOptimizerApply = std::function<absl::Status(
    absl::Span<const OptimizerSlot>, absl::Span<const Tensor* const>, const Tensor&)>;
absl::Status ApplyInFloat(absl::Span<const OptimizerSlot> slots,
                          absl::Span<const Tensor* const> scalars, const Tensor& grad,
                          const FloatOptimizerApply& apply);

// The plain inputs of an optimizer kernel (after its variables), as
// TensorFlow's ops order them: momentum (var, accum, lr, grad, momentum),
// sparse momentum (var, accum, lr, grad, indices, momentum), Adam (var, m,
// v, 6 scalars, grad). Pointers into c's inputs.
struct OptimizerInputs {
  std::vector<const Tensor*> scalars;
  const Tensor* grad = nullptr;
  const Tensor* indices = nullptr;  // sparse only
};
OptimizerInputs OptimizerInputsOf(OpKernelContext* c, Optimizer opt, bool sparse);

// Holds several variables' mutexes exclusively, taken in address order (so
// two kernels locking overlapping sets cannot deadlock); duplicates are taken
// once. Not copyable.
class SlotLocks {
 public:
  explicit SlotLocks(std::vector<absl::Mutex*> mus);
  ~SlotLocks();
  SlotLocks(const SlotLocks&) = delete;
  SlotLocks& operator=(const SlotLocks&) = delete;

 private:
  std::vector<absl::Mutex*> mus_;
};

}  // namespace weft

#endif  // WEFT_OPS_CPU_TRAINING_APPLY_H_
