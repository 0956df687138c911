// TensorFlow's functional ops: function calls (PartitionedCall,
// StatefulPartitionedCall, SymbolicGradient) and functional control flow
// (If, StatelessIf, Case, StatelessCase, While, StatelessWhile), as
// TensorFlow declares them. They have no kernels: graph/lower_functional_ops
// rewrites every one of them into the callee's nodes or into
// Switch/Merge/Enter/Exit frames before a graph is placed, and these OpDefs
// let a function body's references to their outputs ("call:output:1")
// resolve, and `weft inspect` describe them. RemoteCall is the exception:
// its target device is a runtime value, so its kernel
// (ops/cpu/remote_call_kernel.cc) runs the function when the step does.
#include <string>

#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {

void RegisterFunctionalOps(OpRegistry* r) {
  for (const char* call : {"PartitionedCall", "StatefulPartitionedCall"}) {
    OpDefBuilder b(call);
    b.Input("args: Tin")
        .Output("output: Tout")
        .Attr("Tin: list(type) >= 0")
        .Attr("Tout: list(type) >= 0")
        .Attr("f: func")
        .Attr("config: string = ''")
        .Attr("config_proto: string = ''")
        .Attr("executor_type: string = ''");
    if (std::string(call) == "StatefulPartitionedCall") b.SetIsStateful();
    r->Register(b, UnknownShape);
  }
  r->Register(OpDefBuilder("RemoteCall")
                  .Input("target: string")
                  .Input("args: Tin")
                  .Output("output: Tout")
                  .Attr("Tin: list(type) >= 1")
                  .Attr("Tout: list(type) >= 1")
                  .Attr("f: func")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("SymbolicGradient")
                  .Input("input: Tin")
                  .Output("output: Tout")
                  .Attr("Tin: list(type) >= 1")
                  .Attr("Tout: list(type) >= 1")
                  .Attr("f: func"),
              UnknownShape);
  for (const char* op : {"If", "StatelessIf"}) {
    OpDefBuilder b(op);
    b.Input("cond: Tcond")
        .Input("input: Tin")
        .Output("output: Tout")
        .Attr("Tcond: type")
        .Attr("Tin: list(type) >= 0")
        .Attr("Tout: list(type) >= 0")
        .Attr("then_branch: func")
        .Attr("else_branch: func")
        .Attr("output_shapes: list(shape) = []");
    if (std::string(op) == "If") b.SetIsStateful();
    r->Register(b, UnknownShape);
  }
  for (const char* op : {"Case", "StatelessCase"}) {
    OpDefBuilder b(op);
    b.Input("branch_index: int32")
        .Input("input: Tin")
        .Output("output: Tout")
        .Attr("Tin: list(type) >= 0")
        .Attr("Tout: list(type) >= 0")
        .Attr("branches: list(func) >= 1")
        .Attr("output_shapes: list(shape) = []");
    if (std::string(op) == "Case") b.SetIsStateful();
    r->Register(b, UnknownShape);
  }
  for (const char* op : {"While", "StatelessWhile"}) {
    OpDefBuilder b(op);
    b.Input("input: T")
        .Output("output: T")
        .Attr("T: list(type) >= 0")
        .Attr("cond: func")
        .Attr("body: func")
        .Attr("output_shapes: list(shape) = []")
        .Attr("parallel_iterations: int = 10");
    if (std::string(op) == "While") b.SetIsStateful();
    r->Register(b, UnknownShape);
  }
}

}  // namespace weft
