// Kernels of the lookup-table ops (ops/lookup_ops.cc) over the tables of
// lookup_table.h.
//
// Where a table lives, as in TensorFlow: a table-making op names its table
// by container/shared_name in the step's ResourceMgr (the device's, or an
// isolated session's own), so every graph and session on the device that
// names it shares it. With no shared_name the node's name is used when
// use_node_name_sharing is set; otherwise the table is private to the
// kernel (to its session): a unique name, dropped from the device's
// manager when the kernel goes. Anonymous* tables are new on every run and
// live in the step's container. The table ops take either handle form (a
// resource scalar, or the ref form's two strings).
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/lookup_table.h"
#include "ops/cpu/lookup_text_file.h"
#include "ops/cpu/shared_resource.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/resource_mgr.h"

namespace weft {
namespace {

std::atomic<int64_t> next_private_table{0};

// HashTable, MutableHashTable, MutableHashTableOfTensors,
// MutableDenseHashTable, each in its three forms.
class TableMakerOp : public OpKernel {
 public:
  TableMakerOp(OpKernelConstruction* c, TableKind kind)
      : OpKernel(c),
        kind_(kind),
        ref_(c->output_types()[0] != DT_RESOURCE),
        anonymous_(c->def().op().rfind("Anonymous", 0) == 0) {
    absl::Status s = c->GetAttr("value_dtype", &value_dtype_);
    if (s.ok() && kind != TableKind::kDense) s = c->GetAttr("key_dtype", &key_dtype_);
    PartialShape value_shape = PartialShape::FromShape(TensorShape());
    if (s.ok() && kind != TableKind::kStatic && kind != TableKind::kMutable) {
      s = c->GetAttr("value_shape", &value_shape);
    }
    if (s.ok() && !value_shape.IsFullyDefined()) {
      s = absl::InvalidArgumentError(absl::StrCat(
          name(), ": value_shape must be fully defined, got ",
          value_shape.DebugString()));
    }
    if (s.ok()) value_shape_ = value_shape.ToShape();
    if (s.ok() && kind == TableKind::kMutableOfTensors && value_shape_.dims() != 1) {
      s = absl::InvalidArgumentError(absl::StrCat(
          "Default value must be a vector, got shape ", value_shape_.DebugString()));
    }
    if (s.ok() && kind == TableKind::kDense) {
      s = c->GetAttr("initial_num_buckets", &num_buckets_);
      if (s.ok()) s = c->GetAttr("max_load_factor", &max_load_factor_);
      if (s.ok() && c->num_inputs() < 2) {
        s = absl::InvalidArgumentError(absl::StrCat(
            name(), ": MutableDenseHashTable (the ref form) has no deleted_key "
            "input; TensorFlow's kernel cannot run it either: use "
            "MutableDenseHashTableV2"));
      }
    }
    if (s.ok() && !anonymous_) {
      bool node_sharing = false;
      s = c->GetAttr("use_node_name_sharing", &node_sharing);
      handle_ = SharedResourceName(c, DT_INVALID);
      std::string shared_name;
      if (s.ok()) s = c->GetAttr("shared_name", &shared_name);
      if (s.ok() && shared_name.empty() && !node_sharing) {
        private_ = true;
        handle_.name = absl::StrCat("_", next_private_table++, "_", c->def().name());
      }
      ref_handle_ = RefHandleTensor(handle_);
    }
    c->SetStatus(s);
  }

  ~TableMakerOp() override {
    absl::MutexLock lock(&mu_);
    if (private_ && private_rm_ != nullptr) {
      (void)private_rm_->Delete<LookupTable>(handle_.container, handle_.name);
    }
  }

