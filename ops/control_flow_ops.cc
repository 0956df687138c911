// Control-flow and function-call ops: NoOp and ControlTrigger, Switch/Merge
// (conditionals; _SwitchN and ToBool for lowered Case and If),
// Enter/Exit/NextIteration/LoopCond (while loops), the Ref*
// variants of these that forward a variable's ref, the StackV2 family (the
// per-step stacks a v1 while loop's gradient saves forward values in), and
// the _Arg/_Retval pair through which a session's feeds and fetches enter
// and leave a graph.
#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

absl::Status NoOutputs(InferenceContext*) { return absl::OkStatus(); }

absl::Status SwitchShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));  // pred
  c->set_output(0, c->input(0));
  c->set_output(1, c->input(0));
  return absl::OkStatus();
}

// The inputs may differ; keep what they agree on.
absl::Status MergeShape(InferenceContext* c) {
  PartialShape out = c->input(0);
  for (int i = 1; i < c->num_inputs() && out.known_rank(); ++i) {
    const PartialShape& s = c->input(i);
    if (!s.known_rank() || s.rank() != out.rank()) {
      out = PartialShape::UnknownRank();
      break;
    }
    std::vector<int64_t> dims(out.dims().begin(), out.dims().end());
    for (int d = 0; d < s.rank(); ++d) {
      if (dims[d] != s.dim(d)) dims[d] = -1;
    }
    out = PartialShape(dims);
  }
  c->set_output(0, out);
  c->set_output(1, PartialShape({}));
  return absl::OkStatus();
}

absl::Status StackHandleShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  return absl::OkStatus();
}

// StackPushV2 passes its element through.
absl::Status PushShape(InferenceContext* c) {
  c->set_output(0, c->input(1));
  return absl::OkStatus();
}

absl::Status SwitchNShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));  // output_index
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(0));
  return absl::OkStatus();
}

absl::Status BoolScalarShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  return absl::OkStatus();
}

absl::Status LoopCondShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 0));
  c->set_output(0, PartialShape({}));
  return absl::OkStatus();
}

}  // namespace

void RegisterControlFlowOps(OpRegistry* r) {
  r->Register(OpDefBuilder("NoOp"), NoOutputs);
  // Runs even when its inputs are dead (TensorFlow's v1 gradient graphs
  // use it as a control-only join); the executor has no special case: it
  // has no inputs of its own that could be dead.
  r->Register(OpDefBuilder("ControlTrigger"), NoOutputs);
  for (const char* ref : {"", "Ref"}) {
    const bool is_ref = ref[0] != '\0';
    const std::string t = is_ref ? "Ref(T)" : "T";
    OpDefBuilder sw(absl::StrCat(ref, "Switch"));
    sw.Input("data: " + t)
        .Input("pred: bool")
        .Output("output_false: " + t)
        .Output("output_true: " + t)
        .Attr("T: type");
    if (is_ref) sw.SetAllowsUninitializedInput();
    r->Register(sw, SwitchShape);
    r->Register(OpDefBuilder(absl::StrCat(ref, "Merge"))
                    .Input(is_ref ? "inputs: Ref(N * T)" : "inputs: N * T")
                    .Output("output: " + t)
                    .Output("value_index: int32")
                    .Attr("T: type")
                    .Attr("N: int >= 1"),
                MergeShape);
    r->Register(OpDefBuilder(absl::StrCat(ref, "Enter"))
                    .Input("data: " + t)
                    .Output("output: " + t)
                    .Attr("T: type")
                    .Attr("frame_name: string")
                    .Attr("is_constant: bool = false")
                    .Attr("parallel_iterations: int = 10"),
                UnchangedShape);
    for (const char* op : {"Exit", "NextIteration"}) {
      r->Register(OpDefBuilder(absl::StrCat(ref, op))
                      .Input("data: " + t)
                      .Output("output: " + t)
                      .Attr("T: type"),
                  UnchangedShape);
    }
  }
  r->Register(OpDefBuilder("RefIdentity")
                  .Input("input: Ref(T)")
                  .Output("output: Ref(T)")
                  .Attr("T: type")
                  .SetAllowsUninitializedInput(),
              UnchangedShape);
  r->Register(
      OpDefBuilder("LoopCond").Input("input: bool").Output("output: bool"),
      LoopCondShape);
  // The N-way Switch a lowered Case selects its branch with: `data` goes to
  // output `output_index`, or to the last one when the index is out of range.
  r->Register(OpDefBuilder("_SwitchN")
                  .Input("data: T")
                  .Input("output_index: int32")
                  .Output("outputs: num_outs * T")
                  .Attr("num_outs: int >= 1")
                  .Attr("T: type"),
              SwitchNShape);
  // A tensor's truth as If and While read a non-bool condition: a scalar is
  // true when nonzero (a string when non-empty), any other tensor when it
  // has elements.
  r->Register(
      OpDefBuilder("ToBool").Input("input: T").Output("output: bool").Attr("T: type"),
      BoolScalarShape);
  r->Register(OpDefBuilder("StackV2")
                  .Input("max_size: int32")
                  .Output("handle: resource")
                  .Attr("elem_type: type")
                  .Attr("stack_name: string = ''")
                  .SetIsStateful(),
              StackHandleShape);
  r->Register(OpDefBuilder("StackPushV2")
                  .Input("handle: resource")
                  .Input("elem: T")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("swap_memory: bool = false")
                  .SetIsStateful(),
              PushShape);
  r->Register(OpDefBuilder("StackPopV2")
                  .Input("handle: resource")
                  .Output("elem: elem_type")
                  .Attr("elem_type: type")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("StackCloseV2")
                  .Input("handle: resource")
                  .SetIsStateful(),
              NoOutputs);
  r->Register(OpDefBuilder("_Arg")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("index: int >= 0")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("_Retval")
                  .Input("input: T")
                  .Attr("T: type")
                  .Attr("index: int >= 0")
                  .SetIsStateful(),
              NoOutputs);
}

}  // namespace weft
