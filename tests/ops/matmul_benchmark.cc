// MatMul kernel throughput in GFLOP/s (2*n^3 flops per n x n product), for
// float32 square matrices of 256, 1024 and 2048, on the default local CPU
// device (intra-op threads = cores), called as an executor calls it: the
// output is allocated on every call.
//
//   bazel run //tests/ops:matmul_benchmark -- --benchmark_repetitions=5
//
// To compare with TensorFlow on the same machine, time a tf.compat.v1
// Session running MatMul ops of Variables as targets (K products per run so
// Session.run's own overhead is spread thin); the GFLOP/s counter here is
// the same 2*n^3 / time.
#include <cstdint>
#include <random>

#include "tests/ops/math_bench_util.h"

namespace weft {
namespace {

Tensor RandomMatrix(int64_t n, uint32_t seed) {
  Tensor t(DT_FLOAT, TensorShape({n, n}));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : t.flat<float>()) v = dist(gen);
  return t;
}

void BM_MatMulFloat(benchmark::State& state) {
  const int64_t n = state.range(0);
  KernelBench mm(BenchNode("MatMul", DT_FLOAT),
                 {RandomMatrix(n, 1), RandomMatrix(n, 2)});
  for (auto _ : state) mm.Run(state);
  state.counters["GFLOPS"] = benchmark::Counter(
      2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

BENCHMARK(BM_MatMulFloat)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weft
