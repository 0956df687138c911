#include "graph/function_inliner.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using tensorflow::AttrValue;
using tensorflow::FunctionDef;
using tensorflow::NodeDef;
using tensorflow::OpDef;

// Replaces placeholders ("$T") in `v`, also inside function-valued attrs.
absl::Status Substitute(const AttrMap& attrs, AttrValue* v) {
  switch (v->value_case()) {
    case AttrValue::kPlaceholder: {
      auto it = attrs.find(v->placeholder());
      if (it == attrs.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("attr placeholder '$", absl::CEscape(v->placeholder()),
                         "' has no value in the call"));
      }
      *v = it->second;
      return absl::OkStatus();
    }
    case AttrValue::kFunc:
      for (auto& [name, value] : *v->mutable_func()->mutable_attr()) {
        WEFT_RETURN_IF_ERROR(Substitute(attrs, &value));
      }
      return absl::OkStatus();
    case AttrValue::kList:
      for (auto& f : *v->mutable_list()->mutable_func()) {
        for (auto& [name, value] : *f.mutable_attr()) {
          WEFT_RETURN_IF_ERROR(Substitute(attrs, &value));
        }
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

// A NodeDef carrying `attrs`, so that ArgTypesForNode can resolve a
// signature's args with them.
NodeDef AttrHolder(absl::string_view name, const AttrMap& attrs) {
  NodeDef n;
  n.set_name(std::string(name));
  n.set_op(std::string(name));
  *n.mutable_attr() = attrs;
  return n;
}

absl::StatusOr<DataTypeVector> ArgListTypes(
    const NodeDef& holder,
    const google::protobuf::RepeatedPtrField<OpDef::ArgDef>& args) {
  DataTypeVector types;
  for (const OpDef::ArgDef& arg : args) {
    WEFT_RETURN_IF_ERROR(ArgTypesForNode(holder, arg, &types));
  }
  return types;
}

// Where each output arg of a body node starts in its flat outputs.
struct OutputRange {
  int start = 0;
  int size = 0;
};

class BodyRewriter {
 public:
  BodyRewriter(const InlineRequest& request, const FunctionDef& fn,
               const FunctionLibrary& library, const OpRegistry& ops)
      : request_(request), fn_(fn), library_(library), ops_(ops) {}

  absl::StatusOr<InlinedBody> Run(std::vector<NodeDef>* out);

 private:
  std::string Prefixed(absl::string_view name) const {
    return absl::StrCat(request_.prefix, "/", name);
  }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(
        request_.caller.empty() ? "" : absl::StrCat("node '", request_.caller,
                                                    "': "),
        "function '", absl::CEscape(fn_.signature().name()), "': ", what));
  }
  absl::Status AddArgs(std::vector<NodeDef>* out);
  absl::StatusOr<OutputRange> FindOutput(absl::string_view node,
                                         absl::string_view arg);
  // The graph tensor for a body reference ("a", "a:1", "n:out:2"), shifted
  // by `offset` within a list.
  absl::StatusOr<std::string> Resolve(absl::string_view ref, int offset = 0);

  const InlineRequest& request_;
  const FunctionDef& fn_;
  const FunctionLibrary& library_;
  const OpRegistry& ops_;
  // Arg name -> the Identity names of its tensors.
  absl::flat_hash_map<std::string, std::vector<std::string>> args_;
  // Body node name -> its NodeDef after substitution (pointer into fn_body_).
  absl::flat_hash_map<std::string, const NodeDef*> body_;
  std::vector<NodeDef> fn_body_;
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, OutputRange>>
      output_ranges_;
};

