// What a peer with network access can make a server do, sent as raw
// requests to one task (no Weft master of its own in between): each case
// says what was sent and expects a clean error, nothing done to the host,
// and the service still answering afterwards.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distributed/rpc/grpc_master_client.h"
#include "distributed/rpc/grpc_server.h"
#include "distributed/rpc/grpc_worker_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/master.pb.h"
#include "runtime/core/rendezvous.h"
#include "runtime/core/tensor_proto.h"
#include "tests/distributed/free_port.h"
#include "tests/distributed/test_server_options.h"
#include "tests/distributed/two_workers.h"
#include "tests/runtime/host_dirs.h"

namespace weft {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

tensorflow::NodeDef* AddNode(tensorflow::GraphDef* def, const std::string& name,
                             const std::string& op,
                             const std::vector<std::string>& inputs = {}) {
  auto* n = def->add_node();
  n->set_name(name);
  n->set_op(op);
  for (const std::string& in : inputs) n->add_input(in);
  return n;
}

void AddConst(tensorflow::GraphDef* def, const std::string& name,
              const Tensor& value) {
  auto* n = AddNode(def, name, "Const");
  (*n->mutable_attr())["dtype"].set_type(
      static_cast<tensorflow::DataType>(value.dtype()));
  TensorToProto(value, (*n->mutable_attr())["value"].mutable_tensor());
}

Tensor Strings(const std::vector<std::string>& values) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.flat<std::string>()[i] = values[i];
  return t;
}

// A graph that saves w = [1, 2] under the fed `prefix` (SaveV2 "save"),
// restores it from there (RestoreV2 "restore"), and merges the fed
// `sources` into the prefix (MergeV2Checkpoints "merge").
tensorflow::GraphDef FileGraph() {
  tensorflow::GraphDef def;
  auto* prefix = AddNode(&def, "prefix", "Placeholder");
  (*prefix->mutable_attr())["dtype"].set_type(tensorflow::DT_STRING);
  auto* sources = AddNode(&def, "sources", "Placeholder");
  (*sources->mutable_attr())["dtype"].set_type(tensorflow::DT_STRING);
  AddConst(&def, "names", Strings({"w"}));
  AddConst(&def, "slices", Strings({""}));
  Tensor w(DT_FLOAT, TensorShape({2}));
  w.flat<float>()[0] = 1;
  w.flat<float>()[1] = 2;
  AddConst(&def, "w", w);
  auto* save = AddNode(&def, "save", "SaveV2", {"prefix", "names", "slices", "w"});
  (*save->mutable_attr())["dtypes"].mutable_list()->add_type(tensorflow::DT_FLOAT);
  auto* restore = AddNode(&def, "restore", "RestoreV2", {"prefix", "names", "slices"});
  (*restore->mutable_attr())["dtypes"].mutable_list()->add_type(tensorflow::DT_FLOAT);
  auto* merge = AddNode(&def, "merge", "MergeV2Checkpoints", {"sources", "prefix"});
  (*merge->mutable_attr())["delete_old_dirs"].set_b(false);
  return def;
}

class HostilePeerTest : public ::testing::Test {
 protected:
  HostilePeerTest() : root_(dirs_.root), outside_(dirs_.outside) {}
  void TearDown() override { server_.reset(); }

  void StartServer(std::vector<std::string> file_roots,
                   tensorflow::GraphDef graph = FileGraph()) {
    server_.reset();
    ServerOptions o = testing::TestServerOptions(
        absl::StrCat("worker=127.0.0.1:", FreePort()), 0);
    o.file_roots = std::move(file_roots);
    auto server = GrpcServer::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    master_ = std::make_unique<GrpcMasterClient>(server_->address());
    tensorflow::CreateSessionRequest req;
    *req.mutable_graph_def() = std::move(graph);
    tensorflow::CreateSessionResponse resp;
    ASSERT_TRUE(master_->Call("CreateSession", req, &resp, absl::Seconds(30)).ok());
    handle_ = resp.session_handle();
  }

