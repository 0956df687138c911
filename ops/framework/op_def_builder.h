// OpDefBuilder: writes an OpDef from short specs, the way ops are documented.
//
//   OpDefBuilder("MatMul")
//       .Input("a: T")
//       .Input("b: T")
//       .Output("product: T")
//       .Attr("transpose_a: bool = false")
//       .Attr("transpose_b: bool = false")
//       .Attr("T: {half, bfloat16, float, double, int32, int64}")
//       .Finalize(&op_def);
//
// Arg specs:  "name: T"       type from attr T
//             "name: float"   fixed type
//             "name: N * T"   N tensors of type T (N an int attr)
//             "name: Tlist"   a list(type) attr
//             "name: Ref(T)"  a reference (legacy variables)
// Attr specs: "name: TYPE [= default]" with TYPE one of type, {t1, t2} (type
//             with allowed values), int, float, bool, string, shape, tensor,
//             func, list(...), {'a', 'b'} (string with allowed values);
//             ">= N" after int/list types sets a minimum.
// Errors in specs are programming errors reported by Finalize().
#ifndef WEFT_OPS_FRAMEWORK_OP_DEF_BUILDER_H_
#define WEFT_OPS_FRAMEWORK_OP_DEF_BUILDER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/op_def.pb.h"

namespace weft {

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string op_name);

  OpDefBuilder& Input(std::string spec);
  OpDefBuilder& Output(std::string spec);
  OpDefBuilder& Attr(std::string spec);
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& SetIsCommutative();
  OpDefBuilder& SetIsAggregate();
  OpDefBuilder& SetAllowsUninitializedInput();
  // Marks ops that move tensors between devices or tasks (_Recv).
  OpDefBuilder& SetIsDistributedCommunication();
  OpDefBuilder& Doc(std::string summary);

  absl::Status Finalize(tensorflow::OpDef* op_def) const;

 private:
  tensorflow::OpDef op_def_;
  std::vector<std::string> inputs_;
  std::vector<std::string> outputs_;
  std::vector<std::string> attrs_;
};

}  // namespace weft

#endif  // WEFT_OPS_FRAMEWORK_OP_DEF_BUILDER_H_
