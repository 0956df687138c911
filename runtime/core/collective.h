// CollectiveRendezvous: where the tasks of a collective meet when each runs
// steps of its own (an all-reduce across between-graph workers, whose step
// ids differ). Every task of the group names the same instance (a training
// step's number, say); the rendezvous of that instance carries the
// collective's transfers under ordinary rendezvous keys (rendezvous.h), a
// Recv whose sender is on another task pulling the tensor from it.
//
//   std::shared_ptr<Rendezvous> rv = ctx->collectives()->Instance(step).value();
//   rv->Send(key_for_my_successor, chunk, false);
//   rv->RecvAsync(key_from_my_predecessor, on_chunk);
//   ...
//   ctx->collectives()->Release(step - 1);   // nobody needs it any more
//
// The worker implements it over its step rendezvous table (RecvTensor with
// the instance's step id, distributed/worker.h); a local session has none,
// and a collective kernel run there fails saying so.
//
// Thread safety: implementations are thread-safe.
#ifndef WEFT_RUNTIME_CORE_COLLECTIVE_H_
#define WEFT_RUNTIME_CORE_COLLECTIVE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/core/rendezvous.h"

namespace weft {

class CollectiveRendezvous {
 public:
  virtual ~CollectiveRendezvous() = default;
  // The rendezvous of `instance` (>= 0), made on first use by this task or
  // by a peer pulling from it. ABORTED once the instance was released.
  virtual absl::StatusOr<std::shared_ptr<Rendezvous>> Instance(
      int64_t instance) = 0;
  // Aborts and forgets the instance here: its waiters fail at once.
  virtual void Release(int64_t instance) = 0;
  // This task's name, "/job:J/replica:R/task:T".
  virtual const std::string& task() const = 0;
};

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_COLLECTIVE_H_
