// Conditional accumulators (dense and sparse) and FIFOQueueV2 through a
// LocalSession, as
// synchronous training uses them: gradients applied by several runs and
// taken by another that waits for them, stale gradients dropped, waits that
// end when their step's deadline passes, and the token queue.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/text_format.h"
#include "ops/testing/kernel_runner.h"
#include "runtime/local_session.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

constexpr char kAccumulatorGraph[] = R"pb(
  node {
    name: "acc" op: "%sConditionalAccumulator"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "shape" value { shape { dim { size: 2 } } } }
    attr { key: "shared_name" value { s: "acc" } }
    attr { key: "reduction_type" value { s: "%s" } }
  }
  node {
    name: "g" op: "Placeholder"
    attr { key: "dtype" value { type: DT_FLOAT } }
  }
  node {
    name: "local_step" op: "Placeholder"
    attr { key: "dtype" value { type: DT_INT64 } }
  }
  node {
    name: "apply" op: "%sAccumulatorApplyGradient"
    input: "acc" input: "local_step" input: "g"
    attr { key: "dtype" value { type: DT_FLOAT } }
  }
  node {
    name: "n" op: "Placeholder"
    attr { key: "dtype" value { type: DT_INT32 } }
  }
  node {
    name: "take" op: "%sAccumulatorTakeGradient"
    input: "acc" input: "n"
    attr { key: "dtype" value { type: DT_FLOAT } }
  }
  node {
    name: "count" op: "%sAccumulatorNumAccumulated" input: "acc"
  }
  node {
    name: "set_step" op: "%sAccumulatorSetGlobalStep"
    input: "acc" input: "local_step"
  }
)pb";

tensorflow::GraphDef Parse(const std::string& text) {
  tensorflow::GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g)) << text;
  return g;
}

tensorflow::GraphDef AccumulatorGraph(const std::string& prefix,
                                      const std::string& reduction = "MEAN") {
  const std::string& p = prefix;
  return Parse(absl::StrFormat(kAccumulatorGraph, p, reduction, p, p, p, p));
}

Tensor Vec2(float a, float b) { return MakeTensor<float>({2}, {a, b}); }
Tensor Step(int64_t s) { return Tensor::Scalar<int64_t>(s); }
Tensor Int(int32_t v) { return Tensor::Scalar<int32_t>(v); }

class AccumulatorTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(session_.Create(AccumulatorGraph(GetParam())).ok());
  }
  absl::Status Apply(int64_t local_step, float a, float b) {
    std::vector<Tensor> out;
    return session_.Run({{"local_step", Step(local_step)}, {"g", Vec2(a, b)}},
                        {}, {"apply"}, &out);
  }
  absl::StatusOr<Tensor> Take(int32_t n, int64_t timeout_ms = 0) {
    tensorflow::RunOptions options;
    options.set_timeout_in_ms(timeout_ms);
    std::vector<Tensor> out;
    absl::Status s =
        session_.Run(options, {{"n", Int(n)}}, {"take"}, {}, &out, nullptr);
    if (!s.ok()) return s;
    return out[0];
  }
  int32_t Count() {
    std::vector<Tensor> out;
    EXPECT_TRUE(session_.Run({}, {"count"}, {}, &out).ok());
    return out.empty() ? -1 : out[0].scalar<int32_t>();
  }

  LocalSession session_{SessionOptions()};
};

TEST_P(AccumulatorTest, TakesTheMeanOfWhatWasApplied) {
  ASSERT_TRUE(Apply(0, 1, 2).ok());
  ASSERT_TRUE(Apply(0, 3, 6).ok());
  EXPECT_EQ(Count(), 2);
  absl::StatusOr<Tensor> mean = Take(2);
  ASSERT_TRUE(mean.ok()) << mean.status();
  ExpectTensorEqual(*mean, Vec2(2, 4));
  EXPECT_EQ(Count(), 0);
}

