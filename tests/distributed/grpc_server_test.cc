// Servers over real loopback sockets: a step across two tasks' gRPC
// servers, and the inputs and failures a server must survive with a clean
// error (a task that is not running, garbage bytes, unknown methods, an
// oversize message, a port in use, a non-loopback address).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/client_session.h"
#include "distributed/rpc/grpc_coding.h"
#include "distributed/rpc/grpc_master_client.h"
#include "distributed/rpc/grpc_security.h"
#include "distributed/rpc/grpc_server.h"
#include "distributed/rpc/grpc_session.h"
#include "distributed/rpc/local_socket.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/master.pb.h"
#include "runtime/core/tensor_proto.h"
#include "tests/distributed/free_port.h"
#include "tests/distributed/test_server_options.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

ServerOptions Options(const std::string& cluster, int task) {
  return testing::TestServerOptions(cluster, task);
}

// x (fed) -> y = x + c with c and y on task 1 -> z = -y on task 0.
tensorflow::GraphDef Sample() {
  tensorflow::GraphDef def;
  auto* x = def.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  auto* c = def.add_node();
  c->set_name("c");
  c->set_op("Const");
  c->set_device("/job:worker/task:1");
  (*c->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  Tensor one(DT_FLOAT, TensorShape({}));
  one.flat<float>()[0] = 1.5f;
  TensorToProto(one, (*c->mutable_attr())["value"].mutable_tensor());
  auto* y = def.add_node();
  y->set_name("y");
  y->set_op("AddV2");
  y->set_device("/job:worker/task:1");
  y->add_input("x");
  y->add_input("c");
  (*y->mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
  auto* z = def.add_node();
  z->set_name("z");
  z->set_op("Neg");
  z->add_input("y");
  (*z->mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
  return def;
}

tensorflow::NodeDef* AddNode(tensorflow::GraphDef* def, const std::string& name,
                             const std::string& op, const std::string& device,
                             const std::vector<std::string>& inputs) {
  auto* n = def->add_node();
  n->set_name(name);
  n->set_op(op);
  n->set_device(device);
  for (const std::string& in : inputs) n->add_input(in);
  return n;
}

// x (fed, float [3,2]) -> l = TensorListFromTensor(x) on task 1 -> stacked =
// TensorListStack(l) on task 0: a DT_VARIANT tensor crosses the tasks.
tensorflow::GraphDef ListAcrossTasks() {
  tensorflow::GraphDef def;
  auto set_type = [](tensorflow::NodeDef* n, const char* attr,
                     tensorflow::DataType t) {
    (*n->mutable_attr())[attr].set_type(t);
  };
  set_type(AddNode(&def, "x", "Placeholder", "", {}), "dtype",
           tensorflow::DT_FLOAT);
  auto* shape = AddNode(&def, "shape", "Const", "", {});
  set_type(shape, "dtype", tensorflow::DT_INT32);
  Tensor two(DT_INT32, TensorShape({1}));
  two.flat<int32_t>()[0] = 2;
  TensorToProto(two, (*shape->mutable_attr())["value"].mutable_tensor());
  auto* l = AddNode(&def, "l", "TensorListFromTensor", "/job:worker/task:1",
                    {"x", "shape"});
  set_type(l, "element_dtype", tensorflow::DT_FLOAT);
  set_type(l, "shape_type", tensorflow::DT_INT32);
  auto* stacked = AddNode(&def, "stacked", "TensorListStack",
                          "/job:worker/task:0", {"l", "shape"});
  set_type(stacked, "element_dtype", tensorflow::DT_FLOAT);
  return def;
}

tensorflow::TensorProto Floats(int64_t n, float value) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.flat<float>()[i] = value;
  tensorflow::TensorProto p;
  TensorToProto(t, &p);
  return p;
}

class GrpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ports_ = {FreePort(), FreePort()};
    cluster_ = absl::StrCat("worker=127.0.0.1:", ports_[0], ",127.0.0.1:",
                            ports_[1]);
    for (int t = 0; t < 2; ++t) {
      ServerOptions options = Options(cluster_, t);
      options.local_socket = LocalSockets();
      auto server = GrpcServer::Start(options);
      ASSERT_TRUE(server.ok()) << server.status();
      servers_.push_back(*std::move(server));
    }
    master_ = std::make_unique<GrpcMasterClient>(servers_[0]->address());
  }

  // Whether the tasks reach each other over their local sockets.
  virtual bool LocalSockets() const { return true; }

  absl::StatusOr<std::string> CreateSession(
      tensorflow::GraphDef graph = Sample()) {
    tensorflow::CreateSessionRequest req;
    *req.mutable_graph_def() = std::move(graph);
    tensorflow::CreateSessionResponse resp;
    absl::Status s = master_->Call("CreateSession", req, &resp, absl::Seconds(30));
    if (!s.ok()) return s;
    return resp.session_handle();
  }

  std::vector<int> ports_;
  std::string cluster_;
  std::vector<std::unique_ptr<GrpcServer>> servers_;
  std::unique_ptr<GrpcMasterClient> master_;
};