absl::Status BodyRewriter::AddArgs(std::vector<NodeDef>* out) {
  const NodeDef holder = AttrHolder(fn_.signature().name(), request_.attrs);
  WEFT_ASSIGN_OR_RETURN(DataTypeVector types,
                        ArgListTypes(holder, fn_.signature().input_arg()));
  if (types.size() != request_.inputs.size()) {
    return Error(absl::StrCat("takes ", types.size(), " input",
                              types.size() == 1 ? "" : "s", " but the call has ",
                              request_.inputs.size()));
  }
  int flat = 0;
  for (const OpDef::ArgDef& arg : fn_.signature().input_arg()) {
    DataTypeVector arg_types;
    WEFT_RETURN_IF_ERROR(ArgTypesForNode(holder, arg, &arg_types));
    const bool is_list =
        !arg.number_attr().empty() || !arg.type_list_attr().empty();
    std::vector<std::string>& names = args_[arg.name()];
    for (size_t i = 0; i < arg_types.size(); ++i, ++flat) {
      NodeDef id;
      id.set_name(Prefixed(is_list ? absl::StrCat(arg.name(), "_", i)
                                   : arg.name()));
      id.set_op("Identity");
      id.set_device(request_.device);
      id.add_input(request_.inputs[flat]);
      for (const std::string& c : request_.control_inputs) {
        id.add_input(absl::StrCat("^", c));
      }
      (*id.mutable_attr())["T"].set_type(BaseType(arg_types[i]));
      names.push_back(id.name());
      out->push_back(std::move(id));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<OutputRange> BodyRewriter::FindOutput(absl::string_view node,
                                                     absl::string_view arg) {
  auto cached = output_ranges_.find(node);
  if (cached == output_ranges_.end()) {
    auto it = body_.find(node);
    if (it == body_.end()) {
      return Error(absl::StrCat("a body input names '", absl::CEscape(node),
                                "', which is neither a node nor an arg"));
    }
    const NodeDef& def = *it->second;
    const OpDef* op_def = ops_.LookUpOpDef(def.op());
    if (op_def == nullptr) {
      const FunctionDef* callee = library_.Find(def.op());
      if (callee == nullptr) {
        return Error(absl::StrCat(NodeLabel(def),
                                  " uses an op that is neither registered in "
                                  "Weft nor in the graph's function library"));
      }
      op_def = &callee->signature();
    }
    NodeDef with_defaults = def;
    AddDefaultsToNodeDef(*op_def, &with_defaults);
    absl::flat_hash_map<std::string, OutputRange> ranges;
    int start = 0;
    for (const OpDef::ArgDef& out_arg : op_def->output_arg()) {
      DataTypeVector types;
      WEFT_RETURN_IF_ERROR(ArgTypesForNode(with_defaults, out_arg, &types));
      ranges[out_arg.name()] = {start, static_cast<int>(types.size())};
      start += static_cast<int>(types.size());
    }
    ranges[""] = {0, start};  // "node:3" (flat) and "node" forms
    cached = output_ranges_.emplace(std::string(node), std::move(ranges)).first;
  }
  auto r = cached->second.find(arg);
  if (r == cached->second.end()) {
    return Error(absl::StrCat("node '", absl::CEscape(node),
                              "' has no output arg '", absl::CEscape(arg), "'"));
  }
  return r->second;
}

absl::StatusOr<std::string> BodyRewriter::Resolve(absl::string_view ref,
                                                  int offset) {
  std::vector<absl::string_view> parts = absl::StrSplit(ref, ':');
  int index = 0;
  if (parts.size() > 3 ||
      (parts.size() >= 2 && !absl::SimpleAtoi(parts.back(), &index)) ||
      index < 0) {
    return Error(absl::StrCat("malformed body input '", absl::CEscape(ref),
                              "'"));
  }
  index += offset;
  if (parts.size() <= 2) {
    auto arg = args_.find(parts[0]);
    if (arg != args_.end()) {
      if (index >= static_cast<int>(arg->second.size())) {
        return Error(absl::StrCat("input '", absl::CEscape(ref),
                                  "' is past the end of arg '", parts[0], "'"));
      }
      return arg->second[index];
    }
  }
  const absl::string_view out_arg = parts.size() == 3 ? parts[1] : "";
  WEFT_ASSIGN_OR_RETURN(OutputRange range, FindOutput(parts[0], out_arg));
  if (index >= range.size) {
    return Error(absl::StrCat("input '", absl::CEscape(ref),
                              "' is past the end of its output"));
  }
  const int flat = range.start + index;
  return flat == 0 ? Prefixed(parts[0]) : absl::StrCat(Prefixed(parts[0]), ":", flat);
}

absl::StatusOr<InlinedBody> BodyRewriter::Run(std::vector<NodeDef>* out) {
  WEFT_RETURN_IF_ERROR(AddArgs(out));
  fn_body_.assign(fn_.node_def().begin(), fn_.node_def().end());
  for (NodeDef& def : fn_body_) {
    for (auto& [name, value] : *def.mutable_attr()) {
      absl::Status s = Substitute(request_.attrs, &value);
      if (!s.ok()) return Error(absl::StrCat(NodeLabel(def), ": ", s.message()));
    }
    if (!body_.emplace(def.name(), &def).second || args_.contains(def.name())) {
      return Error(absl::StrCat("the name '", absl::CEscape(def.name()),
                                "' is used twice in the body"));
    }
  }
  for (const NodeDef& def : fn_body_) {
    NodeDef node = def;
    node.set_name(Prefixed(def.name()));
    node.clear_input();
    if (node.device().empty()) node.set_device(request_.device);
    for (const std::string& in : def.input()) {
      if (!in.empty() && in[0] == '^') {
        const std::string src = in.substr(1);
        if (!body_.contains(src) && !args_.contains(src)) {
          return Error(absl::StrCat(NodeLabel(def), " has control input '",
                                    absl::CEscape(in),
                                    "', which names no body node"));
        }
        auto arg = args_.find(src);
        node.add_input(absl::StrCat(
            "^", arg != args_.end() && !arg->second.empty() ? arg->second[0]
                                                            : Prefixed(src)));
        continue;
      }
      WEFT_ASSIGN_OR_RETURN(std::string tensor, Resolve(in));
      node.add_input(std::move(tensor));
    }
    if (node.input_size() == 0) {
      for (const std::string& c : request_.control_inputs) {
        node.add_input(absl::StrCat("^", c));
      }
    }
    // Colocation constraints name body nodes; keep them pointing inside.
    auto cls = node.mutable_attr()->find("_class");
    if (cls != node.mutable_attr()->end()) {
      for (std::string& s : *cls->second.mutable_list()->mutable_s()) {
        if (absl::StartsWith(s, "loc:@") && body_.contains(s.substr(5))) {
          s = absl::StrCat("loc:@", Prefixed(s.substr(5)));
        }
      }
    }
    out->push_back(std::move(node));
  }

  InlinedBody result;
  const NodeDef holder = AttrHolder(fn_.signature().name(), request_.attrs);
  for (const OpDef::ArgDef& arg : fn_.signature().output_arg()) {
    DataTypeVector types;
    WEFT_RETURN_IF_ERROR(ArgTypesForNode(holder, arg, &types));
    auto ret = fn_.ret().find(arg.name());
    if (ret == fn_.ret().end()) {
      return Error(absl::StrCat("output '", arg.name(), "' has no ret entry"));
    }
    for (size_t i = 0; i < types.size(); ++i) {
      WEFT_ASSIGN_OR_RETURN(std::string tensor,
                            Resolve(ret->second, static_cast<int>(i)));
      result.outputs.push_back(std::move(tensor));
      result.output_types.push_back(types[i]);
    }
  }
  for (const auto& [name, node] : fn_.control_ret()) {
    if (!body_.contains(node)) {
      return Error(absl::StrCat("control output '", absl::CEscape(name),
                                "' names no body node"));
    }
    result.control_outputs.push_back(Prefixed(node));
  }
  return result;
}

}  // namespace

absl::StatusOr<FunctionLibrary> FunctionLibrary::Create(
    const tensorflow::FunctionDefLibrary& library) {
  FunctionLibrary lib;
  for (const FunctionDef& fn : library.function()) {
    const std::string& name = fn.signature().name();
    if (name.empty()) {
      return absl::InvalidArgumentError(
          "the graph's function library has a function without a name");
    }
    if (!lib.functions_.emplace(name, &fn).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("the graph's function library defines '",
                       absl::CEscape(name), "' twice"));
    }
  }
  for (const tensorflow::GradientDef& g : library.gradient()) {
    lib.gradients_[g.function_name()] = g.gradient_func();
  }
  return lib;
}

const FunctionDef* FunctionLibrary::Find(absl::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}

std::string FunctionLibrary::GradientOf(absl::string_view name) const {
  auto it = gradients_.find(name);
  return it == gradients_.end() ? "" : it->second;
}

absl::StatusOr<DataTypeVector> SignatureTypes(const FunctionDef& fn,
                                              const AttrMap& attrs,
                                              bool outputs) {
  const NodeDef holder = AttrHolder(fn.signature().name(), attrs);
  return ArgListTypes(holder, outputs ? fn.signature().output_arg()
                                      : fn.signature().input_arg());
}

absl::StatusOr<InlinedBody> InlineFunctionBody(const InlineRequest& request,
                                               const FunctionLibrary& library,
                                               const OpRegistry& ops,
                                               std::vector<NodeDef>* out) {
  const FunctionDef* fn = library.Find(request.function);
  if (fn == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        request.caller.empty() ? "" : absl::StrCat("node '", request.caller, "': "),
        "calls function '", absl::CEscape(request.function),
        "', which is not in the graph's function library"));
  }
  BodyRewriter rewriter(request, *fn, library, ops);
  return rewriter.Run(out);
}

}  // namespace weft
