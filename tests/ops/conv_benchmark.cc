// The CNN's (graph/models/cnn) convolution kernels at its training shapes,
// batch 32, 5x5 filters, SAME, stride 1, on the default local CPU device:
//   layer 1: 28x28x1 -> 16,   layer 2: 14x14x16 -> 32;
// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter of each, in GFLOP/s
// (2 * batch * out_rows * out_cols * 25 * in_depth * out_depth per call),
// with an intra-op pool of one thread ("threads:1": compare CPU times on a
// shared machine) and of one per core ("threads:0").
//
//   bazel run -c opt //tests/ops:conv_benchmark -- --benchmark_repetitions=5
//
// tools/bench_vs_tf.sh --only kernels times the same shapes against
// TensorFlow (whole graphs, not the kernel alone).
#include <cstdint>
#include <random>
#include <vector>

#include "tests/ops/math_bench_util.h"

namespace weft {
namespace {

constexpr int64_t kBatch = 32, kWin = 5;

Tensor Random(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(DT_FLOAT, TensorShape(dims));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : t.flat<float>()) v = dist(gen);
  return t;
}

Tensor Sizes(const std::vector<int64_t>& dims) {
  Tensor t(DT_INT32, TensorShape({4}));
  for (int i = 0; i < 4; ++i) t.data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
  return t;
}

tensorflow::NodeDef ConvNode(const char* op) {
  tensorflow::NodeDef node = BenchNode(op, DT_FLOAT);
  auto* attr = node.mutable_attr();
  for (int64_t s : {1, 1, 1, 1}) (*attr)["strides"].mutable_list()->add_i(s);
  (*attr)["padding"].set_s("SAME");
  return node;
}

// state.range(0): 0 = Conv2D, 1 = Conv2DBackpropInput, 2 = Conv2DBackpropFilter;
// range(1), range(2), range(3): image side, in_depth, out_depth; range(4):
// intra-op threads (0 = one per core).
void BM_Conv(benchmark::State& state) {
  const int64_t side = state.range(1), c_in = state.range(2), c_out = state.range(3);
  const std::vector<int64_t> x_dims = {kBatch, side, side, c_in};
  const std::vector<int64_t> w_dims = {kWin, kWin, c_in, c_out};
  const std::vector<int64_t> y_dims = {kBatch, side, side, c_out};
  const Tensor x = Random(x_dims, 1), w = Random(w_dims, 2), dy = Random(y_dims, 3);
  LocalDeviceOptions options;
  options.intra_op_threads = static_cast<int>(state.range(4));
  KernelBench conv = [&] {
    switch (state.range(0)) {
      case 0:
        return KernelBench(ConvNode("Conv2D"), {x, w}, options);
      case 1:
        return KernelBench(ConvNode("Conv2DBackpropInput"), {Sizes(x_dims), w, dy},
                           options);
      default:
        return KernelBench(ConvNode("Conv2DBackpropFilter"), {x, Sizes(w_dims), dy},
                           options);
    }
  }();
  for (auto _ : state) conv.Run(state);
  const double flops = 2.0 * kBatch * side * side * kWin * kWin * c_in * c_out;
  state.counters["GFLOPS"] = benchmark::Counter(flops * state.iterations() / 1e9,
                                                benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Conv)
    ->ArgNames({"op", "side", "in", "out", "threads"})
    ->ArgsProduct({{0, 1, 2}, {28}, {1}, {16}, {1, 0}})
    ->ArgsProduct({{0, 1, 2}, {14}, {16}, {32}, {1, 0}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace weft