TEST_P(AccumulatorTest, DropsGradientsOlderThanTheGlobalStep) {
  ASSERT_TRUE(Apply(0, 1, 1).ok());
  ASSERT_TRUE(Take(1).ok());  // global step 0 -> 1
  ASSERT_TRUE(Apply(0, 100, 100).ok());  // stale: dropped
  EXPECT_EQ(Count(), 0);
  ASSERT_TRUE(Apply(1, 2, 4).ok());
  EXPECT_EQ(Count(), 1);
  absl::StatusOr<Tensor> g = Take(1);
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectTensorEqual(*g, Vec2(2, 4));
}

TEST_P(AccumulatorTest, SetGlobalStepMovesTheStalenessBound) {
  std::vector<Tensor> out;
  ASSERT_TRUE(session_.Run({{"local_step", Step(7)}}, {}, {"set_step"}, &out)
                  .ok());
  ASSERT_TRUE(Apply(6, 1, 1).ok());
  EXPECT_EQ(Count(), 0);
  ASSERT_TRUE(Apply(7, 1, 1).ok());
  EXPECT_EQ(Count(), 1);
}

TEST_P(AccumulatorTest, TakeWaitsForTheGradients) {
  absl::StatusOr<Tensor> taken = absl::UnknownError("not run");
  std::thread taker([&] { taken = Take(3, 20000); });
  for (float v : {1.f, 2.f, 6.f}) ASSERT_TRUE(Apply(0, v, -v).ok());
  taker.join();
  ASSERT_TRUE(taken.ok()) << taken.status();
  ExpectTensorEqual(*taken, Vec2(3, -3));
}

TEST_P(AccumulatorTest, TakeEndsAtTheStepDeadline) {
  ASSERT_TRUE(Apply(0, 1, 1).ok());
  absl::StatusOr<Tensor> taken = Take(2, 100);
  EXPECT_EQ(taken.status().code(), absl::StatusCode::kDeadlineExceeded)
      << taken.status();
  // The accumulator keeps serving: the aborted taker is gone.
  ASSERT_TRUE(Apply(0, 3, 3).ok());
  absl::StatusOr<Tensor> g = Take(2, 20000);
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectTensorEqual(*g, Vec2(2, 2));
}

TEST_P(AccumulatorTest, BadInputsAreErrors) {
  std::vector<Tensor> out;
  absl::Status s = session_.Run(
      {{"local_step", Step(0)}, {"g", MakeTensor<float>({3}, {1, 2, 3})}}, {},
      {"apply"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("accumulator 'acc' has shape"));
  s = Take(0).status();
  EXPECT_THAT(s.message(), HasSubstr("num_required must be positive"));
}

INSTANTIATE_TEST_SUITE_P(Forms, AccumulatorTest,
                         ::testing::Values("", "Resource"),
                         [](const auto& info) {
                           return info.param.empty() ? std::string("Ref")
                                                     : info.param;
                         });

TEST(AccumulatorSumTest, SumReduction) {
  LocalSession session{SessionOptions()};
  ASSERT_TRUE(session.Create(AccumulatorGraph("Resource", "SUM")).ok());
  std::vector<Tensor> out;
  for (float v : {1.f, 2.f}) {
    ASSERT_TRUE(session.Run({{"local_step", Step(0)}, {"g", Vec2(v, v)}}, {},
                            {"apply"}, &out)
                    .ok());
  }
  ASSERT_TRUE(session.Run({{"n", Int(2)}}, {"take"}, {}, &out).ok());
  ExpectTensorEqual(out[0], Vec2(3, 3));
}

// A SparseConditionalAccumulator of [4, 2] rows, with dense ops beside it
// that must refuse it.
constexpr char kSparseAccumulatorGraph[] = R"pb(
  node {
    name: "acc" op: "SparseConditionalAccumulator"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "shape" value { shape { dim { size: 4 } dim { size: 2 } } } }
    attr { key: "shared_name" value { s: "sparse" } }
  }
  node { name: "local_step" op: "Placeholder" attr { key: "dtype" value { type: DT_INT64 } } }
  node { name: "idx" op: "Placeholder" attr { key: "dtype" value { type: DT_INT64 } } }
  node { name: "val" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "shape" op: "Placeholder" attr { key: "dtype" value { type: DT_INT64 } } }
  node {
    name: "apply" op: "SparseAccumulatorApplyGradient"
    input: "acc" input: "local_step" input: "idx" input: "val" input: "shape"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "has_known_shape" value { b: true } }
  }
  node { name: "n" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
  node {
    name: "take" op: "SparseAccumulatorTakeGradient"
    input: "acc" input: "n"
    attr { key: "dtype" value { type: DT_FLOAT } }
  }
  node {
    name: "dense_take" op: "AccumulatorTakeGradient"
    input: "acc" input: "n"
    attr { key: "dtype" value { type: DT_FLOAT } }
  }
  node { name: "count" op: "AccumulatorNumAccumulated" input: "acc" }
)pb";

class SparseAccumulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(session_.Create(Parse(kSparseAccumulatorGraph)).ok());
  }
  absl::Status Apply(int64_t step, std::vector<int64_t> idx,
                     std::vector<float> val, std::vector<int64_t> shape = {4, 2}) {
    const int64_t n = static_cast<int64_t>(idx.size());
    const int64_t width = n > 0 ? static_cast<int64_t>(val.size()) / n : 2;
    std::vector<Tensor> out;
    return session_.Run(
        {{"local_step", Step(step)},
         {"idx", MakeTensor<int64_t>({n}, idx)},
         {"val", MakeTensor<float>({n, width}, val)},
         {"shape", MakeTensor<int64_t>({static_cast<int64_t>(shape.size())}, shape)}},
        {}, {"apply"}, &out);
  }
  absl::StatusOr<std::vector<Tensor>> Take(int32_t n, int64_t timeout_ms = 0,
                                           const char* op = "take") {
    tensorflow::RunOptions options;
    options.set_timeout_in_ms(timeout_ms);
    std::vector<Tensor> out;
    std::vector<std::string> fetches = {std::string(op) + ":0"};
    if (std::string(op) == "take") {
      fetches.push_back("take:1");
      fetches.push_back("take:2");
    }
    absl::Status s = session_.Run(options, {{"n", Int(n)}}, fetches, {}, &out, nullptr);
    if (!s.ok()) return s;
    return out;
  }

  LocalSession session_{SessionOptions()};
};

