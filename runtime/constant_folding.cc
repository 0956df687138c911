#include "runtime/constant_folding.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ops/framework/call_frame.h"
#include "proto/attr_value.pb.h"
#include "runtime/core/allocator.h"
#include "runtime/core/file_policy.h"
#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"
#include "runtime/executor.h"
#include "runtime/graph_rewrite.h"

namespace weft {
namespace {

bool PlainType(DataType t) {
  return !IsRefType(t) && t != DT_RESOURCE && t != DT_VARIANT;
}

bool CallsFunction(const Node& n) {
  for (const auto& [name, value] : n.def().attr()) {
    if (value.has_func() || value.list().func_size() > 0) return true;
  }
  return false;
}

// Could the node be folded if all its inputs were constant?
bool FoldableOp(const Node& n) {
  if (n.num_inputs() == 0 || n.num_outputs() == 0) return false;
  if (n.op_def().is_stateful() || CallsFunction(n)) return false;
  if (n.IsSwitch() || n.IsMerge() || n.IsLoopOp() || n.IsTransfer() ||
      n.IsArg() || n.IsRetval() || n.IsPlaceholder() || n.IsConstant()) {
    return false;
  }
  const std::string& op = n.type_string();
  if (op == "LoopCond" || op == "ControlTrigger" || op == "NoOp" ||
      op == "PlaceholderWithDefault") {
    return false;
  }
  for (DataType t : n.input_types()) if (!PlainType(t)) return false;
  for (DataType t : n.output_types()) if (!PlainType(t)) return false;
  return true;
}

// The nodes whose value is fixed: Const nodes fed by nothing but fixed
// nodes, and foldable nodes likewise (in topological order, by counting
// the edges still to come; nodes on a cycle never qualify).
std::vector<Node*> FixedNodes(const Graph& graph) {
  std::vector<int> pending(graph.num_node_ids(), 0);
  std::vector<Node*> ready;
  for (Node* n : graph.nodes()) {
    pending[n->id()] = static_cast<int>(n->in_edges().size());
    if (pending[n->id()] == 0 && n->IsConstant()) ready.push_back(n);
  }
  std::vector<Node*> fixed;
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    fixed.push_back(n);
    for (const Edge* e : n->out_edges()) {
      Node* dst = e->dst;
      if (--pending[dst->id()] == 0 && (dst->IsConstant() || FoldableOp(*dst))) {
        ready.push_back(dst);
      }
    }
  }
  return fixed;
}

struct Output {
  Node* node;
  int index;
};

// Identity-like ops of a Const: their readers read the Const itself, with
// nothing to evaluate or copy (a frozen graph reads every weight through
// the Identity that was its ReadVariableOp).
bool ForwardsItsInput(const Node& n) {
  const std::string& op = n.type_string();
  return op == "Identity" || op == "Snapshot" || op == "StopGradient";
}

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// The private device the evaluations run on (see the header).
struct EvalDevice {
  std::unique_ptr<Device> device;
  LimitedAllocator* budget = nullptr;
  ~EvalDevice() {
    device.reset();
    if (budget != nullptr) budget->Unref();
  }
};

absl::Status MakeEvalDevice(const Device& like, int64_t budget_bytes, EvalDevice* out) {
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<ThreadPool> pool,
                        ThreadPool::Create("constant_folding", 1));
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const FilePolicy> no_files, FilePolicy::Confined({}));
  out->budget = LimitedAllocator::New(like.allocator(), budget_bytes);
  out->device = std::make_unique<Device>(like.attributes(), out->budget,
                                         std::shared_ptr<ThreadPool>(std::move(pool)));
  out->device->set_file_policy(std::move(no_files));
  return absl::OkStatus();
}

// Runs the nodes of `members` (and the Const nodes they read) and returns
// the values of `outputs`; an error if any kernel fails.
absl::StatusOr<std::vector<Tensor>> Evaluate(const Graph& graph,
                                             const std::vector<Node*>& members,
                                             const std::vector<Output>& outputs,
                                             Device* device, const KernelRegistry& kernels) {
  Graph eval(&graph.op_registry());
  std::vector<Node*> copy(graph.num_node_ids(), nullptr);
  auto add = [&](Node* n) -> absl::Status {
    if (copy[n->id()] != nullptr) return absl::OkStatus();
    tensorflow::NodeDef def = n->def();
    SetInputsFromEdges(*n, &def);
    def.clear_device();
    WEFT_ASSIGN_OR_RETURN(copy[n->id()], eval.AddNode(std::move(def)));
    return absl::OkStatus();
  };
  for (Node* n : members) {
    WEFT_RETURN_IF_ERROR(add(n));
    for (const Edge* e : n->in_edges()) WEFT_RETURN_IF_ERROR(add(e->src));
  }
  for (Node* n : members) {
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) {
        eval.AddControlEdge(copy[e->src->id()], copy[n->id()]);
      } else {
        eval.AddEdge(copy[e->src->id()], e->src_output, copy[n->id()], e->dst_input);
      }
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Output& o = outputs[i];
    tensorflow::NodeDef def;
    def.set_name(UniqueNodeName(eval, absl::StrCat("_fold_retval_", i)));
    def.set_op("_Retval");
    (*def.mutable_attr())["T"].set_type(o.node->output_type(o.index));
    (*def.mutable_attr())["index"].set_i(static_cast<int64_t>(i));
    def.add_input(o.index == 0 ? o.node->name() : absl::StrCat(o.node->name(), ":", o.index));
    WEFT_ASSIGN_OR_RETURN(Node * retval, eval.AddNode(std::move(def)));
    eval.AddEdge(copy[o.node->id()], o.index, retval, 0);
  }
  ExecutorOptions exec_options;
  exec_options.device = device;
  exec_options.kernels = &kernels;
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                        Executor::Create(exec_options, eval));
  SimpleCallFrame frame({}, static_cast<int>(outputs.size()));
  Executor::StepArgs args;
  args.call_frame = &frame;
  WEFT_RETURN_IF_ERROR(executor->Run(args));
  std::vector<Tensor> values;
  WEFT_RETURN_IF_ERROR(frame.TakeRetvals(&values));
  return values;
}

