// _Send and _Recv kernels: the two ends of a transfer through the step's
// rendezvous (runtime/core/rendezvous.h).
//
// The key is built once from the node's attrs; only the frame/iteration
// suffix is added per step: "frame_id:iter_id" of the while-loop iteration
// the node runs in (0:0 outside loops), so each iteration of a loop body
// split over devices has its own transfers. Frame ids are derived from frame
// names and the parent iteration, so every partition of a step agrees on
// them (runtime/executor_frames.h). A _Send
// never blocks: the rendezvous parks the value if the receiver has not asked
// yet. A _Recv is asynchronous: it returns at once and finishes when the
// value arrives (or the rendezvous is aborted), so a waiting receiver holds
// no thread.
//
// Deadness crosses devices: the executor runs transfer nodes even when their
// input is dead (is_input_dead()); _Send then sends "dead", and the matching
// _Recv leaves its output unset, which the executor propagates as dead.
//
// Tensors are passed by reference-counted buffer: between host-memory devices
// of one process a transfer copies nothing. When the two ends live in
// different memory (a GPU and the host, runtime/core/device_memory.h), the _Recv
// copies the value into its own device's memory before passing it on, so
// its consumers never see another device's memory. The same two kernels are
// registered for GPU devices.
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/device_memory.h"
#include "runtime/core/rendezvous.h"

namespace weft {
namespace {

// "send_device;incarnation;recv_device;tensor_name;" from the node's attrs.
std::string KeyPrefix(OpKernelConstruction* c) {
  RendezvousKey key;
  int64_t incarnation = 0;
  absl::Status s = c->GetAttr("send_device", &key.src_device);
  if (s.ok()) s = c->GetAttr("send_device_incarnation", &incarnation);
  if (s.ok()) s = c->GetAttr("recv_device", &key.dst_device);
  if (s.ok()) s = c->GetAttr("tensor_name", &key.tensor_name);
  if (!s.ok()) {
    c->SetStatus(s);
    return "";
  }
  key.src_incarnation = static_cast<uint64_t>(incarnation);
  std::string full = key.ToString();  // ends in ";0:0"
  return full.substr(0, full.size() - 3);
}

// Per-step key: the prefix plus "frame_id:iter_id". TensorFlow's
// FrameAndIter holds the frame id as a signed int64, and so does
// RendezvousKey, so it is printed signed.
std::string StepKey(const std::string& prefix, const OpKernelContext& c) {
  return absl::StrCat(prefix, static_cast<int64_t>(c.frame_id()), ":",
                      c.iter_id());
}

absl::Status NoRendezvous(const OpKernel& k) {
  return absl::FailedPreconditionError(absl::StrCat(
      k.type_string(), " node '", k.name(),
      "' ran without a rendezvous: transfer nodes need a multi-device step "
      "(the session or worker provides one)"));
}

class SendOp : public OpKernel {
 public:
  explicit SendOp(OpKernelConstruction* c)
      : OpKernel(c), prefix_(KeyPrefix(c)) {}

  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->rendezvous() != nullptr, NoRendezvous(*this));
    const bool dead = c->is_input_dead();
    const Tensor value = dead ? Tensor() : c->input(0);
    OP_REQUIRES_OK(c, c->rendezvous()->Send(StepKey(prefix_, *c), value, dead));
  }

 private:
  const std::string prefix_;
};

class RecvOp : public OpKernel {
 public:
  explicit RecvOp(OpKernelConstruction* c)
      : OpKernel(c), prefix_(KeyPrefix(c)) {}

  bool IsAsync() const override { return true; }
  void Compute(OpKernelContext* c) override {
    c->SetStatus(absl::InternalError(
        absl::StrCat(name(), ": _Recv is asynchronous; use ComputeAsync")));
  }
  void ComputeAsync(OpKernelContext* c, std::function<void()> done) override {
    if (c->rendezvous() == nullptr) {
      c->SetStatus(NoRendezvous(*this));
      done();
      return;
    }
    c->rendezvous()->RecvAsync(
        StepKey(prefix_, *c),
        [c, done = std::move(done), this](const absl::Status& s,
                                          const Tensor& value, bool is_dead) {
          if (!s.ok()) {
            c->SetStatus(s);
          } else if (!is_dead) {
            if (value.dtype() != c->expected_output_dtype(0)) {
              c->SetStatus(absl::InternalError(
                  absl::StrCat("_Recv node '", name(), "' expected ",
                               DataTypeString(c->expected_output_dtype(0)),
                               " but got ", DataTypeString(value.dtype()))));
            } else {
              absl::StatusOr<Tensor> local =
                  CopyTensorToAllocator(value, c->device()->allocator());
              if (local.ok()) {
                c->set_output(0, *std::move(local));
              } else {
                c->SetStatus(absl::Status(
                    local.status().code(),
                    absl::StrCat("_Recv node '", name(), "' on ",
                                 c->device()->name(), ": ",
                                 local.status().message())));
              }
            }
          }
          done();
        });
  }

 private:
  const std::string prefix_;
};

}  // namespace

void RegisterSendRecvKernels(KernelRegistry* r) {
  for (const char* op : {"_Send", "_HostSend"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<SendOp>);
  }
  for (const char* op : {"_Recv", "_HostRecv"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<RecvOp>);
  }
  // On a GPU, _Send hands over the device tensor and _Recv copies what
  // arrives into the GPU's memory (above).
  r->Register(KernelDef("_Send", kDeviceTypeGpu), MakeKernel<SendOp>);
  r->Register(KernelDef("_Recv", kDeviceTypeGpu), MakeKernel<RecvOp>);
}

}  // namespace weft
