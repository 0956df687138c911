#include "distributed/training/sync_loops.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "distributed/training/task_health.h"
#include "graph/builder/sync_replicas.h"

namespace weft {

void SyncLoops::Start(Session* session) {
  if (!w_.sync) return;
  if (g_.progress.has_value()) {
    stop_watch_ = false;
    watcher_ = std::thread([this, session] {
      tensorflow::RunOptions run;
      run.set_timeout_in_ms(2000);
      const absl::Duration every =
          std::min(absl::Seconds(1), w_.o.step_timeout / 4);
      std::vector<Tensor> got;
      while (!stop_watch_) {
        const absl::Time next = absl::Now() + every;
        if (session->Run(run, {}, g_.progress->reads, {}, &got, nullptr).ok()) {
          std::vector<int64_t> counts;
          for (const Tensor& t : got) {
            if (t.dtype() != DT_INT64 || t.NumElements() != 1) break;
            counts.push_back(t.flat<int64_t>()[0]);
          }
          if (counts.size() == g_.progress->reads.size()) {
            w_.history.Record(std::move(counts), absl::Now());
          }
        }
        while (!stop_watch_ && absl::Now() < next) {
          absl::SleepFor(absl::Milliseconds(50));
        }
      }
    });
  }
  if (!w_.chief()) return;
  {
    absl::MutexLock lock(&mu_);
    updater_status_ = absl::OkStatus();
  }
  updater_ = std::thread([this, session] {
    std::vector<Tensor> got;
    for (;;) {
      absl::Status s = session->Run(w_.StepOptions(), {},
                                    {"sync_op_tokens/global_step:0"},
                                    {kSyncOp}, &got, nullptr);
      if (s.ok() && (got.size() != 1 || got[0].dtype() != DT_INT64)) {
        s = absl::InternalError("sync_op's global step is not an int64");
      }
      if (!s.ok()) {
        s = Diagnose(w_, s, "applying the aggregated gradients (sync_op)");
        absl::MutexLock lock(&mu_);
        updater_status_ = s;
        return;
      }
      if (got[0].flat<int64_t>()[0] >= w_.o.steps) return;
    }
  });
}

absl::Status SyncLoops::Stop() {
  stop_watch_ = true;
  if (watcher_.joinable()) watcher_.join();  // its reads have a deadline
  if (!updater_.joinable()) return absl::OkStatus();
  updater_.join();  // its step has a deadline too
  absl::MutexLock lock(&mu_);
  return updater_status_;
}

}  // namespace weft
