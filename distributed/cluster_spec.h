// The tasks of a cluster: for each job ("ps", "worker", "chief", ...), its
// tasks by index, each with the "host:port" it serves on. The same cluster
// a TensorFlow 1.x job describes with tf.train.ClusterSpec, read from any of
// the three spellings schedulers and users write:
//
//   flag form   ps=localhost:2222;worker=localhost:2223,localhost:2224
//               (tasks numbered from 0 in the order given)
//   JSON        {"ps": ["localhost:2222"], "worker": ["h1:2223", "h2:2224"]}
//               TensorFlow's ClusterSpec dict; a job may also map task
//               indices to addresses, {"worker": {"0": "h1:2223", "3": ...}}
//   TF_CONFIG   {"cluster": {...as JSON...}, "task": {"type": "worker",
//               "index": 1}} as Kubeflow's TFJob and tf.distribute write it
//               (ParseTfConfig; other fields, "environment" and
//               "rpc_layer", are ignored)
//
//   WEFT_ASSIGN_OR_RETURN(ClusterSpec spec, ParseClusterSpec(flag_text));
//   WEFT_ASSIGN_OR_RETURN(std::string addr, spec.Address({"worker", 1}));
//
// Every malformed spec is INVALID_ARGUMENT naming the job, the task or the
// JSON field at fault. A spec holds at least one job, every job at least one
// task; job names are TensorFlow's ([A-Za-z][A-Za-z0-9_]*); addresses are
// host:port with a port in 1-65535 (IPv6 hosts in brackets, [::1]:2222);
// no two tasks share an address.
//
// ClusterSpec is a value: copyable, and safe to read from many threads.
#ifndef WEFT_DISTRIBUTED_CLUSTER_SPEC_H_
#define WEFT_DISTRIBUTED_CLUSTER_SPEC_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/cluster.pb.h"

namespace weft {

// One task of a cluster.
struct TaskId {
  std::string job;
  int index = 0;

  // "/job:worker/replica:0/task:1", the prefix of the task's device names.
  std::string DeviceNamePrefix() const;
  // "/job:worker/task:1", for messages.
  std::string ToString() const;

  friend bool operator==(const TaskId& a, const TaskId& b) {
    return a.index == b.index && a.job == b.job;
  }
  friend bool operator<(const TaskId& a, const TaskId& b) {
    return a.job != b.job ? a.job < b.job : a.index < b.index;
  }
};

class ClusterSpec {
 public:
  // An empty spec; the parsers never return one.
  ClusterSpec() = default;

  // From TensorFlow's ClusterDef (what ServerDef and CreateSession carry),
  // checked as the text forms are.
  static absl::StatusOr<ClusterSpec> FromClusterDef(const tensorflow::ClusterDef& def);
  tensorflow::ClusterDef ToClusterDef() const;

  // Job names in increasing order.
  std::vector<std::string> Jobs() const;
  // The task indices of `job`, increasing; empty if there is no such job.
  std::vector<int> TaskIndices(absl::string_view job) const;
  // Every task, by job name and then index.
  std::vector<TaskId> Tasks() const;
  int NumTasks() const;
  bool HasTask(const TaskId& task) const;
  // The task's "host:port", or NOT_FOUND naming the tasks there are.
  absl::StatusOr<std::string> Address(const TaskId& task) const;

  // The flag form when every job's tasks are numbered 0..n-1; otherwise the
  // JSON form (which can say which indices there are). Either parses back
  // to this spec.
  std::string ToString() const;

  // Adds a task; the check every parser applies. `where` names the source
  // ("--cluster", "TF_CONFIG") in errors. On error the spec is unchanged.
  absl::Status AddTask(const TaskId& task, absl::string_view address, absl::string_view where);

 private:
  std::map<std::string, std::map<int, std::string>, std::less<>> jobs_;
  std::map<std::string, TaskId, std::less<>> by_address_;  // no address twice
};

// The flag form, or JSON when `text` starts with '{' (after spaces).
// `where` names the source in errors ("--cluster", "cluster.json").
absl::StatusOr<ClusterSpec> ParseClusterSpec(absl::string_view text,
                                             absl::string_view where = "--cluster");

// The TF_CONFIG environment variable's value: the cluster and this
// process's task, which must be one of the cluster's tasks.
struct TfConfig {
  ClusterSpec cluster;
  TaskId task;
};
absl::StatusOr<TfConfig> ParseTfConfig(absl::string_view json);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_CLUSTER_SPEC_H_
