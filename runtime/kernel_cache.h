// KernelCache: the kernels of stateful nodes, shared by all the executors of
// one session (TensorFlow's OpSegment).
//
// A session builds one executor per Run signature. Stateless kernels are
// built per executor, but a stateful node (OpDef is_stateful: variables,
// random ops, queues) must be the same kernel object in all of them, so that
// e.g. a random op's sequence continues whichever fetches a Run asks for.
//
//   KernelCache cache;                       // owned by the session
//   ExecutorOptions options;
//   options.kernel_cache = &cache;           // Executor::Create uses it
//
// Thread safety: thread-safe. Ownership: the cache owns the kernels; it must
// outlive every executor built with it.
#ifndef WEFT_RUNTIME_KERNEL_CACHE_H_
#define WEFT_RUNTIME_KERNEL_CACHE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "ops/framework/op_kernel.h"

namespace weft {

class KernelCache {
 public:
  using CreateFn = std::function<absl::StatusOr<std::unique_ptr<OpKernel>>()>;

  KernelCache() = default;
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The kernel cached under `key` (a node and device), or a new one from
  // `create`, cached if creation succeeds. `create` runs under the cache's
  // lock, so two executors never build the same kernel twice.
  absl::StatusOr<OpKernel*> FindOrCreate(const std::string& key,
                                         const CreateFn& create);
  int size() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<OpKernel>> kernels_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace weft

#endif  // WEFT_RUNTIME_KERNEL_CACHE_H_
