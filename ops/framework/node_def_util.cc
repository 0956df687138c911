#include "ops/framework/node_def_util.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/attr_value.pb.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

using tensorflow::AttrValue;
using tensorflow::NodeDef;
using tensorflow::OpDef;

// The AttrValue oneof case as the OpDef spells attr types.
std::string AttrKind(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS:
      return "string";
    case AttrValue::kI:
      return "int";
    case AttrValue::kF:
      return "float";
    case AttrValue::kB:
      return "bool";
    case AttrValue::kType:
      return "type";
    case AttrValue::kShape:
      return "shape";
    case AttrValue::kTensor:
      return "tensor";
    case AttrValue::kFunc:
      return "func";
    case AttrValue::kPlaceholder:
      return "placeholder";
    case AttrValue::kList: {
      const auto& l = v.list();
      if (l.s_size()) return "list(string)";
      if (l.i_size()) return "list(int)";
      if (l.f_size()) return "list(float)";
      if (l.b_size()) return "list(bool)";
      if (l.type_size()) return "list(type)";
      if (l.shape_size()) return "list(shape)";
      if (l.tensor_size()) return "list(tensor)";
      if (l.func_size()) return "list(func)";
      return "list";  // empty: matches any list type
    }
    default:
      return "<unset>";
  }
}

int ListSize(const AttrValue& v) {
  const auto& l = v.list();
  return l.s_size() + l.i_size() + l.f_size() + l.b_size() + l.type_size() +
         l.shape_size() + l.tensor_size() + l.func_size();
}

absl::StatusOr<const AttrValue*> Find(const NodeDef& node,
                                      absl::string_view name) {
  auto it = node.attr().find(std::string(name));
  if (it == node.attr().end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        NodeLabel(node), ": missing attr '", name, "'"));
  }
  return &it->second;
}

absl::Status WrongKind(const NodeDef& node, absl::string_view name,
                       const AttrValue& v, absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat(NodeLabel(node), ": attr '", name, "' has type ",
                   AttrKind(v), ", expected ", expected));
}

// The most tensors one number attr (N, num_split, num) may give an arg:
// 2^20, so a hostile attr costs at most 4 MiB of types, not 2^31 of them,
// before ValidateNodeDef compares the input count with the node's inputs.
// (Shape functions and the builder resolve types of nodes whose inputs are
// not filled in yet, so the bound cannot be the node's own inputs.)
constexpr int64_t kMaxArgCount = int64_t{1} << 20;

}  // namespace

absl::Status ArgTypesForNode(const NodeDef& node, const OpDef::ArgDef& arg,
                             DataTypeVector* types) {
  auto finish = [&](DataType dt, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      types->push_back(arg.is_ref() ? MakeRefType(dt) : dt);
    }
  };
  int64_t count = 1;
  if (!arg.number_attr().empty()) {
    int64_t n;
    WEFT_RETURN_IF_ERROR(GetNodeAttr(node, arg.number_attr(), &n));
    if (n < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(node), ": attr '", arg.number_attr(), "' is negative"));
    }
    if (n > kMaxArgCount) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(node), ": attr '", arg.number_attr(), "' is ", n,
          ", more than the ", kMaxArgCount, " tensors an arg ('", arg.name(),
          "') may have"));
    }
    count = n;
  }
  if (!arg.type_list_attr().empty()) {
    DataTypeVector list;
    WEFT_RETURN_IF_ERROR(GetNodeAttr(node, arg.type_list_attr(), &list));
    for (DataType dt : list) finish(dt, 1);
    return absl::OkStatus();
  }
  if (!arg.type_attr().empty()) {
    DataType dt;
    WEFT_RETURN_IF_ERROR(GetNodeAttr(node, arg.type_attr(), &dt));
    finish(dt, count);
    return absl::OkStatus();
  }
  finish(arg.type(), count);
  return absl::OkStatus();
}

std::string NodeLabel(const NodeDef& node) {
  return NodeLabel(node.name(), node.op());
}

std::string NodeLabel(absl::string_view name, absl::string_view op) {
  // C-escaped: a name may hold NUL or control bytes, which would cut the
  // message short or rewrite the user's terminal.
  return absl::StrCat("node '", absl::CEscape(name), "' (", absl::CEscape(op),
                      ")");
}

