// FunctionRuntime: instantiating library functions (attr placeholders,
// nested calls, functional control flow in the body) and running them, and
// the errors a bad call or a bad library gets.
#include "runtime/function_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "google/protobuf/text_format.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/device.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

// negate(x: T) = -x; twice_negated(x: float) = negate(negate(x)) + 1;
// broken(x: float) calls an op nobody has.
constexpr char kLibrary[] = R"pb(
  function {
    signature {
      name: "negate"
      input_arg { name: "x" type_attr: "T" }
      output_arg { name: "y" type_attr: "T" }
      attr { name: "T" type: "type" }
    }
    node_def {
      name: "n"
      op: "Neg"
      input: "x"
      attr { key: "T" value { placeholder: "T" } }
    }
    ret { key: "y" value: "n:y:0" }
  }
  function {
    signature {
      name: "twice_negated"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def {
      name: "a"
      op: "negate"
      input: "x"
      attr { key: "T" value { type: DT_FLOAT } }
    }
    node_def {
      name: "b"
      op: "negate"
      input: "a:y:0"
      attr { key: "T" value { type: DT_FLOAT } }
    }
    node_def {
      name: "one"
      op: "Const"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr {
        key: "value"
        value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } }
      }
    }
    node_def {
      name: "sum"
      op: "AddV2"
      input: "b:y:0"
      input: "one:output:0"
      attr { key: "T" value { type: DT_FLOAT } }
    }
    ret { key: "y" value: "sum:z:0" }
  }
  function {
    signature {
      name: "broken"
      input_arg { name: "x" type: DT_FLOAT }
      output_arg { name: "y" type: DT_FLOAT }
    }
    node_def { name: "n" op: "NoSuchOp" input: "x" }
    ret { key: "y" value: "n:y:0" }
  }
)pb";

class FunctionRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tensorflow::FunctionDefLibrary library;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kLibrary, &library));
    runtime_ = std::make_shared<FunctionRuntime>(FunctionRuntime::Options{
        library, &GlobalOpRegistry(), &GlobalKernelRegistry()});
    absl::StatusOr<std::unique_ptr<DeviceMgr>> devices =
        DeviceMgr::NewLocal(LocalDeviceOptions());
    ASSERT_TRUE(devices.ok()) << devices.status();
    devices_ = *std::move(devices);
  }

  absl::StatusOr<std::shared_ptr<const InstantiatedFunction>> Instantiate(
      const std::string& name, DataType t = DT_INVALID) {
    tensorflow::NameAttrList fn;
    fn.set_name(name);
    if (t != DT_INVALID) (*fn.mutable_attr())["T"].set_type(t);
    Device* d = devices_->default_device();
    return runtime_->Instantiate(fn, d, d->resource_manager());
  }

  std::shared_ptr<FunctionRuntime> runtime_;
  std::unique_ptr<DeviceMgr> devices_;
};

TEST_F(FunctionRuntimeTest, BindsAttrsAndRuns) {
  auto f = Instantiate("negate", DT_INT32);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->arg_types(), DataTypeVector({DT_INT32}));
  EXPECT_EQ((*f)->ret_types(), DataTypeVector({DT_INT32}));
  std::vector<Tensor> out;
  ASSERT_TRUE((*f)->Run({Tensor::Scalar<int32_t>(5)}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].scalar<int32_t>(), -5);
}

TEST_F(FunctionRuntimeTest, NestedCallsAreLowered) {
  auto f = Instantiate("twice_negated");
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<Tensor> out;
  ASSERT_TRUE((*f)->Run({Tensor::Scalar<float>(2.5f)}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 3.5f);
}

TEST_F(FunctionRuntimeTest, ConcurrentCallsAreIndependent) {
  auto f = Instantiate("negate", DT_INT32);
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::vector<Tensor> out;
        absl::Status s = (*f)->Run({Tensor::Scalar<int32_t>(t * 1000 + i)}, &out);
        if (!s.ok() || out[0].scalar<int32_t>() != -(t * 1000 + i)) ++wrong[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

TEST_F(FunctionRuntimeTest, ErrorsNameTheFunction) {
  auto missing = Instantiate("nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nope"));

  auto broken = Instantiate("broken");
  EXPECT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr("broken"));
  EXPECT_THAT(broken.status().message(), HasSubstr("NoSuchOp"));

  auto unbound = Instantiate("negate");  // T not given
  EXPECT_FALSE(unbound.ok());

  auto f = Instantiate("negate", DT_FLOAT);
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<Tensor> out;
  absl::Status s = (*f)->Run({}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("takes 1 arguments, got 0"));
  s = (*f)->Run({Tensor::Scalar<int32_t>(1)}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("argument 0 must be float"));
}

TEST_F(FunctionRuntimeTest, ACancelledCallerCancelsTheCall) {
  auto f = Instantiate("negate", DT_FLOAT);
  ASSERT_TRUE(f.ok()) << f.status();
  CancellationManager cm;
  cm.StartCancel();
  std::vector<Tensor> out;
  absl::Status s = (*f)->Run({Tensor::Scalar<float>(1)}, &out, &cm);
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
}

TEST_F(FunctionRuntimeTest, AFunctionOutlivesItsRuntimeHandle) {
  auto f = Instantiate("twice_negated");
  ASSERT_TRUE(f.ok()) << f.status();
  runtime_.reset();  // the instance holds what it needs
  std::vector<Tensor> out;
  ASSERT_TRUE((*f)->Run({Tensor::Scalar<float>(1)}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 2.0f);
}

}  // namespace
}  // namespace weft
