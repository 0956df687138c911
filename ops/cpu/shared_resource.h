// Helpers for kernels of shared, named resources (accumulators, queues):
// the handle a creating op outputs, in TensorFlow's two forms, and reading
// it back in the ops that use the resource.
//   - resource form: a DT_RESOURCE scalar (ResourceHandle: device,
//     container, name), what TensorFlow 2.x builds;
//   - ref form: a Ref(string) tensor of two strings, container and name
//     (TensorFlow 1.x's ConditionalAccumulator and friends).
// Both name an entry of the device's ResourceMgr; a resource is created
// once, on the first run of its creating op, and shared by every graph and
// session on the device that names it (shared_name, or the node's name).
#ifndef WEFT_OPS_CPU_SHARED_RESOURCE_H_
#define WEFT_OPS_CPU_SHARED_RESOURCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/types.h"

namespace weft {

// The (container, name) a creating kernel's attrs ask for: "container" and
// "shared_name" (the node's name when empty), defaults filled in from the
// device's ResourceMgr. Errors are recorded in `c`.
ResourceHandle SharedResourceName(OpKernelConstruction* c, DataType dtype);

// A DT_RESOURCE scalar holding `h`.
Tensor ResourceHandleTensor(const ResourceHandle& h);
// A DT_STRING [2] tensor (container, name): the ref form's handle.
Tensor RefHandleTensor(const ResourceHandle& h);

// The handle in input `i`, either form; INVALID_ARGUMENT naming `what` if
// it is neither, or names a resource on another device.
absl::StatusOr<ResourceHandle> HandleFromInput(OpKernelContext* c, int i,
                                               const std::string& what);

absl::Status MissingResource(OpKernelContext* c, const ResourceHandle& h,
                             const std::string& what,
                             const std::string& creator);

// The resource of type R named by input 0 (either handle form); NOT_FOUND
// naming it, the device and `creator` (the op that makes it) if absent.
template <typename R>
absl::StatusOr<std::shared_ptr<R>> LookupSharedResource(
    OpKernelContext* c, const std::string& what, const std::string& creator) {
  absl::StatusOr<ResourceHandle> h = HandleFromInput(c, 0, what);
  if (!h.ok()) return h.status();
  absl::StatusOr<std::shared_ptr<R>> r =
      c->resource_manager()->Lookup<R>(h->container, h->name);
  if (!r.ok()) return MissingResource(c, *h, what, creator);
  return r;
}

// Blocking ops on a shared resource (a TakeGradient, a Dequeue) wait in the
// resource's queue of waiters and must end early, CANCELLED, when their step
// is aborted. The step's cancellation callback has to be registered before
// the waiter is queued: once queued, another thread may serve it and finish
// the step, destroying the CancellationManager. WaiterIds covers the gap: a
// cancellation that arrives between Begin and End is remembered and End
// reports it. Not thread-safe: call it under the resource's mutex.
class WaiterIds {
 public:
  // A new waiter id, marked as not yet queued.
  int64_t Begin() {
    registering_.insert(next_);
    return next_++;
  }
  // The waiter is about to be queued; true if it was cancelled meanwhile
  // (then it must not be queued).
  bool End(int64_t id) {
    registering_.erase(id);
    return cancelled_early_.erase(id) > 0;
  }
  // For the cancellation callback: true (and remembered for End) if the
  // waiter is not queued yet; false means look for it in the queue.
  bool CancelIfNotQueued(int64_t id) {
    if (!registering_.contains(id)) return false;
    cancelled_early_.insert(id);
    return true;
  }

 private:
  int64_t next_ = 0;
  absl::flat_hash_set<int64_t> registering_;
  absl::flat_hash_set<int64_t> cancelled_early_;
};

// Registers `cancel(id)` with `cm` (may be null: nothing to register) for
// the waiter `id` of the resource `self`, held weakly so a callback that
// outlives the resource does nothing. Returns the token (kInvalidToken when
// nothing was registered) and sets *cancelled if the step is aborted
// already.
template <typename R>
CancellationToken RegisterWaiter(CancellationManager* cm,
                                 const std::shared_ptr<R>& self, int64_t id,
                                 void (R::*cancel)(int64_t),
                                 bool* cancelled) {
  *cancelled = false;
  if (cm == nullptr) return kInvalidToken;
  std::weak_ptr<R> weak = self;
  const CancellationToken token = cm->Register([weak, id, cancel] {
    if (std::shared_ptr<R> r = weak.lock()) ((*r).*cancel)(id);
  });
  *cancelled = token == kInvalidToken;
  return token;
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_SHARED_RESOURCE_H_