  // Runs `node` (a target, or a fetch when `fetch`) with the prefix fed.
  absl::Status Run(const std::string& node, const std::string& prefix,
                   const std::vector<std::string>& sources = {"unused"},
                   bool fetch = false) {
    tensorflow::RunStepRequest run;
    run.set_session_handle(handle_);
    auto* feed = run.add_feed();
    feed->set_name("prefix");
    Tensor p(DT_STRING, TensorShape({}));
    p.flat<std::string>()[0] = prefix;
    TensorToProto(p, feed->mutable_tensor());
    if (node == "merge") {
      auto* s = run.add_feed();
      s->set_name("sources");
      TensorToProto(Strings(sources), s->mutable_tensor());
    }
    if (fetch) {
      run.add_fetch(node);
    } else {
      run.add_target(node);
    }
    tensorflow::RunStepResponse resp;
    return master_->Call("RunStep", run, &resp, absl::Seconds(30));
  }

  bool Exists(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
  }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  testing::HostDirs dirs_;
  const std::string root_, outside_;
  std::unique_ptr<GrpcServer> server_;
  std::unique_ptr<GrpcMasterClient> master_;
  std::string handle_;
};

// Sent: SaveV2 and RestoreV2 with a prefix anywhere on the host, to a server
// started without --file-root. Expected: PERMISSION_DENIED naming the node,
// nothing written.
TEST_F(HostilePeerTest, AServerWithoutFileRootsOpensNoFile) {
  StartServer({});
  absl::Status s = Run("save", root_ + "/ckpt");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("save"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("--file-root"));
  EXPECT_FALSE(Exists(root_ + "/ckpt.index"));
  s = Run("restore", outside_ + "/victim", {}, /*fetch=*/true);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
}

// Sent: prefixes that climb out of the root ('..'), go through a link to
// outside it, are relative to the server's directory, hold a NUL byte
// before the name of an existing file, or name files outside to merge
// (which moves and deletes them). Expected: each refused, the files
// outside untouched, and the root still usable.
TEST_F(HostilePeerTest, PathsOutsideTheRootsAreRefusedInsideThemWork) {
  StartServer({root_});
  ASSERT_EQ(symlink(outside_.c_str(), (root_ + "/link").c_str()), 0);
  for (const std::string& prefix :
       {root_ + "/../outside/ckpt", root_ + "/link/ckpt",
        std::string("relative/ckpt"), outside_ + "/new_dir/ckpt"}) {
    absl::Status s = Run("save", prefix);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << prefix << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("outside this server's file roots"));
  }
  EXPECT_FALSE(Exists(outside_ + "/ckpt.index"));
  EXPECT_FALSE(Exists(outside_ + "/new_dir"));

  // A NUL byte: inside the root as written, but C would cut it before
  // "\0" and write outside_/victim.index; never a path.
  absl::Status nul = Run("save", outside_ + "/victim" + std::string(1, '\0') +
                                     "/../../root/x");
  EXPECT_EQ(nul.code(), absl::StatusCode::kInvalidArgument) << nul;
  EXPECT_THAT(std::string(nul.message()), HasSubstr("NUL"));

  // Whether a checkpoint exists outside is not told.
  absl::Status exists = Run("restore", outside_ + "/victim", {}, true);
  absl::Status missing = Run("restore", outside_ + "/nothing", {}, true);
  EXPECT_EQ(exists.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(exists.message(), missing.message());

  // Merging files from outside into the root would move them in.
  absl::Status merge = Run("merge", root_ + "/merged", {outside_ + "/victim"});
  EXPECT_EQ(merge.code(), absl::StatusCode::kPermissionDenied) << merge;
  EXPECT_THAT(std::string(merge.message()), HasSubstr("merge"));
  EXPECT_EQ(Read(outside_ + "/victim"), "keep me");

  // Inside the root (new directories included) all of it works.
  ASSERT_TRUE(Run("save", root_ + "/a/b/ckpt").ok());
  EXPECT_TRUE(Exists(root_ + "/a/b/ckpt.index"));
  EXPECT_TRUE(Run("restore", root_ + "/a/b/ckpt", {}, true).ok());
}

