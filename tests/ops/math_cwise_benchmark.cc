// Element-wise, reduction and softmax kernels on their own: the per-call
// cost of a scalar op (what a graph of many tiny ops pays per node), and
// throughput on large tensors (GB/s of input read plus output written).
//
//   bazel run //tests/ops:math_cwise_benchmark
#include <cstdint>
#include <random>
#include <vector>

#include "tests/ops/math_bench_util.h"

namespace weft {
namespace {

Tensor RandomFloats(const std::vector<int64_t>& shape) {
  Tensor t(DT_FLOAT, TensorShape(shape));
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : t.flat<float>()) v = dist(gen);
  return t;
}

void SetBytes(benchmark::State& state, int64_t bytes_per_call) {
  state.SetBytesProcessed(state.iterations() * bytes_per_call);
}

// Scalar + scalar: allocation, dispatch and shape checks only.
void BM_ScalarAddV2(benchmark::State& state) {
  KernelBench add(BenchNode("AddV2", DT_FLOAT),
                  {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2)});
  for (auto _ : state) add.Run(state);
}
BENCHMARK(BM_ScalarAddV2);

void BM_AddV2(benchmark::State& state) {
  const int64_t n = state.range(0);
  KernelBench add(BenchNode("AddV2", DT_FLOAT),
                  {RandomFloats({n}), RandomFloats({n})});
  for (auto _ : state) add.Run(state);
  SetBytes(state, 3 * 4 * n);
}
BENCHMARK(BM_AddV2)->Arg(128)->Arg(1 << 14)->Arg(1 << 20)->Arg(1 << 24)->UseRealTime();

// [rows, 1024] + [1024]: the bias-style row broadcast.
void BM_AddRowBroadcast(benchmark::State& state) {
  const int64_t rows = state.range(0);
  KernelBench add(BenchNode("AddV2", DT_FLOAT),
                  {RandomFloats({rows, 1024}), RandomFloats({1024})});
  for (auto _ : state) add.Run(state);
  SetBytes(state, 2 * 4 * rows * 1024);
}
BENCHMARK(BM_AddRowBroadcast)->Arg(64)->Arg(4096)->UseRealTime();

void BM_Exp(benchmark::State& state) {
  const int64_t n = state.range(0);
  KernelBench exp(BenchNode("Exp", DT_FLOAT), {RandomFloats({n})});
  for (auto _ : state) exp.Run(state);
  SetBytes(state, 2 * 4 * n);
}
BENCHMARK(BM_Exp)->Arg(1 << 20)->UseRealTime();

// Sum of [1024, 4096] over axis 0 (columns) or 1 (rows).
void BM_Sum(benchmark::State& state) {
  tensorflow::NodeDef node = BenchNode("Sum", DT_FLOAT);
  KernelBench sum(node, {RandomFloats({1024, 4096}),
                         Tensor::Scalar<int32_t>(static_cast<int32_t>(state.range(0)))});
  for (auto _ : state) sum.Run(state);
  SetBytes(state, 4 * 1024 * 4096);
}
BENCHMARK(BM_Sum)->Arg(0)->Arg(1)->UseRealTime();

void BM_Softmax(benchmark::State& state) {
  KernelBench softmax(BenchNode("Softmax", DT_FLOAT), {RandomFloats({256, 1000})});
  for (auto _ : state) softmax.Run(state);
  SetBytes(state, 2 * 4 * 256 * 1000);
}
BENCHMARK(BM_Softmax)->UseRealTime();

}  // namespace
}  // namespace weft
