// LocalSession with the real op and kernel libraries.
//
// (Graphs are built with GraphDefBuilder rather than parsed from text:
// protobuf's text parser crashes under --config=tsan, because the prebuilt
// libprotobuf and TSan-instrumented code disagree on the layout of map
// fields.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "proto/graph.pb.h"
#include "runtime/local_session.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/session.h"
#include "runtime/core/tensor.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using ::testing::EndsWith;
using testing::GraphDefBuilder;
using ::testing::HasSubstr;

Tensor Floats(std::vector<int64_t> dims, std::vector<float> values) {
  Tensor t(DT_FLOAT, TensorShape(dims));
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

const std::pair<std::string, Attr> kFloat = {"T", DT_FLOAT};

TEST(LocalSessionRealOpsTest, AffineWithFeeds) {
  // y = x @ w + b, x: float[?, 2].
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT, Attr::Shape({-1, 2}));
  b.ConstT("w", Floats({2, 2}, {1, 2, 3, 4}));
  b.ConstF("b", 0.5f);
  b.Op("mm", "MatMul", {"x", "w"}, {kFloat});
  b.Op("y", "AddV2", {"mm", "b"}, {kFloat});
  auto s = NewLocalSession(SessionOptions());
  ASSERT_TRUE(s->Create(b.Build()).ok());
  std::vector<Tensor> out;
  absl::Status st =
      s->Run({{"x:0", Floats({1, 2}, {1, 1})}}, {"y:0", "mm"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(Values(out[0]), (std::vector<float>{4.5f, 6.5f}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{4.0f, 6.0f}));
  st = s->Run({{"x", Floats({1, 3}, {1, 1, 1})}}, {"y"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("feed 'x:0' has shape [1,3] but the placeholder "
                        "expects shape [?,2]"));
  Tensor ints(DT_INT32, TensorShape({1, 2}));
  st = s->Run({{"x", ints}}, {"y"}, {}, &out);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("feed 'x:0' has dtype int32 but the placeholder "
                        "expects float"));
}

TEST(LocalSessionRealOpsTest, CreateRejectsImpossibleShapes) {
  GraphDefBuilder b;
  b.Placeholder("a", DT_FLOAT, Attr::Shape({2, 3}));
  b.Placeholder("c", DT_FLOAT, Attr::Shape({4, 5}));
  b.Op("bad_matmul", "MatMul", {"a", "c"}, {kFloat});
  auto s = NewLocalSession(SessionOptions());
  absl::Status st = s->Create(b.Build());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("node 'bad_matmul'"));

  auto s2 = NewLocalSession(SessionOptions());
  st = s2->Create(GraphDefBuilder().Op("q", "NoSuchOp").Build());
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("op 'NoSuchOp' (node 'q') is not registered in Weft"));
}