// The same over TCP alone (weft server --no-local-socket).
class GrpcServerTcpTest : public GrpcServerTest {
 protected:
  bool LocalSockets() const override { return false; }
};

void ExpectAStepSpansTwoServers(GrpcMasterClient* master_,
                                absl::StatusOr<std::string> handle);

TEST_F(GrpcServerTest, AStepSpansTwoServers) {
  ExpectAStepSpansTwoServers(master_.get(), CreateSession());
}

TEST_F(GrpcServerTcpTest, AStepSpansTwoServers) {
  EXPECT_EQ(servers_[1]->local_target(), "");
  ExpectAStepSpansTwoServers(master_.get(), CreateSession());
}

void ExpectAStepSpansTwoServers(GrpcMasterClient* master_,
                                absl::StatusOr<std::string> handle) {
  ASSERT_TRUE(handle.ok()) << handle.status();
  tensorflow::RunStepRequest run;
  run.set_session_handle(*handle);
  auto* feed = run.add_feed();
  feed->set_name("x");
  *feed->mutable_tensor() = Floats(3, 2.0f);
  run.add_fetch("z");
  run.add_fetch("y");
  for (int step = 0; step < 3; ++step) {
    tensorflow::RunStepResponse resp;
    ASSERT_TRUE(master_->Call("RunStep", run, &resp, absl::Seconds(30)).ok());
    ASSERT_EQ(resp.tensor_size(), 2);
    Tensor z = TensorFromProto(resp.tensor(0).tensor()).value();
    Tensor y = TensorFromProto(resp.tensor(1).tensor()).value();
    ASSERT_EQ(z.NumElements(), 3);
    EXPECT_EQ(z.flat<float>()[2], -3.5f);
    EXPECT_EQ(y.flat<float>()[0], 3.5f);
  }
  tensorflow::ListDevicesRequest list;
  list.set_session_handle(*handle);
  tensorflow::ListDevicesResponse devices;
  ASSERT_TRUE(master_->Call("ListDevices", list, &devices).ok());
  EXPECT_EQ(devices.local_device_size(), 1);
  EXPECT_EQ(devices.remote_device_size(), 1);
  tensorflow::CloseSessionRequest close;
  close.set_session_handle(*handle);
  tensorflow::CloseSessionResponse closed;
  EXPECT_TRUE(master_->Call("CloseSession", close, &closed).ok());
}

// The task's master in-process (GrpcServer::master()) and over gRPC run
// the same session code with the same answers; once the server has shut
// down the in-process master refuses calls, naming the task.
TEST_F(GrpcServerTest, TheMasterInProcessAnswersAsOverGrpc) {
  std::vector<std::vector<float>> got;
  for (bool in_process : {true, false}) {
    std::unique_ptr<Session> s =
        in_process ? NewClientSession(servers_[0]->master(), SessionOptions())
                   : NewGrpcSession(servers_[0]->address(), SessionOptions());
    ASSERT_TRUE(s->Create(Sample()).ok());
    Tensor x(DT_FLOAT, TensorShape({3}));
    for (int i = 0; i < 3; ++i) x.flat<float>()[i] = 1.0f + i;
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"x", x}}, {"z"}, {}, &out).ok());
    got.emplace_back(out[0].flat<float>().data(),
                     out[0].flat<float>().data() + 3);
    EXPECT_TRUE(s->Close().ok());
  }
  EXPECT_EQ(got[0], got[1]);
  EXPECT_EQ(got[0][0], -2.5f);

  std::shared_ptr<MasterInterface> master = servers_[0]->master();
  EXPECT_EQ(master->name(),
            "the in-process master of /job:worker/replica:0/task:0");
  servers_[0]->Shutdown();
  tensorflow::ListDevicesRequest req;
  tensorflow::ListDevicesResponse resp;
  absl::Status st = master->ListDevices({}, req, &resp);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_NE(st.message().find("/job:worker/replica:0/task:0 has shut down"),
            absl::string_view::npos)
      << st;
}