// Moves the readers of `o` outside the fixed set to `to`.
void MoveOuterReaders(Graph* graph, const Output& o, Node* to, int to_output,
                      const std::vector<bool>& is_fixed) {
  std::vector<const Edge*> moving;
  for (const Edge* e : o.node->out_edges()) {
    if (!e->IsControlEdge() && e->src_output == o.index && !is_fixed[e->dst->id()]) {
      moving.push_back(e);
    }
  }
  for (const Edge* e : moving) {
    Node* dst = e->dst;
    const int input = e->dst_input;
    graph->RemoveEdge(e);
    graph->AddEdge(to, to_output, dst, input);
  }
}

}  // namespace

absl::Status FoldConstants(Graph* graph, Device* device,
                           const KernelRegistry& kernels,
                           const ConstantFoldingOptions& options) {
  std::vector<Node*> fixed = FixedNodes(*graph);
  const int num_ids = graph->num_node_ids();
  std::vector<bool> is_fixed(num_ids, false);
  for (const Node* n : fixed) is_fixed[n->id()] = true;
  // Every fixed node had a reader (it was reached through an edge) or is a
  // Const; those that lose theirs go at the end, targets stay.
  std::vector<int> candidates;
  for (const Node* n : fixed) {
    if (!n->out_edges().empty()) candidates.push_back(n->id());
  }

  // Clusters: fixed nodes other than Consts, joined by the edges between
  // them (the Consts they read are copied into each cluster's evaluation,
  // so one shared epsilon does not make one cluster of a whole model). Each
  // is evaluated on its own: one that fails or is over budget leaves the
  // others folded.
  std::vector<int> parent(num_ids);
  for (int i = 0; i < num_ids; ++i) parent[i] = i;
  for (Node* n : fixed) {
    if (n->IsConstant()) continue;
    for (const Edge* e : n->in_edges()) {
      if (!e->src->IsConstant()) parent[Find(parent, e->src->id())] = Find(parent, n->id());
    }
  }
  // The boundary: outputs of fixed nodes that a node outside the set reads.
  absl::flat_hash_map<int, std::vector<Output>> boundary;  // by cluster
  absl::flat_hash_map<int, std::vector<Node*>> members;
  std::vector<int> clusters;  // in the order first met, for a stable result
  for (Node* n : fixed) {
    if (n->IsConstant()) continue;
    const int root = Find(parent, n->id());
    if (!members.contains(root)) clusters.push_back(root);
    members[root].push_back(n);
    std::vector<bool> seen(n->num_outputs(), false);
    for (const Edge* e : n->out_edges()) {
      if (e->IsControlEdge() || is_fixed[e->dst->id()] || seen[e->src_output]) continue;
      seen[e->src_output] = true;
      boundary[Find(parent, n->id())].push_back({n, e->src_output});
    }
  }
  if (boundary.empty()) return absl::OkStatus();

  EvalDevice eval_device;
  bool have_device = false;
  for (int cluster : clusters) {
    auto found = boundary.find(cluster);
    if (found == boundary.end()) continue;  // read only by targets
    const std::vector<Output>& outputs = found->second;
    std::vector<Node*>& nodes = members[cluster];
    // One Identity of a Const: its readers take the Const.
    if (nodes.size() == 1 && ForwardsItsInput(*nodes[0]) && outputs.size() == 1) {
      const Edge* in = nodes[0]->input_edge(0);
      bool plain = in != nullptr;
      for (const Edge* e : nodes[0]->in_edges()) plain = plain && !e->IsControlEdge();
      if (plain && in->src->IsConstant()) {
        MoveOuterReaders(graph, outputs[0], in->src, in->src_output, is_fixed);
        continue;
      }
    }
    if (!have_device) {
      if (!MakeEvalDevice(*device, options.max_evaluation_bytes, &eval_device).ok()) {
        return absl::OkStatus();
      }
      have_device = true;
    }
    absl::StatusOr<std::vector<Tensor>> values =
        Evaluate(*graph, nodes, outputs, eval_device.device.get(), kernels);
    if (!values.ok()) continue;  // the step will report it at its node
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Output& o = outputs[i];
      if (static_cast<int64_t>((*values)[i].TotalBytes()) > options.max_constant_bytes) continue;
      const std::string name =
          o.index == 0 ? absl::StrCat(o.node->name(), "/folded")
                       : absl::StrCat(o.node->name(), "/folded_", o.index);
      WEFT_ASSIGN_OR_RETURN(Node * constant, AddConstNode(graph, name, (*values)[i], *o.node));
      MoveOuterReaders(graph, o, constant, 0, is_fixed);
    }
  }
  RemoveUnread(graph, candidates);
  return absl::OkStatus();
}

}  // namespace weft
