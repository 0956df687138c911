// KernelRegistry: which OpKernel implements an op on a device type for
// given attr types.
//
//   void RegisterMatMulKernels(KernelRegistry* r) {
//     r->Register(KernelDef("MatMul", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
//                 MakeKernel<MatMulOp<float>>);
//   }
//
// Lookups name what is missing: "no CPU kernel for op 'MatMul' with T=string
// (node 'mm'); registered: CPU[T=float], CPU[T=double]".
// Built once at start-up, then read-only and safe to share across threads.
#ifndef WEFT_OPS_FRAMEWORK_KERNEL_REGISTRY_H_
#define WEFT_OPS_FRAMEWORK_KERNEL_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ops/framework/op_kernel.h"

namespace weft {

class KernelDef {
 public:
  KernelDef(std::string op, std::string device_type)
      : op_(std::move(op)), device_type_(std::move(device_type)) {}
  // The kernel applies only when type attr `attr` is one of `types`.
  KernelDef& TypeConstraint(std::string attr, DataTypeVector types) {
    constraints_.emplace_back(std::move(attr), std::move(types));
    return *this;
  }
  KernelDef& TypeConstraint(std::string attr, DataType type) {
    return TypeConstraint(std::move(attr), DataTypeVector{type});
  }
  // Input or output arg kept in host memory even on an accelerator.
  KernelDef& HostMemory(std::string arg) {
    host_memory_.push_back(std::move(arg));
    return *this;
  }

  const std::string& op() const { return op_; }
  const std::string& device_type() const { return device_type_; }
  const std::vector<std::pair<std::string, DataTypeVector>>& constraints()
      const {
    return constraints_;
  }
  const std::vector<std::string>& host_memory() const { return host_memory_; }
  std::string DebugString() const;  // "CPU[T=float]"

 private:
  std::string op_;
  std::string device_type_;
  std::vector<std::pair<std::string, DataTypeVector>> constraints_;
  std::vector<std::string> host_memory_;
};

using KernelFactory =
    std::function<std::unique_ptr<OpKernel>(OpKernelConstruction*)>;

template <typename K>
std::unique_ptr<OpKernel> MakeKernel(OpKernelConstruction* c) {
  return std::make_unique<K>(c);
}

class KernelRegistry {
 public:
  KernelRegistry() = default;
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  void Register(KernelDef def, KernelFactory factory);

  // The matching registration, or NOT_FOUND / INVALID_ARGUMENT naming the
  // node, op, device type and attr values, listing what is registered.
  absl::StatusOr<const KernelDef*> FindKernelDef(
      const tensorflow::NodeDef& node, absl::string_view device_type) const;
  bool HasKernel(const tensorflow::NodeDef& node,
                 absl::string_view device_type) const {
    return FindKernelDef(node, device_type).ok();
  }
  // Instantiates the kernel for `node` on `device`; construction errors
  // (bad attrs) come back naming the node.
  absl::StatusOr<std::unique_ptr<OpKernel>> CreateKernel(
      const tensorflow::NodeDef& node, const tensorflow::OpDef& op_def,
      Device* device) const;
  // Ops with at least one kernel, sorted.
  std::vector<std::string> OpNames() const;

 private:
  struct Entry {
    KernelDef def;
    KernelFactory factory;
  };
  absl::StatusOr<const Entry*> Find(const tensorflow::NodeDef& node,
                                    absl::string_view device_type) const;

  absl::flat_hash_map<std::string, std::vector<Entry>> kernels_;
};

// Every kernel Weft has (ops/all_kernels.cc).
const KernelRegistry& GlobalKernelRegistry();

}  // namespace weft

#endif  // WEFT_OPS_FRAMEWORK_KERNEL_REGISTRY_H_
