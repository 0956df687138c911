#include "tests/fuzz/random_graph.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/numeric_cast.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/core/types.h"
#include "tests/fuzz/fuzz_input.h"

namespace weft::fuzz {
namespace {

const std::vector<std::string>& OpChoices() {
  static const std::vector<std::string>* const ops = [] {
    auto* names = new std::vector<std::string>;
    // Internal ops ("_Send", "_Arg", ...) are the runtime's own, except
    // the fused ones TensorFlow's grappler writes into users' graphs.
    for (std::string& op : GlobalOpRegistry().OpNames()) {
      if (!absl::StartsWith(op, "_") || op == "_FusedConv2D" || op == "_FusedMatMul" ||
          op == "_FusedDepthwiseConv2dNative") {
        names->push_back(std::move(op));
      }
    }
    return names;
  }();
  return *ops;
}

const std::vector<DataType> kDtypes = {
    DT_FLOAT, DT_INT32, DT_INT64,  DT_BOOL,   DT_DOUBLE, DT_STRING,
    DT_HALF,  DT_UINT8, DT_INT8,   DT_INT16,  DT_UINT16, DT_UINT32,
    DT_UINT64, DT_BFLOAT16, DT_RESOURCE, DT_VARIANT, DT_INVALID};

// Values at which narrowing, sign and bounds checks go wrong.
const std::vector<int64_t> kEdgeInts = {
    0, 1, 2, 3, 4, -1, -2, 5, 7, 254, 255, 256, int64_t{1} << 20,
    (int64_t{1} << 31) - 1, int64_t{1} << 31, -(int64_t{1} << 31),
    (int64_t{1} << 32) + 1, int64_t{1} << 40, std::numeric_limits<int64_t>::max(),
    std::numeric_limits<int64_t>::min()};

const std::vector<double> kEdgeFloats = {
    0.0, 1.0, -1.0, 0.5, 2.5, 1e-30, 1e30, -1e30,
    std::numeric_limits<double>::quiet_NaN(),
    std::numeric_limits<double>::infinity(),
    -std::numeric_limits<double>::infinity()};

const std::vector<std::string> kStrings = {
    "", "NHWC", "NCHW", "SAME", "VALID", "EXPLICIT", "a", "\x01\x00x", "x:0"};

int64_t SmallOrEdgeInt(FuzzInput& in) {
  return in.IntInRange(0, 7) != 0 ? in.IntInRange(-2, 5) : in.Pick(kEdgeInts);
}

// Dims mostly small, sometimes unknown (-1), zero or huge.
void RandomShape(FuzzInput& in, tensorflow::TensorShapeProto* shape,
                 bool allow_unknown) {
  if (allow_unknown && in.IntInRange(0, 9) == 0) {
    shape->set_unknown_rank(true);
    return;
  }
  const int rank = static_cast<int>(in.IntInRange(0, 4));
  for (int i = 0; i < rank; ++i) {
    int64_t d = in.IntInRange(0, 4);
    if (in.IntInRange(0, 15) == 0) d = in.Pick(kEdgeInts);
    if (allow_unknown && in.IntInRange(0, 7) == 0) d = -1;
    shape->add_dim()->set_size(d);
  }
}

template <typename T>
T ValueOf(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return FloatToHalf(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return FloatToBFloat16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, std::string>) {
    return std::to_string(v);
  } else if constexpr (std::is_same_v<T, ResourceHandle>) {
    return ResourceHandle();
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return SaturatingCast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// A small tensor of `dtype` (at most 64 elements), or nullopt-like empty
// proto for dtypes that cannot be Consts. Values are mostly small integers,
// which serve as sizes, axes, indices and permutations.
bool RandomTensor(FuzzInput& in, DataType dtype,
                  tensorflow::TensorProto* proto) {
  if (!DataTypeIsSupported(dtype) || dtype == DT_RESOURCE) return false;
  tensorflow::TensorShapeProto shape_proto;
  const int rank = static_cast<int>(in.IntInRange(0, 3));
  int64_t elements = 1;
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    const int64_t d = in.IntInRange(0, 4);
    dims.push_back(d);
    elements *= d;
  }
  Tensor t(dtype, TensorShape(dims));
  WEFT_SWITCH_ALL_TYPES(
      dtype,
      {
        T* data = t.data<T>();
        for (int64_t i = 0; i < elements; ++i) {
          double v = static_cast<double>(in.IntInRange(-2, 5));
          switch (in.IntInRange(0, 15)) {
            case 0:
              v = static_cast<double>(in.Pick(kEdgeInts));
              break;
            case 1:
              v = in.Pick(kEdgeFloats);
              break;
            default:
              break;
          }
          data[i] = ValueOf<T>(v);
        }
      },
      return false);
  TensorToProto(t, proto,
                in.Bool() ? ProtoEncoding::kTypedFields
                          : ProtoEncoding::kTensorContent);
  // Sometimes the proto claims more than it holds (typed fields splat their
  // last value), the case shape inference must not expand blindly.
  if (in.IntInRange(0, 15) == 0) {
    proto->mutable_tensor_shape()->add_dim()->set_size(in.Pick(kEdgeInts));
  }
  return true;
}

DataType RandomType(FuzzInput& in, const tensorflow::OpDef::AttrDef& def) {
  if (def.has_allowed_values() && def.allowed_values().list().type_size() > 0 &&
      in.IntInRange(0, 15) != 0) {
    const auto& allowed = def.allowed_values().list().type();
    return static_cast<DataType>(
        allowed[static_cast<int>(in.IntInRange(0, allowed.size() - 1))]);
  }
  return in.Pick(kDtypes);
}

void RandomAttr(FuzzInput& in, const tensorflow::OpDef::AttrDef& def,
                tensorflow::AttrValue* value) {
  // Now and then the wrong kind of value altogether.
  if (in.IntInRange(0, 31) == 0) {
    value->set_s("wrong kind");
    return;
  }
  const std::string& type = def.type();
  if (type == "type") {
    value->set_type(RandomType(in, def));
  } else if (type == "list(type)") {
    const int n = static_cast<int>(in.IntInRange(0, 3));
    for (int i = 0; i < n; ++i) value->mutable_list()->add_type(RandomType(in, def));
  } else if (type == "int") {
    int64_t v = SmallOrEdgeInt(in);
    if (def.has_minimum() && in.IntInRange(0, 7) != 0) {
      v = std::max(v, def.minimum());
    }
    value->set_i(v);
  } else if (type == "float") {
    value->set_f(static_cast<float>(in.Bool() ? in.IntInRange(-2, 5)
                                              : in.Pick(kEdgeFloats)));
  } else if (type == "bool") {
    value->set_b(in.Bool());
  } else if (type == "string") {
    if (def.has_allowed_values() && def.allowed_values().list().s_size() > 0 &&
        in.IntInRange(0, 15) != 0) {
      const auto& allowed = def.allowed_values().list().s();
      value->set_s(allowed[static_cast<int>(in.IntInRange(0, allowed.size() - 1))]);
    } else {
      value->set_s(in.Pick(kStrings));
    }
  } else if (type == "shape") {
    RandomShape(in, value->mutable_shape(), /*allow_unknown=*/true);
  } else if (type == "list(int)") {
    const int n = static_cast<int>(in.IntInRange(0, 5));
    for (int i = 0; i < n; ++i) value->mutable_list()->add_i(SmallOrEdgeInt(in));
  } else if (type == "list(float)") {
    const int n = static_cast<int>(in.IntInRange(0, 3));
    for (int i = 0; i < n; ++i) {
      value->mutable_list()->add_f(static_cast<float>(in.Pick(kEdgeFloats)));
    }
  } else if (type == "list(shape)") {
    const int n = static_cast<int>(in.IntInRange(0, 3));
    for (int i = 0; i < n; ++i) {
      RandomShape(in, value->mutable_list()->add_shape(), /*allow_unknown=*/true);
    }
  } else if (type == "list(string)") {
    const int n = static_cast<int>(in.IntInRange(0, 3));
    for (int i = 0; i < n; ++i) value->mutable_list()->add_s(in.Pick(kStrings));
  } else if (type == "tensor") {
    if (!RandomTensor(in, in.Pick(kDtypes), value->mutable_tensor())) {
      RandomTensor(in, DT_FLOAT, value->mutable_tensor());
    }
  }
  // "func" and anything else: left unset, which validation must report.
}

class Builder {
 public:
  explicit Builder(FuzzInput& in) : in_(in) {}

  // A node feeding `dtype`: an earlier node's output (it may not match), a
  // variable handle for resources, or a new Const.
  std::string InputOf(DataType dtype) {
    if (!op_nodes_.empty() && in_.IntInRange(0, 3) == 0) {
      return absl::StrCat(in_.Pick(op_nodes_), ":", in_.IntInRange(0, 1));
    }
    tensorflow::NodeDef* node = graph_.add_node();
    node->set_name(absl::StrCat("in", graph_.node_size()));
    if (dtype == DT_RESOURCE) {
      node->set_op("VarHandleOp");
      (*node->mutable_attr())["dtype"].set_type(
          in_.Bool() ? DT_FLOAT : in_.Pick(kDtypes));
      RandomShape(in_, (*node->mutable_attr())["shape"].mutable_shape(), true);
      (*node->mutable_attr())["shared_name"].set_s(
          absl::StrCat("v", in_.IntInRange(0, 2)));
      return node->name();
    }
    tensorflow::TensorProto value;
    if (!RandomTensor(in_, dtype, &value)) {
      node->set_op("Placeholder");  // never fed: a clean error at Run
      (*node->mutable_attr())["dtype"].set_type(dtype);
      return node->name();
    }
    node->set_op("Const");
    (*node->mutable_attr())["dtype"].set_type(dtype);
    *(*node->mutable_attr())["value"].mutable_tensor() = std::move(value);
    return node->name();
  }

  void AddOpNode(const std::string& op) {
    const tensorflow::OpDef* def = GlobalOpRegistry().LookUpOpDef(op);
    if (def == nullptr) return;
    tensorflow::NodeDef node;
    node.set_name(absl::StrCat("n", op_nodes_.size()));
    node.set_op(op);
    for (const auto& attr : def->attr()) {
      if (in_.IntInRange(0, 31) == 0) continue;  // missing attr
      RandomAttr(in_, attr, &(*node.mutable_attr())[attr.name()]);
    }
    const auto& attrs = node.attr();
    auto type_of = [&](const std::string& name) {
      auto it = attrs.find(name);
      return it == attrs.end() ? DT_FLOAT : it->second.type();
    };
    for (const auto& arg : def->input_arg()) {
      std::vector<DataType> types;
      if (!arg.type_list_attr().empty()) {
        auto it = attrs.find(arg.type_list_attr());
        if (it != attrs.end()) {
          for (int t : it->second.list().type()) types.push_back(static_cast<DataType>(t));
        }
      } else {
        const DataType t =
            arg.type() != DT_INVALID ? arg.type() : type_of(arg.type_attr());
        int64_t n = 1;
        if (!arg.number_attr().empty()) {
          auto it = attrs.find(arg.number_attr());
          n = it == attrs.end() ? 1 : std::clamp<int64_t>(it->second.i(), 0, 4);
        }
        types.assign(static_cast<size_t>(n), t);
      }
      for (DataType t : types) node.add_input(InputOf(t));
    }
    if (!op_nodes_.empty() && in_.IntInRange(0, 7) == 0) {
      node.add_input(absl::StrCat("^", in_.Pick(op_nodes_)));
    }
    if (def->output_arg_size() > 0) fetches_.push_back(node.name() + ":0");
    op_nodes_.push_back(node.name());
    *graph_.add_node() = std::move(node);
  }

  RandomGraph Finish() {
    RandomGraph out;
    out.graph = std::move(graph_);
    out.fetches = std::move(fetches_);
    out.targets = op_nodes_;
    return out;
  }

 private:
  FuzzInput& in_;
  tensorflow::GraphDef graph_;
  std::vector<std::string> op_nodes_;
  std::vector<std::string> fetches_;
};

}  // namespace

RandomGraph GraphFromBytes(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  Builder builder(in);
  const std::vector<std::string>& ops = OpChoices();
  const int num_ops = static_cast<int>(in.IntInRange(1, 4));
  for (int i = 0; i < num_ops && !ops.empty(); ++i) {
    builder.AddOpNode(in.Pick(ops));
  }
  return builder.Finish();
}

}  // namespace weft::fuzz
