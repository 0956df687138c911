// Synchronous between-graph training (SyncReplicasOptimizer) on a cluster
// of in-process gRPC servers, 1 ps + 2 workers, each worker training its own
// copy of the MLP through its own master, is the same computation as
// in-graph replication with 2 towers in one process: over 20 steps on the
// same data (worker k gets tower k's slice of each global batch), the mean
// of the workers' losses follows the in-graph loss within 1e-4 (relative).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/rpc/grpc_server.h"
#include "distributed/rpc/grpc_session.h"
#include "graph/builder/device_setter.h"
#include "graph/builder/sync_replicas.h"
#include "graph/models/models.h"
#include "runtime/local_session.h"

namespace weft {
namespace {

constexpr int kWorkers = 2;
constexpr int64_t kBatch = 32;  // global; each worker takes half
constexpr int kSteps = 20;

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

ModelOptions Options(int64_t batch) {
  ModelOptions o;
  o.batch = batch;
  o.hidden = 16;
  return o;
}

// Rows [begin, end) of a [kBatch, ...] tensor.
Tensor Rows(const Tensor& t, int64_t begin, int64_t end) {
  return t.Slice(begin, end).DeepCopy();
}

struct Batch {
  Tensor images, labels;
};

std::vector<Batch> MakeData(int64_t features) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> pixel(0.f, 1.f);
  std::uniform_int_distribution<int64_t> label(0, 9);
  std::vector<Batch> data;
  for (int s = 0; s < kSteps; ++s) {
    Batch b{Tensor(DT_FLOAT, TensorShape({kBatch, features})),
            Tensor(DT_INT64, TensorShape({kBatch}))};
    for (float& v : b.images.flat<float>()) v = pixel(rng);
    for (int64_t& v : b.labels.flat<int64_t>()) v = label(rng);
    data.push_back(b);
  }
  return data;
}

std::vector<double> InGraphLosses(const std::vector<Batch>& data) {
  Scope root = Scope::NewRoot();
  std::unique_ptr<Optimizer> opt = NewGradientDescentOptimizer({0.5f});
  auto g = BuildReplicatedTrainingGraph(root, ModelKind::kMlp, Options(kBatch),
                                        opt.get(), {"/device:CPU:0", "/device:CPU:0"},
                                        "/device:CPU:0");
  EXPECT_TRUE(g.ok()) << g.status();
  LocalSession session{SessionOptions()};
  EXPECT_TRUE(session.Create(root.ToGraphDef().value()).ok());
  std::vector<Tensor> out;
  EXPECT_TRUE(session.Run({}, {}, {"init"}, &out).ok());
  std::vector<double> losses;
  for (const Batch& b : data) {
    absl::Status s = session.Run({{"images", b.images}, {"labels", b.labels}},
                                 {"loss"}, {"train_op"}, &out);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    losses.push_back(out[0].scalar<float>());
  }
  return losses;
}

tensorflow::GraphDef SyncWorkerGraph(int task) {
  Scope root = Scope::NewRoot();
  SyncReplicasOptions sync;
  sync.replicas_to_aggregate = kWorkers;
  sync.total_num_replicas = kWorkers;
  SyncReplicasOptimizer opt(NewGradientDescentOptimizer({0.5f}), sync);
  auto g = BuildTrainingGraph(root, ModelKind::kMlp,
                              Options(kBatch / kWorkers), &opt);
  EXPECT_TRUE(g.ok()) << g.status();
  tensorflow::GraphDef graph = root.ToGraphDef().value();
  ReplicaDeviceSetterOptions setter;
  setter.worker_device = absl::StrCat("/job:worker/task:", task);
  EXPECT_TRUE(ApplyReplicaDeviceSetter(setter, &graph).ok());
  return graph;
}

TEST(SyncReplicasTest, SameLossesAsInGraphReplication) {
  const std::vector<Batch> data = MakeData(64);
  const std::vector<double> in_graph = InGraphLosses(data);
  ASSERT_EQ(in_graph.size(), static_cast<size_t>(kSteps));

  const std::string spec = absl::StrCat(
      "ps=127.0.0.1:", FreePort(), ";worker=127.0.0.1:", FreePort(),
      ",127.0.0.1:", FreePort());
  std::vector<std::unique_ptr<GrpcServer>> servers;
  std::vector<TaskId> tasks = {{"ps", 0}, {"worker", 0}, {"worker", 1}};
  for (const TaskId& t : tasks) {
    ServerOptions o;
    o.cluster = ParseClusterSpec(spec).value();
    o.task = t;
    o.max_gpus = 0;
    o.inter_op_threads = 4;
    o.intra_op_threads = 1;
    o.wait_for_tasks = absl::Seconds(20);
    o.log = [](absl::string_view) {};
    auto server = GrpcServer::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    servers.push_back(*std::move(server));
  }
  std::vector<std::unique_ptr<Session>> sessions;
  tensorflow::RunOptions run;
  run.set_timeout_in_ms(30000);  // a broken protocol fails, never hangs
  for (int k = 0; k < kWorkers; ++k) {
    SessionOptions options;
    options.config.add_device_filters("/job:ps");
    options.config.add_device_filters(servers[1 + k]->task_name());
    sessions.push_back(NewGrpcSession(servers[1 + k]->address(), options));
    ASSERT_TRUE(sessions[k]->Create(SyncWorkerGraph(k)).ok());
  }
  std::vector<Tensor> none;
  ASSERT_TRUE(sessions[0]->Run({}, {}, {"init"}, &none).ok());
  ASSERT_TRUE(sessions[0]->Run({}, {}, {kSyncChiefInit}, &none).ok());
  ASSERT_TRUE(sessions[0]->Run({}, {}, {kSyncInitTokens}, &none).ok());
  ASSERT_TRUE(sessions[1]->Run({}, {}, {kSyncLocalStepInit}, &none).ok());

  absl::Status updates;
  std::thread updater([&] {
    std::vector<Tensor> step;
    for (int s = 0; s < kSteps && updates.ok(); ++s) {
      updates = sessions[0]->Run(run, {}, {"sync_op_tokens/global_step:0"},
                                 {kSyncOp}, &step, nullptr);
      if (updates.ok() && step[0].scalar<int64_t>() != s + 1) {
        updates = absl::InternalError(absl::StrCat(
            "update ", s, " left the global step at ",
            step[0].scalar<int64_t>()));
      }
    }
  });
  std::vector<std::vector<double>> losses(kWorkers);
  std::vector<absl::Status> status(kWorkers);
  std::vector<std::thread> workers;
  for (int k = 0; k < kWorkers; ++k) {
    workers.emplace_back([&, k] {
      const int64_t half = kBatch / kWorkers;
      std::vector<Tensor> out;
      for (int s = 0; s < kSteps && status[k].ok(); ++s) {
        const Batch& b = data[s];
        status[k] = sessions[k]->Run(
            run,
            {{"images", Rows(b.images, k * half, (k + 1) * half)},
             {"labels", Rows(b.labels, k * half, (k + 1) * half)}},
            {"loss", "sync_token_q_Dequeue:0"}, {"train_op"}, &out, nullptr);
        if (!status[k].ok()) break;
        losses[k].push_back(out[0].scalar<float>());
        // The token is the global step this worker's next gradient is for.
        EXPECT_EQ(out[1].scalar<int64_t>(), s + 1) << "worker " << k;
      }
    });
  }
  for (std::thread& t : workers) t.join();
  updater.join();
  ASSERT_TRUE(updates.ok()) << updates;
  for (int k = 0; k < kWorkers; ++k) {
    ASSERT_TRUE(status[k].ok()) << "worker " << k << ": " << status[k];
  }
  for (int s = 0; s < kSteps; ++s) {
    const double between = (losses[0][s] + losses[1][s]) / 2;
    EXPECT_NEAR(between, in_graph[s], 1e-4 * std::abs(in_graph[s]))
        << "step " << s;
  }
  // The losses moved: the updates were applied.
  EXPECT_LT(in_graph.back(), in_graph.front());
  for (auto& s : sessions) s->Close().IgnoreError();
  sessions.clear();
  for (auto& s : servers) s->Shutdown();
}

}  // namespace
}  // namespace weft
