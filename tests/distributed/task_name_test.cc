// Task names and devices renamed to the task a session's cluster names.
#include "distributed/task_name.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

TEST(TaskNameTest, TaskOfDevice) {
  EXPECT_EQ(*TaskOfDevice("/job:ps/replica:0/task:1/device:CPU:0"), "/job:ps/replica:0/task:1");
  EXPECT_FALSE(TaskOfDevice("/device:CPU:0").ok());
}

TEST(TaskNameTest, DeviceAsTaskKeepsTheDeviceAndTakesTheTask) {
  EXPECT_EQ(*DeviceAsTask("/job:localhost/replica:0/task:0/device:CPU:1",
                          "/job:worker/replica:0/task:3"),
            "/job:worker/replica:0/task:3/device:CPU:1");
  EXPECT_EQ(*DeviceAsTask("/job:worker/replica:0/task:3/device:GPU:0",
                          "/job:worker/replica:0/task:3"),
            "/job:worker/replica:0/task:3/device:GPU:0");
}

TEST(TaskNameTest, DeviceAsTaskRefusesPartialNames) {
  absl::StatusOr<std::string> partial = DeviceAsTask("/job:a/task:0/device:CPU:0", "/job:b/replica:0/task:0");
  ASSERT_FALSE(partial.ok());
  EXPECT_THAT(partial.status().message(), HasSubstr("not a full device name"));
  absl::StatusOr<std::string> not_task =
      DeviceAsTask("/job:a/replica:0/task:0/device:CPU:0", "/job:b/replica:0/task:0/device:CPU:0");
  ASSERT_FALSE(not_task.ok());
  EXPECT_THAT(not_task.status().message(), HasSubstr("not a task name"));
}

}  // namespace
}  // namespace weft
