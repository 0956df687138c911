// The CLI's device lists: parsing --devices, sizing a session's CPU devices
// from a graph's requests, and the error for a request beyond them.
#include "tools/local_devices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/local_device_mgr.h"

namespace weft {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseDeviceListTest, ShortAndFullNamesBecomeCanonical) {
  auto d = ParseDeviceList("cpu:0,/cpu:1,/device:CPU:2,/job:worker/task:1");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_THAT(*d, ElementsAre("/device:CPU:0", "/device:CPU:1",
                              "/device:CPU:2", "/job:worker/task:1"));
}

TEST(ParseDeviceListTest, BadEntriesAreNamed) {
  for (const char* bad : {"cpu:0,,cpu:1", "cpu:0,tpu", "cpu:x"}) {
    auto d = ParseDeviceList(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_THAT(ParseDeviceList("cpu:0,cpu:x").status().message(),
              HasSubstr("'cpu:x' is not a device name"));
  EXPECT_THAT(ParseDeviceList("cpu:1,/device:CPU:1").status().message(),
              HasSubstr("names '/device:CPU:1' twice"));
}

TEST(CheckLocalDevicesTest, OnlyThisProcessesCpusAndGpus) {
  EXPECT_TRUE(CheckLocalDevices({"/device:CPU:0", "/job:localhost/"
                                 "replica:0/task:0/device:CPU:3",
                                 "/device:GPU:0", "/gpu:1"})
                  .ok());
  for (const char* other : {"/job:worker/task:1", "/device:TPU:0",
                            "/device:CPU:*", "/task:1/device:CPU:0",
                            "/task:1/device:GPU:0"}) {
    absl::Status s = CheckLocalDevices({other});
    EXPECT_FALSE(s.ok()) << other;
    EXPECT_THAT(s.message(), HasSubstr(other));
  }
}

tensorflow::GraphDef Requests(std::vector<std::string> devices) {
  tensorflow::GraphDef g;
  int i = 0;
  for (const std::string& d : devices) {
    auto* n = g.add_node();
    n->set_name("n" + std::to_string(i++));
    n->set_device(d);
  }
  return g;
}

TEST(CpuDevicesRequestedTest, HighestCpuIdPlusOne) {
  EXPECT_EQ(CpuDevicesRequested(Requests({})), 1);
  EXPECT_EQ(CpuDevicesRequested(Requests({"", "/gpu:3", "/job:ps"})), 1);
  EXPECT_EQ(CpuDevicesRequested(
                Requests({"/cpu:1", "/job:localhost/replica:0/task:0/"
                                    "device:CPU:3", "/device:CPU:0"})),
            4);
}

TEST(CheckCpuRequestsTest, NamesTheNodeAndTheDevice) {
  const tensorflow::GraphDef g = Requests({"/cpu:0", "/device:CPU:7"});
  EXPECT_TRUE(CheckCpuRequests(g, 8).ok());
  absl::Status s = CheckCpuRequests(g, 2);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'n1' requests device "
                                     "'/device:CPU:7' but the session has 2 "
                                     "CPU devices"));
  EXPECT_THAT(s.message(), HasSubstr("--cpu-devices 8"));
}

// Ids come from users: the largest int must neither overflow (id + 1) nor
// size a session of two billion devices.
TEST(DeviceBoundsTest, HugeCpuIdsAreRefusedWithoutOverflow) {
  const std::string huge = "/device:CPU:2147483647";
  absl::Status s = CheckLocalDevices({huge});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("at most 1024 CPU devices"));
  EXPECT_TRUE(CheckLocalDevices({"/device:CPU:1023"}).ok());

  const tensorflow::GraphDef g = Requests({"/cpu:0", huge});
  const int cpus = CpuDevicesRequested(g);
  EXPECT_EQ(cpus, kMaxLocalCpuDevices);
  s = CheckCpuRequests(g, cpus);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 'n1' requests device '" + huge +
                                     "', but a process has at most 1024"));
}

TEST(LocalCpuDeviceNamesTest, AsALocalSessionNamesThem) {
  EXPECT_THAT(LocalCpuDeviceNames(2),
              ElementsAre("/job:localhost/replica:0/task:0/device:CPU:0",
                          "/job:localhost/replica:0/task:0/device:CPU:1"));
}

}  // namespace
}  // namespace weft
