// The optimizer update ops beyond Momentum and Adam (training_ops.cc): the
// Adagrad family, RMSProp, Adadelta, AdaMax, Ftrl, the proximal ones,
// AddSign/PowerSign, KerasMomentum and AdamWithAmsgrad, each in the forms
// TensorFlow 2.21 defines (Apply* with ref variables, ResourceApply*,
// SparseApply*, ResourceSparseApply*).
//
// Their OpDefs follow one pattern, so they are written as a table: the
// variables (var and its slots), the plain inputs in order (the scalars and
// grad; a sparse form adds `indices` right after grad), and the attrs after
// T/Tindices/use_locking. Registering from the table keeps the 50-odd
// OpDefs identical to TensorFlow's without 50 hand-written builders
// (tests/ops/op_def_compat_test checks them).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "ops/type_lists.h"
#include "runtime/core/status.h"

namespace weft {

// training_ops.cc: scalars are scalars; for ref ops the inputs in `same`
// agree in shape and give output 0's.
absl::Status OptimizerApplyShape(InferenceContext* c, const std::vector<int>& same,
                                 const std::vector<int>& scalars, bool resource);

namespace {

enum Forms : unsigned {
  kRef = 1,             // Apply<Name>
  kResource = 2,        // ResourceApply<Name>
  kSparseRef = 4,       // SparseApply<Name>
  kSparseResource = 8,  // ResourceSparseApply<Name>
  kAll = 15,
};

struct OptimizerOpSpec {
  const char* name;
  std::vector<std::string> slots;  // var first
  std::vector<std::string> plain;  // "grad" or "delta" among them; others T scalars
  std::vector<std::string> attrs;  // after T, Tindices and use_locking
  unsigned forms;
};

const std::vector<OptimizerOpSpec>& Specs() {
  static const auto* specs = new std::vector<OptimizerOpSpec>{
      {"Adagrad", {"var", "accum"}, {"lr", "grad"},
       {"update_slots: bool = true"}, kAll},
      {"AdagradV2", {"var", "accum"}, {"lr", "epsilon", "grad"},
       {"update_slots: bool = true"}, kAll},
      {"RMSProp", {"var", "ms", "mom"},
       {"lr", "rho", "momentum", "epsilon", "grad"}, {}, kAll},
      {"CenteredRMSProp", {"var", "mg", "ms", "mom"},
       {"lr", "rho", "momentum", "epsilon", "grad"}, {}, kAll},
      {"Adadelta", {"var", "accum", "accum_update"},
       {"lr", "rho", "epsilon", "grad"}, {}, kAll},
      {"AdaMax", {"var", "m", "v"},
       {"beta1_power", "lr", "beta1", "beta2", "epsilon", "grad"}, {},
       kRef | kResource},
      {"Ftrl", {"var", "accum", "linear"},
       {"grad", "lr", "l1", "l2", "lr_power"},
       {"multiply_linear_by_lr: bool = false"}, kAll},
      {"FtrlV2", {"var", "accum", "linear"},
       {"grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"},
       {"multiply_linear_by_lr: bool = false"}, kAll},
      {"ProximalGradientDescent", {"var"}, {"alpha", "l1", "l2", "delta"}, {},
       kAll},
      {"ProximalAdagrad", {"var", "accum"}, {"lr", "l1", "l2", "grad"}, {},
       kAll},
      {"AddSign", {"var", "m"}, {"lr", "alpha", "sign_decay", "beta", "grad"},
       {}, kRef | kResource},
      {"PowerSign", {"var", "m"},
       {"lr", "logbase", "sign_decay", "beta", "grad"}, {}, kRef | kResource},
      {"KerasMomentum", {"var", "accum"}, {"lr", "grad", "momentum"},
       {"use_nesterov: bool = false"}, kResource | kSparseResource},
      {"AdamWithAmsgrad", {"var", "m", "v", "vhat"},
       {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon",
        "grad"},
       {}, kResource},
      {"AdagradDA",
       {"var", "gradient_accumulator", "gradient_squared_accumulator"},
       {"grad", "lr", "l1", "l2", "global_step"}, {}, kAll},
  };
  return *specs;
}

// The roles of one op's inputs, by index.
struct Roles {
  int num_slots = 0;
  int grad = -1;
  int indices = -1;
  std::vector<int> scalars;  // global_step included
};

// Ref forms: the slots and grad (dense) agree in shape, which output 0
// takes; sparse: indices is a vector. Scalars are scalars in every form.
absl::Status OptimizerShape(InferenceContext* c, const Roles& roles,
                            bool ref) {
  if (roles.indices >= 0) WEFT_RETURN_IF_ERROR(c->WithRank(roles.indices, 1));
  std::vector<int> same;
  for (int i = 0; i < roles.num_slots; ++i) same.push_back(i);
  if (roles.indices < 0) same.push_back(roles.grad);
  return OptimizerApplyShape(c, same, roles.scalars, !ref);
}

void RegisterForm(OpRegistry* r, const OptimizerOpSpec& spec, bool ref,
                  bool sparse) {
  const std::string name =
      absl::StrCat(ref ? "" : "Resource", sparse ? "SparseApply" : "Apply",
                   spec.name);
  OpDefBuilder b(name);
  Roles roles;
  int index = 0;
  for (const std::string& slot : spec.slots) {
    b.Input(absl::StrCat(slot, ref ? ": Ref(T)" : ": resource"));
    ++roles.num_slots;
    ++index;
  }
  for (std::string in : spec.plain) {
    if (in == "grad" || in == "delta") {
      if (sparse) in = "grad";
      b.Input(absl::StrCat(in, ": T"));
      roles.grad = index++;
      if (sparse) {
        b.Input("indices: Tindices");
        roles.indices = index++;
      }
      continue;
    }
    b.Input(absl::StrCat(in, in == "global_step" ? ": int64" : ": T"));
    roles.scalars.push_back(index++);
  }
  if (ref) b.Output("out: Ref(T)");
  b.Attr(absl::StrCat("T: ", kNumberTypes));
  if (sparse) b.Attr("Tindices: {int32, int64}");
  b.Attr("use_locking: bool = false");
  for (const std::string& attr : spec.attrs) b.Attr(attr);
  if (!ref) b.SetIsStateful();
  r->Register(std::move(b), [roles, ref](InferenceContext* c) {
    return OptimizerShape(c, roles, ref);
  });
}

}  // namespace

void RegisterOptimizerOps(OpRegistry* r) {
  for (const OptimizerOpSpec& spec : Specs()) {
    if (spec.forms & kRef) RegisterForm(r, spec, true, false);
    if (spec.forms & kResource) RegisterForm(r, spec, false, false);
    if (spec.forms & kSparseRef) RegisterForm(r, spec, true, true);
    if (spec.forms & kSparseResource) RegisterForm(r, spec, false, true);
  }
}

}  // namespace weft
