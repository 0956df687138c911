#include "runtime/constant_folding.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
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

}  // namespace

absl::Status FoldConstants(Graph* graph, Device* device,
                           const KernelRegistry& kernels,
                           const ConstantFoldingOptions& options) {
  std::vector<Node*> fixed = FixedNodes(*graph);
  std::vector<bool> is_fixed(graph->num_node_ids(), false);
  for (const Node* n : fixed) is_fixed[n->id()] = true;

  // The outputs of folded nodes that a node outside the set reads.
  std::vector<Output> boundary;
  for (Node* n : fixed) {
    if (n->IsConstant()) continue;
    std::vector<bool> seen(n->num_outputs(), false);
    for (const Edge* e : n->out_edges()) {
      if (e->IsControlEdge() || is_fixed[e->dst->id()] || seen[e->src_output]) continue;
      seen[e->src_output] = true;
      boundary.push_back({n, e->src_output});
    }
  }
  if (boundary.empty()) return absl::OkStatus();

  // The evaluation graph: the boundary nodes and what they read, copied,
  // with a _Retval per boundary output.
  std::vector<bool> needed(graph->num_node_ids(), false);
  std::vector<Node*> work;
  for (const Output& o : boundary) work.push_back(o.node);
  std::vector<Node*> order;
  while (!work.empty()) {
    Node* n = work.back();
    work.pop_back();
    if (needed[n->id()]) continue;
    needed[n->id()] = true;
    order.push_back(n);
    for (const Edge* e : n->in_edges()) work.push_back(e->src);
  }
  Graph eval(&graph->op_registry());
  std::vector<Node*> copy(graph->num_node_ids(), nullptr);
  for (Node* n : order) {
    tensorflow::NodeDef def = n->def();
    SetInputsFromEdges(*n, &def);
    def.clear_device();
    WEFT_ASSIGN_OR_RETURN(copy[n->id()], eval.AddNode(std::move(def)));
  }
  for (Node* n : order) {
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) {
        eval.AddControlEdge(copy[e->src->id()], copy[n->id()]);
      } else {
        eval.AddEdge(copy[e->src->id()], e->src_output, copy[n->id()], e->dst_input);
      }
    }
  }
  for (size_t i = 0; i < boundary.size(); ++i) {
    const Output& o = boundary[i];
    tensorflow::NodeDef def;
    def.set_name(UniqueNodeName(eval, absl::StrCat("_fold_retval_", i)));
    def.set_op("_Retval");
    (*def.mutable_attr())["T"].set_type(o.node->output_type(o.index));
    (*def.mutable_attr())["index"].set_i(static_cast<int64_t>(i));
    def.add_input(o.index == 0 ? o.node->name() : absl::StrCat(o.node->name(), ":", o.index));
    WEFT_ASSIGN_OR_RETURN(Node * retval, eval.AddNode(std::move(def)));
    eval.AddEdge(copy[o.node->id()], o.index, retval, 0);
  }

  // The evaluation runs on a device of its own: the same kind, but with a
  // memory budget, no file access and one thread, so that a graph from a
  // peer (folded when it is registered, before any step's deadline) can
  // neither take the host's memory nor read a file through a stateless op.
  absl::StatusOr<std::unique_ptr<ThreadPool>> pool = ThreadPool::Create("constant_folding", 1);
  absl::StatusOr<std::shared_ptr<const FilePolicy>> no_files = FilePolicy::Confined({});
  if (!pool.ok() || !no_files.ok()) return absl::OkStatus();
  LimitedAllocator* budget =
      LimitedAllocator::New(device->allocator(), options.max_evaluation_bytes);
  Device eval_device(device->attributes(), budget, std::shared_ptr<ThreadPool>(std::move(*pool)));
  eval_device.set_file_policy(*std::move(no_files));
  struct Unref {
    LimitedAllocator* a;
    ~Unref() { a->Unref(); }
  } unref{budget};
  ExecutorOptions exec_options;
  exec_options.device = &eval_device;
  exec_options.kernels = &kernels;
  absl::StatusOr<std::unique_ptr<Executor>> executor = Executor::Create(exec_options, eval);
  if (!executor.ok()) return absl::OkStatus();  // the step will say why
  SimpleCallFrame frame({}, static_cast<int>(boundary.size()));
  Executor::StepArgs args;
  args.call_frame = &frame;
  std::vector<Tensor> values;
  if (!(*executor)->Run(args).ok() || !frame.TakeRetvals(&values).ok()) {
    return absl::OkStatus();
  }

  std::vector<Node*> replaced;
  for (size_t i = 0; i < boundary.size(); ++i) {
    const Output& o = boundary[i];
    if (static_cast<int64_t>(values[i].TotalBytes()) > options.max_constant_bytes) continue;
    const std::string name =
        o.index == 0 ? absl::StrCat(o.node->name(), "/folded")
                     : absl::StrCat(o.node->name(), "/folded_", o.index);
    WEFT_ASSIGN_OR_RETURN(Node * constant, AddConstNode(graph, name, values[i], *o.node));
    // Only the readers outside the folded set move; folded readers go
    // with their node if it becomes unread.
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
      graph->AddEdge(constant, 0, dst, input);
    }
    replaced.push_back(o.node);
  }
  // Every fixed node had a reader (it was reached through an edge) or is a
  // Const; only those that lost theirs go.
  std::vector<int> candidates;
  for (Node* n : fixed) {
    if (!n->out_edges().empty() || needed[n->id()]) candidates.push_back(n->id());
  }
  RemoveUnread(graph, candidates);
  return absl::OkStatus();
}

}  // namespace weft
