// Running one step over several executors (one per device partition) that
// exchange tensors through a shared rendezvous.
//
//   LocalRendezvous rendezvous;                 // one per step
//   CancellationManager cancellation;           // one per step
//   Executor::StepArgs args;
//   args.rendezvous = &rendezvous;
//   args.cancellation = &cancellation;
//   RunMultiDeviceStep({exec0, exec1}, args, &pool, [](absl::Status s) {...});
//
// All executors start at once (all but the last on `pool`, the last on the
// calling thread; all on the calling thread if `pool` is null, which works
// because _Recv waits asynchronously). The step fails as a whole: the first
// failure cancels `args.cancellation`, which stops the other executors and
// aborts the rendezvous, so every _Recv still waiting wakes up with
// CANCELLED. `done` gets the step's status once every executor has finished:
// the first error that is not a CANCELLED caused by that abort (so the
// failing node's own error, "[[{{node NAME}}]]" included, is what the caller
// sees), or CANCELLED if the step was cancelled from outside.
//
// Thread safety: the executors, the rendezvous and the cancellation manager
// must outlive the step (until `done` runs).
#ifndef WEFT_RUNTIME_MULTI_DEVICE_STEP_H_
#define WEFT_RUNTIME_MULTI_DEVICE_STEP_H_

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "runtime/executor.h"
#include "runtime/core/thread_pool.h"

namespace weft {

// `args.rendezvous` and `args.cancellation` are required.
void RunMultiDeviceStep(const std::vector<Executor*>& executors,
                        const Executor::StepArgs& args, ThreadPool* pool,
                        std::function<void(absl::Status)> done);

}  // namespace weft

#endif  // WEFT_RUNTIME_MULTI_DEVICE_STEP_H_
