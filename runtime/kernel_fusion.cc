#include "runtime/kernel_fusion.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/attr_value.pb.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/graph_rewrite.h"

namespace weft {
namespace {

enum class Head { kConv2D, kMatMul, kDepthwise };

const tensorflow::AttrValue* Attr(const Node& n, const char* name) {
  auto it = n.def().attr().find(name);
  return it == n.def().attr().end() ? nullptr : &it->second;
}

std::string StringAttr(const Node& n, const char* name, const char* fallback) {
  const tensorflow::AttrValue* a = Attr(n, name);
  return a == nullptr ? fallback : a->s();
}

// The value of a Const node as doubles, if it is one value or one per
// channel of a result with `rank` dimensions and `channels` in the last
// (so reading it changes no shape), in dtype `dtype`.
std::optional<std::vector<double>> ChannelConstant(const Node& n, DataType dtype,
                                                   int rank, int64_t channels) {
  if (!n.IsConstant()) return std::nullopt;
  const tensorflow::AttrValue* value = Attr(n, "value");
  if (value == nullptr) return std::nullopt;
  absl::StatusOr<Tensor> t = TensorFromProto(value->tensor());
  if (!t.ok() || t->dtype() != dtype || t->dims() > rank) return std::nullopt;
  const int64_t count = t->NumElements();
  if (count != 1) {
    if (count != channels || t->dims() == 0 || t->dim_size(t->dims() - 1) != channels) {
      return std::nullopt;
    }
  }
  std::vector<double> out(channels);
  for (int64_t j = 0; j < channels; ++j) {
    const int64_t k = count == 1 ? 0 : j;
    out[j] = dtype == DT_FLOAT ? t->data<float>()[k] : t->data<double>()[k];
  }
  return out;
}

// The node reading `n`, if it is n's only reader (one data edge from output
// 0, no control edge) and on the same device.
Node* OnlyReader(const Node& n) {
  if (n.out_edges().size() != 1) return nullptr;
  const Edge* e = n.out_edges().front();
  if (e->IsControlEdge() || e->src_output != 0) return nullptr;
  if (e->dst->assigned_device() != n.assigned_device()) return nullptr;
  return e->dst;
}

// For a binary node reading `from` on one input: the other input's source
// node, and whether `from` is input 0.
const Node* OtherInput(const Node& n, const Node& from, bool* from_first) {
  if (n.num_inputs() != 2) return nullptr;
  const Edge* a = n.input_edge(0);
  const Edge* b = n.input_edge(1);
  if (a == nullptr || b == nullptr) return nullptr;
  if (a->src == &from && b->src != &from) {
    *from_first = true;
    return b->src;
  }
  if (b->src == &from && a->src != &from) {
    *from_first = false;
    return a->src;
  }
  return nullptr;
}

bool IsActivation(const std::string& op) {
  return op == "Relu" || op == "Relu6" || op == "Elu" || op == "LeakyRelu" ||
         op == "Tanh" || op == "Sigmoid";
}

// y = head * scale + shift, per channel.
struct Run {
  std::vector<Node*> nodes;  // after the head, in order
  std::vector<double> scale, shift;
  bool scaled = false;
  Node* activation = nullptr;
  // A BiasAdd whose bias is not a Const (a variable's value): then the
  // only node before the activation, and its bias is read as it is.
  const Edge* dynamic_bias = nullptr;
};

// Extends `run` by `n` (which reads the run's last node `prev`) if it is
// a per-channel affine node; false otherwise.
bool TakeAffine(Node* n, const Node& prev, DataType dtype, int rank, int64_t channels,
                bool may_scale, Run* run) {
  const std::string& op = n->type_string();
  if (Attr(*n, "T") == nullptr || Attr(*n, "T")->type() != dtype) return false;
  if (op == "FusedBatchNorm" || op == "FusedBatchNormV2" || op == "FusedBatchNormV3") {
    const tensorflow::AttrValue* training = Attr(*n, "is_training");
    if (!may_scale || training == nullptr || training->b() ||
        StringAttr(*n, "data_format", "NHWC") != "NHWC") {
      return false;
    }
    const Edge* x = n->input_edge(0);
    if (x == nullptr || x->src != &prev) return false;
    for (const Edge* e : n->out_edges()) {
      if (e->src_output != 0) return false;  // the batch statistics are read
    }
    std::vector<std::vector<double>> params;  // scale, offset, mean, variance
    for (int i = 1; i <= 4; ++i) {
      const Edge* e = n->input_edge(i);
      if (e == nullptr) return false;
      std::optional<std::vector<double>> v = ChannelConstant(*e->src, dtype, 1, channels);
      if (!v) return false;
      params.push_back(std::move(*v));
    }
    const tensorflow::AttrValue* eps = Attr(*n, "epsilon");
    const double epsilon = eps == nullptr ? 1e-4 : eps->f();
    for (int64_t j = 0; j < channels; ++j) {
      const double s = params[0][j] / std::sqrt(params[3][j] + epsilon);
      if (!std::isfinite(s) || s == 0) return false;  // as for Mul below
    }
    for (int64_t j = 0; j < channels; ++j) {
      const double s = params[0][j] / std::sqrt(params[3][j] + epsilon);
      run->scale[j] *= s;
      run->shift[j] = (run->shift[j] - params[2][j]) * s + params[1][j];
    }
    run->scaled = true;
    run->nodes.push_back(n);
    return true;
  }
  bool prev_first = true;
  const Node* other = OtherInput(*n, prev, &prev_first);
  if (other == nullptr) return false;
  if (op == "BiasAdd") {
    if (!prev_first || StringAttr(*n, "data_format", "NHWC") != "NHWC") return false;
    std::optional<std::vector<double>> b = ChannelConstant(*other, dtype, 1, channels);
    if (!b) return false;
    for (int64_t j = 0; j < channels; ++j) run->shift[j] += (*b)[j];
  } else if (op == "Add" || op == "AddV2" || (op == "Sub" && prev_first)) {
    std::optional<std::vector<double>> c = ChannelConstant(*other, dtype, rank, channels);
    if (!c) return false;
    const double sign = op == "Sub" ? -1 : 1;
    for (int64_t j = 0; j < channels; ++j) run->shift[j] += sign * (*c)[j];
  } else if (op == "Mul" || (op == "RealDiv" && prev_first)) {
    if (!may_scale) return false;
    std::optional<std::vector<double>> s = ChannelConstant(*other, dtype, rank, channels);
    if (!s) return false;
    // A scale of 0, inf or NaN moved into the filter would not give what
    // the graph gives (x * inf is NaN where x is 0, not where the filter
    // makes it so): such a run stops here.
    for (double f : *s) {
      if (!std::isfinite(f) || f == 0) return false;
    }
    for (int64_t j = 0; j < channels; ++j) {
      const double f = op == "Mul" ? (*s)[j] : 1.0 / (*s)[j];
      run->scale[j] *= f;
      run->shift[j] *= f;
    }
    run->scaled = true;
  } else {
    return false;
  }
  run->nodes.push_back(n);
  return true;
}

// The filter scaled per output channel: element i belongs to channel
// (i / inner) % channels.
template <typename T>
void ScaleFilter(const T* w, const std::vector<double>& scale, int64_t inner, int64_t n,
                 T* out) {
  const int64_t channels = static_cast<int64_t>(scale.size());
  std::vector<T> s(scale.begin(), scale.end());
  for (int64_t i = 0; i < n;) {
    for (int64_t c = 0; c < channels && i < n; ++c) {
      for (int64_t k = 0; k < inner && i < n; ++k, ++i) out[i] = w[i] * s[c];
    }
  }
}

Tensor ScaledFilter(const Tensor& w, const std::vector<double>& scale, int64_t inner) {
  Tensor out(w.dtype(), w.shape());
  if (w.dtype() == DT_FLOAT) {
    ScaleFilter(w.data<float>(), scale, inner, w.NumElements(), out.data<float>());
  } else {
    ScaleFilter(w.data<double>(), scale, inner, w.NumElements(), out.data<double>());
  }
  return out;
}

Tensor ChannelTensor(DataType dtype, const std::vector<double>& v) {
  Tensor out(dtype, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t j = 0; j < v.size(); ++j) {
    if (dtype == DT_FLOAT) {
      out.data<float>()[j] = static_cast<float>(v[j]);
    } else {
      out.data<double>()[j] = v[j];
    }
  }
  return out;
}

// "node" for output 0, "node:k" otherwise: how a NodeDef input names it.
std::string TensorName(const Node& n, int output) {
  return output == 0 ? n.name() : absl::StrCat(n.name(), ":", output);
}

// What a replaced node (or run of nodes) is connected to, kept across its
// removal for the node that replaces it.
struct Edges {
  std::vector<std::pair<Node*, int>> readers;  // (dst, input) reading output 0
  std::vector<int> control_in, control_out;    // node ids

