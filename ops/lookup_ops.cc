// Lookup tables as TensorFlow declares them: the ops that make a table
// (HashTable, MutableHashTable, MutableHashTableOfTensors,
// MutableDenseHashTable, in a resource form "...V2", a ref form whose handle
// is a Ref(string) pair, and an anonymous form) and the ops on a table
// (LookupTableFind/Insert/Remove/Import/Export/Size, InitializeTable and
// InitializeTableFromTextFile). Keras' StringLookup/IntegerLookup,
// TextVectorization's vocabulary, tf.lookup's static tables and feature
// columns' vocabulary lists emit them. The ops are generated from two
// tables of (name, inputs, outputs, attrs), so the resource and ref forms
// stay the same op apart from the handle. Kernels: ops/cpu/lookup_kernels.cc.
#include <string>
#include <vector>

#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {
namespace {

// The ref form's handle: two strings (container, name).
absl::Status RefHandleShape(InferenceContext* c) {
  c->set_output(0, PartialShape({2}));
  return absl::OkStatus();
}

// A table-making op. `prefix`: the kind ("HashTable", ...); `form`: 0 the
// ref form (no suffix), 1 the resource form (V2), 2 the anonymous one.
void RegisterTableMaker(OpRegistry* r, const std::string& kind, int form) {
  const bool dense = kind == "MutableDenseHashTable";
  const bool tensors = dense || kind == "MutableHashTableOfTensors";
  std::string name = form == 0 ? kind : form == 1 ? kind + "V2" : "Anonymous" + kind;
  OpDefBuilder b(name);
  if (dense) {
    b.Input("empty_key: key_dtype");
    if (form != 0) b.Input("deleted_key: key_dtype");
  }
  b.Output(form == 0 ? "table_handle: Ref(string)" : "table_handle: resource");
  if (form != 2) {
    b.Attr("container: string = ''")
        .Attr("shared_name: string = ''")
        .Attr("use_node_name_sharing: bool = false");
  }
  b.Attr("key_dtype: type").Attr("value_dtype: type");
  if (tensors) b.Attr("value_shape: shape = {}");
  if (dense) {
    b.Attr("initial_num_buckets: int = 131072")
        .Attr("max_load_factor: float = 0.8");
  }
  b.SetIsStateful();
  r->Register(b, form == 0 ? RefHandleShape : ScalarShape);
}

// An op on a table, in its ref form (`v2` false: handle Ref(string), not
// stateful, as TensorFlow has it) or resource form.
OpDefBuilder TableOp(const std::string& name, bool v2) {
  OpDefBuilder b(v2 ? name + "V2" : name);
  b.Input(v2 ? "table_handle: resource" : "table_handle: Ref(string)");
  if (v2) b.SetIsStateful();
  return b;
}

absl::Status SizeShape(InferenceContext* c) { return ScalarShape(c); }

}  // namespace

void RegisterLookupOps(OpRegistry* r) {
  for (const char* kind : {"HashTable", "MutableHashTable",
                           "MutableHashTableOfTensors",
                           "MutableDenseHashTable"}) {
    for (int form = 0; form < 3; ++form) RegisterTableMaker(r, kind, form);
  }
  for (bool v2 : {false, true}) {
    r->Register(TableOp("LookupTableFind", v2)
                    .Input("keys: Tin")
                    .Input("default_value: Tout")
                    .Output("values: Tout")
                    .Attr("Tin: type")
                    .Attr("Tout: type"),
                UnknownShape);
    for (const char* op : {"LookupTableInsert", "LookupTableImport"}) {
      r->Register(TableOp(op, v2)
                      .Input("keys: Tin")
                      .Input("values: Tout")
                      .Attr("Tin: type")
                      .Attr("Tout: type"),
                  UnknownShape);
    }
    r->Register(TableOp("LookupTableExport", v2)
                    .Output("keys: Tkeys")
                    .Output("values: Tvalues")
                    .Attr("Tkeys: type")
                    .Attr("Tvalues: type"),
                UnknownShape);
    r->Register(TableOp("LookupTableSize", v2).Output("size: int64"),
                SizeShape);
    r->Register(TableOp("InitializeTable", v2)
                    .Input("keys: Tkey")
                    .Input("values: Tval")
                    .Attr("Tkey: type")
                    .Attr("Tval: type"),
                UnknownShape);
    r->Register(TableOp("InitializeTableFromTextFile", v2)
                    .Input("filename: string")
                    .Attr("key_index: int >= -2")
                    .Attr("value_index: int >= -2")
                    .Attr("vocab_size: int >= -1 = -1")
                    .Attr("delimiter: string = '\t'")
                    .Attr("offset: int = 0"),
                UnknownShape);
  }
  r->Register(TableOp("LookupTableRemove", true)
                  .Input("keys: Tin")
                  .Attr("Tin: type"),
              UnknownShape);
}

}  // namespace weft
