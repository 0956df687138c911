// LocalSession on graphs with function libraries and functional control
// flow (graph/lower_functional_ops.h), with the real op and kernel
// libraries: calls (PartitionedCall, a library function used as an op,
// nested calls), StatelessIf with a non-bool condition, Case (an
// out-of-range index runs the last branch), While, and the errors a bad
// library gets (unknown function, recursion, wrong Tout).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/lower_functional_ops.h"
#include "proto/function.pb.h"
#include "proto/graph.pb.h"
#include "runtime/core/tensor.h"
#include "runtime/local_session.h"
#include "runtime/session.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using testing::GraphDefBuilder;
using ::testing::HasSubstr;
using tensorflow::FunctionDef;
using tensorflow::NodeDef;

Tensor Floats(std::vector<float> values) {
  Tensor t(DT_FLOAT, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

NodeDef* AddNode(FunctionDef* f, const std::string& name, const std::string& op,
                 std::vector<std::string> inputs, DataType t = DT_FLOAT) {
  NodeDef* n = f->add_node_def();
  n->set_name(name);
  n->set_op(op);
  for (const std::string& in : inputs) n->add_input(in);
  if (op != "Const") (*n->mutable_attr())["T"].set_type(t);
  return n;
}

void AddConst(FunctionDef* f, const std::string& name, float value) {
  NodeDef* n = AddNode(f, name, "Const", {});
  (*n->mutable_attr())["dtype"].set_type(DT_FLOAT);
  auto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(DT_FLOAT);
  t->add_float_val(value);
}

void AddArg(tensorflow::OpDef* sig, const std::string& name, DataType t,
            bool output = false) {
  auto* a = output ? sig->add_output_arg() : sig->add_input_arg();
  a->set_name(name);
  a->set_type(t);
}

// name(x: float) -> y: float, y = x * k.
FunctionDef Scale(const std::string& name, float k) {
  FunctionDef f;
  f.mutable_signature()->set_name(name);
  AddArg(f.mutable_signature(), "x", DT_FLOAT);
  AddArg(f.mutable_signature(), "y", DT_FLOAT, /*output=*/true);
  AddConst(&f, "k", k);
  AddNode(&f, "mul", "Mul", {"x", "k:output:0"});
  (*f.mutable_ret())["y"] = "mul:z:0";
  return f;
}

// name(x) -> y: y = callee(x) + 1, calling through PartitionedCall.
FunctionDef CallsThenAddsOne(const std::string& name, const std::string& callee) {
  FunctionDef f;
  f.mutable_signature()->set_name(name);
  AddArg(f.mutable_signature(), "x", DT_FLOAT);
  AddArg(f.mutable_signature(), "y", DT_FLOAT, true);
  NodeDef* call = AddNode(&f, "call", "PartitionedCall", {"x"});
  call->mutable_attr()->erase("T");
  (*call->mutable_attr())["Tin"].mutable_list()->add_type(DT_FLOAT);
  (*call->mutable_attr())["Tout"].mutable_list()->add_type(DT_FLOAT);
  (*call->mutable_attr())["f"].mutable_func()->set_name(callee);
  AddConst(&f, "one", 1.0f);
  AddNode(&f, "add", "AddV2", {"call:output:0", "one:output:0"});
  (*f.mutable_ret())["y"] = "add:z:0";
  return f;
}

void SetTypes(NodeDef* n, const std::string& attr, std::vector<DataType> types) {
  auto* list = (*n->mutable_attr())[attr].mutable_list();
  for (DataType t : types) list->add_type(t);
}

NodeDef* Call(GraphDefBuilder* b, const std::string& name, const std::string& op,
              std::vector<std::string> inputs, const std::string& f) {
  b->Op(name, op, std::move(inputs));
  NodeDef* n = b->mutable_def()->mutable_node(b->mutable_def()->node_size() - 1);
  SetTypes(n, "Tin", {DT_FLOAT});
  SetTypes(n, "Tout", {DT_FLOAT});
  if (!f.empty()) (*n->mutable_attr())["f"].mutable_func()->set_name(f);
  return n;
}

absl::StatusOr<std::vector<float>> RunOne(const tensorflow::GraphDef& def,
                                          std::vector<std::pair<std::string, Tensor>> feeds,
                                          const std::string& fetch) {
  auto s = NewLocalSession(SessionOptions());
  absl::Status st = s->Create(def);
  if (!st.ok()) return st;
  std::vector<Tensor> out;
  st = s->Run(feeds, {fetch}, {}, &out);
  if (!st.ok()) return st;
  return Values(out[0]);
}

using Floats3 = std::vector<float>;

TEST(FunctionalSessionTest, CallsInlineTheirFunction) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  Call(&b, "call", "PartitionedCall", {"x"}, "double_it");
  b.Op("direct", "double_it", {"x"});  // a library function used as an op
  b.Op("nested", "outer", {"x"});
  tensorflow::GraphDef def = b.Build();
  *def.mutable_library()->add_function() = Scale("double_it", 2.0f);
  *def.mutable_library()->add_function() = CallsThenAddsOne("outer", "double_it");
  const Tensor x = Floats({1, -2, 3});
  EXPECT_EQ(*RunOne(def, {{"x", x}}, "call"), (Floats3{2, -4, 6}));
  EXPECT_EQ(*RunOne(def, {{"x", x}}, "direct"), (Floats3{2, -4, 6}));
  EXPECT_EQ(*RunOne(def, {{"x", x}}, "nested"), (Floats3{3, -3, 7}));
}

TEST(FunctionalSessionTest, IfTakesANonBoolCondition) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  b.Placeholder("c", DT_INT32);
  b.Op("if", "StatelessIf", {"c", "x"}, {{"Tcond", DT_INT32}});
  NodeDef* n = b.mutable_def()->mutable_node(2);
  SetTypes(n, "Tin", {DT_FLOAT});
  SetTypes(n, "Tout", {DT_FLOAT});
  (*n->mutable_attr())["then_branch"].mutable_func()->set_name("times2");
  (*n->mutable_attr())["else_branch"].mutable_func()->set_name("times3");
  tensorflow::GraphDef def = b.Build();
  *def.mutable_library()->add_function() = Scale("times2", 2.0f);
  *def.mutable_library()->add_function() = Scale("times3", 3.0f);
  const Tensor x = Floats({1, 2});
  EXPECT_EQ(*RunOne(def, {{"x", x}, {"c", Tensor::Scalar<int32_t>(7)}}, "if"),
            (Floats3{2, 4}));
  EXPECT_EQ(*RunOne(def, {{"x", x}, {"c", Tensor::Scalar<int32_t>(0)}}, "if"),
            (Floats3{3, 6}));
}