// ClusterSpec propagation: two servers, each started alone as
// /job:local/task:0, serve a session whose ConfigProto names them
// /job:worker/task:0 and 1 (Sample() places c and y on task 1). Step
// statistics name the devices so; a cluster_def without the master, or
// naming this task twice, is refused naming the address.
TEST(GrpcServerPropagationTest, ASessionRunsOverTheClusterItsConfigNames) {
  std::vector<std::unique_ptr<GrpcServer>> servers;
  std::vector<std::string> addresses;
  for (int t = 0; t < 2; ++t) {
    const std::string address = absl::StrCat("127.0.0.1:", FreePort());
    ServerOptions options =
        testing::TestServerOptions(absl::StrCat("local=", address), 0, "local");
    auto server = GrpcServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    servers.push_back(*std::move(server));
    addresses.push_back(address);
  }
  GrpcMasterClient master(servers[0]->address());
  auto create = [&](const std::vector<std::string>& tasks,
                    tensorflow::CreateSessionResponse* resp) {
    tensorflow::CreateSessionRequest req;
    *req.mutable_graph_def() = Sample();
    req.set_target("grpc://" + addresses[0]);
    auto* job = req.mutable_config()->mutable_cluster_def()->add_job();
    job->set_name("worker");
    for (size_t i = 0; i < tasks.size(); ++i) (*job->mutable_tasks())[i] = tasks[i];
    return master.Call("CreateSession", req, resp, absl::Seconds(30));
  };
  tensorflow::CreateSessionResponse created;
  ASSERT_TRUE(create(addresses, &created).ok());
  tensorflow::RunStepRequest run;
  run.set_session_handle(created.session_handle());
  auto* feed = run.add_feed();
  feed->set_name("x");
  *feed->mutable_tensor() = Floats(3, 2.0f);
  run.add_fetch("z");
  run.mutable_options()->set_trace_level(tensorflow::RunOptions::FULL_TRACE);
  tensorflow::RunStepResponse resp;
  ASSERT_TRUE(master.Call("RunStep", run, &resp, absl::Seconds(30)).ok());
  Tensor z = TensorFromProto(resp.tensor(0).tensor()).value();
  EXPECT_EQ(z.flat<float>()[0], -3.5f);
  std::map<std::string, std::string> device_of;
  for (const auto& d : resp.metadata().step_stats().dev_stats()) {
    for (const auto& n : d.node_stats()) device_of[n.node_name()] = d.device();
  }
  EXPECT_EQ(device_of["c"], "/job:worker/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(device_of["y"], "/job:worker/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(device_of["z"], "/job:worker/replica:0/task:0/device:CPU:0");

  tensorflow::CreateSessionResponse refused;
  const absl::Status without = create({addresses[1]}, &refused);
  EXPECT_EQ(without.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(without.message()), HasSubstr(addresses[0]));
  const absl::Status twice = create({addresses[0], addresses[0]}, &refused);
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(twice.message()), HasSubstr("both have address"));
}

// Variants go over the wire in TensorFlow's encoding: the list crosses from
// task 1 to task 0 through RecvTensor, and a fetched list reaches the client
// as a VariantTensorDataProto.
TEST_F(GrpcServerTest, ATensorListCrossesTasks) {
  auto handle = CreateSession(ListAcrossTasks());
  ASSERT_TRUE(handle.ok()) << handle.status();
  tensorflow::RunStepRequest run;
  run.set_session_handle(*handle);
  auto* feed = run.add_feed();
  feed->set_name("x");
  Tensor x(DT_FLOAT, TensorShape({3, 2}));
  for (int i = 0; i < 6; ++i) x.flat<float>()[i] = 0.5f * i;
  TensorToProto(x, feed->mutable_tensor());
  run.add_fetch("stacked");
  run.add_fetch("l");
  tensorflow::RunStepResponse resp;
  absl::Status s = master_->Call("RunStep", run, &resp, absl::Seconds(30));
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(resp.tensor_size(), 2);
  Tensor stacked = TensorFromProto(resp.tensor(0).tensor()).value();
  ASSERT_EQ(stacked.shape().DebugString(), "[3,2]");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(stacked.flat<float>()[i], 0.5f * i);
  const tensorflow::TensorProto& list = resp.tensor(1).tensor();
  EXPECT_EQ(list.dtype(), tensorflow::DT_VARIANT);
  ASSERT_EQ(list.variant_val_size(), 1);
  EXPECT_EQ(list.variant_val(0).type_name(), "tensorflow::TensorList");
  EXPECT_EQ(list.variant_val(0).tensors_size(), 3);
}