  void Compute(OpKernelContext* c) override {
    ResourceHandle h = handle_;
    ResourceMgr* rm = c->resource_manager();
    if (anonymous_) {
      h.device = c->device()->name();
      h.container = StepContainerName(c->step_id());
      h.name = absl::StrCat("_AnonymousTable_", next_private_table++);
    }
    // Looked up first, made and added if absent (another run may add it
    // meanwhile: then that one is used).
    absl::StatusOr<std::shared_ptr<LookupTable>> t =
        rm->Lookup<LookupTable>(h.container, h.name);
    if (!t.ok()) {
      absl::StatusOr<std::shared_ptr<LookupTable>> made = Make(c, h.name);
      OP_REQUIRES_OK(c, made.status());
      if (rm->Create<LookupTable>(h.container, h.name, *made).ok()) {
        t = std::move(made);
      } else {
        t = rm->Lookup<LookupTable>(h.container, h.name);
        OP_REQUIRES_OK(c, t.status());
      }
    }
    const DataType want_key = kind_ == TableKind::kDense ? c->input(0).dtype() : key_dtype_;
    OP_REQUIRES(c,
                (*t)->key_dtype() == want_key && (*t)->value_dtype() == value_dtype_,
                absl::InvalidArgumentError(absl::StrCat(
                    "Conflicting key/value dtypes ", DataTypeString(want_key),
                    "->", DataTypeString(value_dtype_), " with ",
                    DataTypeString((*t)->key_dtype()), "-",
                    DataTypeString((*t)->value_dtype()), " for table ", h.name)));
    if (private_ && rm == c->device()->resource_manager()) {
      absl::MutexLock lock(&mu_);
      private_rm_ = rm;
    }
    if (ref_) {
      c->set_output_ref(0, &ref_mu_, &ref_handle_);
    } else {
      c->set_output(0, ResourceHandleTensor(h));
    }
  }

 private:
  absl::StatusOr<std::shared_ptr<LookupTable>> Make(OpKernelContext* c,
                                                    const std::string& name) {
    if (kind_ != TableKind::kDense) {
      return MakeHashTable(kind_, name, key_dtype_, value_dtype_, value_shape_);
    }
    return MakeDenseHashTable(name, value_dtype_, c->input(0), c->input(1),
                              value_shape_, num_buckets_, max_load_factor_);
  }

  const TableKind kind_;
  const bool ref_;
  const bool anonymous_;
  DataType key_dtype_ = DT_INVALID;
  DataType value_dtype_ = DT_INVALID;
  TensorShape value_shape_;
  int64_t num_buckets_ = 0;
  float max_load_factor_ = 0;
  bool private_ = false;
  ResourceHandle handle_;
  absl::Mutex mu_;
  ResourceMgr* private_rm_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Mutex ref_mu_;
  Tensor ref_handle_;  // never written after construction
};

std::string SignatureString(const DataTypeVector& in, const DataTypeVector& out) {
  auto names = [](const DataTypeVector& v) {
    std::vector<std::string> s;
    for (DataType t : v) {
      s.push_back(IsRefType(t) ? DataTypeString(BaseType(t)) + "_ref"
                               : DataTypeString(t));
    }
    return absl::StrJoin(s, ", ");
  };
  return absl::StrCat(names(in), "->", names(out));
}

// The ops on a table: looks the table up and checks the op's signature
// against its dtypes (TensorFlow's "Signature mismatch").
class TableOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<LookupTable>> t =
        LookupSharedResource<LookupTable>(c, "lookup table", "HashTableV2");
    OP_REQUIRES_OK(c, t.status());
    LookupTable& table = **t;
    DataTypeVector in_have, in_want, out_have, out_want;
    for (int i = 0; i < c->num_inputs(); ++i) {
      in_have.push_back(c->input_dtype(i));
      in_want.push_back(i == 0 ? c->input_dtype(0) : Expected(table, i, true));
    }
    for (int i = 0; i < c->num_outputs(); ++i) {
      out_have.push_back(c->expected_output_dtype(i));
      out_want.push_back(Expected(table, i, false));
    }
    OP_REQUIRES(c, in_have == in_want && out_have == out_want,
                absl::InvalidArgumentError(absl::StrCat(
                    "Signature mismatch, have: ", SignatureString(in_have, out_have),
                    " expected: ", SignatureString(in_want, out_want))));
    Run(c, table);
  }

 protected:
  // The dtype input (or output) `i` must have for `table`.
  virtual DataType Expected(const LookupTable& table, int i, bool input) const {
    if (input) return i == 1 ? table.key_dtype() : table.value_dtype();
    return table.value_dtype();
  }
  virtual void Run(OpKernelContext* c, LookupTable& table) = 0;
};

