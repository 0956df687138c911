#include "graph/builder/scope.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/builder/control_flow_info.h"
#include "graph/graph_def_loader.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"

namespace weft {

std::string Output::name() const { return absl::StrCat(node, ":", index); }

tensorflow::AttrValue Attr(int64_t v) {
  tensorflow::AttrValue a;
  a.set_i(v);
  return a;
}
tensorflow::AttrValue Attr(float v) {
  tensorflow::AttrValue a;
  a.set_f(v);
  return a;
}
tensorflow::AttrValue Attr(bool v) {
  tensorflow::AttrValue a;
  a.set_b(v);
  return a;
}
tensorflow::AttrValue Attr(DataType v) {
  tensorflow::AttrValue a;
  a.set_type(v);
  return a;
}
tensorflow::AttrValue Attr(absl::string_view v) {
  tensorflow::AttrValue a;
  a.set_s(std::string(v));
  return a;
}
tensorflow::AttrValue Attr(const Tensor& v) {
  tensorflow::AttrValue a;
  TensorToProto(v, a.mutable_tensor());
  return a;
}
tensorflow::AttrValue Attr(const std::vector<int64_t>& v) {
  tensorflow::AttrValue a;
  for (int64_t x : v) a.mutable_list()->add_i(x);
  return a;
}
tensorflow::AttrValue ShapeAttr(const std::vector<int64_t>& dims) {
  tensorflow::AttrValue a;
  a.mutable_shape();  // a scalar shape is set, with no dims
  for (int64_t d : dims) a.mutable_shape()->add_dim()->set_size(d);
  return a;
}

Scope Scope::NewRoot() {
  Scope s;
  s.shared_ = std::make_shared<Shared>();
  s.shared_->graph.mutable_versions()->set_producer(kGraphDefVersion);
  return s;
}

std::string Scope::MakeUnique(const std::string& name) const {
  auto& counts = shared_->name_counts;
  auto it = counts.find(name);
  if (it == counts.end()) {
    counts[name] = 1;
    return name;
  }
  std::string candidate;
  do {
    candidate = absl::StrCat(name, "_", it->second++);
  } while (counts.contains(candidate));
  counts[candidate] = 1;
  return candidate;
}

Scope Scope::WithOpName(absl::string_view name) const {
  Scope s = *this;
  s.op_name_ = std::string(name);
  s.exact_name_ = false;
  return s;
}

Scope Scope::NewSubScope(absl::string_view name) const {
  Scope s = *this;
  s.op_name_.clear();
  s.exact_name_ = false;
  if (name.empty()) return s;
  std::string full =
      prefix_.empty() ? std::string(name) : absl::StrCat(prefix_, "/", name);
  s.prefix_ = MakeUnique(full);
  return s;
}

Scope Scope::WithAbsoluteNameScope(absl::string_view prefix) const {
  Scope s = *this;
  s.op_name_.clear();
  s.exact_name_ = false;
  s.prefix_ = std::string(prefix);
  return s;
}

Scope Scope::WithExactName(absl::string_view name) const {
  Scope s = *this;
  s.op_name_ = std::string(name);
  s.exact_name_ = true;
  return s;
}

Scope Scope::WithDevice(absl::string_view device) const {
  Scope s = *this;
  s.device_ = std::string(device);
  return s;
}

Scope Scope::WithControlDependencies(const std::vector<Operation>& ops) const {
  Scope s = *this;
  for (const Operation& op : ops) {
    if (!op.valid()) {
      UpdateStatus(absl::InvalidArgumentError(
          "WithControlDependencies: an operation failed to build"));
      continue;
    }
    s.control_deps_.push_back(op.node);
  }
  return s;
}

Scope Scope::WithoutControlDependencies() const {
  Scope s = *this;
  s.control_deps_.clear();
  return s;
}

Scope Scope::ColocateWith(const Operation& op) const {
  Scope s = *this;
  s.colocate_with_ = op.node;
  return s;
}

absl::Status Scope::status() const { return shared_->status; }

void Scope::UpdateStatus(const absl::Status& status) const {
  if (!status.ok() && shared_->status.ok()) shared_->status = status;
}

absl::StatusOr<tensorflow::GraphDef> Scope::ToGraphDef() const {
  if (!shared_->status.ok()) return shared_->status;
  return shared_->graph;
}

const tensorflow::NodeDef* Scope::FindNode(absl::string_view name) const {
  auto it = shared_->node_index.find(name);
  if (it == shared_->node_index.end()) return nullptr;
  return &shared_->graph.node(it->second);
}

std::string Scope::UniqueNodeName(absl::string_view op_type) const {
  if (exact_name_) return op_name_;
  std::string base = op_name_.empty() ? std::string(op_type) : op_name_;
  if (!prefix_.empty()) base = absl::StrCat(prefix_, "/", base);
  return MakeUnique(base);
}

void Scope::ApplyTo(tensorflow::NodeDef* node) const {
  if (!device_.empty()) node->set_device(device_);
  for (const std::string& dep : control_deps_) {
    node->add_input(absl::StrCat("^", dep));
  }
  if (!colocate_with_.empty()) {
    (*node->mutable_attr())["_class"].mutable_list()->add_s(
        absl::StrCat("loc:@", colocate_with_));
  }
}

absl::Status Scope::Import(const tensorflow::GraphDef& graph) const {
  absl::flat_hash_set<absl::string_view> seen;
  for (const tensorflow::NodeDef& n : graph.node()) {
    if (!seen.insert(n.name()).second || shared_->node_index.contains(n.name())) {
      return absl::AlreadyExistsError(absl::StrCat(
          "cannot import node '", n.name(), "': the graph already has a node "
          "of that name"));
    }
  }
  if (graph.has_library() && shared_->graph.has_library()) {
    return absl::InvalidArgumentError(
        "cannot import a function library into a graph that has one");
  }
  for (const tensorflow::NodeDef& n : graph.node()) {
    shared_->name_counts.try_emplace(n.name(), 1);
    AppendNode(n);
  }
  if (graph.has_library()) *shared_->graph.mutable_library() = graph.library();
  if (graph.has_versions()) *shared_->graph.mutable_versions() = graph.versions();
  return absl::OkStatus();
}

void Scope::AppendNode(tensorflow::NodeDef node) const {
  shared_->node_index[node.name()] = shared_->graph.node_size();
  *shared_->graph.add_node() = std::move(node);
}

tensorflow::NodeDef* Scope::MutableNode(absl::string_view name) const {
  auto it = shared_->node_index.find(name);
  if (it == shared_->node_index.end()) return nullptr;
  return shared_->graph.mutable_node(it->second);
}

tensorflow::NodeDef* Scope::MutableNodeAt(int index) const {
  return shared_->graph.mutable_node(index);
}

int Scope::NodeIndex(absl::string_view name) const {
  auto it = shared_->node_index.find(name);
  return it == shared_->node_index.end() ? -1 : it->second;
}

ControlFlowInfo& Scope::control_flow() const {
  if (shared_->control_flow == nullptr) {
    shared_->control_flow = std::make_shared<ControlFlowInfo>();
  }
  return *shared_->control_flow;
}

absl::StatusOr<DataTypeVector> NodeOutputTypes(
    const Scope& scope, const tensorflow::NodeDef& node) {
  (void)scope;
  const tensorflow::OpDef* op_def = GlobalOpRegistry().LookUpOpDef(node.op());
  if (op_def == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(NodeLabel(node), ": op is not registered in Weft"));
  }
  DataTypeVector in, out;
  absl::Status s = InOutTypesForNode(node, *op_def, &in, &out);
  if (!s.ok()) return s;
  return out;
}