TEST_F(GrpcServerTest, ARestartedTaskRejoinsTheSession) {
  auto handle = CreateSession();
  ASSERT_TRUE(handle.ok()) << handle.status();
  tensorflow::RunStepRequest run;
  run.set_session_handle(*handle);
  auto* feed = run.add_feed();
  feed->set_name("x");
  *feed->mutable_tensor() = Floats(2, 1.0f);
  run.add_fetch("z");
  tensorflow::RunStepResponse resp;
  ASSERT_TRUE(master_->Call("RunStep", run, &resp, absl::Seconds(30)).ok());

  servers_[1].reset();  // task 1 dies...
  absl::Status s = master_->Call("RunStep", run, &resp, absl::Seconds(30));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(absl::StrCat("127.0.0.1:", ports_[1])));
  auto again = GrpcServer::Start(Options(cluster_, 1));  // ... and comes back
  ASSERT_TRUE(again.ok()) << again.status();
  servers_[1] = *std::move(again);
  // The first step finds the new process (and says so); the next one runs.
  s = master_->Call("RunStep", run, &resp, absl::Seconds(30));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("restarted"));
  resp.Clear();
  s = master_->Call("RunStep", run, &resp, absl::Seconds(30));
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(resp.tensor_size(), 1);
  EXPECT_EQ(TensorFromProto(resp.tensor(0).tensor()).value().flat<float>()[0], -2.5f);
}

TEST_F(GrpcServerTest, ATaskThatIsNotRunningIsNamedWithItsAddress) {
  const int missing = FreePort();
  servers_.clear();
  const std::string cluster =
      absl::StrCat(cluster_, ",127.0.0.1:", missing);
  for (int t = 0; t < 2; ++t) {
    ServerOptions o = Options(cluster, t);
    o.wait_for_tasks = absl::Seconds(1);
    servers_.push_back(GrpcServer::Start(o).value());
  }
  absl::StatusOr<std::string> handle = CreateSession();
  EXPECT_EQ(handle.status().code(), absl::StatusCode::kUnavailable);
  const std::string message(handle.status().message());
  EXPECT_THAT(message, HasSubstr(absl::StrCat(
                           "/job:worker/replica:0/task:2 at 127.0.0.1:", missing)));
  EXPECT_THAT(message, HasSubstr("unreachable"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("task:1 at")));
}

TEST_F(GrpcServerTest, BadRequestsGetCleanErrorsAndTheServerServesOn) {
  // Bytes that are no RunStepRequest: field 1 (session_handle, a proto3
  // string) holding invalid UTF-8.
  tensorflow::NamedTensorProto garbage;
  garbage.set_name(std::string("\xff\xfe", 2));
  tensorflow::RunStepResponse ignored;
  absl::Status s = master_->Call("RunStep", garbage, &ignored);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("RunStepRequest"));
  // An unknown method.
  tensorflow::CreateSessionRequest req;
  s = master_->Call("Frobnicate", req, &ignored);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("/tensorflow.MasterService/Frobnicate"));
  // A request over the size limit.
  servers_.clear();
  for (int t = 0; t < 2; ++t) {
    ServerOptions o = Options(cluster_, t);
    o.max_message_bytes = 1 << 20;
    servers_.push_back(GrpcServer::Start(o).value());
  }
  auto handle = CreateSession();
  ASSERT_TRUE(handle.ok()) << handle.status();
  tensorflow::RunStepRequest run;
  run.set_session_handle(*handle);
  auto* feed = run.add_feed();
  feed->set_name("x");
  *feed->mutable_tensor() = Floats(1 << 19, 1.0f);  // 2 MiB
  run.add_fetch("z");
  tensorflow::RunStepResponse resp;
  s = master_->Call("RunStep", run, &resp);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  // The server still serves.
  *feed->mutable_tensor() = Floats(4, 1.0f);
  s = master_->Call("RunStep", run, &resp);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(GrpcServerTest, AddressesAreCheckedBeforeListening) {
  // The port of a running server.
  auto again = GrpcServer::Start(Options(cluster_, 0));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kUnknown);  // as TensorFlow
  EXPECT_THAT(std::string(again.status().message()),
              ::testing::StartsWith("Could not start gRPC server: task /job:worker"));
  EXPECT_THAT(std::string(again.status().message()),
              HasSubstr(absl::StrCat("127.0.0.1:", ports_[0])));
  // Not loopback, not asked for.
  auto remote = GrpcServer::Start(Options("worker=10.1.2.3:2222", 0));
  EXPECT_EQ(remote.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(remote.status().message()),
              HasSubstr("--allow-non-loopback"));
  // Asked for, but nobody who calls would be authenticated.
  ServerOptions open = Options("worker=10.1.2.3:2222", 0);
  open.allow_non_loopback = true;
  auto unauthenticated = GrpcServer::Start(open);
  EXPECT_EQ(unauthenticated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unauthenticated.status().message()),
              HasSubstr("--auth-token-file"));
  EXPECT_THAT(std::string(unauthenticated.status().message()),
              HasSubstr("--insecure"));
  // Told --insecure, it binds exactly the address the spec names (not
  // every interface), which is not this machine's.
  open.insecure = true;
  auto elsewhere = GrpcServer::Start(open);
  EXPECT_EQ(elsewhere.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(elsewhere.status().message()), HasSubstr("10.1.2.3:2222"));
  // A task the spec lacks.
  auto absent = GrpcServer::Start(Options(cluster_, 5));
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsLoopbackHost("127.0.0.2"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.1.example.com"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
}

