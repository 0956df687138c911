// Per-node overhead of the executor and LocalSession on graphs of trivial
// scalar ops, built with the real op and kernel libraries:
//
//   chain:     Const c; n0 = AddV2(c, c); n_i = AddV2(n_{i-1}, c)   (fetch
//   n_last) fan_addn:  Const c; f_i = Neg(c) for 10,000 i; sum = AddN(f_*)
//   (fetch sum) fan_noop:  Const c; f_i = Neg(c) for 10,000 i; done =
//   NoOp(^f_*) (target)
//
// Each benchmark reports ns_per_node (step time / 10,000) and
// allocs_per_step (tensor buffers). "Session" runs go through
// LocalSession::Run (a cached, prepared executor: what a client sees);
// "Executor" runs call the executor directly.
//
//   bazel run //tests/runtime:executor_benchmark -- \
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// TensorFlow's figure for the same GraphDefs: set WEFT_BENCH_DUMP_DIR=/tmp/g
// to write chain.pb, fan_addn.pb and fan_noop.pb there, then run
//   python3 tests/runtime/executor_benchmark_tf.py /tmp/g
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_def_loader.h"
#include "graph/prune.h"
#include "ops/framework/call_frame.h"
#include "ops/framework/kernel_registry.h"
#include "proto/attr_value.pb.h"
#include "proto/graph.pb.h"
#include "runtime/core/device.h"
#include "runtime/executor.h"
#include "runtime/local_session.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

constexpr int kNodes = 10000;

tensorflow::NodeDef* AddNode(tensorflow::GraphDef* g, const std::string& name,
                             const std::string& op,
                             std::vector<std::string> inputs) {
  tensorflow::NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (auto& i : inputs) n->add_input(std::move(i));
  return n;
}

void AddConst(tensorflow::GraphDef* g) {
  tensorflow::NodeDef* c = AddNode(g, "c", "Const", {});
  (*c->mutable_attr())["dtype"].set_type(DT_FLOAT);
  TensorToProto(Tensor::Scalar<float>(1.0f),
                (*c->mutable_attr())["value"].mutable_tensor(),
                ProtoEncoding::kTypedFields);
}

void SetT(tensorflow::NodeDef* n) {
  (*n->mutable_attr())["T"].set_type(DT_FLOAT);
}

tensorflow::GraphDef ChainGraph(int n) {
  tensorflow::GraphDef g;
  g.mutable_versions()->set_producer(kGraphDefVersion);
  AddConst(&g);
  std::string prev = "c";
  for (int i = 0; i < n; ++i) {
    std::string name = absl::StrCat("n", i);
    SetT(AddNode(&g, name, "AddV2", {prev, "c"}));
    prev = name;
  }
  return g;
}

tensorflow::GraphDef FanGraph(int n, bool addn) {
  tensorflow::GraphDef g;
  g.mutable_versions()->set_producer(kGraphDefVersion);
  AddConst(&g);
  std::vector<std::string> ins;
  for (int i = 0; i < n; ++i) {
    std::string name = absl::StrCat("f", i);
    SetT(AddNode(&g, name, "Neg", {"c"}));
    ins.push_back(addn ? name : absl::StrCat("^", name));
  }
  if (addn) {
    tensorflow::NodeDef* sum = AddNode(&g, "sum", "AddN", ins);
    SetT(sum);
    (*sum->mutable_attr())["N"].set_i(n);
  } else {
    AddNode(&g, "done", "NoOp", ins);
  }
  return g;
}

struct Case {
  const char* name;
  tensorflow::GraphDef graph;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      {"chain", ChainGraph(kNodes), {absl::StrCat("n", kNodes - 1)}, {}},
      {"fan_addn", FanGraph(kNodes, true), {"sum"}, {}},
      {"fan_noop", FanGraph(kNodes, false), {}, {"done"}},
  };
  return *cases;
}

// WEFT_BENCH_DUMP_DIR: write the GraphDefs for the TensorFlow comparison.
const bool dumped = [] {
  const char* dir = std::getenv("WEFT_BENCH_DUMP_DIR");
  if (dir == nullptr) return false;
  for (const Case& c : Cases()) {
    std::ofstream out(absl::StrCat(dir, "/", c.name, ".pb"), std::ios::binary);
    c.graph.SerializeToOstream(&out);
  }
  return true;
}();

// ns_per_node, and tensor buffers allocated per step (from CpuAllocator).
void SetCounters(benchmark::State& state, int64_t allocs_before) {
  state.counters["ns_per_node"] = benchmark::Counter(
      kNodes * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                         benchmark::Counter::kInvert);
  state.counters["allocs_per_step"] = benchmark::Counter(
      static_cast<double>(CpuAllocator()->GetStats().num_allocs -
                          allocs_before),
      benchmark::Counter::kAvgIterations);
}

void BM_Session(benchmark::State& state) {
  const Case& c = Cases()[state.range(0)];
  state.SetLabel(c.name);
  tensorflow::ConfigProto config;
  config.set_inter_op_parallelism_threads(static_cast<int>(state.range(1)));
  std::unique_ptr<Session> session = NewLocalSession(SessionOptions{config});
  absl::Status s = session->Create(c.graph);
  std::vector<Tensor> out;
  if (s.ok()) s = session->Run({}, c.fetches, c.targets, &out);  // prepare
  if (!s.ok()) {
    state.SkipWithError(std::string(s.message()).c_str());
    return;
  }
  const int64_t allocs = CpuAllocator()->GetStats().num_allocs;
  for (auto _ : state) {
    s = session->Run({}, c.fetches, c.targets, &out);
    benchmark::DoNotOptimize(out);
  }
  if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  SetCounters(state, allocs);
}
// (case, inter_op threads: 0 = one per core)
BENCHMARK(BM_Session)
    ->ArgsProduct({{0, 1, 2}, {0}})
    ->Unit(benchmark::kMillisecond);

void BM_Executor(benchmark::State& state) {
  const Case& c = Cases()[state.range(0)];
  state.SetLabel(c.name);
  auto devices = DeviceMgr::NewLocal({}).value();
  auto graph = ConvertGraphDefToGraph(c.graph);
  absl::StatusOr<std::unique_ptr<Graph>> pruned =
      graph.ok() ? PruneGraph(**graph, {}, c.fetches, c.targets)
                 : graph.status();
  if (!pruned.ok()) {
    state.SkipWithError(std::string(pruned.status().message()).c_str());
    return;
  }
  ExecutorOptions options;
  options.device = devices->default_device();
  options.kernels = &GlobalKernelRegistry();
  auto exec = Executor::Create(options, **pruned);
  if (!exec.ok()) {
    state.SkipWithError(std::string(exec.status().message()).c_str());
    return;
  }
  absl::Status s;
  const int64_t allocs = CpuAllocator()->GetStats().num_allocs;
  for (auto _ : state) {
    SimpleCallFrame frame({}, static_cast<int>(c.fetches.size()));
    Executor::StepArgs args;
    args.call_frame = &frame;
    s = (*exec)->Run(args);
  }
  if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  SetCounters(state, allocs);
}
BENCHMARK(BM_Executor)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weft
