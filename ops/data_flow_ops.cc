// Data-flow ops that synchronous between-graph training is built from, as
// TensorFlow declares them:
//   - conditional accumulators (resource and ref forms): gradients from
//     many workers summed until enough arrived, stale ones dropped
//     (SyncReplicasOptimizer's per-variable aggregation);
//   - FIFOQueueV2 and its enqueue/dequeue/size/close ops (the token queue
//     through which the chief releases the workers into the next step),
//     and the other queues TF1 input pipelines use;
//   - the staging area input pipelines stage batches in.
// Kernels: ops/cpu/accumulator_kernels.cc, ops/cpu/queue_kernels.cc,
// ops/cpu/stage_kernels.cc.
#include <string>

#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {
namespace {

// TensorFlow's "numbertypes".
constexpr char kAccumulatorTypes[] =
    "dtype: {float, double, int32, uint8, int16, int8, complex64, int64, "
    "qint8, quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, "
    "half, uint32, uint64}";

// TensorFlow marks the resource forms stateful, not the ref forms.
OpDefBuilder StatefulIf(bool stateful, OpDefBuilder b) {
  if (stateful) b.SetIsStateful();
  return b;
}

// An op that makes an accumulator, its handle of type `handle`.
OpDefBuilder AccumulatorDef(const std::string& name, const std::string& handle) {
  OpDefBuilder b(name);
  b.Output("handle: " + handle)
      .Attr(kAccumulatorTypes)
      .Attr("shape: shape")
      .Attr("container: string = ''")
      .Attr("shared_name: string = ''")
      .Attr("reduction_type: {'MEAN', 'SUM'} = 'MEAN'")
      .SetIsStateful();
  return b;
}

void RegisterAccumulatorOps(OpRegistry* r) {
  // Each op exists as a ref form (handle: Ref(string), TF 1.x graphs) and a
  // resource form (what TensorFlow 2.x's SyncReplicasOptimizer builds).
  struct Form {
    const char* prefix;  // "" or "Resource"
    const char* handle;  // the handle's type
  };
  for (const Form& f : {Form{"", "Ref(string)"}, Form{"Resource", "resource"}}) {
    const std::string p = f.prefix;
    const std::string handle = std::string("handle: ") + f.handle;
    r->Register(AccumulatorDef(p + "ConditionalAccumulator", f.handle),
                p.empty() ? UnknownShape : ScalarShape);
    r->Register(StatefulIf(!p.empty(), OpDefBuilder(p + "AccumulatorNumAccumulated"))
                    .Input(handle)
                    .Output("num_accumulated: int32"),
                ScalarShape);
    r->Register(StatefulIf(!p.empty(), OpDefBuilder(p + "AccumulatorSetGlobalStep"))
                    .Input(handle)
                    .Input("new_global_step: int64"),
                UnknownShape);
    r->Register(StatefulIf(!p.empty(), OpDefBuilder(p + "AccumulatorApplyGradient"))
                    .Input(handle)
                    .Input("local_step: int64")
                    .Input("gradient: dtype")
                    .Attr(kAccumulatorTypes),
                UnknownShape);
    r->Register(
        StatefulIf(!p.empty(), OpDefBuilder(p + "AccumulatorTakeGradient"))
                    .Input(handle)
                    .Input("num_required: int32")
                    .Output("average: dtype")
                    .Attr(kAccumulatorTypes),
                UnknownShape);
  }
}

// SparseConditionalAccumulator (ref form only, as in TensorFlow): the
// IndexedSlices gradients of embeddings. AccumulatorNumAccumulated and
// AccumulatorSetGlobalStep serve it too.
void RegisterSparseAccumulatorOps(OpRegistry* r) {
  r->Register(AccumulatorDef("SparseConditionalAccumulator", "Ref(string)"),
              UnknownShape);
  r->Register(OpDefBuilder("SparseAccumulatorApplyGradient")
                  .Input("handle: Ref(string)")
                  .Input("local_step: int64")
                  .Input("gradient_indices: int64")
                  .Input("gradient_values: dtype")
                  .Input("gradient_shape: int64")
                  .Attr(kAccumulatorTypes)
                  .Attr("has_known_shape: bool"),
              UnknownShape);
  r->Register(OpDefBuilder("SparseAccumulatorTakeGradient")
                  .Input("handle: Ref(string)")
                  .Input("num_required: int32")
                  .Output("indices: int64")
                  .Output("values: dtype")
                  .Output("shape: int64")
                  .Attr(kAccumulatorTypes),
              UnknownShape);
}

// The staging area (Stage, Unstage, StagePeek, StageSize, StageClear): a
// buffer of tuples named by each op's container and shared_name.
void RegisterStageOps(OpRegistry* r) {
  // dtypes: at least one where the op carries tuples (as TensorFlow says).
  auto area = [](const std::string& op, bool carries_tuples = true) {
    OpDefBuilder b(op);
    b.Attr("capacity: int >= 0 = 0")
        .Attr("memory_limit: int >= 0 = 0")
        .Attr(carries_tuples ? "dtypes: list(type) >= 1" : "dtypes: list(type)")
        .Attr("container: string = ''")
        .Attr("shared_name: string = ''")
        .SetIsStateful();
    return b;
  };
  r->Register(area("Stage").Input("values: dtypes"), UnknownShape);
  r->Register(area("Unstage").Output("values: dtypes"), UnknownShape);
  r->Register(area("StagePeek").Input("index: int32").Output("values: dtypes"),
              UnknownShape);
  r->Register(area("StageSize", false).Output("size: int32"), ScalarShape);
  r->Register(area("StageClear", false), UnknownShape);
}

// The queues, in TensorFlow's two forms: V2 (handle: resource, what
// TensorFlow 2.x writes; every op stateful) and V1 (handle: Ref(string),
// TensorFlow 1.x graphs; only the queue-making ops are stateful).
void RegisterQueueOps(OpRegistry* r) {
  struct Form {
    const char* suffix;
    const char* handle;
    bool v2;
  };
  for (const Form& f : {Form{"V2", "resource", true}, Form{"", "Ref(string)", false}}) {
    const std::string out_handle = std::string("handle: ") + f.handle;
    auto op = [&](const char* name) {
      OpDefBuilder b(std::string(name) + f.suffix);
      b.Input(out_handle);
      if (f.v2) b.SetIsStateful();
      return b;
    };
    for (const char* name : {"FIFOQueue", "PaddingFIFOQueue"}) {
      r->Register(OpDefBuilder(std::string(name) + f.suffix)
                      .Output(out_handle)
                      .Attr("component_types: list(type) >= 1")
                      .Attr("shapes: list(shape) >= 0 = []")
                      .Attr("capacity: int = -1")
                      .Attr("container: string = ''")
                      .Attr("shared_name: string = ''")
                      .SetIsStateful(),
                  ScalarShape);
    }
    r->Register(OpDefBuilder(std::string("PriorityQueue") + f.suffix)
                    .Output(out_handle)
                    .Attr("component_types: list(type) >= 0 = []")
                    .Attr("shapes: list(shape) >= 0")
                    .Attr("capacity: int = -1")
                    .Attr("container: string = ''")
                    .Attr("shared_name: string = ''")
                    .SetIsStateful(),
                ScalarShape);
    r->Register(OpDefBuilder(std::string("RandomShuffleQueue") + f.suffix)
                    .Output(out_handle)
                    .Attr("component_types: list(type) >= 1")
                    .Attr("shapes: list(shape) >= 0 = []")
                    .Attr("capacity: int = -1")
                    .Attr("min_after_dequeue: int = 0")
                    .Attr("seed: int = 0")
                    .Attr("seed2: int = 0")
                    .Attr("container: string = ''")
                    .Attr("shared_name: string = ''")
                    .SetIsStateful(),
                ScalarShape);
    for (const char* name : {"QueueEnqueue", "QueueEnqueueMany"}) {
      r->Register(op(name)
                      .Input("components: Tcomponents")
                      .Attr("Tcomponents: list(type) >= 1")
                      .Attr("timeout_ms: int = -1"),
                  UnknownShape);
    }
    r->Register(op("QueueDequeue")
                    .Output("components: component_types")
                    .Attr("component_types: list(type) >= 1")
                    .Attr("timeout_ms: int = -1"),
                UnknownShape);
    for (const char* name : {"QueueDequeueMany", "QueueDequeueUpTo"}) {
      r->Register(op(name)
                      .Input("n: int32")
                      .Output("components: component_types")
                      .Attr("component_types: list(type) >= 1")
                      .Attr("timeout_ms: int = -1"),
                  UnknownShape);
    }
    r->Register(op("QueueIsClosed").Output("is_closed: bool"), ScalarShape);
    r->Register(op("QueueSize").Output("size: int32"), ScalarShape);
    r->Register(op("QueueClose").Attr("cancel_pending_enqueues: bool = false"),
                UnknownShape);
  }
}

}  // namespace

void RegisterDataFlowOps(OpRegistry* r) {
  RegisterAccumulatorOps(r);
  RegisterSparseAccumulatorOps(r);
  RegisterStageOps(r);
  RegisterQueueOps(r);
}

}  // namespace weft