class FindOp : public TableOp {
 public:
  using TableOp::TableOp;
  void Run(OpKernelContext* c, LookupTable& table) override {
    const Tensor& keys = c->input(1);
    const Tensor& def = c->input(2);
    OP_REQUIRES_OK(c, table.CheckFind(keys, def));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, table.FindShape(keys.shape()), &out));
    OP_REQUIRES_OK(c, table.Find(c, keys, def, out));
  }
};

// LookupTableInsert, LookupTableImport (a dense table checks the bucket
// tensors it imports itself) and LookupTableRemove.
class UpdateOp : public TableOp {
 public:
  enum Kind { kInsert, kImport, kRemove };
  UpdateOp(OpKernelConstruction* c, Kind kind) : TableOp(c), kind_(kind) {}
  void Run(OpKernelContext* c, LookupTable& table) override {
    const Tensor& keys = c->input(1);
    if (kind_ == kRemove) {
      OP_REQUIRES_OK(c, table.CheckRemove(keys));
      OP_REQUIRES_OK(c, table.Remove(keys));
      return;
    }
    const Tensor& values = c->input(2);
    if (kind_ == kInsert || !table.imports_buckets()) {
      OP_REQUIRES_OK(c, table.CheckInsert(keys, values));
    }
    OP_REQUIRES_OK(c, kind_ == kInsert ? table.Insert(keys, values)
                                       : table.Import(keys, values));
  }

 private:
  const Kind kind_;
};

class ExportOp : public TableOp {
 public:
  using TableOp::TableOp;
  DataType Expected(const LookupTable& table, int i, bool) const override {
    return i == 0 ? table.key_dtype() : table.value_dtype();
  }
  void Run(OpKernelContext* c, LookupTable& table) override {
    Tensor keys, values;
    OP_REQUIRES_OK(c, table.Export(&keys, &values));
    c->set_output(0, std::move(keys));
    c->set_output(1, std::move(values));
  }
};

class SizeOp : public TableOp {
 public:
  using TableOp::TableOp;
  DataType Expected(const LookupTable&, int, bool) const override {
    return DT_INT64;
  }
  void Run(OpKernelContext* c, LookupTable& table) override {
    c->set_output(0, Tensor::Scalar<int64_t>(table.size()));
  }
};

// TensorFlow's refusal of InitializeTable* on a mutable table, naming its
// container and name.
absl::Status CheckInitializable(OpKernelContext* c, const LookupTable& table) {
  if (table.initializable()) return absl::OkStatus();
  absl::StatusOr<ResourceHandle> h = HandleFromInput(c, 0, "lookup table");
  return absl::InvalidArgumentError(
      absl::StrCat("Table ", h.ok() ? h->container : "", " ", table.name(),
                   " is not initializable"));
}

class InitializeOp : public TableOp {
 public:
  using TableOp::TableOp;
  void Run(OpKernelContext* c, LookupTable& table) override {
    OP_REQUIRES_OK(c, CheckInitializable(c, table));
    const Tensor& keys = c->input(1);
    const Tensor& values = c->input(2);
    OP_REQUIRES(c, keys.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Keys must be a vector, but received shape",
                    keys.shape().DebugString())));
    OP_REQUIRES(c, values.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Values must be a vector, but received shape",
                    values.shape().DebugString())));
    OP_REQUIRES(c, keys.NumElements() == values.NumElements(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Keys and values must have the same size ",
                    keys.NumElements(), " vs ", values.NumElements())));
    OP_REQUIRES_OK(c, table.Initialize(keys, values, keys.NumElements(),
                                       absl::OkStatus()));
  }
};

