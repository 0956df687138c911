// A WorkerCache over workers in this process: the cluster of an in-process
// test, and the way a server reaches its own task without a socket.
//
//   InProcessWorkerCache cache;
//   cache.Add("/job:worker/replica:0/task:0", &worker0);   // not owned
//
// Thread safety: Add before the first GetWorker; GetWorker is thread-safe.
#ifndef WEFT_DISTRIBUTED_IN_PROCESS_WORKER_CACHE_H_
#define WEFT_DISTRIBUTED_IN_PROCESS_WORKER_CACHE_H_

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "distributed/worker_interface.h"

namespace weft {

class InProcessWorkerCache final : public WorkerCache {
 public:
  void Add(const std::string& task, WorkerInterface* worker) {
    workers_[task] = worker;
  }
  absl::StatusOr<WorkerInterface*> GetWorker(const std::string& task) override {
    auto it = workers_.find(task);
    if (it == workers_.end()) {
      std::string known;
      for (const auto& [name, w] : workers_) {
        absl::StrAppend(&known, known.empty() ? "" : ", ", name);
      }
      return absl::UnavailableError(absl::StrCat(
          "task ", task, " is not in the cluster (its tasks: ", known, ")"));
    }
    return it->second;
  }

 private:
  std::map<std::string, WorkerInterface*> workers_;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_IN_PROCESS_WORKER_CACHE_H_
