// Control-flow and function-call ops: NoOp, Switch/Merge (conditionals),
// Enter/Exit/NextIteration/LoopCond (while loops), and the _Arg/_Retval pair
// through which a session's feeds and fetches enter and leave a graph.
#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/status.h"

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

absl::Status LoopCondShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 0));
  c->set_output(0, PartialShape({}));
  return absl::OkStatus();
}

}  // namespace

void RegisterControlFlowOps(OpRegistry* r) {
  r->Register(OpDefBuilder("NoOp"), NoOutputs);
  r->Register(OpDefBuilder("Switch")
                  .Input("data: T")
                  .Input("pred: bool")
                  .Output("output_false: T")
                  .Output("output_true: T")
                  .Attr("T: type"),
              SwitchShape);
  r->Register(OpDefBuilder("Merge")
                  .Input("inputs: N * T")
                  .Output("output: T")
                  .Output("value_index: int32")
                  .Attr("T: type")
                  .Attr("N: int >= 1"),
              MergeShape);
  r->Register(OpDefBuilder("Enter")
                  .Input("data: T")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("frame_name: string")
                  .Attr("is_constant: bool = false")
                  .Attr("parallel_iterations: int = 10"),
              UnchangedShape);
  for (const char* op : {"Exit", "NextIteration"}) {
    r->Register(
        OpDefBuilder(op).Input("data: T").Output("output: T").Attr("T: type"),
        UnchangedShape);
  }
  r->Register(
      OpDefBuilder("LoopCond").Input("input: bool").Output("output: bool"),
      LoopCondShape);
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
