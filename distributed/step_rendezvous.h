// The rendezvous of one step on one task, and the table of them a worker
// keeps (TensorFlow's RemoteRendezvous and RendezvousMgr).
//
//   StepRendezvousTable table(&devices, "/job:worker/replica:0/task:1", &cache);
//   std::shared_ptr<StepRendezvous> rv = table.FindOrCreate(step_id);
//   step_args.rendezvous = rv.get();     // the step's _Send/_Recv use it
//   ...
//   table.Cleanup(step_id);              // after the step, on every task
//
// A _Send always lands in this task's table. A _Recv whose key names a
// sender on this task waits there; one whose sender is on another task
// pulls the tensor with that task's RecvTensor (through the WorkerCache),
// parsing it into the receiving device's allocator (so the memory limit
// counts it). StartAbort fails every waiter, local or remote, at once: a
// remote call still in flight then has its answer ignored, so no step ever
// waits on a task that has gone. The remote task's own waiter is freed when
// the master cleans the step up there.
//
// A RecvTensor may reach a task before the step starts there, so
// FindOrCreate makes the rendezvous on first use by either side. Once a
// step is cleaned up, the table remembers its id for a while (the last
// kMaxEnded), so a RunGraph or RecvTensor that arrives after the master's
// abort is refused instead of waiting on a step that has ended.
//
// Thread safety: both classes are thread-safe. A StepRendezvous lives as long
// as anyone holds it; Cleanup only drops the table's reference.
#ifndef WEFT_DISTRIBUTED_STEP_RENDEZVOUS_H_
#define WEFT_DISTRIBUTED_STEP_RENDEZVOUS_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "distributed/worker_interface.h"
#include "runtime/core/device.h"
#include "runtime/core/rendezvous.h"

namespace weft {

// Step ids kCollectiveStepBase + i carry collective instance i (the
// worker's CollectiveRendezvous); masters make ids below 2^57.
inline constexpr int64_t kCollectiveStepBase = int64_t{1} << 60;

class StepRendezvous final : public Rendezvous {
 public:
  // `devices` and `workers` must outlive the rendezvous.
  StepRendezvous(int64_t step_id, std::string task, const DeviceMgr* devices,
                 WorkerCache* workers);
  ~StepRendezvous() override;

  absl::Status Send(const std::string& key, const Tensor& value,
                    bool is_dead) override;
  void RecvAsync(const std::string& key, DoneCallback done) override;
  void StartAbort(const absl::Status& status) override;

  // Waits here only, whatever task the key names: how RecvTensor serves a
  // peer and how RunGraph collects the step's fetches.
  void RecvLocalAsync(const std::string& key, DoneCallback done);
  // What a finished step left here under `key`, without waiting: how
  // RunGraph collects the step's fetches. NOT_FOUND naming the key when
  // nothing was sent under it.
  absl::Status TakeLocal(const std::string& key, Tensor* value,
                         bool* is_dead);
  int64_t step_id() const { return step_id_; }
  // Values sent here that nobody has received yet, plus waiting receivers.
  int pending() const { return local_.PendingCount(); }

 private:
  struct RemoteCall;
  void RecvRemote(const RendezvousKey& parsed, const std::string& key,
                  const std::string& src_task, DoneCallback done);

  const int64_t step_id_;
  const std::string task_;
  const DeviceMgr* const devices_;
  WorkerCache* const workers_;
  LocalRendezvous local_;

  absl::Mutex mu_;
  absl::Status abort_status_ ABSL_GUARDED_BY(mu_);
  std::vector<std::weak_ptr<RemoteCall>> remote_ ABSL_GUARDED_BY(mu_);
};

class StepRendezvousTable {
 public:
  // Most steps a task keeps a rendezvous for at once; a peer asking for
  // more (RecvTensor with ever new step ids) gets RESOURCE_EXHAUSTED.
  static constexpr int kMaxSteps = 1 << 16;
  // How many ended step ids the table remembers.
  static constexpr int kMaxEnded = 1 << 16;

  StepRendezvousTable(const DeviceMgr* devices, std::string task,
                      WorkerCache* workers);
  ~StepRendezvousTable();
  StepRendezvousTable(const StepRendezvousTable&) = delete;
  StepRendezvousTable& operator=(const StepRendezvousTable&) = delete;

  // ABORTED naming the step once it was cleaned up.
  absl::StatusOr<std::shared_ptr<StepRendezvous>> FindOrCreate(
      int64_t step_id);
  // Aborts the step's rendezvous (ABORTED naming the step), forgets it and
  // remembers that it ended.
  void Cleanup(int64_t step_id);
  // Cleanup for every step.
  void CleanupAll();
  int size() const;
  // pending() summed over the steps whose id is at least `first_step_id`.
  int PendingFrom(int64_t first_step_id) const;

 private:
  const DeviceMgr* const devices_;
  const std::string task_;
  WorkerCache* const workers_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int64_t, std::shared_ptr<StepRendezvous>> steps_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<int64_t> ended_ ABSL_GUARDED_BY(mu_);
  std::deque<int64_t> ended_order_ ABSL_GUARDED_BY(mu_);  // oldest first
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_STEP_RENDEZVOUS_H_
