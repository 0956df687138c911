#include "distributed/training/chief.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "distributed/training/checkpoint_dir.h"
#include "distributed/training/task_health.h"
#include "graph/builder/allreduce.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

absl::StatusOr<int> CountReady(const WorkerGraph& g, Session* session) {
  std::vector<Tensor> out;
  WEFT_RETURN_IF_ERROR(session->Run({}, g.ready_checks, {}, &out));
  int ready = 0;
  for (const Tensor& t : out) ready += t.flat<bool>()[0] ? 1 : 0;
  return ready;
}

// The chief's part of InitOrWait, `ready` of the variables initialised.
absl::Status ChiefInit(const WorkerContext& w, const WorkerGraph& g,
                       Session* session, int ready) {
  const int total = static_cast<int>(g.ready_checks.size());
  if (ready == total) {
    w.Log(absl::StrCat("the ", total, " variables on ", w.ps_tasks,
                       " are initialised already: joining the running job"));
    return absl::OkStatus();
  }
  // The progress counters first: the others wait for the model.
  std::vector<Tensor> none;
  WEFT_RETURN_IF_ERROR(WithContext(session->Run({}, {}, {g.progress->init}, &none),
                                   "the chief running 'weft_progress/init'"));
  if (g.saver.has_value()) {
    WEFT_ASSIGN_OR_RETURN(std::optional<std::string> latest,
                          LatestCheckpoint(w.o.checkpoint_dir));
    if (latest.has_value()) {
      WEFT_RETURN_IF_ERROR(RestoreCheckpoint(session, *g.saver, *latest));
      w.Log(absl::StrCat("restored ", total, " variables on ", w.ps_tasks,
                         " from ", *latest));
      return absl::OkStatus();
    }
  }
  WEFT_RETURN_IF_ERROR(WithContext(session->Run({}, {}, {"init"}, &none),
                                   "the chief running 'init'"));
  w.Log(absl::StrCat("initialised ", total, " variables on ", w.ps_tasks));
  return absl::OkStatus();
}

}  // namespace

absl::Status InitOrWait(const WorkerContext& w, const WorkerGraph& g,
                        Session* session) {
  const int total = static_cast<int>(g.ready_checks.size());
  WEFT_ASSIGN_OR_RETURN(int ready, CountReady(g, session));
  if (w.chief()) return ChiefInit(w, g, session, ready);
  const absl::Time give_up = absl::Now() + w.o.wait_for_chief;
  absl::Time next_log = absl::Now();
  while (ready < total) {
    const absl::Time now = absl::Now();
    if (now >= give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          w.task.ToString(), " waited ", absl::FormatDuration(w.o.wait_for_chief),
          " for the chief (/job:worker/task:0) to initialise the variables on ",
          w.ps_tasks, " (", ready, " of ", total,
          " are): start the chief, or raise --wait-for-chief-s"));
    }
    if (now >= next_log) {
      w.Log(absl::StrCat("waiting for the chief (/job:worker/task:0) to "
                         "initialise the variables on ", w.ps_tasks, ": ", ready,
                         " of ", total, " ready"));
      next_log = now + absl::Seconds(5);
    }
    absl::SleepFor(absl::Milliseconds(50));
    WEFT_ASSIGN_OR_RETURN(ready, CountReady(g, session));
  }
  return absl::OkStatus();
}

absl::Status InitRing(const WorkerContext& w, const WorkerGraph& g,
                      Session* session) {
  std::vector<Tensor> none;
  WEFT_RETURN_IF_ERROR(WithContext(session->Run({}, {}, {"init"}, &none),
                                   absl::StrCat(w.task.ToString(), " running 'init'")));
  std::string from = "initialised";
  if (w.chief() && g.saver.has_value()) {
    WEFT_ASSIGN_OR_RETURN(std::optional<std::string> latest,
                          LatestCheckpoint(w.o.checkpoint_dir));
    if (latest.has_value()) {
      WEFT_RETURN_IF_ERROR(RestoreCheckpoint(session, *g.saver, *latest));
      from = absl::StrCat("restored from ", *latest);
    }
  }
  WEFT_RETURN_IF_ERROR(Diagnose(
      w, session->Run(w.StepOptions(), {}, {}, {kBroadcastNode}, &none, nullptr),
      "taking the chief's variables (the ring's broadcast)"));
  w.Log(w.chief()
            ? absl::StrCat("variables ", from, " and sent to every worker of the ring")
            : "variables set to the chief's (/job:worker/task:0)");
  return absl::OkStatus();
}

