#include "ops/testing/kernel_runner.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_kernel.h"
#include "ops/framework/op_registry.h"
#include "proto/attr_value.pb.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"

namespace weft {

NodeBuilder::NodeBuilder(std::string name, std::string op) {
  node_.set_name(std::move(name));
  node_.set_op(std::move(op));
}
NodeBuilder& NodeBuilder::Input(std::string input) {
  node_.add_input(std::move(input));
  return *this;
}
NodeBuilder& NodeBuilder::Attr(const std::string& name, DataType value) {
  (*node_.mutable_attr())[name].set_type(value);
  return *this;
}
NodeBuilder& NodeBuilder::Attr(const std::string& name, int64_t value) {
  (*node_.mutable_attr())[name].set_i(value);
  return *this;
}
NodeBuilder& NodeBuilder::Attr(const std::string& name, float value) {
  (*node_.mutable_attr())[name].set_f(value);
  return *this;
}
NodeBuilder& NodeBuilder::Attr(const std::string& name, bool value) {
  (*node_.mutable_attr())[name].set_b(value);
  return *this;
}
NodeBuilder& NodeBuilder::Attr(const std::string& name,
                               const std::string& value) {
  (*node_.mutable_attr())[name].set_s(value);
  return *this;
}
NodeBuilder& NodeBuilder::Attr(const std::string& name, const Tensor& value) {
  TensorToProto(value, (*node_.mutable_attr())[name].mutable_tensor());
  return *this;
}
NodeBuilder& NodeBuilder::Attr(const std::string& name,
                               const std::vector<int64_t>& value) {
  auto* list = (*node_.mutable_attr())[name].mutable_list();
  for (int64_t v : value) list->add_i(v);
  return *this;
}
NodeBuilder& NodeBuilder::Attr(const std::string& name,
                               const DataTypeVector& value) {
  auto* list = (*node_.mutable_attr())[name].mutable_list();
  for (DataType v : value) list->add_type(v);
  return *this;
}
NodeBuilder& NodeBuilder::ShapeAttr(const std::string& name,
                                    const std::vector<int64_t>& dims) {
  auto* shape = (*node_.mutable_attr())[name].mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_size(d);
  return *this;
}

KernelRunner::KernelRunner(tensorflow::NodeDef node)
    : node_(std::move(node)),
      devices_(DeviceMgr::NewLocal({}).value()),
      device_(devices_->default_device()) {}

KernelRunner::KernelRunner(tensorflow::NodeDef node, Device* device)
    : node_(std::move(node)), device_(device) {}

KernelRunner::~KernelRunner() = default;

absl::StatusOr<std::vector<Tensor>> KernelRunner::Run(
    const std::vector<Tensor>& inputs) {
  std::vector<TensorEntry> entries(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    entries[i].value = inputs[i];
    entries[i].has_value = inputs[i].IsInitialized();
  }
  return RunEntries(std::move(entries));
}

absl::StatusOr<std::vector<Tensor>> KernelRunner::RunWithRefInput(
    Tensor* ref, const std::vector<Tensor>& other_inputs, absl::Mutex* ref_mu) {
  std::vector<TensorEntry> entries(other_inputs.size() + 1);
  entries[0].ref = ref;
  entries[0].ref_mu = ref_mu != nullptr ? ref_mu : &ref_mu_;
  entries[0].has_value = true;
  for (size_t i = 0; i < other_inputs.size(); ++i) {
    entries[i + 1].value = other_inputs[i];
    entries[i + 1].has_value = true;
  }
  return RunEntries(std::move(entries));
}

absl::StatusOr<std::vector<Tensor>> KernelRunner::RunEntries(
    std::vector<TensorEntry> entries) {
  tensorflow::NodeDef node = node_;
  if (NumDataInputs(node) != static_cast<int>(entries.size()) ||
      node.input_size() != NumDataInputs(node)) {
    node.clear_input();
    for (size_t i = 0; i < entries.size(); ++i) {
      node.add_input(absl::StrCat("in", i));
    }
  }
  if (kernel_ == nullptr || kernel_inputs_ != static_cast<int>(entries.size())) {
    WEFT_ASSIGN_OR_RETURN(const OpRegistration* reg,
                          GlobalOpRegistry().LookUp(node.op()));
    AddDefaultsToNodeDef(reg->op_def, &node);
    WEFT_RETURN_IF_ERROR(ValidateNodeDef(node, reg->op_def));
    WEFT_ASSIGN_OR_RETURN(
        kernel_, GlobalKernelRegistry().CreateKernel(node, reg->op_def, device()));
    kernel_inputs_ = static_cast<int>(entries.size());
  }
  OpKernel* kernel = kernel_.get();
  std::vector<TensorEntry> outputs(kernel->num_outputs());
  OpKernelContext::Params params;
  params.device = device();
  params.kernel = kernel;
  params.inputs = entries.data();
  params.outputs = outputs.data();
  params.call_frame = call_frame_;
  OpKernelContext ctx(params);
  kernel->Compute(&ctx);
  if (!ctx.status().ok()) return WithContext(ctx.status(), NodeLabel(node));
  std::vector<Tensor> result;
  for (TensorEntry& e : outputs) {
    if (e.is_ref()) {
      result.push_back(*e.ref);
    } else {
      result.push_back(e.value);
    }
  }
  return result;
}

namespace {

template <typename T>
double ToDouble(const T& v) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<double>(v);
  } else if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(v);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16ToFloat(v);
  } else {
    return 0;
  }
}

double AsDouble(const Tensor& t, int64_t i) {
  double v = 0;
  WEFT_SWITCH_ALL_TYPES(t.dtype(), v = ToDouble(t.data<T>()[i]), break);
  return v;
}

}  // namespace

void ExpectTensorEqual(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(DataTypeString(actual.dtype()), DataTypeString(expected.dtype()));
  ASSERT_EQ(actual.shape().DebugString(), expected.shape().DebugString());
  for (int64_t i = 0; i < expected.NumElements(); ++i) {
    ASSERT_EQ(actual.ElementString(i), expected.ElementString(i))
        << "element " << i << " of " << actual.DebugString();
  }
}

void ExpectTensorNear(const Tensor& actual, const Tensor& expected,
                      double tolerance) {
  ASSERT_EQ(DataTypeString(actual.dtype()), DataTypeString(expected.dtype()));
  ASSERT_EQ(actual.shape().DebugString(), expected.shape().DebugString());
  for (int64_t i = 0; i < expected.NumElements(); ++i) {
    const double a = AsDouble(actual, i);
    const double e = AsDouble(expected, i);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << "element " << i;
      continue;
    }
    if (a == e) continue;  // exact, including equal infinities
    EXPECT_NEAR(a, e, tolerance * (1 + std::fabs(e)))
        << "element " << i << " of " << actual.DebugString();
  }
}

}  // namespace weft
