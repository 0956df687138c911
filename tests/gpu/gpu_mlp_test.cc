// The MLP benchmark model trained 20 steps with its layers asking for
// /gpu:0 (soft placement: ops without a GPU kernel, the variables among
// them, run on the CPU) against the same graph on /cpu:0: the losses must
// agree to 1e-4 relative, and the matmuls must really have run on the GPU.
// Skipped (visibly) where no GPU is usable.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "graph/builder/optimizers.h"
#include "graph/models/datasets.h"
#include "graph/models/models.h"
#include "runtime/session.h"
#include "tests/gpu/gpu_test_util.h"

namespace weft {
namespace {

struct Result {
  std::vector<float> losses;
  int gpu_matmuls = 0;  // MatMul nodes the GPU partition ran
};

Result Train(const std::string& device, int steps) {
  Result r;
  ModelOptions options;
  options.batch = 32;
  options.hidden = 64;
  Scope root = Scope::NewRoot();
  auto opt = NewOptimizerByName("sgd", 0.1f);
  EXPECT_TRUE(opt.ok()) << opt.status();
  if (!opt.ok()) return r;
  auto g = BuildTrainingGraph(root.WithDevice(device), ModelKind::kMlp, options,
                              opt->get());
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return r;
  auto graph = root.ToGraphDef();
  EXPECT_TRUE(graph.ok()) << graph.status();
  SessionOptions session_options;
  session_options.config.set_allow_soft_placement(true);
  std::unique_ptr<Session> session = NewLocalSession(session_options);
  absl::Status st = session->Create(*graph);
  EXPECT_TRUE(st.ok()) << st;
  std::vector<Tensor> out;
  st = session->Run({}, {}, {"init"}, &out);
  EXPECT_TRUE(st.ok()) << st;
  if (!st.ok()) return r;
  SyntheticOptions data_options;
  data_options.examples = 1024;
  data_options.seed = 7;
  Dataset data = MakeSyntheticDataset(data_options);
  BatchIterator batches(&data, options.batch, /*seed=*/3);
  tensorflow::RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  for (int i = 0; i < steps; ++i) {
    Batch b = *batches.Next();
    tensorflow::RunMetadata metadata;
    st = session->Run(run_options, {{"images", b.images}, {"labels", b.labels}},
                      {"loss"}, {"train_op"}, &out, i == 0 ? &metadata : nullptr);
    EXPECT_TRUE(st.ok()) << device << " step " << i << ": " << st;
    if (!st.ok()) return r;
    r.losses.push_back(out[0].flat<float>()[0]);
    for (const auto& part : metadata.partition_graphs()) {
      for (const auto& n : part.node()) {
        r.gpu_matmuls += n.op() == "MatMul" && n.device().find("GPU") != std::string::npos;
      }
    }
  }
  return r;
}

TEST(GpuMlpTest, TrainsLikeTheCpu) {
  WEFT_REQUIRE_GPU();
  const int steps = 20;
  Result cpu = Train("/cpu:0", steps);
  Result gpu = Train("/gpu:0", steps);
  ASSERT_EQ(cpu.losses.size(), static_cast<size_t>(steps));
  ASSERT_EQ(gpu.losses.size(), static_cast<size_t>(steps));
  EXPECT_EQ(cpu.gpu_matmuls, 0);
  EXPECT_GT(gpu.gpu_matmuls, 0) << "no MatMul ran on the GPU";
  for (int i = 0; i < steps; ++i) {
    EXPECT_LE(std::fabs(gpu.losses[i] - cpu.losses[i]), 1e-4 * std::fabs(cpu.losses[i]))
        << "step " << i << ": cpu " << cpu.losses[i] << " gpu " << gpu.losses[i];
  }
}

}  // namespace
}  // namespace weft