TEST_F(SparseAccumulatorTest, MergesRowsAndTakesTheMeanPerRow) {
  ASSERT_TRUE(Apply(0, {3, 1}, {1, 2, 3, 4}).ok());
  ASSERT_TRUE(Apply(0, {0, 3}, {10, 20, 30, 40}).ok());
  ASSERT_TRUE(Apply(-1, {2}, {9, 9}).ok());  // stale: dropped
  std::vector<Tensor> out;
  ASSERT_TRUE(session_.Run({}, {"count"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 2);
  absl::StatusOr<std::vector<Tensor>> taken = Take(2);
  ASSERT_TRUE(taken.ok()) << taken.status();
  // Row 3 holds both gradients (their mean); rows 0 and 1 one each.
  ExpectTensorEqual((*taken)[0], MakeTensor<int64_t>({3}, {0, 3, 1}));
  ExpectTensorEqual((*taken)[1],
                    MakeTensor<float>({3, 2}, {10, 20, 15.5f, 21, 3, 4}));
  ExpectTensorEqual((*taken)[2], MakeTensor<int64_t>({2}, {4, 2}));
}

TEST_F(SparseAccumulatorTest, TakeWaitsAndEndsAtTheStepDeadline) {
  ASSERT_TRUE(Apply(0, {1}, {1, 1}).ok());
  EXPECT_EQ(Take(2, 100).status().code(), absl::StatusCode::kDeadlineExceeded);
  absl::StatusOr<std::vector<Tensor>> taken = absl::UnknownError("not run");
  std::thread taker([&] { taken = Take(2, 20000); });
  ASSERT_TRUE(Apply(0, {1}, {3, 3}).ok());
  taker.join();
  ASSERT_TRUE(taken.ok()) << taken.status();
  ExpectTensorEqual((*taken)[1], MakeTensor<float>({1, 2}, {2, 2}));
}

TEST_F(SparseAccumulatorTest, BadGradientsAreErrorsNamingTheProblem) {
  absl::Status s = Apply(0, {7}, {1, 1});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("index is 7 exceeded 4"));
  s = Apply(0, {1}, {1, 1, 1});
  EXPECT_THAT(s.message(), HasSubstr("expected values dim 1 to be 2, got 3"));
  s = Apply(0, {1}, {1, 1}, {5, 2});
  EXPECT_THAT(s.message(), HasSubstr("expected shape dim 0 to be 4, got 5"));
  std::vector<Tensor> out;
  s = session_.Run({{"local_step", Step(0)},
                    {"idx", MakeTensor<int64_t>({2}, {0, 1})},
                    {"val", MakeTensor<float>({1, 2}, {1, 1})},
                    {"shape", MakeTensor<int64_t>({2}, {4, 2})}},
                   {}, {"apply"}, &out);
  EXPECT_THAT(s.message(), HasSubstr("Expected 2 non-empty input values, got 1"));
  // The dense take refuses a sparse accumulator, and nothing was applied.
  s = Take(1, 0, "dense_take").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("sparse accumulator 'sparse' is sparse"));
  ASSERT_TRUE(session_.Run({}, {"count"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 0);
}

constexpr char kQueueGraph[] = R"pb(
  node {
    name: "q" op: "FIFOQueueV2"
    attr { key: "component_types" value { list { type: DT_INT64 } } }
    attr { key: "shapes" value { list { shape {} } } }
    attr { key: "capacity" value { i: 3 } }
    attr { key: "shared_name" value { s: "tokens" } }
  }
  node {
    name: "x" op: "Placeholder"
    attr { key: "dtype" value { type: DT_INT64 } }
  }
  node {
    name: "enqueue" op: "QueueEnqueueV2" input: "q" input: "x"
    attr { key: "Tcomponents" value { list { type: DT_INT64 } } }
  }
  node {
    name: "enqueue_many" op: "QueueEnqueueManyV2" input: "q" input: "x"
    attr { key: "Tcomponents" value { list { type: DT_INT64 } } }
  }
  node {
    name: "dequeue" op: "QueueDequeueV2" input: "q"
    attr { key: "component_types" value { list { type: DT_INT64 } } }
  }
  node {
    name: "n" op: "Placeholder"
    attr { key: "dtype" value { type: DT_INT32 } }
  }
  node {
    name: "dequeue_many" op: "QueueDequeueManyV2" input: "q" input: "n"
    attr { key: "component_types" value { list { type: DT_INT64 } } }
  }
  node { name: "size" op: "QueueSizeV2" input: "q" }
  node { name: "close" op: "QueueCloseV2" input: "q" }
)pb";

class QueueTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(session_.Create(Parse(kQueueGraph)).ok()); }
  absl::Status Enqueue(const Tensor& x, bool many, int64_t timeout_ms = 0) {
    tensorflow::RunOptions options;
    options.set_timeout_in_ms(timeout_ms);
    std::vector<Tensor> out;
    return session_.Run(options, {{"x", x}}, {},
                        {many ? "enqueue_many" : "enqueue"}, &out, nullptr);
  }
  absl::StatusOr<Tensor> Dequeue(int32_t n = -1, int64_t timeout_ms = 0) {
    tensorflow::RunOptions options;
    options.set_timeout_in_ms(timeout_ms);
    std::vector<Tensor> out;
    std::vector<std::pair<std::string, Tensor>> feeds;
    if (n >= 0) feeds.push_back({"n", Int(n)});
    absl::Status s = session_.Run(options, feeds,
                                  {n >= 0 ? "dequeue_many" : "dequeue"}, {},
                                  &out, nullptr);
    if (!s.ok()) return s;
    return out[0];
  }
  int32_t Size() {
    std::vector<Tensor> out;
    EXPECT_TRUE(session_.Run({}, {"size"}, {}, &out).ok());
    return out.empty() ? -1 : out[0].scalar<int32_t>();
  }

  LocalSession session_{SessionOptions()};
};

