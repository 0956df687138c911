// GPU support that is checked on every machine: what the build links, how
// GPUs are enumerated (none here: the test says so rather than skip), and
// placement of nodes that ask for a GPU: an error naming the node and the
// device without soft placement, the CPU with it. On a machine with a GPU
// the same tests check that the GPU is found and used.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ops/framework/kernel_registry.h"
#include "proto/graph.pb.h"
#include "runtime/gpu/gpu_devices.h"
#include "runtime/local_session.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using testing::GraphDefBuilder;
using ::testing::HasSubstr;

constexpr char kNoCuda[] = "this build has no CUDA";

bool HaveGpu() { return !NewLocalGpuDevices("localhost", 0, 0, 1).devices.empty(); }

TEST(GpuBuildTest, LinksTheGpuCodeWhenTheToolkitIsPresent) {
  tensorflow::NodeDef mm;
  mm.set_name("mm");
  mm.set_op("MatMul");
  (*mm.mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
  absl::StatusOr<const KernelDef*> gpu_kernel =
      GlobalKernelRegistry().FindKernelDef(mm, kDeviceTypeGpu);
#ifdef WEFT_EXPECT_CUDA
  EXPECT_THAT(GpuAvailability(), ::testing::Not(HasSubstr(kNoCuda)));
  EXPECT_TRUE(gpu_kernel.ok()) << gpu_kernel.status();
#else
  EXPECT_THAT(GpuAvailability(), HasSubstr(kNoCuda));
  EXPECT_FALSE(gpu_kernel.ok());
#endif
}

TEST(GpuEnumerationTest, FindsTheGpusOrSaysWhyNot) {
  GpuDevices all = NewLocalGpuDevices("localhost", 0, 0, -1);
  const std::string line = GpuAvailability();
  std::printf("%s\n", line.c_str());
  if (all.devices.empty()) {
    EXPECT_THAT(all.note, HasSubstr("no GPU"));
    EXPECT_THAT(line, HasSubstr("GPUs: none ("));
  } else {
    for (size_t i = 0; i < all.devices.size(); ++i) {
      EXPECT_EQ(all.devices[i]->name(),
                "/job:localhost/replica:0/task:0/device:GPU:" + std::to_string(i));
      EXPECT_EQ(all.devices[i]->device_type(), kDeviceTypeGpu);
    }
    EXPECT_THAT(line, HasSubstr("GPU:0 "));
  }
  // device_count {key: "GPU" value: 0}: none, and nothing to explain.
  GpuDevices none = NewLocalGpuDevices("localhost", 0, 0, 0);
  EXPECT_TRUE(none.devices.empty());
  EXPECT_EQ(none.note, "");
}

TEST(GpuEnumerationTest, SessionLogsWhyItHasNoGpu) {
  SessionOptions options;
  options.config.set_log_device_placement(true);
  ::testing::internal::CaptureStderr();
  LocalSession session(options);
  const std::string log = ::testing::internal::GetCapturedStderr();
  int gpus = 0;
  for (Device* d : session.device_mgr().devices()) gpus += d->device_type() == "GPU";
  if (gpus == 0) {
    EXPECT_THAT(log, HasSubstr("no GPU"));
  } else {
    EXPECT_EQ(log, "");
  }
  SessionOptions limited;
  (*limited.config.mutable_device_count())["GPU"] = 0;
  LocalSession cpu_only(limited);
  for (Device* d : cpu_only.device_mgr().devices()) {
    EXPECT_EQ(d->device_type(), kDeviceTypeCpu) << d->name();
  }
}

// a [2,3] x b [3,2] with "mm" on `device`; the expected product computed here.
struct MatMulCase {
  tensorflow::GraphDef graph;
  Tensor a, b;
  std::vector<float> expected;
};

MatMulCase MakeMatMul(const std::string& device) {
  MatMulCase c;
  GraphDefBuilder g;
  g.Placeholder("a", DT_FLOAT).Placeholder("b", DT_FLOAT);
  g.Op("mm", "MatMul", {"a", "b"},
       {{"T", DT_FLOAT}, {"transpose_a", false}, {"transpose_b", false}});
  c.graph = g.Build();
  for (auto& n : *c.graph.mutable_node()) {
    if (n.name() == "mm") n.set_device(device);
  }
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  c.a = Tensor(DT_FLOAT, TensorShape({2, 3}));
  c.b = Tensor(DT_FLOAT, TensorShape({3, 2}));
  for (float& v : c.a.flat<float>()) v = u(rng);
  for (float& v : c.b.flat<float>()) v = u(rng);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      float s = 0;
      for (int k = 0; k < 3; ++k) s += c.a.flat<float>()[i * 3 + k] * c.b.flat<float>()[k * 2 + j];
      c.expected.push_back(s);
    }
  }
  return c;
}

absl::Status RunMatMul(const MatMulCase& c, bool soft, std::vector<float>* result) {
  SessionOptions options;
  options.config.set_allow_soft_placement(soft);
  LocalSession session(options);
  absl::Status s = session.Create(c.graph);
  if (!s.ok()) return s;
  std::vector<Tensor> out;
  s = session.Run({{"a", c.a}, {"b", c.b}}, {"mm"}, {}, &out);
  if (!s.ok()) return s;
  result->assign(out[0].flat<float>().begin(), out[0].flat<float>().end());
  return absl::OkStatus();
}

TEST(GpuPlacementTest, WithoutSoftPlacementAMissingGpuIsAnError) {
  for (const char* device : {"/gpu:0", "/device:GPU:0"}) {
    MatMulCase c = MakeMatMul(device);
    std::vector<float> result;
    absl::Status s = RunMatMul(c, /*soft=*/false, &result);
    if (HaveGpu()) {
      ASSERT_TRUE(s.ok()) << device << ": " << s;
      for (size_t i = 0; i < result.size(); ++i) {
        EXPECT_NEAR(result[i], c.expected[i], 1e-5) << device << " element " << i;
      }
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_THAT(s.message(), HasSubstr("'mm'"));
      EXPECT_THAT(s.message(), HasSubstr("GPU:0"));
    }
  }
}

TEST(GpuPlacementTest, WithSoftPlacementItRunsWhereItCan) {
  for (const char* device : {"/gpu:0", "/device:GPU:0", "/gpu:3"}) {
    MatMulCase c = MakeMatMul(device);
    std::vector<float> result;
    absl::Status s = RunMatMul(c, /*soft=*/true, &result);
    ASSERT_TRUE(s.ok()) << device << ": " << s;
    ASSERT_EQ(result.size(), c.expected.size());
    for (size_t i = 0; i < result.size(); ++i) {
      EXPECT_NEAR(result[i], c.expected[i], 1e-5) << device << " element " << i;
    }
  }
}

}  // namespace
}  // namespace weft