// q: a FIFO queue of floats; "enqueue" puts the fed x there, "dequeue"
// takes one (waiting while it is empty), "size" counts them.
tensorflow::GraphDef QueueGraph() {
  tensorflow::GraphDef def;
  auto float_list = [](tensorflow::NodeDef* n, const char* attr) {
    (*n->mutable_attr())[attr].mutable_list()->add_type(tensorflow::DT_FLOAT);
  };
  float_list(AddNode(&def, "q", "FIFOQueueV2"), "component_types");
  auto* x = AddNode(&def, "x", "Placeholder");
  (*x->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  float_list(AddNode(&def, "enqueue", "QueueEnqueueV2", {"q", "x"}), "Tcomponents");
  float_list(AddNode(&def, "dequeue", "QueueDequeueV2", {"q"}), "component_types");
  AddNode(&def, "size", "QueueSizeV2", {"q"});
  return def;
}

// Sent: a RunStep that waits (a dequeue from an empty queue) with a 300 ms
// deadline, which the client then gives up on. Expected: the step is
// aborted on the task when the call ends, so it does not take the item
// enqueued afterwards.
TEST_F(HostilePeerTest, AStepWhoseClientGaveUpIsAborted) {
  StartServer({}, QueueGraph());
  tensorflow::RunStepRequest dequeue;
  dequeue.set_session_handle(handle_);
  dequeue.add_fetch("dequeue");
  tensorflow::RunStepResponse ignored;
  absl::Status s = master_->Call("RunStep", dequeue, &ignored, absl::Milliseconds(300));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  absl::SleepFor(absl::Milliseconds(300));  // the abort reaches the task

  tensorflow::RunStepRequest enqueue;
  enqueue.set_session_handle(handle_);
  auto* feed = enqueue.add_feed();
  feed->set_name("x");
  TensorToProto(Tensor::Scalar<float>(5), feed->mutable_tensor());
  enqueue.add_target("enqueue");
  ASSERT_TRUE(master_->Call("RunStep", enqueue, &ignored, absl::Seconds(30)).ok());
  tensorflow::RunStepRequest size;
  size.set_session_handle(handle_);
  size.add_fetch("size");
  tensorflow::RunStepResponse counted;
  ASSERT_TRUE(master_->Call("RunStep", size, &counted, absl::Seconds(30)).ok());
  ASSERT_EQ(counted.tensor_size(), 1);
  EXPECT_EQ(TensorFromProto(counted.tensor(0).tensor()).value().scalar<int32_t>(), 1)
      << "the abandoned dequeue took the item";
  // And a dequeue that waits for its answer gets it.
  tensorflow::RunStepResponse got;
  ASSERT_TRUE(master_->Call("RunStep", dequeue, &got, absl::Seconds(30)).ok());
  ASSERT_EQ(got.tensor_size(), 1);
  EXPECT_EQ(TensorFromProto(got.tensor(0).tensor()).value().scalar<float>(), 5.0f);

  // The same through a callable (Session.make_callable).
  tensorflow::MakeCallableRequest make;
  make.set_session_handle(handle_);
  make.mutable_options()->add_fetch("dequeue");
  tensorflow::MakeCallableResponse made;
  ASSERT_TRUE(master_->Call("MakeCallable", make, &made, absl::Seconds(30)).ok());
  tensorflow::RunCallableRequest call;
  call.set_session_handle(handle_);
  call.set_handle(made.handle());
  tensorflow::RunCallableResponse called;
  s = master_->Call("RunCallable", call, &called, absl::Milliseconds(300));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  absl::SleepFor(absl::Milliseconds(300));
  ASSERT_TRUE(master_->Call("RunStep", enqueue, &ignored, absl::Seconds(30)).ok());
  ASSERT_TRUE(master_->Call("RunStep", size, &counted, absl::Seconds(30)).ok());
  ASSERT_EQ(counted.tensor_size(), 1);
  EXPECT_EQ(TensorFromProto(counted.tensor(0).tensor()).value().scalar<int32_t>(), 1)
      << "the abandoned callable's dequeue took the item";
}

// Sent: an 8 MiB control call (CloseSession, which carries a handle).
// Expected: RESOURCE_EXHAUSTED naming the method and the limit, before the
// request is parsed; the server serves on.
TEST_F(HostilePeerTest, ALargeControlCallIsRefusedBeforeItIsParsed) {
  StartServer({root_});
  tensorflow::CloseSessionRequest close;
  close.set_session_handle(std::string(size_t{8} << 20, 'x'));
  tensorflow::CloseSessionResponse closed;
  absl::Status s = master_->Call("CloseSession", close, &closed, absl::Seconds(30));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("CloseSession"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("at most 4194304"));
  EXPECT_TRUE(Run("save", root_ + "/after").ok());
}

// Sent: 20 CreateSession calls to a master whose cluster has a task that
// never comes up, then a RegisterGraph to the same server's worker and a
// CloseSession to its master. Expected: the worker call and the master
// call answer at once; at most 8 CreateSessions wait, the rest are told to
// come back, naming the task that does not answer.
TEST(ControlPoolTest, SessionsWaitingForATaskDoNotStarveOtherCalls) {
  const std::string cluster = absl::StrCat(
      "worker=127.0.0.1:", FreePort(), ",127.0.0.1:", FreePort());
  ServerOptions o = testing::TestServerOptions(cluster, 0);
  o.wait_for_tasks = absl::Seconds(8);
  auto server = GrpcServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status();
  GrpcMasterClient master((*server)->address());

  constexpr int kCalls = 20;
  std::vector<absl::Status> created(kCalls);
  std::vector<std::thread> clients;
  for (int i = 0; i < kCalls; ++i) {
    clients.emplace_back([&, i] {
      GrpcMasterClient own((*server)->address());
      tensorflow::CreateSessionRequest req;
      tensorflow::CreateSessionResponse resp;
      created[i] = own.Call("CreateSession", req, &resp, absl::Seconds(40));
    });
  }
  absl::SleepFor(absl::Seconds(1));  // they are waiting now

  GrpcWorkerCache cache(o.cluster, "/job:client/replica:0/task:0", nullptr);
  WorkerInterface* worker = cache.GetWorker("/job:worker/replica:0/task:0").value();
  tensorflow::RegisterGraphRequest reg;
  AddConst(reg.mutable_graph_def(), "c", Tensor::Scalar<float>(1));
  reg.mutable_graph_def()->mutable_node(0)->set_device(
      "/job:worker/replica:0/task:0/device:CPU:0");
  tensorflow::RegisterGraphResponse reg_resp;
  const absl::Time t0 = absl::Now();
  absl::Status reg_status =
      testing::Call(worker, &WorkerInterface::RegisterGraphAsync, reg, &reg_resp);
  EXPECT_TRUE(reg_status.ok()) << reg_status;
  EXPECT_LT(absl::Now() - t0, absl::Seconds(5));

  // A master call that waits for nothing (closing an unknown session).
  const absl::Time t1 = absl::Now();
  tensorflow::CloseSessionRequest close;
  close.set_session_handle("0123456789abcdef");
  tensorflow::CloseSessionResponse closed;
  absl::Status c = master.Call("CloseSession", close, &closed, absl::Seconds(30));
  EXPECT_NE(c.code(), absl::StatusCode::kDeadlineExceeded) << c;
  EXPECT_LT(absl::Now() - t1, absl::Seconds(5));

  for (std::thread& t : clients) t.join();
  int told_to_come_back = 0;
  for (const absl::Status& s : created) {
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("/job:worker/replica:0/task:1"));
    if (absl::StrContains(s.message(), "other sessions already wait")) {
      ++told_to_come_back;
    }
  }
  EXPECT_EQ(told_to_come_back, kCalls - 8);
}