TEST(LocalSessionRealOpsTest, RefVariablesPersistAcrossRuns) {
  GraphDefBuilder b;
  b.Op("v", "VariableV2", {},
       {{"dtype", DT_FLOAT}, {"shape", Attr::Shape({})}});
  b.ConstF("zero", 0).ConstF("one", 1);
  b.Op("init", "Assign", {"v", "zero"}, {kFloat});
  b.Op("inc", "AssignAdd", {"v", "one"}, {kFloat});
  b.Op("read", "Identity", {"v"}, {kFloat});
  auto s = NewLocalSession(SessionOptions());
  ASSERT_TRUE(s->Create(b.Build()).ok());
  std::vector<Tensor> out;
  absl::Status st = s->Run({}, {"read"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  ASSERT_TRUE(s->Run({}, {}, {"init"}, &out).ok());
  for (int i = 1; i <= 3; ++i) {
    st = s->Run({}, {}, {"inc"}, &out);
    ASSERT_TRUE(st.ok()) << st;
  }
  st = s->Run({}, {"read", "v"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].scalar<float>(), 3.0f);
  EXPECT_EQ(out[1].scalar<float>(), 3.0f);
}

TEST(LocalSessionRealOpsTest, ResourceVariablesPersistAcrossRuns) {
  GraphDefBuilder b;
  b.Op("h", "VarHandleOp", {},
       {{"dtype", DT_FLOAT},
        {"shape", Attr::Shape({})},
        {"shared_name", "counter"}});
  b.ConstF("two", 2);
  b.Op("init", "AssignVariableOp", {"h", "two"}, {{"dtype", DT_FLOAT}});
  b.Op("add", "AssignAddVariableOp", {"h", "two"}, {{"dtype", DT_FLOAT}});
  b.Op("read", "ReadVariableOp", {"h"}, {{"dtype", DT_FLOAT}});
  auto s = NewLocalSession(SessionOptions());
  absl::Status st = s->Create(b.Build());
  ASSERT_TRUE(st.ok()) << st;
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(s->Run({}, {}, {"add"}, &out).ok());
  ASSERT_TRUE(s->Run({}, {}, {"add"}, &out).ok());
  st = s->Run({}, {"read"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].scalar<float>(), 6.0f);
}

TEST(LocalSessionRealOpsTest, ConditionalWithSwitchAndMerge) {
  GraphDefBuilder b;
  b.Placeholder("p", DT_BOOL);
  b.ConstF("x", 3).ConstF("ten", 10);
  b.Op("sw", "Switch", {"x", "p"}, {kFloat});
  b.Op("neg", "Neg", {"sw:1"}, {kFloat});
  b.Op("plus", "AddV2", {"sw:0", "ten"}, {kFloat});
  b.Op("m", "Merge", {"plus", "neg"}, {kFloat, {"N", 2}});
  auto s = NewLocalSession(SessionOptions());
  ASSERT_TRUE(s->Create(b.Build()).ok());
  for (bool pred : {true, false}) {
    std::vector<Tensor> out;
    absl::Status st =
        s->Run({{"p", Tensor::Scalar<bool>(pred)}}, {"m", "m:1"}, {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(out[0].scalar<float>(), pred ? -3.0f : 13.0f);
    EXPECT_EQ(out[1].scalar<int32_t>(), pred ? 1 : 0);
  }
}

TEST(LocalSessionRealOpsTest, KernelErrorNamesTheNode) {
  GraphDefBuilder b;
  b.Placeholder("a", DT_FLOAT).Placeholder("c", DT_FLOAT);
  b.Op("product", "MatMul", {"a", "c"}, {kFloat});
  auto s = NewLocalSession(SessionOptions());
  ASSERT_TRUE(s->Create(b.Build()).ok());
  std::vector<Tensor> out;
  absl::Status st =
      s->Run({{"a", Floats({2, 3}, {})}, {"c", Floats({2, 3}, {})}},
             {"product"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), EndsWith("[[{{node product}}]]"));
}

TEST(LocalSessionRealOpsTest, StacksLiveForOneStep) {
  // push then pop: the stack is the step's own and is gone after the step.
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT).Const("max", -1);
  b.Op("stack", "StackV2", {"max"}, {{"elem_type", DT_FLOAT}});
  b.Op("push", "StackPushV2", {"stack", "x"}, {kFloat});
  b.Op("pop", "StackPopV2", {"stack", "^push"}, {{"elem_type", DT_FLOAT}});
  b.Op("leftover", "StackPushV2", {"stack", "x", "^pop"}, {kFloat});
  LocalSession s{SessionOptions()};
  ASSERT_TRUE(s.Create(b.Build()).ok());
  ResourceMgr* rm = s.device_mgr().default_device()->resource_manager();
  for (float v : {1.5f, 2.5f}) {
    std::vector<Tensor> out;
    absl::Status st = s.Run({{"x", Floats({1}, {v})}}, {"pop"}, {"leftover"},
                            &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(Values(out[0]), (std::vector<float>{v}));
    // "leftover" left a value on the stack; the step's end dropped it.
    EXPECT_TRUE(rm->List().empty()) << rm->List().front();
  }
}

}  // namespace
}  // namespace weft