TEST(FunctionalSessionTest, CaseRunsTheLastBranchForAnOutOfRangeIndex) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  b.Placeholder("i", DT_INT32);
  b.Op("case", "Case", {"i", "x"});
  NodeDef* n = b.mutable_def()->mutable_node(2);
  SetTypes(n, "Tin", {DT_FLOAT});
  SetTypes(n, "Tout", {DT_FLOAT});
  for (const char* f : {"times2", "times3", "times5"}) {
    (*n->mutable_attr())["branches"].mutable_list()->add_func()->set_name(f);
  }
  tensorflow::GraphDef def = b.Build();
  *def.mutable_library()->add_function() = Scale("times2", 2.0f);
  *def.mutable_library()->add_function() = Scale("times3", 3.0f);
  *def.mutable_library()->add_function() = Scale("times5", 5.0f);
  const Tensor x = Floats({1});
  for (auto [index, want] : std::vector<std::pair<int, float>>{
           {0, 2}, {1, 3}, {2, 5}, {9, 5}, {-1, 5}}) {
    EXPECT_EQ(*RunOne(def, {{"x", x}, {"i", Tensor::Scalar<int32_t>(index)}},
                      "case"),
              (Floats3{want}))
        << "index " << index;
  }
}

TEST(FunctionalSessionTest, WhileLoopsUntilItsCondIsFalse) {
  // (i, v) = (0, x); while i < 4: (i + 1, v * 2).
  FunctionDef cond;
  cond.mutable_signature()->set_name("cond");
  AddArg(cond.mutable_signature(), "i", DT_FLOAT);
  AddArg(cond.mutable_signature(), "v", DT_FLOAT);
  AddArg(cond.mutable_signature(), "more", DT_BOOL, true);
  AddConst(&cond, "four", 4.0f);
  AddNode(&cond, "less", "Less", {"i", "four:output:0"});
  (*cond.mutable_ret())["more"] = "less:z:0";
  FunctionDef body;
  body.mutable_signature()->set_name("body");
  AddArg(body.mutable_signature(), "i", DT_FLOAT);
  AddArg(body.mutable_signature(), "v", DT_FLOAT);
  AddArg(body.mutable_signature(), "i2", DT_FLOAT, true);
  AddArg(body.mutable_signature(), "v2", DT_FLOAT, true);
  AddConst(&body, "one", 1.0f);
  AddConst(&body, "two", 2.0f);
  AddNode(&body, "inc", "AddV2", {"i", "one:output:0"});
  AddNode(&body, "dbl", "Mul", {"v", "two:output:0"});
  (*body.mutable_ret())["i2"] = "inc:z:0";
  (*body.mutable_ret())["v2"] = "dbl:z:0";

  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  b.ConstF("zero", 0.0f);
  b.Op("loop", "While", {"zero", "x"});
  NodeDef* n = b.mutable_def()->mutable_node(2);
  SetTypes(n, "T", {DT_FLOAT, DT_FLOAT});
  (*n->mutable_attr())["cond"].mutable_func()->set_name("cond");
  (*n->mutable_attr())["body"].mutable_func()->set_name("body");
  tensorflow::GraphDef def = b.Build();
  *def.mutable_library()->add_function() = cond;
  *def.mutable_library()->add_function() = body;
  EXPECT_EQ(*RunOne(def, {{"x", Floats({1, 3})}}, "loop:1"), (Floats3{16, 48}));
  EXPECT_EQ(*RunOne(def, {{"x", Floats({1, 3})}}, "loop:0"), (Floats3{4}));
}