void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node) {
  for (const auto& attr : op_def.attr()) {
    if (attr.has_default_value() && !node->attr().contains(attr.name())) {
      (*node->mutable_attr())[attr.name()] = attr.default_value();
    }
  }
}

int NumDataInputs(const NodeDef& node) {
  int n = 0;
  for (const std::string& in : node.input()) {
    if (!absl::StartsWith(in, "^")) ++n;
  }
  return n;
}

absl::Status ValidateNodeDef(const NodeDef& node, const OpDef& op_def) {
  for (const auto& [name, value] : node.attr()) {
    if (absl::StartsWith(name, "_")) continue;  // internal attrs
    bool known = false;
    for (const auto& attr : op_def.attr()) known |= attr.name() == name;
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(node), ": unknown attr '", name, "' for op ", op_def.name()));
    }
  }
  for (const auto& attr : op_def.attr()) {
    auto it = node.attr().find(attr.name());
    if (it == node.attr().end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(node), ": missing attr '", attr.name(), "' of type ",
          attr.type()));
    }
    const AttrValue& v = it->second;
    const std::string kind = AttrKind(v);
    const bool list_ok = absl::StartsWith(attr.type(), "list(") &&
                         (kind == "list" || kind == attr.type());
    if (kind != attr.type() && !list_ok) {
      return WrongKind(node, attr.name(), v, attr.type());
    }
    if (attr.has_minimum()) {
      const int64_t have = attr.type() == "int" ? v.i() : ListSize(v);
      if (have < attr.minimum()) {
        return absl::InvalidArgumentError(absl::StrCat(
            NodeLabel(node), ": attr '", attr.name(), "' is ", have,
            ", must be at least ", attr.minimum()));
      }
    }
    if (attr.has_allowed_values()) {
      const auto& allowed = attr.allowed_values().list();
      auto check_type = [&](DataType dt) -> absl::Status {
        for (int t : allowed.type()) {
          if (t == dt) return absl::OkStatus();
        }
        DataTypeVector names;
        for (int t : allowed.type()) names.push_back(static_cast<DataType>(t));
        return absl::InvalidArgumentError(absl::StrCat(
            NodeLabel(node), ": attr '", attr.name(), "' is ",
            DataTypeString(dt), ", which is not one of {",
            DataTypeVectorString(names), "}"));
      };
      if (attr.type() == "type") {
        WEFT_RETURN_IF_ERROR(check_type(v.type()));
      } else if (attr.type() == "list(type)") {
        for (int t : v.list().type()) {
          WEFT_RETURN_IF_ERROR(check_type(static_cast<DataType>(t)));
        }
      } else if (attr.type() == "string") {
        bool ok = false;
        for (const auto& s : allowed.s()) ok |= s == v.s();
        if (!ok) {
          return absl::InvalidArgumentError(absl::StrCat(
              NodeLabel(node), ": attr '", attr.name(), "' is '", v.s(),
              "', expected one of: ", absl::StrJoin(allowed.s(), ", ")));
        }
      }
    }
  }
  DataTypeVector inputs, outputs;
  WEFT_RETURN_IF_ERROR(InOutTypesForNode(node, op_def, &inputs, &outputs));
  const int have = NumDataInputs(node);
  if (have != static_cast<int>(inputs.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        NodeLabel(node), ": has ", have, " data inputs, op ", op_def.name(),
        " expects ", inputs.size()));
  }
  // Control inputs must follow data inputs.
  bool seen_control = false;
  for (const std::string& in : node.input()) {
    const bool control = absl::StartsWith(in, "^");
    if (seen_control && !control) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(node), ": data input '", in,
          "' comes after a control input"));
    }
    seen_control |= control;
  }
  return absl::OkStatus();
}

absl::Status InOutTypesForNode(const NodeDef& node, const OpDef& op_def,
                               DataTypeVector* inputs,
                               DataTypeVector* outputs) {
  inputs->clear();
  outputs->clear();
  for (const auto& arg : op_def.input_arg()) {
    WEFT_RETURN_IF_ERROR(ArgTypesForNode(node, arg, inputs));
  }
  for (const auto& arg : op_def.output_arg()) {
    WEFT_RETURN_IF_ERROR(ArgTypesForNode(node, arg, outputs));
  }
  return absl::OkStatus();
}