namespace {

struct Built {
  Operation op;
  std::vector<Output> outputs;
};

absl::Status BuildNode(const Scope& scope, absl::string_view op_type,
                       const std::vector<Input>& inputs, const AttrList& attrs,
                       Built* built) {
  tensorflow::NodeDef node;
  node.set_op(std::string(op_type));
  node.set_name(scope.UniqueNodeName(op_type));
  const std::string label = NodeLabel(node);
  absl::StatusOr<const OpRegistration*> reg =
      GlobalOpRegistry().LookUp(op_type);
  if (!reg.ok()) return WithContext(reg.status(), label);
  const tensorflow::OpDef& op_def = (*reg)->op_def;
  for (const auto& [name, value] : attrs) (*node.mutable_attr())[name] = value;
  if (static_cast<int>(inputs.size()) != op_def.input_arg_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": got ", inputs.size(), " input args, the op takes ",
        op_def.input_arg_size()));
  }
  std::vector<Output> flat;
  auto& attr = *node.mutable_attr();
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    const tensorflow::OpDef::ArgDef& arg = op_def.input_arg(i);
    const std::vector<Output>& outs = inputs[i].outputs();
    for (const Output& o : outs) {
      if (!o.valid()) {
        return absl::InvalidArgumentError(
            absl::StrCat(label, ": input '", arg.name(),
                         "' comes from a node that failed to build"));
      }
      flat.push_back(o);
    }
    if (!arg.number_attr().empty()) {
      if (!attr.contains(arg.number_attr())) {
        attr[arg.number_attr()].set_i(static_cast<int64_t>(outs.size()));
      }
      if (!arg.type_attr().empty() && !attr.contains(arg.type_attr()) &&
          !outs.empty()) {
        attr[arg.type_attr()].set_type(BaseType(outs[0].dtype));
      }
    } else if (!arg.type_list_attr().empty()) {
      if (!attr.contains(arg.type_list_attr())) {
        auto* list = attr[arg.type_list_attr()].mutable_list();
        for (const Output& o : outs) list->add_type(BaseType(o.dtype));
      }
    } else {
      if (outs.size() != 1 || inputs[i].is_list()) {
        return absl::InvalidArgumentError(absl::StrCat(
            label, ": input '", arg.name(), "' takes one tensor, got a list of ",
            outs.size()));
      }
      if (!arg.type_attr().empty() && !attr.contains(arg.type_attr())) {
        attr[arg.type_attr()].set_type(BaseType(outs[0].dtype));
      }
    }
  }
  for (const Output& o : flat) node.add_input(o.index == 0 ? o.node : o.name());
  scope.ApplyTo(&node);
  AddDefaultsToNodeDef(op_def, &node);
  WEFT_RETURN_IF_ERROR(ValidateNodeDef(node, op_def));
  DataTypeVector in_types, out_types;
  WEFT_RETURN_IF_ERROR(InOutTypesForNode(node, op_def, &in_types, &out_types));
  if (in_types.size() != flat.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": expects ", in_types.size(), " inputs, got ",
                     flat.size()));
  }
  for (size_t k = 0; k < flat.size(); ++k) {
    DataType want = in_types[k], got = flat[k].dtype;
    bool ok = got == want || (!IsRefType(want) && BaseType(got) == want);
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          label, ": input ", k, " ('", flat[k].name(), "') has dtype ",
          DataTypeString(got), ", expected ", DataTypeString(want)));
    }
  }
  built->op = Operation{node.name()};
  for (size_t k = 0; k < out_types.size(); ++k) {
    built->outputs.push_back(
        Output{node.name(), static_cast<int>(k), out_types[k]});
  }
  scope.AppendNode(std::move(node));
  return absl::OkStatus();
}

Built Build(const Scope& scope, absl::string_view op_type,
            const std::vector<Input>& inputs, const AttrList& attrs) {
  Built built;
  absl::Status s = BuildNode(scope, op_type, inputs, attrs, &built);
  if (!s.ok()) {
    scope.UpdateStatus(s);
    return Built();
  }
  return built;
}

}  // namespace

std::vector<Output> AddNode(const Scope& scope, absl::string_view op_type,
                            const std::vector<Input>& inputs,
                            const AttrList& attrs) {
  return Build(scope, op_type, inputs, attrs).outputs;
}

Output AddNode1(const Scope& scope, absl::string_view op_type,
                const std::vector<Input>& inputs, const AttrList& attrs) {
  Built b = Build(scope, op_type, inputs, attrs);
  if (!b.op.valid()) return Output();
  if (b.outputs.size() != 1) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("node '", b.op.node, "' (", op_type, ") has ",
                     b.outputs.size(), " outputs, expected one")));
    return Output();
  }
  return b.outputs[0];
}

Operation AddNode0(const Scope& scope, absl::string_view op_type,
                   const std::vector<Input>& inputs, const AttrList& attrs) {
  return Build(scope, op_type, inputs, attrs).op;
}

}  // namespace weft
