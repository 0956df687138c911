// OpKernel: the code that runs one node on one device.
//
// A kernel is built once per node (OpKernelConstruction gives its attrs) and
// then Compute() runs once per step with an OpKernelContext (inputs, outputs,
// device, step resources). Kernels never see the executor or the session.
//
//   class ReluOp : public OpKernel {
//    public:
//     explicit ReluOp(OpKernelConstruction* c) : OpKernel(c) {}
//     void Compute(OpKernelContext* c) override {
//       const Tensor& x = c->input(0);
//       Tensor* y;
//       OP_REQUIRES_OK(c, c->forward_input_or_allocate_output(0, 0, x.shape(), &y));
//       ...
//     }
//   };
//
// Errors are values: a kernel reports failure with OP_REQUIRES /
// OP_REQUIRES_OK (which set the context's status and return); the executor
// then aborts the step and names the node.
//
// Thread safety: Compute() may run concurrently for different steps, so
// kernels keep no per-step state in members (constant attrs are fine).
#ifndef WEFT_OPS_FRAMEWORK_OP_KERNEL_H_
#define WEFT_OPS_FRAMEWORK_OP_KERNEL_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "ops/framework/node_def_util.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"
#include "runtime/core/device.h"
#include "runtime/core/tensor.h"

namespace Eigen {
struct ThreadPoolDevice;
}

namespace weft {

class CallFrame;
class CancellationManager;
class CollectiveRendezvous;
class FunctionRunner;
class Rendezvous;
class OpKernelContext;

// One input or output of a kernel. A plain value has `value` set; a ref (a
// legacy variable's tensor) has `ref` and `ref_mu` set instead. has_value is
// false for a dead input (the untaken side of a Switch).
struct TensorEntry {
  Tensor value;
  Tensor* ref = nullptr;
  absl::Mutex* ref_mu = nullptr;
  bool has_value = false;

  bool is_ref() const { return ref != nullptr; }
  void Clear() {
    value = Tensor();
    ref = nullptr;
    ref_mu = nullptr;
    has_value = false;
  }
};

class OpKernelConstruction {
 public:
  OpKernelConstruction(const tensorflow::NodeDef& node,
                       const tensorflow::OpDef& op_def, Device* device,
                       DataTypeVector input_types, DataTypeVector output_types)
      : node_(node),
        op_def_(op_def),
        device_(device),
        input_types_(std::move(input_types)),
        output_types_(std::move(output_types)) {}

  const tensorflow::NodeDef& def() const { return node_; }
  const tensorflow::OpDef& op_def() const { return op_def_; }
  Device* device() const { return device_; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }

  template <typename T>
  absl::Status GetAttr(absl::string_view name, T* value) const {
    return GetNodeAttr(node_, name, value);
  }
  bool HasAttr(absl::string_view name) const { return HasNodeAttr(node_, name); }

  void SetStatus(const absl::Status& s) {
    if (status_.ok()) status_ = s;
  }
  const absl::Status& status() const { return status_; }

 private:
  const tensorflow::NodeDef& node_;
  const tensorflow::OpDef& op_def_;
  Device* const device_;
  const DataTypeVector input_types_;
  const DataTypeVector output_types_;
  absl::Status status_;
};

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction* c);
  virtual ~OpKernel();
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  virtual void Compute(OpKernelContext* c) = 0;
  // Async kernels (e.g. _Recv) override both: ComputeAsync calls done()
  // exactly once, possibly on another thread.
  virtual bool IsAsync() const { return false; }
  virtual void ComputeAsync(OpKernelContext* c, std::function<void()> done);
  // Cheap kernels run inline on the executor's thread; expensive ones may be
  // handed to the inter-op pool so independent nodes overlap.
  virtual bool IsExpensive() const { return expensive_; }

  const std::string& name() const { return name_; }
  const std::string& type_string() const { return type_; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }

 protected:
  void set_expensive(bool expensive) { expensive_ = expensive; }

 private:
  const std::string name_;
  const std::string type_;
  const DataTypeVector input_types_;
  const DataTypeVector output_types_;
  bool expensive_ = false;
};