// Sent: a RegisterGraph of 100-odd bytes whose Const claims 256 MiB (one
// value fills the shape), without a session handle, to a task limited to
// 64 MiB. Expected: refused, naming the node, and the task serves on.
TEST(HostileSizesTest, AConstantPastTheMemoryLimitIsRefusedAtRegistration) {
  ServerOptions o = testing::TestServerOptions(
      absl::StrCat("worker=127.0.0.1:", FreePort()), 0);
  o.memory_limit_bytes = int64_t{64} << 20;
  auto server = GrpcServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status();
  GrpcWorkerCache cache(o.cluster, "/job:client/replica:0/task:0", nullptr);
  WorkerInterface* worker = cache.GetWorker("/job:worker/replica:0/task:0").value();
  auto register_const = [&](int64_t elements) {
    tensorflow::RegisterGraphRequest reg;
    auto* c = AddNode(reg.mutable_graph_def(), "big", "Const");
    c->set_device("/job:worker/replica:0/task:0/device:CPU:0");
    (*c->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
    tensorflow::TensorProto* value = (*c->mutable_attr())["value"].mutable_tensor();
    value->set_dtype(tensorflow::DT_FLOAT);
    value->mutable_tensor_shape()->add_dim()->set_size(elements);
    value->add_float_val(1.0f);
    tensorflow::RegisterGraphResponse resp;
    return testing::Call(worker, &WorkerInterface::RegisterGraphAsync, reg, &resp);
  };
  absl::Status big = register_const(int64_t{64} << 20);  // 256 MiB
  EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted) << big;
  EXPECT_THAT(std::string(big.message()), HasSubstr("big"));
  EXPECT_TRUE(register_const(1024).ok());
}