absl::StatusOr<std::string> Behind(
    const WorkerContext& w, const WorkerGraph& g, Session* session,
    std::pair<std::vector<int64_t>, absl::Time>* last) {
  std::vector<Tensor> out;
  WEFT_RETURN_IF_ERROR(Diagnose(
      w, session->Run(w.StepOptions(), {}, g.progress->reads, {}, &out, nullptr),
      "reading the workers' step counters"));
  std::vector<int64_t> now;
  for (const Tensor& t : out) {
    if (t.dtype() != DT_INT64 || t.NumElements() != 1) {
      return absl::InternalError("a worker step counter is not an int64 scalar");
    }
    now.push_back(t.flat<int64_t>()[0]);
  }
  const absl::Time at = absl::Now();
  std::string note =
      BehindNote(now, last->first, absl::ToDoubleSeconds(at - last->second));
  *last = {std::move(now), at};
  return note;
}

absl::Status ChiefWatch::Check(Session* session) {
  const absl::Time now = absl::Now();
  if (now < next_check_) return absl::OkStatus();
  next_check_ = now + absl::Seconds(5);
  std::vector<Tensor> out;
  WEFT_RETURN_IF_ERROR(Diagnose(
      w_, session->Run(w_.StepOptions(), {}, {g_.progress->reads[0]}, {}, &out, nullptr),
      "reading the chief's step counter"));
  const int64_t steps = out.at(0).flat<int64_t>()[0];
  if (steps != chief_steps_) {
    chief_steps_ = steps;
    chief_moved_ = now;
    return absl::OkStatus();
  }
  if (now - chief_moved_ < w_.o.wait_for_chief) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(
      w_.task.ToString(), ": the chief (/job:worker/task:0 at ",
      w_.o.cluster.Address({"worker", 0}).value_or("?"),
      ") has made no step for ", absl::FormatDuration(w_.o.wait_for_chief),
      " (its counter on ", w_.ps_tasks, " stays at ", steps,
      "): it died or hangs, and without it the job cannot save its final "
      "checkpoint, so this worker stops rather than report a job done. "
      "Start the chief again (it joins the running job, or restores the "
      "newest checkpoint), or raise --wait-for-chief-s"));
}

absl::Status ChiefWatch::WaitForDone(Session* session) const {
  const absl::Time start = absl::Now();
  absl::Time next_log = start + absl::Seconds(5);
  const bool checkpoints = !w_.o.checkpoint_dir.empty();
  for (;;) {
    std::vector<Tensor> out;
    WEFT_RETURN_IF_ERROR(Diagnose(
        w_, session->Run(w_.StepOptions(), {}, {g_.progress->read_chief_done}, {},
                         &out, nullptr),
        "reading whether the chief has finished"));
    if (out.at(0).flat<int64_t>()[0] >= w_.o.steps) return absl::OkStatus();
    const absl::Time now = absl::Now();
    if (now - start >= w_.o.wait_for_chief) {
      return absl::DeadlineExceededError(absl::StrCat(
          w_.task.ToString(), ": the global step reached ", w_.o.steps,
          ", but the chief (/job:worker/task:0 at ",
          w_.o.cluster.Address({"worker", 0}).value_or("?"),
          ") did not mark the job finished within ",
          absl::FormatDuration(w_.o.wait_for_chief),
          checkpoints ? " (nor, so, its final checkpoint)" : "",
          ": it died or hangs. The job is not done: start the chief again "
          "(it restores the newest checkpoint and finishes), or raise "
          "--wait-for-chief-s"));
    }
    if (now >= next_log) {
      w_.Log(absl::StrCat("waiting for the chief (/job:worker/task:0) to finish "
                          "the job (its last steps",
                          checkpoints ? ", its final checkpoint" : "", ")"));
      next_log = now + absl::Seconds(5);
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

}  // namespace weft