class OpKernelContext {
 public:
  struct Params {
    Device* device = nullptr;
    OpKernel* kernel = nullptr;
    TensorEntry* inputs = nullptr;   // kernel->num_inputs() entries
    TensorEntry* outputs = nullptr;  // kernel->num_outputs() entries, cleared
    int64_t step_id = 0;
    CallFrame* call_frame = nullptr;
    Rendezvous* rendezvous = nullptr;
    CollectiveRendezvous* collectives = nullptr;  // null outside a worker
    CancellationManager* cancellation = nullptr;
    // Where the step's resources live: a session's own (isolated) or, when
    // null, the device's.
    ResourceMgr* resource_mgr = nullptr;
    // The graph's library functions, for kernels that call them per element
    // (ops/framework/function_runner.h); null where the graph has none.
    FunctionRunner* functions = nullptr;
    bool is_input_dead = false;  // for Recv-like kernels that forward deadness
    // The while-loop frame instance and iteration the node runs in (0, 0
    // outside loops); Send/Recv put them in rendezvous keys.
    uint64_t frame_id = 0;
    int64_t iter_id = 0;
  };
  explicit OpKernelContext(const Params& params) : p_(params) {}

  // Inputs.
  int num_inputs() const { return p_.kernel->num_inputs(); }
  DataType input_dtype(int i) const { return p_.kernel->input_types()[i]; }
  // The value of input i (for a ref input, a snapshot taken under its lock).
  const Tensor& input(int i) {
    TensorEntry& e = p_.inputs[i];
    if (e.is_ref()) SnapshotRef(&e);
    return e.value;
  }
  // False for a dead input; only Merge-like kernels see dead inputs.
  bool has_input(int i) const { return p_.inputs[i].has_value; }
  bool input_is_ref(int i) const { return p_.inputs[i].is_ref(); }
  // For ref inputs: the variable's tensor and the mutex that guards it.
  Tensor* mutable_input(int i) const { return p_.inputs[i].ref; }
  absl::Mutex* input_ref_mutex(int i) const { return p_.inputs[i].ref_mu; }

  // Outputs.
  int num_outputs() const { return p_.kernel->num_outputs(); }
  DataType expected_output_dtype(int i) const {
    return p_.kernel->output_types()[i];
  }
  absl::Status allocate_output(int i, const TensorShape& shape, Tensor** out);
  // Reuses input `in`'s buffer for output `out` when nothing else holds it
  // and dtype and size match; allocates otherwise.
  absl::Status forward_input_or_allocate_output(int in, int out,
                                                const TensorShape& shape,
                                                Tensor** result);
  // Allocates a scratch tensor that is not an output.
  absl::Status allocate_temp(DataType dtype, const TensorShape& shape,
                             Tensor* out);
  void set_output(int i, Tensor value);
  void set_output_ref(int i, absl::Mutex* mu, Tensor* ref);
  void forward_ref_input_to_ref_output(int in, int out);
  bool output_is_set(int i) const { return p_.outputs[i].has_value; }

  // Status.
  void SetStatus(const absl::Status& s) {
    if (status_.ok()) status_ = s;
  }
  const absl::Status& status() const { return status_; }

  // Environment.
  Device* device() const { return p_.device; }
  const Eigen::ThreadPoolDevice& eigen_cpu_device() const;
  ThreadPool* intra_op_pool() const { return p_.device->intra_op_pool(); }
  ResourceMgr* resource_manager() const {
    return p_.resource_mgr != nullptr ? p_.resource_mgr : p_.device->resource_manager();
  }
  const OpKernel& op_kernel() const { return *p_.kernel; }
  int64_t step_id() const { return p_.step_id; }
  CallFrame* call_frame() const { return p_.call_frame; }
  Rendezvous* rendezvous() const { return p_.rendezvous; }
  CollectiveRendezvous* collectives() const { return p_.collectives; }
  CancellationManager* cancellation() const { return p_.cancellation; }
  FunctionRunner* functions() const { return p_.functions; }
  bool is_input_dead() const { return p_.is_input_dead; }
  uint64_t frame_id() const { return p_.frame_id; }
  int64_t iter_id() const { return p_.iter_id; }

 private:
  static void SnapshotRef(TensorEntry* e);

  Params p_;
  absl::Status status_;
};

// Sets the context's status and returns from the calling kernel method.
#define OP_REQUIRES(CTX, EXP, STATUS) \
  do {                                \
    if (!(EXP)) {                     \
      (CTX)->SetStatus(STATUS);       \
      return;                         \
    }                                 \
  } while (0)

#define OP_REQUIRES_OK(CTX, ...)                \
  do {                                          \
    ::absl::Status op_requires_s_ = (__VA_ARGS__); \
    if (!op_requires_s_.ok()) {                 \
      (CTX)->SetStatus(op_requires_s_);         \
      return;                                   \
    }                                           \
  } while (0)

}  // namespace weft

#endif  // WEFT_OPS_FRAMEWORK_OP_KERNEL_H_