bool HasNodeAttr(const NodeDef& node, absl::string_view name) {
  return node.attr().contains(std::string(name));
}

#define WEFT_SCALAR_GETTER(TYPE, CASE, KIND, EXPR)                      \
  absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, \
                           TYPE* value) {                               \
    WEFT_ASSIGN_OR_RETURN(const AttrValue* v, Find(node, name));        \
    if (v->value_case() != AttrValue::CASE) {                           \
      return WrongKind(node, name, *v, KIND);                           \
    }                                                                   \
    *value = EXPR;                                                      \
    return absl::OkStatus();                                            \
  }

WEFT_SCALAR_GETTER(int64_t, kI, "int", v->i())
WEFT_SCALAR_GETTER(int32_t, kI, "int", static_cast<int32_t>(v->i()))
WEFT_SCALAR_GETTER(float, kF, "float", v->f())
WEFT_SCALAR_GETTER(bool, kB, "bool", v->b())
WEFT_SCALAR_GETTER(std::string, kS, "string", v->s())
WEFT_SCALAR_GETTER(DataType, kType, "type", v->type())
WEFT_SCALAR_GETTER(PartialShape, kShape, "shape",
                   PartialShape::FromProto(v->shape()))
#undef WEFT_SCALAR_GETTER

absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name,
                         Tensor* value) {
  WEFT_ASSIGN_OR_RETURN(const AttrValue* v, Find(node, name));
  if (v->value_case() != AttrValue::kTensor) {
    return WrongKind(node, name, *v, "tensor");
  }
  absl::StatusOr<Tensor> t = TensorFromProto(v->tensor());
  if (!t.ok()) {
    return WithContext(t.status(),
                       absl::StrCat(NodeLabel(node), ": attr '", name, "'"));
  }
  *value = *std::move(t);
  return absl::OkStatus();
}

#define WEFT_LIST_GETTER(TYPE, FIELD, KIND)                               \
  absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name,   \
                           TYPE* value) {                                 \
    WEFT_ASSIGN_OR_RETURN(const AttrValue* v, Find(node, name));          \
    if (v->value_case() != AttrValue::kList ||                            \
        (ListSize(*v) != v->list().FIELD##_size())) {                     \
      return WrongKind(node, name, *v, KIND);                             \
    }                                                                     \
    value->clear();                                                       \
    for (const auto& x : v->list().FIELD()) {                             \
      value->push_back(static_cast<typename TYPE::value_type>(x));        \
    }                                                                     \
    return absl::OkStatus();                                              \
  }

WEFT_LIST_GETTER(std::vector<int64_t>, i, "list(int)")
WEFT_LIST_GETTER(std::vector<int32_t>, i, "list(int)")
WEFT_LIST_GETTER(std::vector<float>, f, "list(float)")
WEFT_LIST_GETTER(std::vector<std::string>, s, "list(string)")
WEFT_LIST_GETTER(DataTypeVector, type, "list(type)")
#undef WEFT_LIST_GETTER

absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name,
                         std::vector<PartialShape>* value) {
  WEFT_ASSIGN_OR_RETURN(const AttrValue* v, Find(node, name));
  if (v->value_case() != AttrValue::kList ||
      ListSize(*v) != v->list().shape_size()) {
    return WrongKind(node, name, *v, "list(shape)");
  }
  value->clear();
  for (const auto& s : v->list().shape()) {
    value->push_back(PartialShape::FromProto(s));
  }
  return absl::OkStatus();
}

absl::string_view InputNodeName(absl::string_view input) {
  absl::ConsumePrefix(&input, "^");
  return input.substr(0, input.find(':'));
}

absl::StatusOr<TensorId> ParseTensorName(absl::string_view name) {
  TensorId id;
  absl::string_view rest = name;
  if (absl::ConsumePrefix(&rest, "^")) {
    id.node = std::string(rest);
    id.index = -1;
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == absl::string_view::npos) {
      id.node = std::string(rest);
    } else {
      int index;
      if (!absl::SimpleAtoi(rest.substr(colon + 1), &index) || index < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "malformed tensor name '", name, "' (expected node or node:index)"));
      }
      id.node = std::string(rest.substr(0, colon));
      id.index = index;
    }
  }
  if (id.node.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed tensor name '", name, "' (empty node name)"));
  }
  return id;
}

}  // namespace weft
