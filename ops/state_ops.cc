// State ops: legacy reference variables (VariableV2 and the ops that update
// them through a ref input) and resource variables (VarHandleOp and the ops
// that read and update them through a DT_RESOURCE handle).
#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "ops/type_lists.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// TensorFlow's "numbertypes".
absl::Status VariableShape(InferenceContext* c) {
  PartialShape shape;
  WEFT_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  c->set_output(0, shape);
  return absl::OkStatus();
}

// Output = input 0 merged with input 1 (same shape required).
absl::Status SameShapeUpdate(InferenceContext* c) {
  if (!c->input(0).IsCompatibleWith(c->input(1))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "variable of shape ", c->input(0).DebugString(),
        " cannot be updated with a value of shape ", c->input(1).DebugString()));
  }
  c->set_output(0, c->input(0).known_rank() ? c->input(0) : c->input(1));
  return absl::OkStatus();
}

absl::Status AssignShape(InferenceContext* c) {
  bool validate_shape;
  WEFT_RETURN_IF_ERROR(c->GetAttr("validate_shape", &validate_shape));
  if (validate_shape) return SameShapeUpdate(c);
  c->set_output(0, c->input(1));
  return absl::OkStatus();
}

absl::Status ApplyGradientDescentShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));  // alpha
  if (!c->input(0).IsCompatibleWith(c->input(2))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "var of shape ", c->input(0).DebugString(),
        " and delta of shape ", c->input(2).DebugString(), " differ"));
  }
  if (c->num_outputs() > 0) {
    c->set_output(0, c->input(0).known_rank() ? c->input(0) : c->input(2));
  }
  return absl::OkStatus();
}

absl::Status NoOutputs(InferenceContext*) { return absl::OkStatus(); }

// Scatter*: the variable's shape; updates must be indices.shape +
// var.shape[1:] where both are known (or a scalar).
absl::Status ScatterShape(InferenceContext* c) {
  const PartialShape& var = c->input(0);
  const PartialShape& indices = c->input(1);
  const PartialShape& updates = c->input(2);
  if (var.known_rank() && indices.known_rank() && updates.known_rank() &&
      updates.rank() != 0) {
    if (var.rank() < 1 || updates.rank() != indices.rank() + var.rank() - 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "updates of shape ", updates.DebugString(), " do not fit indices of "
          "shape ", indices.DebugString(), " into a variable of shape ",
          var.DebugString()));
    }
  }
  c->set_output(0, var);
  return absl::OkStatus();
}

// CountUpTo: a scalar variable, a scalar out.
absl::Status ScalarInputShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 0));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

}  // namespace

