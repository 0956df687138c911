// Resource-variable optimizers: ResourceApplyMomentum and ResourceApplyAdam.
// The variable and its slots arrive as DT_RESOURCE handles; each is looked up
// in the device's ResourceMgr and all their mutexes are held while the update
// runs. Errors name the variable (container and name).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/resource_variable.h"
#include "ops/cpu/training_apply.h"
#include "ops/cpu/training_kernels.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/resource_mgr.h"

namespace weft {
namespace {

class ResourceApplyOptimizerOp : public OpKernel {
 public:
  // sparse: ResourceSparseApplyMomentum (var, accum, lr, grad, indices,
  // momentum).
  ResourceApplyOptimizerOp(OpKernelConstruction* c, Optimizer opt, bool sparse = false)
      : OpKernel(c), opt_(opt), sparse_(sparse),
        num_slots_(opt == Optimizer::kMomentum ? 2 : 3) {
    absl::Status s = c->GetAttr("T", &dtype_);
    if (s.ok()) s = c->GetAttr("use_nesterov", &use_nesterov_);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* c) override {
    std::vector<std::shared_ptr<Var>> vars(num_slots_);
    std::vector<std::string> labels(num_slots_);
    std::vector<absl::Mutex*> mus;
    for (int i = 0; i < num_slots_; ++i) {
      absl::StatusOr<std::shared_ptr<Var>> var =
          LookupVarInput(c, i, dtype_, "update", &labels[i]);
      OP_REQUIRES_OK(c, var.status());
      vars[i] = *std::move(var);
      mus.push_back(vars[i]->mu());
    }
    // The plain inputs: read before locking.
    const OptimizerInputs in = OptimizerInputsOf(c, opt_, sparse_);
    SlotLocks lock(std::move(mus));
    std::vector<OptimizerSlot> slots;
    for (int i = 0; i < num_slots_; ++i) {
      slots.push_back({vars[i]->tensor(), labels[i]});
    }
    OP_REQUIRES_OK(c, ApplyOptimizer(opt_, use_nesterov_, slots, in.scalars, *in.grad, in.indices));
  }

 private:
  const Optimizer opt_;
  const bool sparse_;
  const int num_slots_;
  DataType dtype_ = DT_INVALID;
  bool use_nesterov_ = false;
};

template <Optimizer kOpt>
std::unique_ptr<OpKernel> MakeResourceApply(OpKernelConstruction* c) {
  return std::make_unique<ResourceApplyOptimizerOp>(c, kOpt);
}

}  // namespace

void RegisterResourceTrainingKernels(KernelRegistry* r) {
  r->Register(KernelDef("ResourceApplyMomentum", kDeviceTypeCpu)
                  .TypeConstraint("T", OptimizerTypes()),
              MakeResourceApply<Optimizer::kMomentum>);
  r->Register(KernelDef("ResourceApplyAdam", kDeviceTypeCpu)
                  .TypeConstraint("T", OptimizerTypes()),
              MakeResourceApply<Optimizer::kAdam>);
  r->Register(KernelDef("ResourceSparseApplyMomentum", kDeviceTypeCpu)
                  .TypeConstraint("T", OptimizerTypes()),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<ResourceApplyOptimizerOp>(c, Optimizer::kMomentum, true);
              });
}

}  // namespace weft