absl::Status CreateStatus(const tensorflow::GraphDef& def) {
  return NewLocalSession(SessionOptions())->Create(def);
}

TEST(FunctionalSessionTest, ABadLibraryIsAnErrorNamingTheFunction) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  Call(&b, "call", "PartitionedCall", {"x"}, "missing_fn");
  absl::Status st = CreateStatus(b.Build());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("missing_fn"));

  // A function that calls itself: bounded, and the message says so.
  GraphDefBuilder r;
  r.Placeholder("x", DT_FLOAT);
  r.Op("call", "forever", {"x"});
  tensorflow::GraphDef def = r.Build();
  *def.mutable_library()->add_function() = CallsThenAddsOne("forever", "forever");
  st = CreateStatus(def);
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("forever"));
  EXPECT_THAT(std::string(st.message()),
              HasSubstr(std::to_string(kMaxFunctionNesting)));

  // Tout that disagrees with the function's outputs.
  GraphDefBuilder t;
  t.Placeholder("x", DT_FLOAT);
  NodeDef* n = Call(&t, "call", "PartitionedCall", {"x"}, "double_it");
  (*n->mutable_attr())["Tout"].mutable_list()->set_type(0, DT_INT32);
  def = t.Build();
  *def.mutable_library()->add_function() = Scale("double_it", 2.0f);
  st = CreateStatus(def);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("Tout"));
}

}  // namespace
}  // namespace weft
