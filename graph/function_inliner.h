// Expanding one call of a library function into plain nodes.
//
//   WEFT_ASSIGN_OR_RETURN(FunctionLibrary lib,
//                         FunctionLibrary::Create(graph_def.library()));
//   InlineRequest req;
//   req.function = "__inference_f_11";  req.attrs = call_attrs;
//   req.inputs = {"x", "y:1"};           req.prefix = "call";
//   WEFT_ASSIGN_OR_RETURN(InlinedBody body,
//                         InlineFunctionBody(req, lib, ops, &new_nodes));
//   // body.outputs[i] is the tensor name of the function's i-th result.
//
// A FunctionDef's body refers to its inputs by arg name and to other body
// nodes as "node:output_arg:index"; InlineFunctionBody rewrites that into the
// GraphDef form ("prefix/node:flat_index"), substitutes attr placeholders
// ("$T") from the call's attrs, gives every node the caller's device unless it
// names its own, and feeds each input through an Identity named
// "prefix/arg_name" (so a body placed elsewhere still reads its inputs on the
// caller's side, and a conditional's branch starts at a node of its own).
// Nodes of the body that call other functions, or are functional control
// flow, are emitted as they are: graph/lower_functional_ops.h expands them in
// turn.
//
// Thread safety: FunctionLibrary is immutable after Create and may be read
// from many threads; it refers into the FunctionDefLibrary it was built from,
// which must outlive it.
#ifndef WEFT_GRAPH_FUNCTION_INLINER_H_
#define WEFT_GRAPH_FUNCTION_INLINER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ops/framework/op_registry.h"
#include "proto/function.pb.h"
#include "proto/node_def.pb.h"
#include "runtime/core/types.h"

namespace weft {

using AttrMap = google::protobuf::Map<std::string, tensorflow::AttrValue>;

// An index of a FunctionDefLibrary by name.
class FunctionLibrary {
 public:
  // INVALID_ARGUMENT when two functions share a name or a function has none.
  static absl::StatusOr<FunctionLibrary> Create(
      const tensorflow::FunctionDefLibrary& library);

  // nullptr when absent.
  const tensorflow::FunctionDef* Find(absl::string_view name) const;
  // The name of the function registered as `name`'s gradient, or "".
  std::string GradientOf(absl::string_view name) const;
  bool empty() const { return functions_.empty(); }

 private:
  absl::flat_hash_map<std::string, const tensorflow::FunctionDef*> functions_;
  absl::flat_hash_map<std::string, std::string> gradients_;
};

// The dtypes of the signature's inputs (or outputs) under `attrs`, flattened
// (a list arg contributes one entry per tensor).
absl::StatusOr<DataTypeVector> SignatureTypes(const tensorflow::FunctionDef& fn,
                                              const AttrMap& attrs,
                                              bool outputs);

struct InlineRequest {
  std::string function;       // library name
  AttrMap attrs;              // values for the function's attr placeholders
  std::vector<std::string> inputs;  // one tensor name per flattened input
  std::string prefix;         // new nodes are named prefix + "/" + body name
  std::string device;         // for body nodes that name no device
  // Control inputs given to every input Identity and to every body node that
  // has no inputs at all (a Const, say): the caller's own control inputs, or
  // the pivot that puts a branch or loop body in its frame. Node names.
  std::vector<std::string> control_inputs;
  // Names the caller will use for itself; used only in messages.
  std::string caller;
};

struct InlinedBody {
  std::vector<std::string> outputs;       // tensor names, flattened
  DataTypeVector output_types;
  std::vector<std::string> control_outputs;  // node names (control_ret)
};

// Appends the body's nodes to `out`. Errors name the caller and the function:
// an unknown function, an input count that differs from the signature, a
// missing attr for a placeholder, a body input naming no node or arg.
// On error `out` may hold some of the nodes.
absl::StatusOr<InlinedBody> InlineFunctionBody(
    const InlineRequest& request, const FunctionLibrary& library,
    const OpRegistry& ops, std::vector<tensorflow::NodeDef>* out);

}  // namespace weft

#endif  // WEFT_GRAPH_FUNCTION_INLINER_H_
