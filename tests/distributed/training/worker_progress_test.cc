#include "distributed/training/worker_progress.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace weft {
namespace {

const absl::Time t0 = absl::FromUnixSeconds(1000);

absl::Time At(double seconds) { return t0 + absl::Seconds(seconds); }

TEST(ProgressHistory, NamesTheWorkerWhoseCountStoppedBeforeTheTimeout) {
  ProgressHistory h;
  h.Record({10, 10, 10}, At(0));
  h.Record({11, 10, 11}, At(1));  // worker 1 paused from here
  h.Record({11, 10, 11}, At(2));
  h.Record({11, 10, 11}, At(3));
  h.Record({11, 11, 11}, At(5));  // resumed after the step failed at 4
  std::vector<ProgressHistory::Stalled> s = h.StalledAt(At(4), absl::Seconds(2));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].task, 1);
  EXPECT_EQ(s[0].steps, 10);
  EXPECT_EQ(s[0].most, 11);
  EXPECT_EQ(s[0].quiet, absl::Seconds(4));  // unchanged since the first reading
  // Afterwards every count is equal: nobody is behind.
  EXPECT_TRUE(h.StalledAt(At(6), absl::Seconds(2)).empty());
}

TEST(ProgressHistory, AWorkerBehindOnlyBrieflyIsNotStalled) {
  ProgressHistory h;
  h.Record({10, 10}, At(0));
  h.Record({11, 10}, At(1));
  h.Record({11, 11}, At(2));
  h.Record({12, 11}, At(3));
  // Worker 1 is one behind in the last reading, but moved 1.5 s earlier.
  EXPECT_TRUE(h.StalledAt(At(3.5), absl::Seconds(2)).empty());
  EXPECT_EQ(h.StalledAt(At(3.5), absl::Seconds(1)).size(), 1u);
}

TEST(ProgressHistory, NoReadingBeforeTheFailureSaysNothing) {
  ProgressHistory h;
  EXPECT_TRUE(h.StalledAt(At(5), absl::Seconds(1)).empty());
  h.Record({3, 1}, At(10));
  EXPECT_TRUE(h.StalledAt(At(5), absl::Seconds(1)).empty());
  EXPECT_EQ(h.StalledAt(At(12), absl::Seconds(1)).size(), 1u);
}

TEST(ProgressHistory, KeepsABoundedNumberOfReadings) {
  ProgressHistory h;
  for (int i = 0; i < 5000; ++i) h.Record({i, 0}, At(i));
  // Worker 1 never moved; only the last 1024 readings are kept, so its
  // quiet time is measured from the oldest of those.
  std::vector<ProgressHistory::Stalled> s = h.StalledAt(At(4999), absl::Seconds(1));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].quiet, absl::Seconds(1023));
}

}  // namespace
}  // namespace weft
