// ServerOptions for a test's in-process task: CPU only, few threads, a
// short wait for the other tasks, and no log lines.
#ifndef WEFT_TESTS_DISTRIBUTED_TEST_SERVER_OPTIONS_H_
#define WEFT_TESTS_DISTRIBUTED_TEST_SERVER_OPTIONS_H_

#include <string>

#include "distributed/rpc/grpc_server.h"

namespace weft {
namespace testing {

// Task `task` of `job` in `cluster` (a spec in the --cluster flag form).
inline ServerOptions TestServerOptions(const std::string& cluster, int task,
                                       const std::string& job = "worker") {
  ServerOptions o;
  o.cluster = ParseClusterSpec(cluster).value();
  o.task = {job, task};
  o.max_gpus = 0;
  o.inter_op_threads = 2;
  o.intra_op_threads = 1;
  o.wait_for_tasks = absl::Seconds(10);
  o.log = [](absl::string_view) {};
  return o;
}

}  // namespace testing
}  // namespace weft

#endif  // WEFT_TESTS_DISTRIBUTED_TEST_SERVER_OPTIONS_H_
