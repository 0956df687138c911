// Optimizer ops against TensorFlow: ApplyMomentum / ResourceApplyMomentum and
// ApplyAdam / ResourceApplyAdam, plain and Nesterov, float and double, three
// steps each (training_golden.inc, from training_golden.py). Resource forms
// run through KernelRunner on a shared device; ref forms through a
// LocalSession graph (they take several ref inputs). Also copy-on-write and
// the errors (uninitialized or mis-shaped variables are named).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "proto/graph.pb.h"
#include "runtime/local_session.h"
#include "runtime/core/resource_mgr.h"

namespace weft {
namespace {

struct TrainingCase {
  const char* op;  // "Momentum" or "Adam"
  DataType dtype;
  bool nesterov;
  // Per step: var, then slots (accum; or m, v).
  std::vector<std::vector<std::vector<double>>> steps;
};

#include "tests/ops/training_golden.inc"

Tensor Vec(DataType dtype, const std::vector<double>& v) {
  Tensor t(dtype, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DT_FLOAT) {
      t.data<float>()[i] = static_cast<float>(v[i]);
    } else {
      t.data<double>()[i] = v[i];
    }
  }
  return t;
}
Tensor Scalar(DataType dtype, double v) {
  return dtype == DT_FLOAT ? Tensor::Scalar<float>(static_cast<float>(v))
                           : Tensor::Scalar<double>(v);
}
double Tol(DataType dtype) { return dtype == DT_FLOAT ? 1e-5 : 1e-12; }

// The scalar inputs of step t (1-based).
std::vector<Tensor> Scalars(const TrainingCase& tc, int t) {
  const DataType dt = tc.dtype;
  if (std::string(tc.op) == "Momentum") return {Scalar(dt, 0.1), Scalar(dt, 0.9)};
  return {Scalar(dt, std::pow(0.9, t)), Scalar(dt, std::pow(0.999, t)),
          Scalar(dt, 0.01), Scalar(dt, 0.9), Scalar(dt, 0.999), Scalar(dt, 1e-7)};
}

class ResourceTrainingTest : public ::testing::Test {
 protected:
  ResourceTrainingTest() : devices_(DeviceMgr::NewLocal({}).value()) {}
  Device* device() { return devices_->default_device(); }

  // Creates variable `name` holding `value` (uninitialized if not given);
  // returns its handle.
  Tensor MakeVar(const std::string& name, DataType dtype, const Tensor* value) {
    auto var = std::make_shared<Var>(dtype);
    if (value != nullptr) *var->tensor() = *value;
    EXPECT_TRUE(device()->resource_manager()->Create<Var>("localhost", name, var).ok());
    Tensor h(DT_RESOURCE, TensorShape());
    ResourceHandle& rh = h.scalar<ResourceHandle>();
    rh.container = "localhost";
    rh.name = name;
    rh.dtype = dtype;
    return h;
  }
  Tensor Value(const std::string& name) {
    auto var = device()->resource_manager()->Lookup<Var>("localhost", name);
    EXPECT_TRUE(var.ok());
    absl::ReaderMutexLock lock((*var)->mu());
    return *(*var)->tensor();
  }