class InitializeFromTextFileOp : public TableOp {
 public:
  explicit InitializeFromTextFileOp(OpKernelConstruction* c) : TableOp(c) {
    std::string delimiter;
    absl::Status s = c->GetAttr("key_index", &spec_.key_index);
    if (s.ok()) s = c->GetAttr("value_index", &spec_.value_index);
    if (s.ok()) s = c->GetAttr("vocab_size", &spec_.vocab_size);
    if (s.ok()) s = c->GetAttr("offset", &spec_.offset);
    if (s.ok()) s = c->GetAttr("delimiter", &delimiter);
    if (s.ok() && delimiter.size() != 1) {
      s = absl::InvalidArgumentError("delimiter should be only 1 char");
    }
    if (s.ok()) spec_.delimiter = delimiter[0];
    c->SetStatus(s);
  }
  DataType Expected(const LookupTable&, int, bool) const override {
    return DT_STRING;
  }
  void Run(OpKernelContext* c, LookupTable& table) override {
    OP_REQUIRES_OK(c, CheckInitializable(c, table));
    const Tensor& filename = c->input(1);
    OP_REQUIRES(c, filename.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "filename should be a single string, but got ",
                    filename.shape().DebugString())));
    const std::string& name = filename.scalar<std::string>();
    // An initialized table only has its first line read, as TensorFlow
    // does before it sees the table is initialized.
    const bool initialized = table.is_initialized();
    TextFileEntries e;
    OP_REQUIRES_OK(c, ReadTableTextFile(c->device()->file_policy(), name, spec_,
                                        table.key_dtype(), table.value_dtype(),
                                        initialized ? 1 : -1, &e));
    if (e.count == 0) {
      OP_REQUIRES_OK(c, e.end.ok() ? absl::OutOfRangeError(absl::StrCat(
                                         "End of file ", name))
                                   : e.end);
    }
    if (initialized) return;
    Tensor keys = e.keys.Slice(0, e.count);
    Tensor values = e.values.Slice(0, e.count);
    absl::Status s = table.Initialize(keys, values, e.total, e.end);
    if (absl::IsFailedPrecondition(s) && table.is_initialized()) return;
    OP_REQUIRES_OK(c, s);
  }

 private:
  TextFileSpec spec_;
};

}  // namespace

void RegisterLookupKernels(KernelRegistry* r) {
  struct Kind {
    const char* name;
    TableKind kind;
  };
  const DataTypeVector keys = {DT_INT32, DT_INT64, DT_STRING};
  const DataTypeVector values = {DT_INT32, DT_INT64, DT_FLOAT,
                                 DT_DOUBLE, DT_BOOL, DT_STRING};
  for (const Kind& k : {Kind{"HashTable", TableKind::kStatic},
                        Kind{"MutableHashTable", TableKind::kMutable},
                        Kind{"MutableHashTableOfTensors", TableKind::kMutableOfTensors},
                        Kind{"MutableDenseHashTable", TableKind::kDense}}) {
    const std::string kind = k.name;
    const TableKind tk = k.kind;
    for (const std::string& op : {kind, kind + "V2", "Anonymous" + kind}) {
      for (DataType key : keys) {
        for (DataType value : values) {
          if (!TableDtypesSupported(tk, key, value)) continue;
          r->Register(KernelDef(op, kDeviceTypeCpu)
                          .TypeConstraint("key_dtype", key)
                          .TypeConstraint("value_dtype", value),
                      [tk](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                        return std::make_unique<TableMakerOp>(c, tk);
                      });
        }
      }
    }
  }
  for (const char* v : {"", "V2"}) {
    const std::string s = v;
    r->Register(KernelDef("LookupTableFind" + s, kDeviceTypeCpu),
                MakeKernel<FindOp>);
    for (auto [op, kind] : {std::pair{"LookupTableInsert", UpdateOp::kInsert},
                            std::pair{"LookupTableImport", UpdateOp::kImport}}) {
      const UpdateOp::Kind k = kind;
      r->Register(KernelDef(op + s, kDeviceTypeCpu),
                  [k](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                    return std::make_unique<UpdateOp>(c, k);
                  });
    }
    r->Register(KernelDef("LookupTableExport" + s, kDeviceTypeCpu),
                MakeKernel<ExportOp>);
    r->Register(KernelDef("LookupTableSize" + s, kDeviceTypeCpu),
                MakeKernel<SizeOp>);
    r->Register(KernelDef("InitializeTable" + s, kDeviceTypeCpu),
                MakeKernel<InitializeOp>);
    r->Register(KernelDef("InitializeTableFromTextFile" + s, kDeviceTypeCpu),
                MakeKernel<InitializeFromTextFileOp>);
  }
  r->Register(KernelDef("LookupTableRemoveV2", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<UpdateOp>(c, UpdateOp::kRemove);
              });
}

}  // namespace weft
