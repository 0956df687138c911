#include "graph/builder/saver.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/builder/node_def_edit.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

struct Var {
  std::string name;
  DataType dtype = DT_INVALID;
  bool resource = false;
};

tensorflow::AttrValue TypeAttr(DataType t) {
  tensorflow::AttrValue v;
  v.set_type(t);
  return v;
}

tensorflow::AttrValue TypeListAttr(const std::vector<Var>& vars) {
  tensorflow::AttrValue v;
  for (const Var& var : vars) v.mutable_list()->add_type(var.dtype);
  return v;
}

tensorflow::AttrValue BoolAttr(bool b) {
  tensorflow::AttrValue v;
  v.set_b(b);
  return v;
}

// A Const string vector.
void StringsConst(tensorflow::GraphDef* g, const std::string& name,
                  const std::string& device, const std::vector<std::string>& values) {
  tensorflow::NodeDef* n = AppendNode(g, name, "Const", device);
  (*n->mutable_attr())["dtype"] = TypeAttr(DT_STRING);
  tensorflow::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(DT_STRING);
  t->mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
  for (const std::string& v : values) t->add_string_val(v);
}

void Placeholder(tensorflow::GraphDef* g, const std::string& name, int rank) {
  tensorflow::NodeDef* n = AppendNode(g, name, "Placeholder", "");
  (*n->mutable_attr())["dtype"] = TypeAttr(DT_STRING);
  tensorflow::TensorShapeProto* s = (*n->mutable_attr())["shape"].mutable_shape();
  if (rank == 1) s->add_dim()->set_size(-1);
}

}  // namespace

std::vector<std::string> ShardPrefixes(const std::string& prefix, int num_shards) {
  std::vector<std::string> out;
  for (int k = 0; k < num_shards; ++k) {
    out.push_back(absl::StrFormat("%s_temp/part-%05d-of-%05d", prefix, k, num_shards));
  }
  return out;
}

absl::StatusOr<SaverNodes> AddSaver(tensorflow::GraphDef* graph,
                                    const std::string& local_prefix) {
  std::map<std::string, std::vector<Var>> by_device;  // sorted: stable shards
  for (const tensorflow::NodeDef& n : graph->node()) {
    if (n.name().rfind("save/", 0) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the graph has a node '", n.name(), "' already: a saver was added before"));
    }
    const bool resource = n.op() == "VarHandleOp";
    if (!resource && n.op() != "VariableV2") continue;
    if (!local_prefix.empty() && n.device().rfind(local_prefix, 0) == 0) {
      continue;  // a local variable: each task's own, not the model's
    }
    auto dtype = n.attr().find("dtype");
    if (dtype == n.attr().end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("variable '", n.name(), "' has no dtype attr"));
    }
    by_device[n.device()].push_back({n.name(), dtype->second.type(), resource});
  }
  if (by_device.empty()) {
    return absl::InvalidArgumentError("the graph has no variables to save");
  }
  SaverNodes s;
  s.num_shards = static_cast<int>(by_device.size());
  Placeholder(graph, s.prefix, 0);
  Placeholder(graph, s.parts, 1);
  std::vector<std::string> saves, assigns;
  int k = 0;
  for (const auto& [device, vars] : by_device) {
    const std::string shard = absl::StrCat("save/shard_", k);
    std::vector<std::string> names;
    for (const Var& v : vars) names.push_back(v.name);
    s.num_variables += static_cast<int>(vars.size());
    StringsConst(graph, shard + "/names", device, names);
    StringsConst(graph, shard + "/slices", device, std::vector<std::string>(vars.size()));
    // This shard's part prefix: element k of `parts`.
    AppendIntConst(graph, shard + "/index", device, DT_INT32, k);
    tensorflow::NodeDef* part = AppendNode(graph, shard + "/part", "GatherV2", device);
    part->add_input(s.parts);
    part->add_input(shard + "/index");
    part->add_input(shard + "/axis");
    AppendIntConst(graph, shard + "/axis", device, DT_INT32, 0);
    (*part->mutable_attr())["Tparams"] = TypeAttr(DT_STRING);
    (*part->mutable_attr())["Tindices"] = TypeAttr(DT_INT32);
    (*part->mutable_attr())["Taxis"] = TypeAttr(DT_INT32);
    tensorflow::AttrValue batch_dims;
    batch_dims.set_i(0);
    (*part->mutable_attr())["batch_dims"] = batch_dims;
    tensorflow::NodeDef* save = AppendNode(graph, shard + "/SaveV2", "SaveV2", device);
    save->add_input(shard + "/part");
    save->add_input(shard + "/names");
    save->add_input(shard + "/slices");
    for (size_t i = 0; i < vars.size(); ++i) {
      const Var& v = vars[i];
      if (v.resource) {
        const std::string read = absl::StrCat(shard, "/read_", i);
        tensorflow::NodeDef* r = AppendNode(graph, read, "ReadVariableOp", device);
        r->add_input(v.name);
        (*r->mutable_attr())["dtype"] = TypeAttr(v.dtype);
        save->add_input(read);
      } else {
        save->add_input(v.name);
      }
    }
    (*save->mutable_attr())["dtypes"] = TypeListAttr(vars);
    saves.push_back(save->name());

    tensorflow::NodeDef* restore = AppendNode(graph, shard + "/RestoreV2", "RestoreV2", device);
    restore->add_input(s.prefix);
    restore->add_input(shard + "/names");
    restore->add_input(shard + "/slices");
    (*restore->mutable_attr())["dtypes"] = TypeListAttr(vars);
    for (size_t i = 0; i < vars.size(); ++i) {
      const Var& v = vars[i];
      const std::string value = absl::StrCat(restore->name(), ":", i);
      tensorflow::NodeDef* a = AppendNode(graph, absl::StrCat(shard, "/assign_", i),
                                   v.resource ? "AssignVariableOp" : "Assign", device);
      a->add_input(v.name);
      a->add_input(value);
      if (v.resource) {
        (*a->mutable_attr())["dtype"] = TypeAttr(v.dtype);
        (*a->mutable_attr())["validate_shape"] = BoolAttr(false);
      } else {
        (*a->mutable_attr())["T"] = TypeAttr(v.dtype);
        (*a->mutable_attr())["validate_shape"] = BoolAttr(true);
        (*a->mutable_attr())["use_locking"] = BoolAttr(true);
      }
      assigns.push_back(a->name());
    }
    ++k;
  }
  tensorflow::NodeDef* merge = AppendNode(graph, "save/merge", "MergeV2Checkpoints", "");
  merge->add_input(s.parts);
  merge->add_input(s.prefix);
  for (const std::string& n : saves) merge->add_input("^" + n);
  (*merge->mutable_attr())["delete_old_dirs"] = BoolAttr(true);
  (*merge->mutable_attr())["allow_missing_files"] = BoolAttr(false);
  tensorflow::NodeDef* save_all = AppendNode(graph, s.save, "NoOp", "");
  save_all->add_input("^save/merge");
  tensorflow::NodeDef* restore_all = AppendNode(graph, s.restore, "NoOp", "");
  for (const std::string& n : assigns) restore_all->add_input("^" + n);
  return s;
}

}  // namespace weft
