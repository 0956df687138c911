// Session: the client API for running graphs, as in TensorFlow 1.x.
//
//   SessionOptions options;
//   options.config.set_inter_op_parallelism_threads(2);
//   std::unique_ptr<Session> session = NewLocalSession(options);
//   WEFT_RETURN_IF_ERROR(session->Create(graph_def));       // validates it all
//   std::vector<Tensor> out;
//   WEFT_RETURN_IF_ERROR(session->Run({{"x:0", x}}, {"y:0"}, {"train"}, &out));
//   WEFT_RETURN_IF_ERROR(session->Close());
//
// Create() loads and checks the whole graph (ops, attrs, edges, dtypes,
// static shapes) so a bad GraphDef fails before anything runs; Extend() adds
// nodes to it. Run() feeds tensors ("node:index", or "node" for output 0),
// runs what the fetches and targets need, and returns the fetched tensors in
// the order asked (a tensor may be fetched twice). State that kernels keep
// on the device, such as variables, lives as long as the session.
//
// Errors follow TensorFlow's codes: INVALID_ARGUMENT for a bad graph, feed or
// fetch; FAILED_PRECONDITION after Close(); a kernel's own code (with
// "[[{{node NAME}}]]" appended) when a node fails; DEADLINE_EXCEEDED when
// RunOptions.timeout_in_ms (or ConfigProto.operation_timeout_in_ms) runs
// out; CANCELLED for steps cut short by Close().
//
// Thread safety: all methods are thread-safe. Run may be called from many
// threads at once; Create/Extend may run concurrently with Run (a Run sees
// the graph as it was when it started). Close() cancels the steps in flight
// and waits for them.
#ifndef WEFT_RUNTIME_SESSION_H_
#define WEFT_RUNTIME_SESSION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"
#include "runtime/core/tensor.h"

namespace weft {

struct SessionOptions {
  // Honoured: device_count["CPU"] (N CPU devices
  // /job:localhost/replica:0/task:0/device:CPU:0..N-1, each with its own
  // intra-op pool; nodes are placed on them by graph/placer.h and a Run
  // spanning several is partitioned with _Send/_Recv), allow_soft_placement,
  // log_device_placement (one "node (Op): device" line per node on stderr
  // when a Run signature is prepared), inter_op_parallelism_threads
  // (0 = number of cores, negative = run every kernel on the caller's
  // thread), intra_op_parallelism_threads (0 = cores per device) and
  // operation_timeout_in_ms (a default for RunOptions.timeout_in_ms).
  tensorflow::ConfigProto config;
  // Bytes of host memory the session's tensors (outputs, temporaries,
  // variables) may hold at once; an allocation past it fails its node with
  // RESOURCE_EXHAUSTED naming the node, the shape and the bytes. 0 = no
  // limit but the machine's. `weft run --memory-limit` sets it.
  int64_t memory_limit_bytes = 0;
};

class Session {
 public:
  virtual ~Session() = default;

  // Loads the graph. ALREADY_EXISTS if the session already has one.
  virtual absl::Status Create(const tensorflow::GraphDef& graph) = 0;
  // Adds the nodes of `graph` (which may refer to nodes added before) and
  // merges its function library. The combined graph is checked as a whole;
  // on error the session keeps its previous graph.
  virtual absl::Status Extend(const tensorflow::GraphDef& graph) = 0;

  virtual absl::Status Run(
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets,
      std::vector<Tensor>* outputs) = 0;
  // As above, with options: timeout_in_ms, and trace_level (anything but
  // NO_TRACE fills metadata->step_stats). output_partition_graphs puts the
  // graph that ran in metadata->partition_graphs. `metadata` may be null.
  virtual absl::Status Run(
      const tensorflow::RunOptions& options,
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
      tensorflow::RunMetadata* metadata) = 0;

  // Cancels running steps, waits for them, and frees the cached executors.
  // Later calls fail with FAILED_PRECONDITION. Idempotent.
  virtual absl::Status Close() = 0;
};

// A session running graphs in this process, on its own devices (see
// runtime/local_session.h).
std::unique_ptr<Session> NewLocalSession(const SessionOptions& options);

}  // namespace weft

#endif  // WEFT_RUNTIME_SESSION_H_
