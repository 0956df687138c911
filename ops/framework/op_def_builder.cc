#include "ops/framework/op_def_builder.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "runtime/core/status.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

using tensorflow::AttrValue;
using tensorflow::OpDef;

std::string Trim(absl::string_view s) {
  return std::string(absl::StripAsciiWhitespace(s));
}

// "name: rest" -> {name, rest}.
absl::Status SplitSpec(const std::string& spec, std::string* name,
                       std::string* rest) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec '", spec, "' lacks 'name: ...'"));
  }
  *name = Trim(spec.substr(0, colon));
  *rest = Trim(spec.substr(colon + 1));
  return absl::OkStatus();
}

absl::StatusOr<DataType> ParseTypeName(absl::string_view s) {
  const std::string name = Trim(s);
  absl::StatusOr<DataType> dt = ParseDataType(name);
  if (dt.ok()) return dt;
  // Types Weft cannot hold (complex64, qint8, ...) still appear in the
  // allowed-type lists of TensorFlow's OpDefs, which Weft must reproduce.
  DataType parsed;
  if (tensorflow::DataType_Parse(absl::StrCat("DT_", absl::AsciiStrToUpper(name)),
                                 &parsed) &&
      !IsRefType(parsed)) {
    return parsed;
  }
  return dt.status();
}

// Splits "{a, b}" into its items.
std::vector<std::string> BraceItems(absl::string_view braced) {
  absl::string_view inner = braced.substr(1, braced.size() - 2);
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(inner, ',')) {
    std::string t = Trim(item);
    if (!t.empty()) items.push_back(t);
  }
  return items;
}

std::string Unquote(const std::string& s) {
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"')) {
    return s.substr(1, s.size() - 2);
  }
  return s;
}

absl::Status ParseScalarDefault(const std::string& type, const std::string& v,
                                AttrValue* out) {
  if (type == "int") {
    int64_t i;
    if (!absl::SimpleAtoi(v, &i)) return absl::InvalidArgumentError(v);
    out->set_i(i);
  } else if (type == "float") {
    float f;
    if (!absl::SimpleAtof(v, &f)) return absl::InvalidArgumentError(v);
    out->set_f(f);
  } else if (type == "bool") {
    out->set_b(v == "true");
  } else if (type == "string") {
    out->set_s(Unquote(v));
  } else if (type == "type") {
    WEFT_ASSIGN_OR_RETURN(DataType dt, ParseTypeName(v));
    out->set_type(dt);
  } else if (type == "shape") {
    // Only the unknown-rank and scalar defaults are needed by Weft's ops.
    if (v == "{ unknown_rank: true }" || v == "<unknown>") {
      out->mutable_shape()->set_unknown_rank(true);
    } else {
      out->mutable_shape();
    }
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("no default syntax for attr type ", type));
  }
  return absl::OkStatus();
}

