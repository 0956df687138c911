#include <thread>

#include "gtest/gtest.h"
#include "runtime/rendezvous.h"

namespace weft {
namespace {

TEST(RendezvousKey, RoundTrip) {
  RendezvousKey k{"/job:a/replica:0/task:0/device:CPU:0", 0xabc,
                  "/job:a/replica:0/task:0/device:CPU:1", "edge_1_x", 0, 0};
  const std::string s = k.ToString();
  EXPECT_EQ(s,
            "/job:a/replica:0/task:0/device:CPU:0;0000000000000abc;"
            "/job:a/replica:0/task:0/device:CPU:1;edge_1_x;0:0");
  absl::StatusOr<RendezvousKey> back = RendezvousKey::Parse(s);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->src_incarnation, 0xabcu);
  EXPECT_EQ(back->tensor_name, "edge_1_x");
  EXPECT_FALSE(RendezvousKey::Parse("a;b;c").ok());
  EXPECT_FALSE(RendezvousKey::Parse("a;zz;c;d;0:0").ok());
  EXPECT_FALSE(RendezvousKey::Parse("a;1;c;d;0").ok());
}

TEST(LocalRendezvous, SendThenRecv) {
  LocalRendezvous rv;
  ASSERT_TRUE(rv.Send("k", Tensor::Scalar<float>(2.5f), false).ok());
  EXPECT_EQ(rv.PendingCount(), 1);
  Tensor got;
  bool dead = true;
  ASSERT_TRUE(rv.Recv("k", absl::Seconds(5), &got, &dead).ok());
  EXPECT_EQ(got.scalar<float>(), 2.5f);
  EXPECT_FALSE(dead);
  EXPECT_EQ(rv.PendingCount(), 0);
  EXPECT_EQ(rv.Send("k", Tensor::Scalar<float>(1), false).code(),
            absl::StatusCode::kOk);  // a consumed key may be reused
}

TEST(LocalRendezvous, RecvThenSendFromAnotherThread) {
  LocalRendezvous rv;
  std::thread sender([&] {
    absl::SleepFor(absl::Milliseconds(20));
    EXPECT_TRUE(rv.Send("k", Tensor::Scalar<int32_t>(7), true).ok());
  });
  Tensor got;
  bool dead = false;
  ASSERT_TRUE(rv.Recv("k", absl::Seconds(10), &got, &dead).ok());
  sender.join();
  EXPECT_TRUE(dead);
  EXPECT_EQ(got.scalar<int32_t>(), 7);
}

TEST(LocalRendezvous, DuplicateSendFails) {
  LocalRendezvous rv;
  ASSERT_TRUE(rv.Send("k", Tensor::Scalar<float>(1), false).ok());
  absl::Status s = rv.Send("k", Tensor::Scalar<float>(1), false);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("'k'"), std::string::npos);
}

TEST(LocalRendezvous, AbortFailsWaitersNowAndLater) {
  LocalRendezvous rv;
  absl::Status seen;
  rv.RecvAsync("a", [&](const absl::Status& s, const Tensor&, bool) { seen = s; });
  rv.StartAbort(absl::AbortedError("step failed at node x"));
  EXPECT_EQ(seen.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(rv.Send("b", Tensor::Scalar<float>(1), false).code(),
            absl::StatusCode::kAborted);
  Tensor t;
  bool dead;
  EXPECT_EQ(rv.Recv("c", absl::Seconds(1), &t, &dead).code(),
            absl::StatusCode::kAborted);
}

TEST(LocalRendezvous, RecvDeadlineNamesKey) {
  LocalRendezvous rv;
  Tensor t;
  bool dead;
  absl::Status s = rv.Recv("lonely", absl::Milliseconds(30), &t, &dead);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("lonely"), std::string::npos);
}

}  // namespace
}  // namespace weft