  // The readers and control successors of `last` (one output: every reader
  // reads output 0).
  explicit Edges(const Node& last) {
    for (const Edge* e : last.out_edges()) {
      if (e->IsControlEdge()) {
        control_out.push_back(e->dst->id());
      } else {
        readers.push_back({e->dst, e->dst_input});
      }
    }
  }

  // Gives `to` the readers and the control edges, skipping nodes removed
  // since.
  void Reconnect(Graph* graph, Node* to) const {
    for (const auto& [dst, input] : readers) graph->AddEdge(to, 0, dst, input);
    for (int id : control_in) {
      if (Node* src = graph->FindNodeId(id)) graph->AddControlEdge(src, to);
    }
    for (int id : control_out) {
      if (Node* dst = graph->FindNodeId(id)) graph->AddControlEdge(to, dst);
    }
  }
};

// Tries the run starting at `head`; true if it rewrote the graph.
absl::StatusOr<bool> FuseAt(Graph* graph, Node* head, std::vector<int>* unread) {
  Head kind;
  const std::string& op = head->type_string();
  if (op == "Conv2D") {
    kind = Head::kConv2D;
  } else if (op == "MatMul") {
    kind = Head::kMatMul;
  } else if (op == "DepthwiseConv2dNative") {
    kind = Head::kDepthwise;
  } else {
    return false;
  }
  const tensorflow::AttrValue* t_attr = Attr(*head, "T");
  if (t_attr == nullptr) return false;
  const DataType dtype = t_attr->type();
  if (dtype != DT_FLOAT && (dtype != DT_DOUBLE || kind == Head::kMatMul)) return false;
  if (kind != Head::kMatMul && StringAttr(*head, "data_format", "NHWC") != "NHWC") {
    return false;
  }
  const Edge* x_edge = head->input_edge(0);
  const Edge* w_edge = head->input_edge(1);
  if (x_edge == nullptr || w_edge == nullptr) return false;
  // A depthwise convolution becomes _FusedDepthwiseConv2dNative where that
  // op can express it (float, SAME or VALID padding); otherwise it stays
  // and its run becomes one BiasAdd.
  const bool keeps_head = kind == Head::kDepthwise &&
                          (dtype != DT_FLOAT || StringAttr(*head, "padding", "") == "EXPLICIT");

  // The filter, if it is a Const: its output channels and layout.
  std::optional<Tensor> w;
  if (w_edge->src->IsConstant()) {
    const tensorflow::AttrValue* value = Attr(*w_edge->src, "value");
    if (value != nullptr) {
      absl::StatusOr<Tensor> t = TensorFromProto(value->tensor());
      if (t.ok() && t->dtype() == dtype) w = std::move(*t);
    }
  }
  int64_t channels = -1, inner = 1;
  int rank = 4;
  bool transpose_b = false;
  if (kind == Head::kMatMul) {
    rank = 2;
    transpose_b = Attr(*head, "transpose_b") != nullptr && Attr(*head, "transpose_b")->b();
    if (w && w->dims() == 2) {
      channels = w->dim_size(transpose_b ? 0 : 1);
      inner = transpose_b ? w->dim_size(1) : 1;
    }
  } else if (w && w->dims() == 4) {
    channels = kind == Head::kConv2D ? w->dim_size(3) : w->dim_size(2) * w->dim_size(3);
  }
  // Without the channel count (a filter that is not a Const) only a
  // BiasAdd of a tensor, and an activation after it, fuse.
  Run run;
  Node* last = head;
  if (channels > 0) {
    run.scale.assign(channels, 1.0);
    run.shift.assign(channels, 0.0);
    for (Node* next = OnlyReader(*head); next != nullptr; next = OnlyReader(*last)) {
      if (!TakeAffine(next, *last, dtype, rank, channels, w.has_value(), &run)) break;
      last = next;
    }
  }
  if (last == head && !keeps_head) {
    Node* next = OnlyReader(*head);
    if (next != nullptr && next->type_string() == "BiasAdd" &&
        StringAttr(*next, "data_format", "NHWC") == "NHWC" &&
        next->input_edge(0) != nullptr && next->input_edge(0)->src == head &&
        next->input_edge(1) != nullptr && next->input_edge(1)->src != head &&
        next->input_type(1) == dtype) {
      run.dynamic_bias = next->input_edge(1);
      run.nodes.push_back(next);
      last = next;
    }
  }
  if (!keeps_head && (channels > 0 || run.dynamic_bias != nullptr)) {
    Node* next = OnlyReader(*last);
    if (next != nullptr && IsActivation(next->type_string()) &&
        Attr(*next, "T") != nullptr && Attr(*next, "T")->type() == dtype &&
        next->input_edge(0) != nullptr && next->input_edge(0)->src == last) {
      run.activation = next;
      run.nodes.push_back(next);
      last = next;
    }
  }
  if (run.nodes.empty()) return false;
  if (keeps_head && !run.scaled && run.nodes.size() == 1) return false;

  // Collect what the run is connected to before removing it.
  Edges edges(*last);
  std::vector<Node*> members = run.nodes;
  members.push_back(head);
  auto is_member = [&members](const Node* n) {
    return std::find(members.begin(), members.end(), n) != members.end();
  };
  for (Node* m : members) {
    for (const Edge* e : m->in_edges()) {
      if (is_member(e->src)) continue;
      if (e->IsControlEdge()) {
        edges.control_in.push_back(e->src->id());
      } else if (e->src != x_edge->src) {
        unread->push_back(e->src->id());  // the run's constants, W included
      }
    }
  }
  Node* bias_src = nullptr;
  int bias_output = 0;
  if (run.dynamic_bias != nullptr) {
    bias_src = run.dynamic_bias->src;
    bias_output = run.dynamic_bias->src_output;
  }
  Node* x = x_edge->src;
  const int x_output = x_edge->src_output;
  Node* filter = w_edge->src;
  const int filter_output = w_edge->src_output;
  if (run.scaled) {
    WEFT_ASSIGN_OR_RETURN(filter, AddConstNode(graph, absl::StrCat(head->name(), "/scaled_filter"),
                                               ScaledFilter(*w, run.scale, inner), *head));
  }
  if (bias_src == nullptr) {
    WEFT_ASSIGN_OR_RETURN(bias_src,
                          AddConstNode(graph, absl::StrCat(head->name(), "/fused_bias"),
                                       ChannelTensor(dtype, run.shift), *head));
  }
  const std::string name = last->name();
  tensorflow::NodeDef def;
  const std::string device = head->assigned_device();
  Node* depthwise = nullptr;
  if (keeps_head) {
    // The convolution stays, reading the scaled filter; the run becomes
    // one BiasAdd.
    depthwise = head;
    members.pop_back();
    def.set_op("BiasAdd");
    (*def.mutable_attr())["T"].set_type(dtype);
    (*def.mutable_attr())["data_format"].set_s("NHWC");
  } else {
    *def.mutable_attr() = head->def().attr();
    def.set_op(kind == Head::kConv2D   ? "_FusedConv2D"
               : kind == Head::kMatMul ? "_FusedMatMul"
                                       : "_FusedDepthwiseConv2dNative");
    auto& attrs = *def.mutable_attr();
    attrs["num_args"].set_i(1);
    if (kind == Head::kConv2D) attrs["TArgs"].mutable_list()->add_type(dtype);
    auto* fused_ops = attrs["fused_ops"].mutable_list();
    fused_ops->add_s("BiasAdd");
    if (run.activation != nullptr) {
      fused_ops->add_s(run.activation->type_string());
      const tensorflow::AttrValue* alpha = Attr(*run.activation, "alpha");
      if (run.activation->type_string() == "LeakyRelu" && alpha != nullptr) {
        attrs["leakyrelu_alpha"].set_f(alpha->f());
      }
    }
    if (kind == Head::kMatMul) {
      attrs.erase("grad_a");
      attrs.erase("grad_b");
    }
    if (kind == Head::kDepthwise) attrs.erase("explicit_paddings");
  }
  def.set_device(head->requested_device());
  for (Node* m : members) graph->RemoveNode(m);
  def.set_name(name);
  if (depthwise != nullptr) {
    def.add_input(depthwise->name());
  } else {
    def.add_input(TensorName(*x, x_output));
    def.add_input(TensorName(*filter, run.scaled ? 0 : filter_output));
  }
  def.add_input(TensorName(*bias_src, bias_output));
  WEFT_ASSIGN_OR_RETURN(Node * fused, graph->AddNode(std::move(def)));
  fused->set_assigned_device(device);
  if (depthwise != nullptr) {
    if (run.scaled) {
      graph->RemoveEdge(depthwise->input_edge(1));
      graph->AddEdge(filter, 0, depthwise, 1);
    }
    graph->AddEdge(depthwise, 0, fused, 0);
    graph->AddEdge(bias_src, bias_output, fused, 1);
  } else {
    graph->AddEdge(x, x_output, fused, 0);
    graph->AddEdge(filter, run.scaled ? 0 : filter_output, fused, 1);
    graph->AddEdge(bias_src, bias_output, fused, 2);
  }
  edges.Reconnect(graph, fused);
  return true;
}

// Pad(x, p) read only by a VALID Conv2D or DepthwiseConv2dNative (NHWC),
// with constant p padding only rows and columns: the convolution pads
// itself (padding EXPLICIT), without the padded copy. Keras writes such a
// Pad (ZeroPadding2D) before every strided convolution of MobileNetV2 and
// EfficientNet, and before ResNet50's first.
absl::StatusOr<bool> FoldPadInto(Graph* graph, Node* pad, std::vector<int>* unread) {
  if (pad->type_string() != "Pad") return false;
  Node* conv = OnlyReader(*pad);
  if (conv == nullptr || (conv->type_string() != "Conv2D" &&
                          conv->type_string() != "DepthwiseConv2dNative")) {
    return false;
  }
  const Edge* x_edge = pad->input_edge(0);
  const Edge* p_edge = pad->input_edge(1);
  const Edge* conv_in = conv->input_edge(0);
  const Edge* filter = conv->input_edge(1);
  if (x_edge == nullptr || p_edge == nullptr || conv_in == nullptr || filter == nullptr ||
      conv_in->src != pad || filter->src == pad || !p_edge->src->IsConstant() ||
      StringAttr(*conv, "data_format", "NHWC") != "NHWC" ||
      StringAttr(*conv, "padding", "") != "VALID") {
    return false;
  }
  for (const Edge* e : pad->in_edges()) {
    if (e->IsControlEdge()) return false;
  }
  const tensorflow::AttrValue* value = Attr(*p_edge->src, "value");
  if (value == nullptr) return false;
  absl::StatusOr<Tensor> p = TensorFromProto(value->tensor());
  if (!p.ok() || p->dims() != 2 || p->dim_size(0) != 4 || p->dim_size(1) != 2) return false;
  std::vector<int64_t> amounts(8);
  for (int i = 0; i < 8; ++i) {
    if (p->dtype() == DT_INT32) {
      amounts[i] = p->data<int32_t>()[i];
    } else if (p->dtype() == DT_INT64) {
      amounts[i] = p->data<int64_t>()[i];
    } else {
      return false;
    }
    if (amounts[i] < 0) return false;
  }
  if (amounts[0] != 0 || amounts[1] != 0 || amounts[6] != 0 || amounts[7] != 0) return false;

  tensorflow::NodeDef def = conv->def();
  (*def.mutable_attr())["padding"].set_s("EXPLICIT");
  auto* list = (*def.mutable_attr())["explicit_paddings"].mutable_list();
  list->clear_i();
  for (int64_t a : amounts) list->add_i(a);
  Node* x = x_edge->src;
  const int x_output = x_edge->src_output;
  Node* w = filter->src;
  const int w_output = filter->src_output;
  Edges edges(*conv);
  for (const Edge* e : conv->in_edges()) {
    if (e->IsControlEdge()) edges.control_in.push_back(e->src->id());
  }
  const std::string device = conv->assigned_device();
  unread->push_back(pad->id());
  unread->push_back(p_edge->src->id());
  graph->RemoveNode(conv);
  def.clear_input();  // what AddNode's check counts; the edges follow
  def.add_input(TensorName(*x, x_output));
  def.add_input(TensorName(*w, w_output));
  WEFT_ASSIGN_OR_RETURN(Node * padded, graph->AddNode(std::move(def)));
  padded->set_assigned_device(device);
  graph->AddEdge(x, x_output, padded, 0);
  graph->AddEdge(w, w_output, padded, 1);
  edges.Reconnect(graph, padded);
  return true;
}

}  // namespace

absl::Status FuseKernels(Graph* graph) {
  std::vector<int> unread;
  for (int id = 0, end = graph->num_node_ids(); id < end; ++id) {
    Node* n = graph->FindNodeId(id);
    if (n == nullptr) continue;
    WEFT_ASSIGN_OR_RETURN(bool folded, FoldPadInto(graph, n, &unread));
    (void)folded;
  }
  const int num_ids = graph->num_node_ids();
  for (int id = 0; id < num_ids; ++id) {
    Node* n = graph->FindNodeId(id);
    if (n == nullptr) continue;  // removed by an earlier run
    WEFT_ASSIGN_OR_RETURN(bool fused, FuseAt(graph, n, &unread));
    (void)fused;
  }
  RemoveUnread(graph, unread);
  return absl::OkStatus();
}

}  // namespace weft
