// ComputeKernelCoverage and ParseKernelList (op_coverage.h): TensorFlow's CPU
// kernels expanded into type combinations, each probed against Weft's
// kernel registry with a node carrying those attrs.
#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "graph/lower_functional_ops.h"
#include "proto/node_def.pb.h"
#include "runtime/core/types.h"
#include "tools/op_coverage.h"

namespace weft {
namespace {

using Assignment = std::vector<std::pair<std::string, tensorflow::DataType>>;

// Every assignment of the kernel's type constraints (usually one value
// each; TensorFlow registers one kernel per dtype).
std::vector<Assignment> Expand(const tensorflow::KernelDef& k) {
  std::vector<Assignment> out = {{}};
  for (const auto& c : k.constraint()) {
    const auto& types = c.allowed_values().list().type();
    if (types.empty()) continue;  // not a type constraint
    std::vector<Assignment> next;
    for (const Assignment& a : out) {
      for (int t : types) {
        Assignment b = a;
        b.emplace_back(c.name(), static_cast<tensorflow::DataType>(t));
        next.push_back(std::move(b));
      }
    }
    out = std::move(next);
  }
  for (Assignment& a : out) std::sort(a.begin(), a.end());
  return out;
}

// A node of `op` with `a`'s types and, for the op's other type attrs, their
// defaults (or first allowed type, or float).
tensorflow::NodeDef ProbeNode(const tensorflow::OpDef& op, const Assignment& a) {
  tensorflow::NodeDef node;
  node.set_name("probe");
  node.set_op(op.name());
  for (const auto& attr : op.attr()) {
    if (attr.type() != "type") continue;
    tensorflow::DataType t = tensorflow::DT_FLOAT;
    if (attr.has_default_value()) {
      t = attr.default_value().type();
    } else if (attr.allowed_values().list().type_size() > 0) {
      t = static_cast<tensorflow::DataType>(attr.allowed_values().list().type(0));
    }
    (*node.mutable_attr())[attr.name()].set_type(t);
  }
  for (const auto& [name, t] : a) (*node.mutable_attr())[name].set_type(t);
  return node;
}

// Whether the OpDef allows every type of `a`. TensorFlow registers some
// kernels for types its own OpDef refuses (LeakyRelu and MaxPoolGrad on
// int32, ...); no graph can reach those, so they are not counted.
bool Reachable(const tensorflow::OpDef& op, const Assignment& a) {
  for (const auto& [name, t] : a) {
    for (const auto& attr : op.attr()) {
      if (attr.name() != name) continue;
      const auto& allowed = attr.allowed_values().list().type();
      if (!allowed.empty() &&
          std::find(allowed.begin(), allowed.end(), t) == allowed.end()) {
        return false;
      }
    }
  }
  return true;
}

std::string Describe(const std::string& op, const Assignment& a) {
  return absl::StrCat(
      op, "[",
      absl::StrJoin(a, ", ",
                    [](std::string* out, const auto& p) {
                      absl::StrAppend(out, p.first, "=", DataTypeString(p.second));
                    }),
      "]");
}

}  // namespace

absl::StatusOr<tensorflow::KernelList> ParseKernelList(const std::string& bytes,
                                                       const std::string& path) {
  tensorflow::KernelList list;
  if (list.ParseFromString(bytes)) return list;
  list.Clear();
  if (google::protobuf::TextFormat::ParseFromString(bytes, &list)) return list;
  return absl::InvalidArgumentError(absl::StrCat(
      "'", path, "' is not a KernelList (binary or text); write one with "
      "python3 -c \"from tensorflow.python.framework import kernels; "
      "open('tf_kernels.pb','wb').write(kernels.get_all_registered_kernels()"
      ".SerializeToString())\""));
}

KernelCoverage ComputeKernelCoverage(const OpRegistry& ops,
                                     const KernelRegistry& kernels,
                                     const tensorflow::KernelList& tf) {
  KernelCoverage c;
  std::set<std::string> seen;
  std::map<std::string, int64_t> by_dtype;
  for (const tensorflow::KernelDef& k : tf.kernel()) {
    if (k.device_type() != "CPU" || !k.label().empty()) continue;
    const tensorflow::OpDef* op = ops.LookUpOpDef(k.op());
    if (op == nullptr) continue;
    for (const Assignment& a : Expand(k)) {
      if (!Reachable(*op, a)) continue;
      std::string name = Describe(k.op(), a);
      if (!seen.insert(name).second) continue;
      ++c.combinations;
      // Calls, If, While and Case are lowered into plain nodes, not run.
      if (IsLoweredBeforeRun(k.op()) ||
          kernels.HasKernel(ProbeNode(*op, a), kDeviceTypeCpu)) {
        ++c.covered;
        continue;
      }
      std::set<std::string> dtypes;
      for (const auto& [attr, t] : a) dtypes.insert(DataTypeString(t));
      for (const std::string& d : dtypes) ++by_dtype[d];
      c.missing.push_back(std::move(name));
    }
  }
  std::sort(c.missing.begin(), c.missing.end());
  c.missing_by_dtype.assign(by_dtype.begin(), by_dtype.end());
  std::stable_sort(c.missing_by_dtype.begin(), c.missing_by_dtype.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  return c;
}

}  // namespace weft
