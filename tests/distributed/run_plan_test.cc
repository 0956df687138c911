// The master's plan for one Run signature, run by two in-process workers:
// the numbers must equal a local session's for the same graph.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "distributed/run_plan.h"
#include "gmock/gmock.h"
#include "graph/graph_def_loader.h"
#include "gtest/gtest.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/session.h"
#include "tests/distributed/two_workers.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using ::testing::HasSubstr;
using testing::Attr;
using testing::Call;
using testing::GraphDefBuilder;

// x -> y = x + c on task 1 -> z = y * y (unconstrained: the client's task).
tensorflow::GraphDef Sample() {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT, Attr::Shape({2}))
      .ConstF("c", 1.5f)
      .Op("y", "AddV2", {"x", "c"}, {{"T", DT_FLOAT}})
      .Op("z", "Mul", {"y", "y"}, {{"T", DT_FLOAT}});
  tensorflow::GraphDef def = b.Build();
  for (tensorflow::NodeDef& n : *def.mutable_node()) {
    if (n.name() == "c" || n.name() == "y") n.set_device("/job:worker/task:1");
  }
  return def;
}

Tensor X() {
  Tensor x(DT_FLOAT, TensorShape({2}));
  x.flat<float>()[0] = 2.0f;
  x.flat<float>()[1] = -4.0f;
  return x;
}

class RunPlanTest : public testing::TwoWorkersTest {
 protected:
  ClusterPlacement Where() {
    ClusterPlacement where;
    for (auto& w : workers_) {
      tensorflow::GetStatusRequest req;
      tensorflow::GetStatusResponse resp;
      EXPECT_TRUE(Call(w.get(), &WorkerInterface::GetStatusAsync, req, &resp).ok());
      for (const auto& d : resp.device_attributes()) where.devices.push_back(d);
    }
    where.client_device = dev(0);
    return where;
  }

  // Registers the plan's partitions and runs one step; returns the fetches.
  std::vector<Tensor> Run(const RunPlan& plan, int64_t step_id,
                          const std::vector<Tensor>& feeds) {
    std::map<std::string, WorkerInterface*> by_task;
    for (auto& w : workers_) by_task[w->task()] = w.get();
    struct Part {
      WorkerInterface* worker;
      tensorflow::RunGraphRequest request;
      tensorflow::RunGraphResponse response;
      absl::Notification done;
      absl::Status status;
    };
    std::vector<std::unique_ptr<Part>> parts;
    for (const auto& [task, def] : plan.partitions) {
      auto part = std::make_unique<Part>();
      part->worker = by_task.at(task);
      tensorflow::RegisterGraphRequest reg;
      *reg.mutable_graph_def() = def;
      tensorflow::RegisterGraphResponse handle;
      absl::Status s =
          Call(part->worker, &WorkerInterface::RegisterGraphAsync, reg, &handle);
      EXPECT_TRUE(s.ok()) << s;
      part->request.set_graph_handle(handle.graph_handle());
      part->request.set_step_id(step_id);
      if (task == plan.client_task) {
        for (size_t i = 0; i < feeds.size(); ++i) {
          auto* send = part->request.add_send();
          send->set_name(plan.feed_keys[i]);
          TensorToProto(feeds[i], send->mutable_tensor());
        }
        for (const std::string& key : plan.fetch_keys) {
          part->request.add_recv_key(key);
        }
      }
      parts.push_back(std::move(part));
    }
    for (auto& p : parts) {
      p->worker->RunGraphAsync(&p->request, &p->response,
                               [q = p.get()](absl::Status s) {
                                 q->status = s;
                                 q->done.Notify();
                               });
    }
    std::map<std::string, Tensor> by_key;
    for (auto& p : parts) {
      EXPECT_TRUE(p->done.WaitForNotificationWithTimeout(testing::kCallWait));
      EXPECT_TRUE(p->status.ok()) << p->status;
      for (const auto& r : p->response.recv()) {
        by_key[r.name()] = TensorFromProto(r.tensor()).value();
      }
    }
    std::vector<Tensor> out;
    for (const std::string& key : plan.fetch_keys) out.push_back(by_key[key]);
    return out;
  }
};

TEST_F(RunPlanTest, PartitionsPerTaskGiveTheLocalSessionsNumbers) {
  auto full = ConvertGraphDefToGraph(Sample(), GlobalOpRegistry());
  ASSERT_TRUE(full.ok()) << full.status();
  auto sig = RunSignature::Make({"x"}, {"z", "y", "z"}, {});
  ASSERT_TRUE(sig.ok());
  auto plan = PlanRun(**full, *sig, Where());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->client_task, "/job:worker/replica:0/task:0");
  ASSERT_EQ(plan->partitions.size(), 2u);
  // y's value crosses from task 1 to task 0 once, though z reads it twice.
  int recvs_on_0 = 0;
  for (const auto& n : plan->partitions.at(workers_[0]->task()).node()) {
    if (n.op() == "_Recv" && n.attr().at("client_terminated").b() == false) {
      ++recvs_on_0;
    }
  }
  EXPECT_EQ(recvs_on_0, 1);
  EXPECT_EQ(plan->fetch_keys[0], plan->fetch_keys[2]);

  std::vector<Tensor> got = Run(*plan, 11, {X()});
  ASSERT_EQ(got.size(), 3u);

  // The same graph in a local session (device requests softened: it has no
  // task 1).
  tensorflow::GraphDef local_def = Sample();
  for (auto& n : *local_def.mutable_node()) n.clear_device();
  std::unique_ptr<Session> local = NewLocalSession(SessionOptions());
  ASSERT_TRUE(local->Create(local_def).ok());
  std::vector<Tensor> want;
  ASSERT_TRUE(local->Run({{"x", X()}}, {"z", "y", "z"}, {}, &want).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(got[i].IsInitialized()) << i;
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(got[i].flat<float>()[k], want[i].flat<float>()[k]) << i;
    }
  }
  EXPECT_EQ(got[0].flat<float>()[0], 3.5f * 3.5f);
}

TEST_F(RunPlanTest, ADeviceNoTaskHasIsNamed) {
  tensorflow::GraphDef def = Sample();
  for (auto& n : *def.mutable_node()) {
    if (n.name() == "y") n.set_device("/job:ps/task:0");
  }
  auto full = ConvertGraphDefToGraph(def, GlobalOpRegistry());
  ASSERT_TRUE(full.ok());
  auto plan = PlanRun(**full, *RunSignature::Make({"x"}, {"z"}, {}), Where());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("/job:ps/task:0"));

  ClusterPlacement where = Where();
  where.client_device = "/job:chief/replica:0/task:0/device:CPU:0";
  auto full2 = ConvertGraphDefToGraph(Sample(), GlobalOpRegistry());
  plan = PlanRun(**full2, *RunSignature::Make({"x"}, {"z"}, {}), where);
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("client device '/job:chief/replica:0/task:0/device:CPU:0'"));
}

}  // namespace
}  // namespace weft