void RegisterStateOps(OpRegistry* r) {
  // Reference variables.
  r->Register(OpDefBuilder("VariableV2")
                  .Output("ref: Ref(dtype)")
                  .Attr("shape: shape")
                  .Attr("dtype: type")
                  .Attr("container: string = ''")
                  .Attr("shared_name: string = ''")
                  .SetIsStateful(),
              VariableShape);
  // A ref variable for one step (ops/cpu/temporary_variable_kernels.cc).
  r->Register(OpDefBuilder("TemporaryVariable")
                  .Output("ref: Ref(dtype)")
                  .Attr("shape: shape")
                  .Attr("dtype: type")
                  .Attr("var_name: string = ''")
                  .SetIsStateful(),
              VariableShape);
  r->Register(OpDefBuilder("DestroyTemporaryVariable")
                  .Input("ref: Ref(T)")
                  .Output("value: T")
                  .Attr("T: type")
                  .Attr("var_name: string"),
              UnchangedShape);
  // What MonitoredTrainingSession's and Supervisor's readiness checks ask
  // of every ref variable (report_uninitialized_variables).
  r->Register(OpDefBuilder("IsVariableInitialized")
                  .Input("ref: Ref(dtype)")
                  .Output("is_initialized: bool")
                  .Attr("dtype: type")
                  .SetAllowsUninitializedInput(),
              ScalarShape);
  struct Scatter {
    const char* op;
    std::string types;
    const char* locking;
  };
  const std::string number_types = absl::StrCat("T: ", kNumberTypes);
  for (const Scatter& s :
       {Scatter{"ScatterUpdate", "T: type", "use_locking: bool = true"},
        Scatter{"ScatterAdd", number_types, "use_locking: bool = false"},
        Scatter{"ScatterSub", number_types, "use_locking: bool = false"},
        Scatter{"ScatterMul", number_types, "use_locking: bool = false"},
        Scatter{"ScatterDiv", number_types, "use_locking: bool = false"},
        Scatter{"ScatterMin", "T: {half, bfloat16, float, double, int32, int64}",
                "use_locking: bool = false"},
        Scatter{"ScatterMax", "T: {half, bfloat16, float, double, int32, int64}",
                "use_locking: bool = false"}}) {
    r->Register(OpDefBuilder(s.op)
                    .Input("ref: Ref(T)")
                    .Input("indices: Tindices")
                    .Input("updates: T")
                    .Output("output_ref: Ref(T)")
                    .Attr(s.types)
                    .Attr("Tindices: {int32, int64}")
                    .Attr(s.locking),
                ScatterShape);
  }
  for (const Scatter& s :
       {Scatter{"ResourceScatterUpdate", "dtype: type", nullptr},
        Scatter{"ResourceScatterAdd", absl::StrCat("dtype: ", kNumberTypes), nullptr},
        Scatter{"ResourceScatterSub", absl::StrCat("dtype: ", kNumberTypes), nullptr},
        Scatter{"ResourceScatterMul", absl::StrCat("dtype: ", kNumberTypes), nullptr},
        Scatter{"ResourceScatterDiv", absl::StrCat("dtype: ", kNumberTypes), nullptr},
        Scatter{"ResourceScatterMin", absl::StrCat("dtype: ", kNumberTypes), nullptr},
        Scatter{"ResourceScatterMax", absl::StrCat("dtype: ", kNumberTypes), nullptr}}) {
    r->Register(OpDefBuilder(s.op)
                    .Input("resource: resource")
                    .Input("indices: Tindices")
                    .Input("updates: dtype")
                    .Attr(s.types)
                    .Attr("Tindices: {int32, int64}")
                    .SetIsStateful(),
                NoOutputs);
  }
  r->Register(OpDefBuilder("ResourceGather")
                  .Input("resource: resource")
                  .Input("indices: Tindices")
                  .Output("output: dtype")
                  .Attr("batch_dims: int = 0")
                  .Attr("validate_indices: bool = true")
                  .Attr("dtype: type")
                  .Attr("Tindices: {int32, int64}")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("CountUpTo")
                  .Input("ref: Ref(T)")
                  .Output("output: T")
                  .Attr("limit: int")
                  .Attr("T: {int32, int64}"),
              ScalarInputShape);
  r->Register(OpDefBuilder("Assign")
                  .Input("ref: Ref(T)")
                  .Input("value: T")
                  .Output("output_ref: Ref(T)")
                  .Attr("T: type")
                  .Attr("validate_shape: bool = true")
                  .Attr("use_locking: bool = true")
                  .SetAllowsUninitializedInput(),
              AssignShape);
  for (const char* op : {"AssignAdd", "AssignSub"}) {
    r->Register(OpDefBuilder(op)
                    .Input("ref: Ref(T)")
                    .Input("value: T")
                    .Output("output_ref: Ref(T)")
                    .Attr(absl::StrCat("T: ", kNumberTypes))
                    .Attr("use_locking: bool = false"),
                SameShapeUpdate);
  }
  r->Register(OpDefBuilder("ApplyGradientDescent")
                  .Input("var: Ref(T)")
                  .Input("alpha: T")
                  .Input("delta: T")
                  .Output("out: Ref(T)")
                  .Attr(absl::StrCat("T: ", kNumberTypes))
                  .Attr("use_locking: bool = false"),
              ApplyGradientDescentShape);

  // Resource variables.
  r->Register(OpDefBuilder("VarHandleOp")
                  .Output("resource: resource")
                  .Attr("container: string = ''")
                  .Attr("shared_name: string = ''")
                  .Attr("debug_name: string = ''")
                  .Attr("dtype: type")
                  .Attr("shape: shape")
                  .Attr("allowed_devices: list(string) = []")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("ReadVariableOp")
                  .Input("resource: resource")
                  .Output("value: dtype")
                  .Attr("dtype: type")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("AssignVariableOp")
                  .Input("resource: resource")
                  .Input("value: dtype")
                  .Attr("dtype: type")
                  .Attr("validate_shape: bool = false")
                  .SetIsStateful(),
              NoOutputs);
  for (const char* op : {"AssignAddVariableOp", "AssignSubVariableOp"}) {
    r->Register(OpDefBuilder(op)
                    .Input("resource: resource")
                    .Input("value: dtype")
                    .Attr("dtype: type")
                    .SetIsStateful(),
                NoOutputs);
  }
  r->Register(OpDefBuilder("ResourceApplyGradientDescent")
                  .Input("var: resource")
                  .Input("alpha: T")
                  .Input("delta: T")
                  .Attr(absl::StrCat("T: ", kNumberTypes))
                  .Attr("use_locking: bool = false")
                  .SetIsStateful(),
              [](InferenceContext* c) { return c->WithRank(1, 0); });
  r->Register(OpDefBuilder("ResourceCountUpTo")
                  .Input("resource: resource")
                  .Output("output: T")
                  .Attr("limit: int")
                  .Attr("T: {int32, int64}")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("VarIsInitializedOp")
                  .Input("resource: resource")
                  .Output("is_initialized: bool")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("VariableShape")
                  .Input("input: resource")
                  .Output("output: out_type")
                  .Attr("out_type: {int32, int64} = DT_INT32")
                  .SetIsStateful(),
              [](InferenceContext* c) {
                c->set_output(0, PartialShape({-1}));
                return absl::OkStatus();
              });
  r->Register(OpDefBuilder("DestroyResourceOp")
                  .Input("resource: resource")
                  .Attr("ignore_lookup_error: bool = true")
                  .SetIsStateful(),
              NoOutputs);
}

}  // namespace weft
