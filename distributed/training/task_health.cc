#include "distributed/training/task_health.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "distributed/training/cluster_probe.h"
#include "runtime/core/status.h"

namespace weft {

bool CanRecover(const WorkerContext& w, const absl::Status& s) {
  return !w.ring && !w.o.checkpoint_dir.empty() &&
         (absl::IsUnavailable(s) || absl::IsAborted(s));
}

absl::Status WaitForAnswers(const WorkerContext& w,
                            const std::vector<TaskId>& tasks,
                            const std::string& what, const std::string& remedy) {
  const absl::Time give_up = absl::Now() + w.o.wait_for_tasks;
  absl::Time next_log = absl::Now() + absl::Seconds(2);
  for (;;) {
    const std::vector<std::string> silent =
        UnansweringTasks(w.o.cluster, tasks, w.o.security, absl::Seconds(2));
    if (silent.empty()) return absl::OkStatus();
    const absl::Time now = absl::Now();
    if (now >= give_up) {
      return absl::UnavailableError(absl::StrCat(
          w.task.ToString(), " waited ", absl::FormatDuration(w.o.wait_for_tasks),
          " for ", what, ": not answering: [", absl::StrJoin(silent, "] ["),
          "]. ", remedy, ", or raise --wait-for-tasks-s"));
    }
    if (now >= next_log) {
      w.Log(absl::StrCat("waiting for ", what, ": [", absl::StrJoin(silent, "] ["), "]"));
      next_log = now + absl::Seconds(5);
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

absl::Status WaitForPsAgain(const WorkerContext& w, const absl::Status& lost) {
  std::vector<TaskId> ps;
  for (int i : w.o.cluster.TaskIndices("ps")) ps.push_back(TaskId{"ps", i});
  w.Log(absl::StrCat("a step failed (", lost.message(), "); waiting up to ",
                     absl::FormatDuration(w.o.wait_for_tasks), " for ", w.ps_tasks,
                     " to answer, then resuming from the newest checkpoint in ",
                     w.o.checkpoint_dir));
  return WaitForAnswers(w, ps, "the ps tasks to come back",
                        absl::StrCat("Restart them (the job resumes from ",
                                     w.o.checkpoint_dir, ")"));
}

absl::Status WaitForRing(const WorkerContext& w) {
  std::vector<TaskId> peers;
  for (int i : w.o.cluster.TaskIndices("worker")) {
    if (i != w.task.index) peers.push_back(TaskId{"worker", i});
  }
  return WaitForAnswers(w, peers, "the other workers of the all-reduce ring",
                        "Start them");
}

absl::Status Diagnose(const WorkerContext& w, absl::Status s,
                      const std::string& what) {
  const std::string& task = w.task.ToString();
  if (s.code() != absl::StatusCode::kDeadlineExceeded) {
    return WithContext(s, absl::StrCat(task, " ", what));
  }
  const absl::Time failed = absl::Now();
  const ClusterSpec& cluster = w.o.cluster;
  std::vector<TaskId> others;
  for (const char* job : {"ps", "worker"}) {
    for (int i : cluster.TaskIndices(job)) {
      if (!(TaskId{job, i} == w.task)) others.push_back(TaskId{job, i});
    }
  }
  const std::vector<std::string> silent =
      UnansweringTasks(cluster, others, w.o.security, absl::Seconds(3));
  const std::string resume =
      w.o.checkpoint_dir.empty()
          ? std::string()
          : absl::StrCat("; the job resumes from the newest checkpoint in ",
                         w.o.checkpoint_dir);
  const std::string timeout = absl::FormatDuration(w.o.step_timeout);
  if (!silent.empty()) {
    return absl::UnavailableError(absl::StrCat(
        task, " ", what, " did not finish within ", timeout,
        (w.sync ? " (a synchronous step waits for every worker's gradients "
                  "it aggregates)"
         : w.ring ? " (an all-reduce step waits for every worker)"
                  : ""),
        ": not answering: [", absl::StrJoin(silent, "] ["),
        "]. A task that does not answer has died or is cut off: restart it",
        resume, w.sync ? ", or train with backup workers (--replicas-to-aggregate "
                         "below the number of workers)"
                       : ""));
  }
  // Every task answers now; the counts from before the failure still say
  // whose gradients the step waited for (a worker paused and resumed).
  std::vector<std::string> stalled;
  for (const ProgressHistory::Stalled& s :
       w.history.StalledAt(failed, w.o.step_timeout / 2)) {
    const TaskId id{"worker", s.task};
    absl::StatusOr<std::string> address = cluster.Address(id);
    stalled.push_back(absl::StrCat(
        id.ToString(), " (", address.ok() ? *address : "no address", "): ",
        s.steps, " steps of gradients in, the most ", s.most, ", none in the ",
        absl::FormatDuration(absl::Trunc(s.quiet, absl::Milliseconds(100))),
        " before the step failed"));
  }
  if (!stalled.empty()) {
    return absl::DeadlineExceededError(absl::StrCat(
        task, " ", what, " did not finish within ", timeout,
        " (a synchronous step waits for every worker's gradients it "
        "aggregates): it waited for [", absl::StrJoin(stalled, "] ["),
        "]. That task answers again now: it was paused, overloaded or cut off "
        "for a while; check it (its log, its host's load), train with backup "
        "workers (--replicas-to-aggregate below the number of workers), or "
        "raise --step-timeout-s",
        resume));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      task, " ", what, " did not finish within ", timeout,
      ", though every task of the cluster answers: a worker may be slow or "
      "stuck; raise --step-timeout-s if steps take that long"));
}

}  // namespace weft