TEST_F(QueueTest, FirstInFirstOut) {
  ASSERT_TRUE(Enqueue(Step(5), false).ok());
  ASSERT_TRUE(Enqueue(MakeTensor<int64_t>({2}, {6, 7}), true).ok());
  EXPECT_EQ(Size(), 3);
  absl::StatusOr<Tensor> one = Dequeue();
  ASSERT_TRUE(one.ok()) << one.status();
  ExpectTensorEqual(*one, Step(5));
  absl::StatusOr<Tensor> two = Dequeue(2);
  ASSERT_TRUE(two.ok()) << two.status();
  ExpectTensorEqual(*two, MakeTensor<int64_t>({2}, {6, 7}));
  EXPECT_EQ(Size(), 0);
}

TEST_F(QueueTest, WaitsBothWaysAndEndsAtTheDeadline) {
  // Empty: a dequeue waits until its deadline...
  EXPECT_EQ(Dequeue(-1, 100).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  // ... or until an element comes.
  absl::StatusOr<Tensor> got = absl::UnknownError("not run");
  std::thread dequeuer([&] { got = Dequeue(-1, 20000); });
  ASSERT_TRUE(Enqueue(Step(9), false).ok());
  dequeuer.join();
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectTensorEqual(*got, Step(9));
  // Full (capacity 3): an EnqueueMany of 4 puts 3 in and waits for room.
  absl::Status enqueued = absl::UnknownError("not run");
  std::thread enqueuer([&] {
    enqueued = Enqueue(MakeTensor<int64_t>({4}, {1, 2, 3, 4}), true, 20000);
  });
  absl::StatusOr<Tensor> first = Dequeue(-1, 20000);
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectTensorEqual(*first, Step(1));
  enqueuer.join();
  ASSERT_TRUE(enqueued.ok()) << enqueued;
  EXPECT_EQ(Size(), 3);
  EXPECT_EQ(Enqueue(Step(5), false, 100).code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(Size(), 3);
}

TEST_F(QueueTest, CloseServesWhatIsLeftThenOutOfRange) {
  ASSERT_TRUE(Enqueue(MakeTensor<int64_t>({2}, {1, 2}), true).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session_.Run({}, {}, {"close"}, &out).ok());
  absl::Status s = Enqueue(Step(3), false);
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  EXPECT_THAT(s.message(), HasSubstr("FIFOQueue 'tokens' is closed"));
  EXPECT_EQ(Dequeue(3).status().code(), absl::StatusCode::kOutOfRange);
  absl::StatusOr<Tensor> two = Dequeue(2);
  ASSERT_TRUE(two.ok()) << two.status();
  ExpectTensorEqual(*two, MakeTensor<int64_t>({2}, {1, 2}));
}

TEST_F(QueueTest, WrongComponentsAreErrors) {
  absl::Status s = Enqueue(MakeTensor<int64_t>({2}, {1, 2}), false);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("FIFOQueue 'tokens' component 0 has shape"));
  s = Enqueue(Step(1), true);
  EXPECT_THAT(s.message(), HasSubstr("rank >= 1"));
}

// A PriorityQueue's priority is an int64 scalar per element: a vector
// given to Enqueue (or a matrix to EnqueueMany) is refused, naming it.
TEST(PriorityQueueTest, APriorityThatIsNotAScalarIsAnError) {
  LocalSession session{SessionOptions()};
  ASSERT_TRUE(session.Create(Parse(R"pb(
    node {
      name: "q" op: "PriorityQueueV2"
      attr { key: "component_types" value { list { type: DT_FLOAT } } }
      attr { key: "shapes" value { list { } } }
    }
    node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_INT64 } } }
    node { name: "v" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node {
      name: "put" op: "QueueEnqueueV2" input: "q" input: "p" input: "v"
      attr { key: "Tcomponents" value { list { type: DT_INT64 type: DT_FLOAT } } }
    }
    node {
      name: "take" op: "QueueDequeueV2" input: "q"
      attr { key: "component_types" value { list { type: DT_INT64 type: DT_FLOAT } } }
    }
  )pb")).ok());
  std::vector<Tensor> out;
  absl::Status s = session.Run({{"p", MakeTensor<int64_t>({2}, {1, 2})},
                                {"v", Tensor::Scalar<float>(1)}},
                               {}, {"put"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("the priority (component 0) must be an int64 scalar"));
  for (int64_t p : {4, 2, 3}) {
    ASSERT_TRUE(session.Run({{"p", Tensor::Scalar<int64_t>(p)}, {"v", Tensor::Scalar<float>(p)}},
                            {}, {"put"}, &out).ok());
  }
  ASSERT_TRUE(session.Run({}, {"take:0", "take:1"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 2);  // the lowest first
  EXPECT_EQ(out[1].scalar<float>(), 2.0f);
}

// A staging area of capacity 1 and a 16-byte memory limit: Unstage waits
// for a Stage, a full area holds a Stage back, a tuple over the limit is
// refused at once, and every wait ends with its step's deadline.
class StagingAreaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string attrs = R"pb(
      attr { key: "dtypes" value { list { type: DT_FLOAT } } }
      attr { key: "capacity" value { i: 1 } }
      attr { key: "memory_limit" value { i: 16 } }
      attr { key: "shared_name" value { s: "area" } })pb";
    ASSERT_TRUE(session_.Create(Parse(absl::StrCat(
        R"pb(node { name: "v" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
             node { name: "put" op: "Stage" input: "v")pb", attrs, R"pb( }
             node { name: "get" op: "Unstage")pb", attrs, R"pb( }
             node { name: "size" op: "StageSize")pb", attrs, R"pb( }
             node { name: "clear" op: "StageClear")pb", attrs, " }"))).ok());
  }
  absl::Status Run(std::vector<std::pair<std::string, Tensor>> feeds,
                   std::vector<std::string> fetches, std::vector<std::string> targets,
                   std::vector<Tensor>* out, int64_t timeout_ms = 20000) {
    tensorflow::RunOptions options;
    options.set_timeout_in_ms(timeout_ms);
    return session_.Run(options, feeds, fetches, targets, out, nullptr);
  }
  LocalSession session_{SessionOptions()};
};

TEST_F(StagingAreaTest, WaitsBothWaysBoundedAndEndsAtTheDeadline) {
  std::vector<Tensor> out;
  // Nothing staged: the take ends with its deadline.
  EXPECT_EQ(Run({}, {"get"}, {}, &out, 100).code(), absl::StatusCode::kDeadlineExceeded);
  // Over the memory limit: refused at once.
  absl::Status s = Run({{"v", MakeTensor<float>({5}, {1, 2, 3, 4, 5})}}, {}, {"put"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("memory limit of '16'"));
  ASSERT_TRUE(Run({{"v", Vec2(1, 2)}}, {}, {"put"}, &out).ok());
  // Full (capacity 1): a second Stage waits, until its deadline...
  EXPECT_EQ(Run({{"v", Vec2(3, 4)}}, {}, {"put"}, &out, 100).code(),
            absl::StatusCode::kDeadlineExceeded);
  // ... or until a take makes room.
  absl::Status put = absl::UnknownError("not run");
  std::thread putter([&] {
    std::vector<Tensor> none;
    put = Run({{"v", Vec2(5, 6)}}, {}, {"put"}, &none);
  });
  ASSERT_TRUE(Run({}, {"get"}, {}, &out).ok());
  ExpectTensorEqual(out[0], Vec2(1, 2));
  putter.join();
  ASSERT_TRUE(put.ok()) << put;
  ASSERT_TRUE(Run({}, {"size"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 1);
  ASSERT_TRUE(Run({}, {}, {"clear"}, &out).ok());
  ASSERT_TRUE(Run({}, {"size"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 0);
}

}  // namespace
}  // namespace weft
