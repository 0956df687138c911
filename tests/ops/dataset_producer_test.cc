// The read-ahead machinery of prefetch and parallel map
// (ops/data/ordered_producer.h) and the shuffle's seed generator
// (ops/data/seed_generator.h): order kept with slow and uneven work, errors
// and the end in their places, a waiting GetNext cancelled with its step,
// destruction while the producer is blocked on its input, the bound on
// read-ahead, and TensorFlow's seed sequences.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "ops/data/ordered_producer.h"
#include "ops/data/seed_generator.h"
#include "runtime/core/cancellation.h"

namespace weft {
namespace data {
namespace {

Tensor Scalar(int64_t v) {
  Tensor t(DT_INT64, TensorShape());
  t.scalar<int64_t>() = v;
  return t;
}

// An input of `n` elements 0..n-1; element `bad` is an error.
OrderedProducer::ReadFn Counter(std::atomic<int64_t>* next, int64_t n, int64_t bad = -1) {
  return [next, n, bad](IteratorContext*, std::vector<Tensor>* out, bool* end) {
    const int64_t i = (*next)++;
    *end = i >= n;
    if (*end) return absl::OkStatus();
    if (i == bad) return absl::InvalidArgumentError("bad element");
    *out = {Scalar(i)};
    return absl::OkStatus();
  };
}

TEST(OrderedProducer, KeepsOrderWithUnevenParallelWork) {
  std::atomic<int64_t> next{0};
  OrderedProducer p(4, 4, Counter(&next, 40),
                    [](IteratorContext*, std::vector<Tensor> in, std::vector<Tensor>* out) {
                      const int64_t v = in[0].scalar<int64_t>();
                      std::this_thread::sleep_for(std::chrono::microseconds((v % 5) * 300));
                      *out = {Scalar(v * 2)};
                      return absl::OkStatus();
                    });
  IteratorContext ctx;
  for (int64_t i = 0; i < 40; ++i) {
    std::vector<Tensor> out;
    bool end = true;
    ASSERT_TRUE(p.GetNext(&ctx, &out, &end).ok());
    ASSERT_FALSE(end);
    EXPECT_EQ(out[0].scalar<int64_t>(), 2 * i);
  }
  std::vector<Tensor> out;
  bool end = false;
  ASSERT_TRUE(p.GetNext(&ctx, &out, &end).ok());
  EXPECT_TRUE(end);
  ASSERT_TRUE(p.GetNext(&ctx, &out, &end).ok());
  EXPECT_TRUE(end);  // and stays there
}

TEST(OrderedProducer, ErrorsArriveInPlaceAndReadingGoesOn) {
  std::atomic<int64_t> next{0};
  OrderedProducer p(1, 8, Counter(&next, 4, /*bad=*/1), nullptr);
  IteratorContext ctx;
  std::vector<Tensor> out;
  bool end = false;
  ASSERT_TRUE(p.GetNext(&ctx, &out, &end).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 0);
  EXPECT_TRUE(absl::IsInvalidArgument(p.GetNext(&ctx, &out, &end)));
  ASSERT_TRUE(p.GetNext(&ctx, &out, &end).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 2);
  ASSERT_TRUE(p.GetNext(&ctx, &out, &end).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 3);
  ASSERT_TRUE(p.GetNext(&ctx, &out, &end).ok());
  EXPECT_TRUE(end);
}

TEST(OrderedProducer, ReadsAheadNoFurtherThanItsCapacity) {
  std::atomic<int64_t> next{0};
  OrderedProducer p(1, 3, Counter(&next, 1000), nullptr);
  IteratorContext ctx;
  std::vector<Tensor> out;
  bool end = false;
  ASSERT_TRUE(p.GetNext(&ctx, &out, &end).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LE(next.load(), 1 + 3);  // the one returned and a full buffer
}

// An input that blocks until its context is cancelled (a slow input).
absl::Status BlockUntilCancelled(IteratorContext* ctx, std::vector<Tensor>*, bool*) {
  while (!ctx->cancellation->IsCancelled()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return absl::CancelledError("input cancelled");
}

TEST(OrderedProducer, WaitingGetNextEndsWhenItsStepIsCancelled) {
  OrderedProducer p(1, 2, BlockUntilCancelled, nullptr);
  CancellationManager step;
  IteratorContext ctx;
  ctx.cancellation = &step;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    step.StartCancel();
  });
  std::vector<Tensor> out;
  bool end = false;
  const absl::Status s = p.GetNext(&ctx, &out, &end);
  canceller.join();
  EXPECT_TRUE(absl::IsCancelled(s)) << s;
  // A step cancelled before the call ends at once.
  EXPECT_TRUE(absl::IsCancelled(p.GetNext(&ctx, &out, &end)));
}

TEST(OrderedProducer, DestructionStopsAProducerBlockedOnItsInput) {
  auto p = std::make_unique<OrderedProducer>(2, 2, BlockUntilCancelled, nullptr);
  CancellationManager step;
  step.StartCancel();
  IteratorContext ctx;
  ctx.cancellation = &step;
  std::vector<Tensor> out;
  bool end = false;
  EXPECT_TRUE(absl::IsCancelled(p->GetNext(&ctx, &out, &end)));  // starts the threads
  const auto start = std::chrono::steady_clock::now();
  p.reset();  // joins
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(OrderedProducer, DestructionBeforeAnyReadStartsNothing) {
  std::atomic<int64_t> next{0};
  { OrderedProducer p(3, 3, Counter(&next, 10), nullptr); }
  EXPECT_EQ(next.load(), 0);
}

TEST(SeedGenerator, FixedRepeatsTheDatasetSeeds) {
  SeedGenerator g(7, 87654321, /*reshuffle=*/false);
  for (int i = 0; i < 3; ++i) {
    int64_t a, b;
    g.GenerateSeeds(&a, &b);
    EXPECT_EQ(a, 7);
    EXPECT_EQ(b, 87654321);
  }
}

TEST(SeedGenerator, ReshufflingDrawsPhiloxWordsPairwise) {
  SeedGenerator g(7, 11, /*reshuffle=*/true);
  philox::PhiloxRandom gen(7, 11);
  const philox::PhiloxRandom::Block words = gen();
  int64_t a, b, c, d;
  g.GenerateSeeds(&a, &b);
  g.GenerateSeeds(&c, &d);
  EXPECT_EQ(a, words[0]);
  EXPECT_EQ(b, words[1]);
  EXPECT_EQ(c, words[2]);
  EXPECT_EQ(d, words[3]);
}

TEST(SeedGenerator, UnseededDrawsSeedsOfItsOwn) {
  SeedGenerator g(0, 0, /*reshuffle=*/false);
  int64_t a, b;
  g.GenerateSeeds(&a, &b);
  EXPECT_FALSE(a == 0 && b == 0);
}

}  // namespace
}  // namespace data
}  // namespace weft