// A CA and a task certificate it signed for 127.0.0.1 and localhost, in a
// new directory; empty when openssl cannot make them.
std::string MakeCertificates() {
  char tmpl[] = "/tmp/weft_tls_XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return "";
  const std::string dir = tmpl;
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const std::string script = absl::StrCat(
      "(cd ", dir, " && ",
      "openssl req -x509 ", key, " -keyout ca.key -out ca.pem -days 2 -subj /CN=weft-test-ca && ",
      "openssl req ", key, " -keyout task.key -out task.csr -subj /CN=localhost && ",
      "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost' > ext.cnf && ",
      "openssl x509 -req -in task.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
      "-out task.pem -days 2 -extfile ext.cnf && ",
      "printf 's3cret-token\\n' > token && printf 'other-token' > wrong)",
      " >/dev/null 2>&1");
  if (std::system(script.c_str()) != 0) return "";
  return dir;
}

std::shared_ptr<const Security> Load(const std::string& dir, bool cert,
                                     bool ca, const char* token) {
  SecurityFiles f;
  if (cert) {
    f.tls_cert = dir + "/task.pem";
    f.tls_key = dir + "/task.key";
  }
  if (ca) f.tls_ca = dir + "/ca.pem";
  if (token != nullptr) f.auth_token = dir + "/" + token;
  auto s = Security::Load(f);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Security::None();
}

TEST(GrpcSecurityTest, MutualTlsAndTokenOnAndOff) {
  const std::string dir = MakeCertificates();
  if (dir.empty()) GTEST_SKIP() << "SKIPPED: openssl could not make certificates";
  const std::string cluster = absl::StrCat("worker=127.0.0.1:", FreePort(),
                                           ",127.0.0.1:", FreePort());
  auto secure = Load(dir, true, true, "token");
  std::vector<std::unique_ptr<GrpcServer>> servers;
  for (int t = 0; t < 2; ++t) {
    ServerOptions o = Options(cluster, t);
    o.security = secure;
    auto server = GrpcServer::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    servers.push_back(*std::move(server));
  }
  const std::string address = servers[0]->address();
  auto create = [&](std::shared_ptr<const Security> as) {
    GrpcMasterClient master(address, 1 << 30, std::move(as));
    tensorflow::CreateSessionRequest req;
    *req.mutable_graph_def() = Sample();
    tensorflow::CreateSessionResponse resp;
    absl::Status s = master.Call("CreateSession", req, &resp, absl::Seconds(30));
    if (!s.ok()) return s;
    // A step across both tasks: they call each other over TLS with the token.
    tensorflow::RunStepRequest run;
    run.set_session_handle(resp.session_handle());
    auto* feed = run.add_feed();
    feed->set_name("x");
    *feed->mutable_tensor() = Floats(2, 1.0f);
    run.add_fetch("z");
    tensorflow::RunStepResponse out;
    return master.Call("RunStep", run, &out, absl::Seconds(30));
  };
  absl::Status s = create(secure);
  EXPECT_TRUE(s.ok()) << s;
  s = create(Security::None());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("TLS"));
  s = create(Load(dir, true, true, nullptr));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("--auth-token-file"));
  s = create(Load(dir, true, true, "wrong"));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  // Mutual: a client that trusts the CA but shows no certificate.
  s = create(Load(dir, false, true, "token"));
  EXPECT_FALSE(s.ok());
  // And the servers still serve the right client.
  EXPECT_TRUE(create(secure).ok());

  // Flags that do not go together.
  SecurityFiles half;
  half.tls_cert = dir + "/task.pem";
  EXPECT_THAT(std::string(Security::Load(half).status().message()),
              HasSubstr("--tls-key"));
  SecurityFiles missing;
  missing.auth_token = dir + "/nope";
  EXPECT_THAT(std::string(Security::Load(missing).status().message()),
              HasSubstr("--auth-token-file"));
  servers.clear();
  EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace weft
