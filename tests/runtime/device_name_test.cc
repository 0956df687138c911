#include "gtest/gtest.h"
#include "runtime/core/device_name.h"

namespace weft {
namespace {

DeviceSpec Parse(absl::string_view s) {
  absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(s);
  EXPECT_TRUE(spec.ok()) << s << ": " << spec.status();
  return spec.ok() ? *spec : DeviceSpec();
}

TEST(DeviceName, FullAndPartialForms) {
  DeviceSpec full = Parse("/job:worker/replica:0/task:1/device:GPU:0");
  EXPECT_TRUE(full.IsFull());
  EXPECT_EQ(*full.job, "worker");
  EXPECT_EQ(*full.task, 1);
  EXPECT_EQ(*full.type, "GPU");
  EXPECT_EQ(full.ToString(), "/job:worker/replica:0/task:1/device:GPU:0");

  DeviceSpec wildcard = Parse("/device:CPU:*");
  EXPECT_EQ(*wildcard.type, "CPU");
  EXPECT_FALSE(wildcard.id.has_value());
  EXPECT_EQ(wildcard.ToString(), "/device:CPU:*");

  DeviceSpec legacy = Parse("/cpu:0");
  EXPECT_EQ(*legacy.type, "CPU");
  EXPECT_EQ(*legacy.id, 0);
  EXPECT_EQ(*Parse("/gpu:1").id, 1);
  EXPECT_EQ(*Parse("/task:2").task, 2);
  EXPECT_EQ(Parse(""), DeviceSpec());
  EXPECT_EQ(*Parse("/job:ps/task:0").job, "ps");
}

TEST(DeviceName, Malformed) {
  for (const char* bad : {"/job:", "/task:x", "/device:CPU:-1", "/replica:1.5",
                          "/frobnicate", "//cpu:0", "cpu"}) {
    absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(bad);
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(DeviceName, MatchCompatibleMerge) {
  DeviceSpec full = Parse("/job:worker/replica:0/task:1/device:CPU:0");
  EXPECT_TRUE(Parse("/job:worker").Matches(full));
  EXPECT_TRUE(Parse("/cpu:0").Matches(full));
  EXPECT_TRUE(Parse("/device:CPU:*").Matches(full));
  EXPECT_FALSE(Parse("/task:0").Matches(full));
  EXPECT_FALSE(Parse("/gpu:0").Matches(full));

  DeviceSpec a = Parse("/job:worker/task:1");
  EXPECT_TRUE(a.IsCompatibleWith(Parse("/device:GPU:0")));
  EXPECT_FALSE(a.IsCompatibleWith(Parse("/task:2")));
  ASSERT_TRUE(a.MergeFrom(Parse("/device:GPU:0")).ok());
  EXPECT_EQ(a.ToString(), "/job:worker/task:1/device:GPU:0");
  absl::Status s = a.MergeFrom(Parse("/job:ps"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("/job:ps"), std::string::npos);
}

}  // namespace
}  // namespace weft
