// RemoteCall: runs the library function `f` on the device its `target`
// input names, this task's or another's (ops/framework/function_runner.h:
// InstantiateOn), and outputs its results. The target is a runtime value,
// so the function is instantiated when a step first asks for a target and
// kept for later steps, one instantiation per target. The call blocks the
// step's thread until the function returns; the step's cancellation
// cancels it.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/data/captured_function.h"
#include "ops/framework/function_runner.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

class RemoteCallOp : public OpKernel {
 public:
  explicit RemoteCallOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::StatusOr<tensorflow::NameAttrList> fn = data::FuncAttr(c, "f");
    if (fn.ok()) fn_ = *std::move(fn);
    c->SetStatus(fn.status());
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& target = c->input(0);
    OP_REQUIRES(c, target.dtype() == DT_STRING && target.NumElements() == 1 &&
                       target.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    data::KernelLabel(c), ": target must be a scalar string, got ",
                    target.shape().DebugString())));
    OP_REQUIRES(c, c->functions() != nullptr,
                absl::FailedPreconditionError(absl::StrCat(
                    data::KernelLabel(c), " calls function ", fn_.name(),
                    " but its graph has no function library")));
    const std::string& where = target.flat<std::string>()[0];
    absl::StatusOr<std::shared_ptr<const InstantiatedFunction>> fn = Find(c, where);
    OP_REQUIRES_OK(c, fn.status());
    std::vector<Tensor> args;
    args.reserve(c->num_inputs() - 1);
    for (int i = 1; i < c->num_inputs(); ++i) args.push_back(c->input(i));
    std::vector<Tensor> rets;
    absl::Status s = (*fn)->Run(std::move(args), &rets, c->cancellation());
    OP_REQUIRES_OK(c, WithContext(s, absl::StrCat(data::KernelLabel(c), " on '",
                                                   where, "'")));
    OP_REQUIRES(c, static_cast<int>(rets.size()) == c->num_outputs(),
                absl::InvalidArgumentError(absl::StrCat(
                    data::KernelLabel(c), ": function ", fn_.name(), " returned ",
                    rets.size(), " values; Tout has ", c->num_outputs())));
    for (int i = 0; i < c->num_outputs(); ++i) {
      OP_REQUIRES(c, rets[i].dtype() == c->expected_output_dtype(i),
                  absl::InvalidArgumentError(absl::StrCat(
                      data::KernelLabel(c), ": function ", fn_.name(), " result ", i,
                      " is ", DataTypeString(rets[i].dtype()), ", Tout says ",
                      DataTypeString(c->expected_output_dtype(i)))));
      c->set_output(i, std::move(rets[i]));
    }
  }

 private:
  // The function instantiated on `target`, made on first use.
  absl::StatusOr<std::shared_ptr<const InstantiatedFunction>> Find(
      OpKernelContext* c, const std::string& target) {
    {
      absl::MutexLock lock(&mu_);
      auto it = by_target_.find(target);
      if (it != by_target_.end()) return it->second;
    }
    absl::StatusOr<std::shared_ptr<const InstantiatedFunction>> fn =
        c->functions()->InstantiateOn(fn_, target);
    if (!fn.ok()) return WithContext(fn.status(), data::KernelLabel(c));
    absl::MutexLock lock(&mu_);
    // Two steps may race here; the first instantiation is kept.
    return by_target_.emplace(target, *std::move(fn)).first->second;
  }

  tensorflow::NameAttrList fn_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const InstantiatedFunction>>
      by_target_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

void RegisterRemoteCallKernel(KernelRegistry* r) {
  r->Register(KernelDef("RemoteCall", kDeviceTypeCpu), MakeKernel<RemoteCallOp>);
}

}  // namespace weft
