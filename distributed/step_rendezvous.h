// The rendezvous of one step on one task, and the table of them a worker
// keeps (TensorFlow's RemoteRendezvous and RendezvousMgr).
//
//   StepRendezvousTable table(&devices, "/job:worker/replica:0/task:1", &cache);
//   std::shared_ptr<StepRendezvous> rv =
//       table.FindOrCreate(step_id, StepUse::kRun).value();
//   step_args.rendezvous = rv.get();     // the step's _Send/_Recv use it
//   ...
//   table.RunEnded(step_id);             // this task's part has ended
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
// What a peer can hold here is bounded in number and in time, so that no
// sequence of requests leaves the task refusing work once the requests
// stop. A rendezvous a peer made (StepUse::kPeer) that no step of this
// task has claimed counts against kMaxUnclaimed, not against the steps
// this task runs, and is aborted (its waiting RecvTensor calls answered
// with an error naming the step) once it is `unclaimed_ttl` old, or when
// it is the oldest of kMaxUnclaimed and a peer asks for one more. A step
// that ran here and ended without the master's CleanupGraph (a master
// that died, or a peer that runs steps and never cleans up) is forgotten
// `idle_ttl` after its last RunGraph ended. Unclaimed rendezvous expire on
// every FindOrCreate and CollectExpired, idle steps on CollectExpired
// (which a server calls periodically).
//
// Thread safety: both classes are thread-safe. A StepRendezvous lives as long
// as anyone holds it; Cleanup only drops the table's reference.
#ifndef WEFT_DISTRIBUTED_STEP_RENDEZVOUS_H_
#define WEFT_DISTRIBUTED_STEP_RENDEZVOUS_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
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

  // The step runs as `task` of a propagated cluster whose tasks `workers`
  // reaches (a worker session of ClusterSpec propagation): keys naming
  // `task` are this task's own, the others are pulled through `workers`.
  // Before the step's kernels run (RunGraph binds before it starts them);
  // a peer's early RecvTensor (RecvLocalAsync) needs no binding.
  void Bind(std::string task, std::shared_ptr<WorkerCache> workers);

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
                  const std::string& src_task, WorkerCache* workers,
                  DoneCallback done);
  std::string task() const;

  const int64_t step_id_;
  const DeviceMgr* const devices_;
  LocalRendezvous local_;

  mutable absl::Mutex mu_;
  std::string task_ ABSL_GUARDED_BY(mu_);
  WorkerCache* workers_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<WorkerCache> bound_workers_ ABSL_GUARDED_BY(mu_);
  absl::Status abort_status_ ABSL_GUARDED_BY(mu_);
  std::vector<std::weak_ptr<RemoteCall>> remote_ ABSL_GUARDED_BY(mu_);
};

// Who asks the table for a step's rendezvous.
enum class StepUse {
  kPeer,        // another task's RecvTensor: the step may never run here
  kRun,         // a RunGraph of this task; RunEnded when it ends
  kCollective,  // a collective instance; released by Cleanup
};

struct StepRendezvousLimits {
  // A peer's rendezvous that no step here claimed is aborted this long
  // after it was made.
  absl::Duration unclaimed_ttl = absl::Seconds(60);
  // A step whose RunGraphs here have all ended, and that was never
  // cleaned up, is forgotten this long after the last one ended.
  absl::Duration idle_ttl = absl::Minutes(10);
};

class StepRendezvousTable {
 public:
  // Most steps a task keeps a rendezvous for at once; a master asking for
  // more (without CleanupGraph after its steps) gets RESOURCE_EXHAUSTED.
  static constexpr int kMaxSteps = 1 << 16;
  // Most rendezvous peers may have made for steps that have not started
  // here; past it a RecvTensor for a new step drops the oldest of them
  // (its waiting calls are answered ABORTED).
  static constexpr int kMaxUnclaimed = 1 << 12;
  // How many ended step ids the table remembers.
  static constexpr int kMaxEnded = 1 << 16;

  StepRendezvousTable(const DeviceMgr* devices, std::string task,
                      WorkerCache* workers, StepRendezvousLimits limits = {});
  ~StepRendezvousTable();
  StepRendezvousTable(const StepRendezvousTable&) = delete;
  StepRendezvousTable& operator=(const StepRendezvousTable&) = delete;

  // ABORTED naming the step once it was cleaned up; RESOURCE_EXHAUSTED
  // past kMaxSteps. A kRun or kCollective use claims a rendezvous
  // a peer made.
  absl::StatusOr<std::shared_ptr<StepRendezvous>> FindOrCreate(
      int64_t step_id, StepUse use);
  // A RunGraph that FindOrCreate(step_id, kRun) admitted has ended.
  void RunEnded(int64_t step_id);
  // Aborts the step's rendezvous (ABORTED naming the step), forgets it and
  // remembers that it ended.
  void Cleanup(int64_t step_id);
  // Cleanup for every step.
  void CleanupAll();
  // Aborts and forgets what has expired at `now` (see the limits).
  void CollectExpired(absl::Time now);
  int size() const;
  // Rendezvous made by peers and not claimed by a step of this task.
  int unclaimed() const;
  // pending() summed over the steps whose id is at least `first_step_id`.
  int PendingFrom(int64_t first_step_id) const;

 private:
  struct Entry {
    std::shared_ptr<StepRendezvous> rv;
    bool claimed = false;
    bool collective = false;
    int runs = 0;           // kRun uses not yet ended
    absl::Time deadline;    // expiry while unclaimed, or idle after a run
  };
  // Move what has expired into the vector, to be aborted unlocked.
  // TakeUnclaimed: up to `most` unclaimed entries due by `until`, oldest
  // first (cheap enough for every call; with `until` infinite and `most` 1,
  // the oldest of them). TakeIdle: the idle ones (a scan of the table).
  void TakeUnclaimed(absl::Time until, int most,
                     std::vector<std::pair<int64_t, Entry>>* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TakeIdle(absl::Time now,
                std::vector<std::pair<int64_t, Entry>>* expired)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AbortExpired(std::vector<std::pair<int64_t, Entry>>& expired);

  const DeviceMgr* const devices_;
  const std::string task_;
  WorkerCache* const workers_;
  const StepRendezvousLimits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int64_t, Entry> steps_ ABSL_GUARDED_BY(mu_);
  int unclaimed_ ABSL_GUARDED_BY(mu_) = 0;
  // (deadline, step) of the unclaimed entries, oldest first; one claimed
  // or cleaned up since is skipped when its turn comes.
  std::deque<std::pair<absl::Time, int64_t>> unclaimed_expiry_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<int64_t> ended_ ABSL_GUARDED_BY(mu_);
  std::deque<int64_t> ended_order_ ABSL_GUARDED_BY(mu_);  // oldest first
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_STEP_RENDEZVOUS_H_
