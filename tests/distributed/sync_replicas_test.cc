// Synchronous between-graph training (SyncReplicasOptimizer) on a cluster
// of in-process gRPC servers, 1 ps + 2 workers, each worker training its own
// copy of the MLP through its own master, is the same computation as
// in-graph replication with 2 towers in one process: over 20 steps on the
// same data (worker k gets tower k's slice of each global batch), the mean
// of the workers' losses follows the in-graph loss within 1e-4 (relative).
// All-reduce (AllReduceOptimizer, no ps) over the same two workers likewise,
// worker 1 starting from other weights that the broadcast from rank 0 replaces;
// and _RingAllReduce itself over three tasks, with chunks smaller than a
// segment, sums exactly, and a task that has gone is named by the others.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/rpc/grpc_server.h"
#include "distributed/rpc/grpc_session.h"
#include "graph/builder/allreduce.h"
#include "graph/builder/device_setter.h"
#include "graph/builder/sync_replicas.h"
#include "graph/models/models.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/local_session.h"
#include "tests/distributed/free_port.h"
#include "tests/distributed/test_server_options.h"

namespace weft {
namespace {

constexpr int kWorkers = 2;
constexpr int64_t kBatch = 32;  // global; each worker takes half
constexpr int kSteps = 20;

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

// One gRPC server per task of `spec`.
std::vector<std::unique_ptr<GrpcServer>> StartServers(
    const std::string& spec, const std::vector<TaskId>& tasks) {
  std::vector<std::unique_ptr<GrpcServer>> servers;
  for (const TaskId& t : tasks) {
    ServerOptions o = testing::TestServerOptions(spec, t.index, t.job);
    o.inter_op_threads = 4;
    o.wait_for_tasks = absl::Seconds(20);
    auto server = GrpcServer::Start(o);
    EXPECT_TRUE(server.ok()) << server.status();
    if (!server.ok()) return {};
    servers.push_back(*std::move(server));
  }
  return servers;
}

std::string WorkerTask(int k) {
  return absl::StrCat("/job:worker/replica:0/task:", k);
}

// Every worker trains kSteps steps in a thread of its own, worker k on the
// k-th slice of each global batch, fetching "loss" then `extra`; `check`
// sees each step's outputs. The workers' losses, or the first error.
absl::StatusOr<std::vector<std::vector<double>>> TrainWorkers(
    const std::vector<std::unique_ptr<Session>>& sessions,
    const std::vector<Batch>& data, const std::vector<std::string>& extra,
    const std::function<void(int, int, const std::vector<Tensor>&)>& check) {
  tensorflow::RunOptions run;
  run.set_timeout_in_ms(30000);  // a broken protocol fails, never hangs
  std::vector<std::string> fetches = {"loss"};
  fetches.insert(fetches.end(), extra.begin(), extra.end());
  const int n = static_cast<int>(sessions.size());
  std::vector<std::vector<double>> losses(n);
  std::vector<absl::Status> status(n);
  std::vector<std::thread> workers;
  for (int k = 0; k < n; ++k) {
    workers.emplace_back([&, k] {
      const int64_t slice = kBatch / n;
      std::vector<Tensor> out;
      for (int s = 0; s < kSteps && status[k].ok(); ++s) {
        const Batch& b = data[s];
        status[k] = sessions[k]->Run(
            run,
            {{"images", Rows(b.images, k * slice, (k + 1) * slice)},
             {"labels", Rows(b.labels, k * slice, (k + 1) * slice)}},
            fetches, {"train_op"}, &out, nullptr);
        if (!status[k].ok()) break;
        losses[k].push_back(out[0].scalar<float>());
        check(k, s, out);
      }
    });
  }
  for (std::thread& t : workers) t.join();
  for (int k = 0; k < n; ++k) {
    if (!status[k].ok()) {
      return absl::Status(status[k].code(), absl::StrCat("worker ", k, ": ",
                                                         status[k].message()));
    }
  }
  return losses;
}

// The mean of the workers' losses follows in-graph replication's.
void ExpectSameLosses(const std::vector<std::vector<double>>& losses,
                      const std::vector<double>& in_graph) {
  for (int s = 0; s < kSteps; ++s) {
    double mean = 0;
    for (const auto& l : losses) mean += l[s] / losses.size();
    EXPECT_NEAR(mean, in_graph[s], 1e-4 * std::abs(in_graph[s])) << "step " << s;
  }
}

TEST(SyncReplicasTest, SameLossesAsInGraphReplication) {
  const std::vector<Batch> data = MakeData(64);
  const std::vector<double> in_graph = InGraphLosses(data);
  ASSERT_EQ(in_graph.size(), static_cast<size_t>(kSteps));

  const std::string spec = absl::StrCat(
      "ps=127.0.0.1:", FreePort(), ";worker=127.0.0.1:", FreePort(),
      ",127.0.0.1:", FreePort());
  std::vector<std::unique_ptr<GrpcServer>> servers =
      StartServers(spec, {{"ps", 0}, {"worker", 0}, {"worker", 1}});
  ASSERT_EQ(servers.size(), 3u);
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
  auto losses = TrainWorkers(
      sessions, data, {"sync_token_q_Dequeue:0"},
      [](int k, int s, const std::vector<Tensor>& out) {
        // The token is the global step this worker's next gradient is for.
        EXPECT_EQ(out[1].scalar<int64_t>(), s + 1) << "worker " << k;
      });
  updater.join();
  ASSERT_TRUE(updates.ok()) << updates;
  ASSERT_TRUE(losses.ok()) << losses.status();
  ExpectSameLosses(*losses, in_graph);
  // The losses moved: the updates were applied.
  EXPECT_LT(in_graph.back(), in_graph.front());
  for (auto& s : sessions) s->Close().IgnoreError();
  sessions.clear();
  for (auto& s : servers) s->Shutdown();
}

// Worker `task`'s graph, its variables initialised from `seed`, with the
// broadcast from rank 0.
tensorflow::GraphDef AllReduceWorkerGraph(int task, int64_t seed = 1) {
  Scope root = Scope::NewRoot();
  AllReduceOptions all;
  all.group_tasks = {WorkerTask(0), WorkerTask(1)};
  all.rank = task;
  AllReduceOptimizer opt(NewGradientDescentOptimizer({0.5f}), all);
  ModelOptions options = Options(kBatch / kWorkers);
  options.seed = seed;
  auto g = BuildTrainingGraph(root, ModelKind::kMlp, options, &opt);
  EXPECT_TRUE(g.ok()) << g.status();
  tensorflow::GraphDef graph = root.ToGraphDef().value();
  for (auto& n : *graph.mutable_node()) n.set_device(WorkerTask(task));
  EXPECT_TRUE(AddBroadcastFromRankZero(all, &graph).ok());
  return graph;
}

TEST(AllReduceTest, SameLossesAsInGraphReplication) {
  const std::vector<Batch> data = MakeData(64);
  const std::vector<double> in_graph = InGraphLosses(data);
  ASSERT_EQ(in_graph.size(), static_cast<size_t>(kSteps));
  const std::string spec = absl::StrCat("worker=127.0.0.1:", FreePort(),
                                        ",127.0.0.1:", FreePort());
  std::vector<std::unique_ptr<GrpcServer>> servers =
      StartServers(spec, {{"worker", 0}, {"worker", 1}});
  ASSERT_EQ(servers.size(), 2u);
  std::vector<std::unique_ptr<Session>> sessions;
  for (int k = 0; k < kWorkers; ++k) {
    SessionOptions options;
    options.config.add_device_filters(servers[k]->task_name());
    sessions.push_back(NewGrpcSession(servers[k]->address(), options));
    // Worker 1 starts from other weights (another seed): the broadcast
    // gives it worker 0's, which in-graph replication starts from.
    ASSERT_TRUE(sessions[k]->Create(AllReduceWorkerGraph(k, k == 0 ? 1 : 99)).ok());
    std::vector<Tensor> none;
    ASSERT_TRUE(sessions[k]->Run({}, {}, {"init"}, &none).ok());
  }
  std::vector<absl::Status> broadcast(kWorkers);
  std::vector<std::thread> threads;
  tensorflow::RunOptions run;
  run.set_timeout_in_ms(30000);
  for (int k = 0; k < kWorkers; ++k) {
    threads.emplace_back([&, k] {
      std::vector<Tensor> none;
      broadcast[k] = sessions[k]->Run(run, {}, {}, {kBroadcastNode}, &none, nullptr);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& b : broadcast) ASSERT_TRUE(b.ok()) << b;
  auto losses = TrainWorkers(sessions, data, {},
                             [](int, int, const std::vector<Tensor>&) {});
  ASSERT_TRUE(losses.ok()) << losses.status();
  ExpectSameLosses(*losses, in_graph);
  for (int k = 0; k < kWorkers; ++k) {
    EXPECT_TRUE(servers[k]->WaitForCollectivesClaimed(absl::Seconds(10)));
  }
  for (auto& s : sessions) s->Close().IgnoreError();
  sessions.clear();
  for (auto& s : servers) s->Shutdown();
}

// x (fed) -> _RingAllReduce(instance, x, 2x) on task `rank` of 3.
tensorflow::GraphDef RingGraph(int rank, int64_t chunk_bytes) {
  tensorflow::GraphDef def;
  const std::string device = WorkerTask(rank);
  auto add = [&](const std::string& name, const std::string& op) {
    tensorflow::NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op(op);
    n->set_device(device);
    return n;
  };
  auto* x = add("x", "Placeholder");
  (*x->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  auto* i = add("instance", "Placeholder");
  (*i->mutable_attr())["dtype"].set_type(tensorflow::DT_INT64);
  auto* two = add("two", "Const");
  (*two->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  Tensor t(DT_FLOAT, TensorShape({}));
  t.flat<float>()[0] = 2;
  TensorToProto(t, (*two->mutable_attr())["value"].mutable_tensor());
  auto* x2 = add("x2", "Mul");
  x2->add_input("x");
  x2->add_input("two");
  (*x2->mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
  auto* r = add("ring", "_RingAllReduce");
  for (const char* in : {"instance", "x", "x2"}) r->add_input(in);
  auto& a = *r->mutable_attr();
  a["T"].set_type(tensorflow::DT_FLOAT);
  a["N"].set_i(2);
  for (int k = 0; k < 3; ++k) a["group_tasks"].mutable_list()->add_s(WorkerTask(k));
  a["rank"].set_i(rank);
  a["final_op"].set_s("Sum");
  a["chunk_bytes"].set_i(chunk_bytes);
  return def;
}

TEST(AllReduceTest, ThreeTasksSumInChunksAndAGoneTaskIsNamed) {
  const std::string spec =
      absl::StrCat("worker=127.0.0.1:", FreePort(), ",127.0.0.1:", FreePort(),
                   ",127.0.0.1:", FreePort());
  std::vector<std::unique_ptr<GrpcServer>> servers =
      StartServers(spec, {{"worker", 0}, {"worker", 1}, {"worker", 2}});
  ASSERT_EQ(servers.size(), 3u);
  std::vector<std::unique_ptr<Session>> sessions;
  for (int k = 0; k < 3; ++k) {
    SessionOptions options;
    options.config.add_device_filters(servers[k]->task_name());
    sessions.push_back(NewGrpcSession(servers[k]->address(), options));
    // 1000 floats over 3 tasks: segments of 333 and 334, in 1 KiB chunks.
    ASSERT_TRUE(sessions[k]->Create(RingGraph(k, 1024)).ok());
  }
  constexpr int64_t kLen = 1000;
  tensorflow::RunOptions run;
  run.set_timeout_in_ms(20000);
  auto step = [&](int k, int64_t instance, std::vector<Tensor>* out) {
    Tensor x(DT_FLOAT, TensorShape({kLen}));
    for (int64_t j = 0; j < kLen; ++j) x.flat<float>()[j] = (k + 1) * 1000 + j;
    Tensor inst(DT_INT64, TensorShape({}));
    inst.flat<int64_t>()[0] = instance;
    return sessions[k]->Run(run, {{"x", x}, {"instance", inst}},
                            {"ring:0", "ring:1"}, {}, out, nullptr);
  };
  for (int64_t instance : {0, 1, 2}) {
    std::vector<std::vector<Tensor>> outs(3);
    std::vector<absl::Status> status(3);
    std::vector<std::thread> threads;
    for (int k = 0; k < 3; ++k) {
      threads.emplace_back([&, k] { status[k] = step(k, instance, &outs[k]); });
    }
    for (std::thread& t : threads) t.join();
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(status[k].ok()) << "task " << k << ": " << status[k];
      for (int64_t j : {int64_t{0}, int64_t{333}, int64_t{667}, kLen - 1}) {
        const float sum = 6000 + 3 * j;  // (1 + 2 + 3) * 1000 + 3j
        EXPECT_EQ(outs[k][0].flat<float>()[j], sum) << "task " << k << " j " << j;
        EXPECT_EQ(outs[k][1].flat<float>()[j], 2 * sum);
      }
    }
  }
  // Task 2 goes away: the others' next all-reduce fails within the step's
  // deadline, naming the rank they could not receive from or the abort.
  sessions[2]->Close().IgnoreError();
  servers[2]->Shutdown();
  std::vector<absl::Status> status(2);
  std::vector<std::thread> threads;
  const absl::Time start = absl::Now();
  for (int k = 0; k < 2; ++k) {
    threads.emplace_back([&, k] {
      std::vector<Tensor> out;
      status[k] = step(k, 3, &out);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  EXPECT_FALSE(status[0].ok());
  EXPECT_NE(status[0].message().find("receiving from rank 2"), std::string::npos)
      << status[0];
  EXPECT_FALSE(status[1].ok()) << "task 1 must not wait on a ring that broke";
  for (int k = 0; k < 2; ++k) sessions[k]->Close().IgnoreError();
  sessions.clear();
  for (int k = 0; k < 2; ++k) servers[k]->Shutdown();
}

}  // namespace
}  // namespace weft