absl::Status ParseAttr(const std::string& spec, OpDef::AttrDef* attr) {
  std::string name, rest;
  WEFT_RETURN_IF_ERROR(SplitSpec(spec, &name, &rest));
  attr->set_name(name);
  std::string default_text;
  // The default follows the first '=' that is not part of ">=" (a spec may
  // have both: "squeeze_dims: list(int) >= 0 = []").
  size_t eq = rest.find('=');
  while (eq != std::string::npos && eq > 0 && rest[eq - 1] == '>') {
    eq = rest.find('=', eq + 1);
  }
  if (eq != std::string::npos) {
    default_text = Trim(rest.substr(eq + 1));
    rest = Trim(rest.substr(0, eq));
  }
  std::string minimum;
  const size_t ge = rest.find(">=");
  if (ge != std::string::npos) {
    minimum = Trim(rest.substr(ge + 2));
    rest = Trim(rest.substr(0, ge));
  }
  std::string type = rest;
  if (!rest.empty() && rest.front() == '{') {
    std::vector<std::string> items = BraceItems(rest);
    const bool strings = !items.empty() && (items[0][0] == '\'' ||
                                            items[0][0] == '"');
    type = strings ? "string" : "type";
    for (const std::string& item : items) {
      if (strings) {
        attr->mutable_allowed_values()->mutable_list()->add_s(Unquote(item));
      } else {
        WEFT_ASSIGN_OR_RETURN(DataType dt, ParseTypeName(item));
        attr->mutable_allowed_values()->mutable_list()->add_type(dt);
      }
    }
  } else if (absl::StartsWith(rest, "list(")) {
    std::string inner = rest.substr(5, rest.size() - 6);
    if (!inner.empty() && inner.front() == '{') {
      for (const std::string& item : BraceItems(inner)) {
        WEFT_ASSIGN_OR_RETURN(DataType dt, ParseTypeName(item));
        attr->mutable_allowed_values()->mutable_list()->add_type(dt);
      }
      inner = "type";
    }
    type = absl::StrCat("list(", inner, ")");
  }
  attr->set_type(type);
  if (!minimum.empty()) {
    int64_t m;
    if (!absl::SimpleAtoi(minimum, &m)) {
      return absl::InvalidArgumentError(absl::StrCat("bad minimum in ", spec));
    }
    attr->set_has_minimum(true);
    attr->set_minimum(m);
  }
  if (!default_text.empty()) {
    AttrValue* def = attr->mutable_default_value();
    if (absl::StartsWith(type, "list(")) {
      const std::string elem = type.substr(5, type.size() - 6);
      auto* list = def->mutable_list();
      std::string inner = default_text.substr(1, default_text.size() - 2);
      for (absl::string_view item : absl::StrSplit(inner, ',')) {
        std::string t = Trim(item);
        if (t.empty()) continue;
        AttrValue v;
        WEFT_RETURN_IF_ERROR(ParseScalarDefault(elem, t, &v));
        if (elem == "int") list->add_i(v.i());
        if (elem == "float") list->add_f(v.f());
        if (elem == "string") list->add_s(v.s());
        if (elem == "type") list->add_type(v.type());
        if (elem == "bool") list->add_b(v.b());
      }
    } else {
      WEFT_RETURN_IF_ERROR(ParseScalarDefault(type, default_text, def));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseArg(const std::string& spec, const OpDef& op,
                      OpDef::ArgDef* arg) {
  std::string name, rest;
  WEFT_RETURN_IF_ERROR(SplitSpec(spec, &name, &rest));
  arg->set_name(name);
  if (absl::StartsWith(rest, "Ref(")) {
    arg->set_is_ref(true);
    rest = Trim(rest.substr(4, rest.size() - 5));
  }
  const size_t star = rest.find('*');
  if (star != std::string::npos) {
    arg->set_number_attr(Trim(rest.substr(0, star)));
    rest = Trim(rest.substr(star + 1));
  }
  for (const auto& attr : op.attr()) {
    if (attr.name() != rest) continue;
    if (attr.type() == "type") {
      arg->set_type_attr(rest);
    } else if (attr.type() == "list(type)") {
      arg->set_type_list_attr(rest);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "arg '", spec, "' refers to attr '", rest, "' of type ", attr.type()));
    }
    return absl::OkStatus();
  }
  WEFT_ASSIGN_OR_RETURN(DataType dt, ParseTypeName(rest));
  arg->set_type(dt);
  return absl::OkStatus();
}

}  // namespace

OpDefBuilder::OpDefBuilder(std::string op_name) {
  op_def_.set_name(std::move(op_name));
}

OpDefBuilder& OpDefBuilder::Input(std::string spec) {
  inputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string spec) {
  outputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string spec) {
  attrs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  op_def_.set_is_stateful(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsCommutative() {
  op_def_.set_is_commutative(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsAggregate() {
  op_def_.set_is_aggregate(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetAllowsUninitializedInput() {
  op_def_.set_allows_uninitialized_input(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsDistributedCommunication() {
  op_def_.set_is_distributed_communication(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(std::string summary) {
  op_def_.set_summary(std::move(summary));
  return *this;
}

absl::Status OpDefBuilder::Finalize(tensorflow::OpDef* op_def) const {
  *op_def = op_def_;
  const std::string where = absl::StrCat("op ", op_def_.name());
  for (const std::string& spec : attrs_) {
    WEFT_RETURN_IF_ERROR(WithContext(ParseAttr(spec, op_def->add_attr()), where));
  }
  for (const std::string& spec : inputs_) {
    WEFT_RETURN_IF_ERROR(
        WithContext(ParseArg(spec, *op_def, op_def->add_input_arg()), where));
  }
  for (const std::string& spec : outputs_) {
    WEFT_RETURN_IF_ERROR(
        WithContext(ParseArg(spec, *op_def, op_def->add_output_arg()), where));
  }
  return absl::OkStatus();
}

}  // namespace weft