  std::unique_ptr<DeviceMgr> devices_;
};

TEST_F(ResourceTrainingTest, MatchesTensorFlow) {
  int case_index = 0;
  for (const TrainingCase& tc : kTrainingCases) {
    SCOPED_TRACE(::testing::Message() << tc.op << " " << DataTypeString(tc.dtype)
                                      << " nesterov=" << tc.nesterov);
    const bool momentum = std::string(tc.op) == "Momentum";
    const std::string p = "c" + std::to_string(case_index++) + "_";
    const int num_slots = momentum ? 2 : 3;
    std::vector<std::string> names = {p + "var", p + "s1", p + "s2"};
    names.resize(num_slots);
    std::vector<Tensor> handles;
    const Tensor zeros = Vec(tc.dtype, std::vector<double>(kVar0.size(), 0.0));
    const Tensor var0 = Vec(tc.dtype, kVar0);
    for (int i = 0; i < num_slots; ++i) {
      handles.push_back(MakeVar(names[i], tc.dtype, i == 0 ? &var0 : &zeros));
    }
    KernelRunner r(NodeBuilder("apply", momentum ? "ResourceApplyMomentum"
                                                 : "ResourceApplyAdam")
                       .Attr("T", tc.dtype)
                       .Attr("use_nesterov", tc.nesterov)
                       .Build(),
                   device());
    for (int t = 1; t <= kSteps; ++t) {
      std::vector<Tensor> in = handles;
      std::vector<Tensor> s = Scalars(tc, t);
      const Tensor grad = Vec(tc.dtype, kGrads[t - 1]);
      if (momentum) {
        in.insert(in.end(), {s[0], grad, s[1]});
      } else {
        in.insert(in.end(), s.begin(), s.end());
        in.push_back(grad);
      }
      auto out = r.Run(in);
      ASSERT_TRUE(out.ok()) << out.status();
      for (int i = 0; i < num_slots; ++i) {
        SCOPED_TRACE(::testing::Message() << "step " << t << " slot " << i);
        ExpectTensorNear(Value(names[i]), Vec(tc.dtype, tc.steps[t - 1][i]),
                         Tol(tc.dtype));
      }
    }
  }
}

// The optimizers of optimizer_ops.cc: a mis-shaped slot and an
// out-of-range sparse index are named; Ftrl's value checks use TensorFlow's
// wording; a sparse update touches only the named rows (twice for a row
// named twice). Values against TensorFlow: tests/conformance.
TEST_F(ResourceTrainingTest, OptimizerRuleErrorsNameTheInput) {
  const Tensor init = Vec(DT_FLOAT, {1, 2, 3, 4});
  const Tensor ones = Vec(DT_FLOAT, {1, 1, 1, 1});
  Tensor var = MakeVar("v", DT_FLOAT, &init);
  Tensor accum = MakeVar("v_accum", DT_FLOAT, &ones);
  const Tensor odd = Vec(DT_FLOAT, {1, 1, 1});
  Tensor accum3 = MakeVar("v_accum3", DT_FLOAT, &odd);
  KernelRunner adagrad(NodeBuilder("a", "ResourceApplyAdagrad").Attr("T", DT_FLOAT).Build(),
                       device());
  auto out = adagrad.Run({var, accum3, Scalar(DT_FLOAT, 0.1), Vec(DT_FLOAT, {1, 1, 1, 1})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("v_accum3"), std::string::npos) << out.status();
  out = adagrad.Run({var, accum, Vec(DT_FLOAT, {1, 1}), Vec(DT_FLOAT, {1, 1, 1, 1})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("lr is not a scalar"), std::string::npos)
      << out.status();

  // Sparse: var [4] as 4 rows of 1; row 3 twice, index 9 out of range.
  KernelRunner sparse(NodeBuilder("s", "ResourceSparseApplyAdagrad")
                          .Attr("T", DT_FLOAT).Attr("Tindices", DT_INT32).Build(),
                      device());
  Tensor bad(DT_INT32, TensorShape({2}));
  bad.data<int32_t>()[0] = 1;
  bad.data<int32_t>()[1] = 9;
  out = sparse.Run({var, accum, Scalar(DT_FLOAT, 0.1), Vec(DT_FLOAT, {1, 1}), bad});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("Index 9 at offset 1"), std::string::npos)
      << out.status();
  ExpectTensorEqual(Value("v"), init);  // nothing changed
  Tensor rows(DT_INT32, TensorShape({2}));
  rows.data<int32_t>()[0] = 3;
  rows.data<int32_t>()[1] = 3;
  ASSERT_TRUE(sparse.Run({var, accum, Scalar(DT_FLOAT, 1.0), Vec(DT_FLOAT, {1, 1}), rows}).ok());
  // accum[3]: 1 -> 2 -> 3; var[3] -= 1/sqrt(2) + 1/sqrt(3).
  ExpectTensorNear(Value("v_accum"), Vec(DT_FLOAT, {1, 1, 1, 3}), 1e-6);
  ExpectTensorNear(Value("v"),
                   Vec(DT_FLOAT, {1, 2, 3, 4 - 1 / std::sqrt(2.0) - 1 / std::sqrt(3.0)}),
                   1e-6);

  // Ftrl: l1 < 0 is refused with TensorFlow's message.
  Tensor linear = MakeVar("v_linear", DT_FLOAT, &ones);
  KernelRunner ftrl(NodeBuilder("f", "ResourceApplyFtrl").Attr("T", DT_FLOAT).Build(),
                    device());
  out = ftrl.Run({var, accum, linear, Vec(DT_FLOAT, {1, 1, 1, 1}), Scalar(DT_FLOAT, 0.1),
                  Scalar(DT_FLOAT, -1.0), Scalar(DT_FLOAT, 0.0), Scalar(DT_FLOAT, -0.5)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find(
                "l1 regularization strength is not a non-negative scalar"),
            std::string::npos)
      << out.status();
}

TEST_F(ResourceTrainingTest, CopyOnWriteKeepsReaderSnapshot) {
  const Tensor init = Vec(DT_FLOAT, {1, 2});
  const Tensor zeros = Vec(DT_FLOAT, {0, 0});
  Tensor var = MakeVar("w", DT_FLOAT, &init);
  Tensor acc = MakeVar("w_acc", DT_FLOAT, &zeros);
  const Tensor snapshot = Value("w");  // shares the buffer, like ReadVariableOp
  KernelRunner r(NodeBuilder("m", "ResourceApplyMomentum").Attr("T", DT_FLOAT).Build(),
                 device());
  ASSERT_TRUE(r.Run({var, acc, Scalar(DT_FLOAT, 1.0), Vec(DT_FLOAT, {1, 1}),
                     Scalar(DT_FLOAT, 0.5)})
                  .ok());
  ExpectTensorEqual(snapshot, Vec(DT_FLOAT, {1, 2}));
  ExpectTensorEqual(Value("w"), Vec(DT_FLOAT, {0, 1}));
}

TEST_F(ResourceTrainingTest, ErrorsNameTheVariable) {
  const Tensor init = Vec(DT_FLOAT, {1, 2});
  Tensor var = MakeVar("w", DT_FLOAT, &init);
  Tensor acc = MakeVar("w_acc", DT_FLOAT, nullptr);  // uninitialized
  KernelRunner r(NodeBuilder("m", "ResourceApplyMomentum").Attr("T", DT_FLOAT).Build(),
                 device());
  auto out = r.Run({var, acc, Scalar(DT_FLOAT, 1.0), Vec(DT_FLOAT, {1, 1}),
                    Scalar(DT_FLOAT, 0.5)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(out.status().message().find("w_acc"), std::string::npos) << out.status();

  const Tensor three = Vec(DT_FLOAT, {0, 0, 0});
  Tensor acc3 = MakeVar("w_acc3", DT_FLOAT, &three);
  out = r.Run({var, acc3, Scalar(DT_FLOAT, 1.0), Vec(DT_FLOAT, {1, 1}),
               Scalar(DT_FLOAT, 0.5)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("w_acc3"), std::string::npos) << out.status();

  const Tensor zeros = Vec(DT_FLOAT, {0, 0});
  Tensor acc2 = MakeVar("w_acc2", DT_FLOAT, &zeros);
  out = r.Run({var, acc2, Vec(DT_FLOAT, {1, 1}), Vec(DT_FLOAT, {1, 1}),
               Scalar(DT_FLOAT, 0.5)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("lr is not a scalar"), std::string::npos)
      << out.status();

  Tensor missing;
  {
    Tensor h(DT_RESOURCE, TensorShape());
    h.scalar<ResourceHandle>().container = "localhost";
    h.scalar<ResourceHandle>().name = "nope";
    missing = h;
  }
  out = r.Run({missing, acc2, Scalar(DT_FLOAT, 1.0), Vec(DT_FLOAT, {1, 1}),
               Scalar(DT_FLOAT, 0.5)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(out.status().message().find("'nope'"), std::string::npos) << out.status();
}

// Ref variables, through a session: VariableV2 + Assign initializers, the
// Apply op fed its gradient and scalars by placeholders.
TEST(RefTrainingTest, MatchesTensorFlow) {
  for (const TrainingCase& tc : kTrainingCases) {
    SCOPED_TRACE(::testing::Message() << tc.op << " " << DataTypeString(tc.dtype)
                                      << " nesterov=" << tc.nesterov);
    const bool momentum = std::string(tc.op) == "Momentum";
    const int num_slots = momentum ? 2 : 3;
    const int num_scalars = momentum ? 2 : 6;
    const DataType dt = tc.dtype;
    const int64_t n = static_cast<int64_t>(kVar0.size());
    tensorflow::GraphDef g;
    std::vector<std::string> slots = {"var", "s1", "s2"};
    slots.resize(num_slots);
    std::vector<std::string> inits, reads;
    for (int i = 0; i < num_slots; ++i) {
      *g.add_node() = NodeBuilder(slots[i], "VariableV2")
                          .Attr("dtype", dt)
                          .ShapeAttr("shape", {n})
                          .Build();
      const Tensor v = i == 0 ? Vec(dt, kVar0) : Vec(dt, std::vector<double>(n, 0.0));
      *g.add_node() = NodeBuilder(slots[i] + "_init_value", "Const")
                          .Attr("dtype", dt)
                          .Attr("value", v)
                          .Build();
      *g.add_node() = NodeBuilder(slots[i] + "_init", "Assign")
                          .Input(slots[i])
                          .Input(slots[i] + "_init_value")
                          .Attr("T", dt)
                          .Build();
      *g.add_node() = NodeBuilder(slots[i] + "_read", "Identity")
                          .Input(slots[i])
                          .Attr("T", dt)
                          .Build();
      inits.push_back(slots[i] + "_init");
      reads.push_back(slots[i] + "_read");
    }
    std::vector<std::string> scalar_names;
    for (int i = 0; i < num_scalars; ++i) {
      scalar_names.push_back("s" + std::to_string(i) + "_in");
      *g.add_node() = NodeBuilder(scalar_names.back(), "Placeholder")
                          .Attr("dtype", dt)
                          .ShapeAttr("shape", {})
                          .Build();
    }
    *g.add_node() = NodeBuilder("grad", "Placeholder")
                        .Attr("dtype", dt)
                        .ShapeAttr("shape", {n})
                        .Build();
    NodeBuilder apply("apply", momentum ? "ApplyMomentum" : "ApplyAdam");
    for (const std::string& s : slots) apply.Input(s);
    if (momentum) {
      apply.Input(scalar_names[0]).Input("grad").Input(scalar_names[1]);
    } else {
      for (const std::string& s : scalar_names) apply.Input(s);
      apply.Input("grad");
    }
    *g.add_node() = apply.Attr("T", dt).Attr("use_nesterov", tc.nesterov).Build();

    LocalSession session{SessionOptions()};
    ASSERT_TRUE(session.Create(g).ok());
    std::vector<Tensor> out;
    ASSERT_TRUE(session.Run({}, {}, inits, &out).ok());
    for (int t = 1; t <= kSteps; ++t) {
      std::vector<std::pair<std::string, Tensor>> feeds = {
          {"grad", Vec(dt, kGrads[t - 1])}};
      const std::vector<Tensor> s = Scalars(tc, t);
      for (int i = 0; i < num_scalars; ++i) feeds.push_back({scalar_names[i], s[i]});
      absl::Status st = session.Run(feeds, {}, {"apply"}, &out);
      ASSERT_TRUE(st.ok()) << st;
      st = session.Run({}, reads, {}, &out);
      ASSERT_TRUE(st.ok()) << st;
      for (int i = 0; i < num_slots; ++i) {
        SCOPED_TRACE(::testing::Message() << "step " << t << " slot " << i);
        ExpectTensorNear(out[i], Vec(dt, tc.steps[t - 1][i]), Tol(dt));
      }
    }
  }
}

TEST(RefTrainingTest, UninitializedSlotIsNamed) {
  tensorflow::GraphDef g;
  for (const char* v : {"w", "w_acc"}) {
    *g.add_node() = NodeBuilder(v, "VariableV2").Attr("dtype", DT_FLOAT)
                        .ShapeAttr("shape", {2}).Build();
  }
  *g.add_node() = NodeBuilder("w_init_value", "Const").Attr("dtype", DT_FLOAT)
                      .Attr("value", Vec(DT_FLOAT, {1, 2})).Build();
  *g.add_node() = NodeBuilder("w_init", "Assign").Input("w").Input("w_init_value")
                      .Attr("T", DT_FLOAT).Build();
  *g.add_node() = NodeBuilder("lr", "Const").Attr("dtype", DT_FLOAT)
                      .Attr("value", Scalar(DT_FLOAT, 0.1)).Build();
  *g.add_node() = NodeBuilder("grad", "Const").Attr("dtype", DT_FLOAT)
                      .Attr("value", Vec(DT_FLOAT, {1, 1})).Build();
  *g.add_node() = NodeBuilder("apply", "ApplyMomentum").Input("w").Input("w_acc")
                      .Input("lr").Input("grad").Input("lr").Attr("T", DT_FLOAT).Build();
  LocalSession session{SessionOptions()};
  ASSERT_TRUE(session.Create(g).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({}, {}, {"w_init"}, &out).ok());
  absl::Status st = session.Run({}, {}, {"apply"}, &out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("w_acc"), std::string::npos) << st;
}

}  // namespace
}  // namespace weft
