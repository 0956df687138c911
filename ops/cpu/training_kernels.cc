// Ref-variable optimizers: ApplyMomentum, SparseApplyMomentum and ApplyAdam. The variable and its
// slots (accum, or m and v) arrive as refs; all their mutexes are held while
// the update runs (whatever use_locking says: Weft always locks, which TF
// allows), and the var ref is forwarded to the output.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/training_apply.h"
#include "ops/cpu/training_kernels.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

class ApplyOptimizerOp : public OpKernel {
 public:
  // sparse: SparseApplyMomentum (var, accum, lr, grad, indices, momentum).
  ApplyOptimizerOp(OpKernelConstruction* c, Optimizer opt, bool sparse = false)
      : OpKernel(c),
        opt_(opt),
        sparse_(sparse),
        num_slots_(opt == Optimizer::kMomentum ? 2 : 3) {
    c->SetStatus(c->GetAttr("use_nesterov", &use_nesterov_));
    // Slot names for messages: the nodes feeding the ref inputs.
    for (int i = 0; i < num_slots_; ++i) {
      names_.push_back(i < c->def().input_size() ? c->def().input(i)
                                                 : absl::StrCat("<input ", i, ">"));
    }
  }

  void Compute(OpKernelContext* c) override {
    std::vector<absl::Mutex*> mus;
    for (int i = 0; i < num_slots_; ++i) {
      OP_REQUIRES(c, c->input_is_ref(i),
                  absl::InvalidArgumentError(absl::StrCat(
                      type_string(), ": input ", i, " (", names_[i],
                      ") is not a reference")));
      mus.push_back(c->input_ref_mutex(i));
    }
    // The plain inputs: read before locking.
    const OptimizerInputs in = OptimizerInputsOf(c, opt_, sparse_);
    {
      SlotLocks lock(std::move(mus));
      std::vector<OptimizerSlot> slots;
      for (int i = 0; i < num_slots_; ++i) {
        slots.push_back({c->mutable_input(i), names_[i], Writes::kInPlace});
      }
      OP_REQUIRES_OK(c, ApplyOptimizer(opt_, use_nesterov_, slots, in.scalars, *in.grad, in.indices));
    }
    c->forward_ref_input_to_ref_output(0, 0);
  }

 private:
  const Optimizer opt_;
  const bool sparse_;
  const int num_slots_;
  bool use_nesterov_ = false;
  std::vector<std::string> names_;
};

template <Optimizer kOpt>
std::unique_ptr<OpKernel> MakeApply(OpKernelConstruction* c) {
  return std::make_unique<ApplyOptimizerOp>(c, kOpt);
}

}  // namespace

void RegisterTrainingKernels(KernelRegistry* r) {
  r->Register(KernelDef("ApplyMomentum", kDeviceTypeCpu)
                  .TypeConstraint("T", OptimizerTypes()),
              MakeApply<Optimizer::kMomentum>);
  r->Register(KernelDef("ApplyAdam", kDeviceTypeCpu)
                  .TypeConstraint("T", OptimizerTypes()),
              MakeApply<Optimizer::kAdam>);
  r->Register(KernelDef("SparseApplyMomentum", kDeviceTypeCpu)
                  .TypeConstraint("T", OptimizerTypes()),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<ApplyOptimizerOp>(c, Optimizer::kMomentum, true);
              });
  RegisterResourceTrainingKernels(r);
  RegisterOptimizerRuleKernels(r);
}

}  // namespace weft