// Sent: 5,000 RecvTensors over gRPC, each for a step that never runs on the
// task (distinct step ids, a key naming the task's device and incarnation
// as GetStatus tells them). Expected: the task still runs a step meanwhile,
// past its bound the oldest calls are answered at once, and once they
// expire every call has been answered: nothing waits for good.
TEST(HostileRecvTensorTest, AFloodOfRecvTensorsForStepsThatNeverRunIsBounded) {
  ServerOptions o = testing::TestServerOptions(
      absl::StrCat("worker=127.0.0.1:", FreePort()), 0);
  o.step_limits.unclaimed_ttl = absl::Seconds(2);
  auto server = GrpcServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status();
  GrpcWorkerCache cache(o.cluster, "/job:client/replica:0/task:0", nullptr);
  WorkerInterface* worker = cache.GetWorker("/job:worker/replica:0/task:0").value();
  tensorflow::GetStatusRequest status_req;
  tensorflow::GetStatusResponse status;
  ASSERT_TRUE(testing::Call(worker, &WorkerInterface::GetStatusAsync, status_req,
                            &status).ok());
  const tensorflow::DeviceAttributes& cpu = status.device_attributes(0);

  constexpr int kCalls = 5000;
  std::vector<tensorflow::RecvTensorRequest> reqs(kCalls);
  std::vector<tensorflow::RecvTensorResponse> resps(kCalls);
  absl::Mutex mu;
  int answered = 0;
  for (int i = 0; i < kCalls; ++i) {
    reqs[i].set_step_id(7000000 + i);
    reqs[i].set_rendezvous_key(
        RendezvousKey{cpu.name(), cpu.incarnation(), cpu.name(), "never:0"}.ToString());
    worker->RecvTensorAsync(&reqs[i], &resps[i], [&](absl::Status) {
      absl::MutexLock lock(&mu);
      ++answered;
    });
  }
  {
    // Past the bound of 4,096 waiting ones, the oldest are answered.
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(mu.AwaitWithTimeout(
        absl::Condition(+[](int* a) { return *a >= kCalls - 4096; }, &answered),
        absl::Seconds(30)));
  }
  // The task's own steps run meanwhile.
  GrpcMasterClient master((*server)->address());
  tensorflow::CreateSessionRequest create;
  AddConst(create.mutable_graph_def(), "c", Tensor::Scalar<float>(3));
  tensorflow::CreateSessionResponse created;
  ASSERT_TRUE(master.Call("CreateSession", create, &created, absl::Seconds(30)).ok());
  tensorflow::RunStepRequest run;
  run.set_session_handle(created.session_handle());
  run.add_fetch("c");
  tensorflow::RunStepResponse ran;
  absl::Status step = master.Call("RunStep", run, &ran, absl::Seconds(30));
  EXPECT_TRUE(step.ok()) << step;
  // And every call is answered once the rest expire.
  absl::MutexLock lock(&mu);
  EXPECT_TRUE(mu.AwaitWithTimeout(
      absl::Condition(+[](int* a) { return *a == kCalls; }, &answered),
      absl::Seconds(30)));
}

}  // namespace
}  // namespace weft
