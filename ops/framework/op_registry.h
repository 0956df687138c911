// OpRegistry: the ops Weft knows, with their OpDefs and shape functions.
//
// Ops are registered by plain functions, one per family, called in order from
// ops/all_ops.cc (no static initialisers):
//
//   void RegisterMathOps(OpRegistry* r) {
//     r->Register(OpDefBuilder("AddV2").Input("x: T")..., BroadcastBinaryOpShape);
//   }
//
// GlobalOpRegistry() returns the registry with every op; it is built once,
// then read-only and safe to share across threads.
#ifndef WEFT_OPS_FRAMEWORK_OP_REGISTRY_H_
#define WEFT_OPS_FRAMEWORK_OP_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "proto/op_def.pb.h"

namespace weft {

struct OpRegistration {
  tensorflow::OpDef op_def;
  ShapeFn shape_fn;  // never null: UnknownShape when not given
};

class OpRegistry {
 public:
  OpRegistry() = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // A bad spec or a duplicate name is a bug in Weft: it is recorded and
  // reported by status() (and by the registry test), not a crash.
  void Register(const OpDefBuilder& builder, ShapeFn shape_fn = UnknownShape);

  // UNIMPLEMENTED "op 'X' is not registered in Weft" if unknown.
  absl::StatusOr<const OpRegistration*> LookUp(absl::string_view op) const;
  const tensorflow::OpDef* LookUpOpDef(absl::string_view op) const;
  std::vector<std::string> OpNames() const;  // sorted
  // First registration error, if any.
  const absl::Status& status() const { return status_; }

 private:
  absl::flat_hash_map<std::string, OpRegistration> ops_;
  absl::Status status_;
};

// Every op Weft has (ops/all_ops.cc).
const OpRegistry& GlobalOpRegistry();

}  // namespace weft

#endif  // WEFT_OPS_FRAMEWORK_OP_REGISTRY_H_
