#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

#include "gtest/gtest.h"
#include "runtime/core/rendezvous.h"

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


TEST(LocalRendezvous, AbortWithOkStatusStillFailsWaiters) {
  LocalRendezvous rv;
  absl::Status seen;
  bool called = false;
  rv.RecvAsync("a", [&](const absl::Status& s, const Tensor&, bool) {
    seen = s;
    called = true;
  });
  rv.StartAbort(absl::OkStatus());
  ASSERT_TRUE(called);
  EXPECT_EQ(seen.code(), absl::StatusCode::kCancelled);
}

TEST(LocalRendezvous, AbortDropsParkedValues) {
  LocalRendezvous rv;
  ASSERT_TRUE(rv.Send("parked", Tensor::Scalar<float>(1), false).ok());
  rv.StartAbort(absl::InternalError("boom"));
  EXPECT_EQ(rv.PendingCount(), 0);
  Tensor t;
  bool dead;
  EXPECT_EQ(rv.Recv("parked", absl::Seconds(1), &t, &dead).code(),
            absl::StatusCode::kInternal);
}

TEST(LocalRendezvous, EndOfStepCleansUpAndCancelsWaiters) {
  // One rendezvous per step: destroying it at the end of the step fails the
  // receivers still waiting (CANCELLED) and frees parked values.
  absl::Status seen;
  Tensor value = Tensor::Scalar<float>(3);
  {
    LocalRendezvous step1;
    step1.RecvAsync("never_sent",
                    [&](const absl::Status& s, const Tensor&, bool) { seen = s; });
    ASSERT_TRUE(step1.Send("never_received", value, false).ok());
  }
  EXPECT_EQ(seen.code(), absl::StatusCode::kCancelled);
  // Steps do not share keys: the same key in the next step starts afresh.
  LocalRendezvous step2;
  EXPECT_EQ(step2.PendingCount(), 0);
  ASSERT_TRUE(step2.Send("never_received", value, false).ok());
}

TEST(LocalRendezvous, ManyPairsFromTwoThreadsInEitherOrder) {
  // Thread A receives the even keys and sends the odd ones; thread B does
  // the opposite. Which side comes first for a key is left to the race, so
  // both orders happen; every value must arrive exactly once.
  LocalRendezvous rv;
  constexpr int kKeys = 2000;
  std::vector<float> got(kKeys, -1);
  std::vector<int> calls(kKeys, 0);
  auto recv = [&](int i) {
    rv.RecvAsync(absl::StrCat("k", i),
                 [&, i](const absl::Status& s, const Tensor& t, bool dead) {
                   EXPECT_TRUE(s.ok()) << s;
                   EXPECT_EQ(dead, i % 7 == 0);
                   if (!dead) got[i] = t.scalar<float>();
                   ++calls[i];
                 });
  };
  auto send = [&](int i) {
    const bool dead = i % 7 == 0;
    EXPECT_TRUE(rv.Send(absl::StrCat("k", i),
                        dead ? Tensor() : Tensor::Scalar<float>(i), dead)
                    .ok());
  };
  std::thread a([&] {
    for (int i = 0; i < kKeys; ++i) (i % 2 == 0) ? recv(i) : send(i);
  });
  std::thread b([&] {
    for (int i = 0; i < kKeys; ++i) (i % 2 == 0) ? send(i) : recv(i);
  });
  a.join();
  b.join();
  EXPECT_EQ(rv.PendingCount(), 0);
  for (int i = 0; i < kKeys; ++i) {
    EXPECT_EQ(calls[i], 1) << i;
    if (i % 7 != 0) EXPECT_EQ(got[i], static_cast<float>(i)) << i;
  }
}

TEST(LocalRendezvous, RecvDeadlineNamesKey) {
  LocalRendezvous rv;
  Tensor t;
  bool dead;
  absl::Status s = rv.Recv("lonely", absl::Milliseconds(30), &t, &dead);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("lonely"), std::string::npos);
  // The timed-out receiver is withdrawn: nothing waits, and the key can be
  // received again once it is sent.
  EXPECT_EQ(rv.PendingCount(), 0);
  EXPECT_TRUE(rv.WaitingKeys(5).empty());
  ASSERT_TRUE(rv.Send("lonely", Tensor::Scalar<float>(3.0f), false).ok());
  s = rv.Recv("lonely", absl::Seconds(5), &t, &dead);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(t.scalar<float>(), 3.0f);
}

TEST(LocalRendezvous, WaitingKeysListsReceiversWithoutValues) {
  LocalRendezvous rv;
  ASSERT_TRUE(rv.Send("sent", Tensor::Scalar<float>(1.0f), false).ok());
  for (const char* key : {"b", "c", "a"}) {
    rv.RecvAsync(key, [](const absl::Status&, const Tensor&, bool) {});
  }
  EXPECT_EQ(rv.WaitingKeys(5), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(rv.WaitingKeys(2), (std::vector<std::string>{"a", "b"}));
  rv.StartAbort(absl::CancelledError("end of test"));
}

}  // namespace
}  // namespace weft
