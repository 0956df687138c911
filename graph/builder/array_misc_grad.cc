// Gradients of the ops issue 36 added (ops/array_misc_ops.cc,
// ops/math_misc_ops.cc), as TensorFlow defines them: Reverse reverses dy
// the same way; EnsureShape passes it through; DynamicPartition stitches
// the outputs' gradients back (DynamicStitch over the partitioned
// positions); NthElement shares dy among the row's elements equal to the
// selected value; CumulativeLogsumexp scans the other way over dy split by
// sign (in log space, as TensorFlow, for stability); Betainc has x's
// partial only; MaxPoolV2 routes dy through MaxPoolGradV2, whose gradient
// is MaxPoolGradGradV2 and back. The counting, search, index, layout and
// bit-reinterpreting ops have none.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

using grad_internal::CopyAttrs;
using grad_internal::ScalarLike;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

absl::Status ReverseGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "Reverse", {in.dy[0], in.x[1]});
  return absl::OkStatus();
}

absl::Status EnsureShapeGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = Identity(s, in.dy[0]);
  return absl::OkStatus();
}

// The positions of data's slices, partitioned as the forward node did,
// say where each output's gradient goes.
absl::Status DynamicPartitionGrad(const Scope& s, In in, Dx dx) {
  int64_t num = 0;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "num_partitions", &num));
  const Output& parts = in.x[1];
  Output prefix = Shape(s, parts);
  Output count = Prod(s, prefix, Const(s, 0));
  Output positions = Reshape(
      s, AddNode1(s, "Range", {Const(s, 0), count, Const(s, 1)}), prefix);
  std::vector<Output> where = AddNode(s, "DynamicPartition", {positions, parts},
                                      {{"num_partitions", Attr(num)}});
  std::vector<Output> grads;
  for (int64_t i = 0; i < num; ++i) {
    grads.push_back(in.dy[i].valid() ? in.dy[i] : ZerosLike(s, in.y[i]));
  }
  Output stitched = AddNode1(s, "DynamicStitch", {Input(where), Input(grads)});
  (*dx)[0] = Reshape(s, stitched, Shape(s, in.x[0]));
  return absl::OkStatus();
}

absl::Status NthElementGrad(const Scope& s, In in, Dx dx) {
  const DataType t = in.dy[0].dtype;
  Output last = Const(s, -1);
  Output hits = Cast(s, Equal(s, ExpandDims(s, in.y[0], last), in.x[0]), t);
  Output share = ExpandDims(s, Sum(s, hits, last), last);
  (*dx)[0] = Mul(s, RealDiv(s, hits, share), ExpandDims(s, in.dy[0], last));
  return absl::OkStatus();
}

absl::Status CumulativeLogsumexpGrad(const Scope& s, In in, Dx dx) {
  bool exclusive = false, reverse = false;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "exclusive", &exclusive));
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "reverse", &reverse));
  const Output& g = in.dy[0];
  const DataType t = g.dtype;
  Output zero = ScalarLike(s, 0, t);
  Output lowest = ScalarLike(s, -3.4028234663852886e38f, t);
  if (t == DT_DOUBLE) {
    lowest = Const(s, -1.7976931348623157e308);
  } else if (t == DT_HALF) {
    lowest = ScalarLike(s, -65504.0f, t);
  }
  auto scan = [&](const Output& log_g) {
    Output shifted = Sub(s, log_g, in.y[0]);
    Output scanned = AddNode1(s, "CumulativeLogsumexp", {shifted, in.x[1]},
                              {{"exclusive", Attr(exclusive)}, {"reverse", Attr(!reverse)}});
    return Exp(s, Add(s, scanned, in.x[0]));
  };
  Output pos = SelectV2(s, Greater(s, g, zero), Log(s, g), lowest);
  Output neg = SelectV2(s, Less(s, g, zero), Log(s, Neg(s, g)), lowest);
  (*dx)[0] = Sub(s, scan(pos), scan(neg));
  return absl::OkStatus();
}

absl::Status BetaincGrad(const Scope& s, In in, Dx dx) {
  const Output &a = in.x[0], &b = in.x[1], &x = in.x[2];
  const DataType t = x.dtype;
  Output one = ScalarLike(s, 1, t);
  Output lgamma = AddNode1(s, "Lgamma", {a});
  Output log_beta = Sub(s, Add(s, lgamma, AddNode1(s, "Lgamma", {b})),
                        AddNode1(s, "Lgamma", {Add(s, a, b)}));
  Output log_x = AddNode1(s, "Xlogy", {Sub(s, a, one), x});
  Output log_1mx = AddNode1(s, "Xlog1py", {Sub(s, b, one), Neg(s, x)});
  Output partial = Exp(s, Sub(s, Add(s, log_1mx, log_x), log_beta));
  BroadcastArgs r = BroadcastGradientArgs(s, Shape(s, a), Shape(s, x));
  (*dx)[2] = Reshape(s, Sum(s, Mul(s, partial, in.dy[0]), r.r1), Shape(s, x));
  return absl::OkStatus();
}

// MaxPoolV2 routes dy through MaxPoolGradV2 (the window as inputs, as
// TensorFlow does); MaxPoolGradV2 and MaxPoolGradGradV2 are each other's
// gradient with respect to `grad`, and, as for their attr forms, nothing
// flows to orig_input or orig_output (conv_grad.cc) or the window.
absl::Status MaxPoolV2Grad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "MaxPoolGradV2", {in.x[0], in.y[0], in.dy[0], in.x[1], in.x[2]},
                      CopyAttrs(*in.node, {"padding", "data_format"}));
  return absl::OkStatus();
}

absl::Status MaxPoolGradV2Transpose(const Scope& s, In in, const char* op, Dx dx) {
  (*dx)[2] = AddNode1(s, op, {in.x[0], in.x[1], in.dy[0], in.x[3], in.x[4]},
                      CopyAttrs(*in.node, {"padding", "data_format"}));
  return absl::OkStatus();
}

}  // namespace

void RegisterArrayMiscGrads(GradRegistry* r) {
  r->Register("Reverse", ReverseGrad);
  r->Register("EnsureShape", EnsureShapeGrad);
  r->Register("DynamicPartition", DynamicPartitionGrad);
  r->Register("NthElement", NthElementGrad);
  r->Register("CumulativeLogsumexp", CumulativeLogsumexpGrad);
  r->Register("Betainc", BetaincGrad);
  r->Register("MaxPoolV2", MaxPoolV2Grad);
  r->Register("MaxPoolGradV2", [](const Scope& s, In in, Dx dx) {
    return MaxPoolGradV2Transpose(s, in, "MaxPoolGradGradV2", dx);
  });
  r->Register("MaxPoolGradGradV2", [](const Scope& s, In in, Dx dx) {
    return MaxPoolGradV2Transpose(s, in, "MaxPoolGradV2", dx);
  });
  for (const char* op : {"Empty", "Bitcast", "LinSpace", "UnravelIndex", "LowerBound",
                         "UpperBound", "DataFormatDimMap", "DataFormatVecPermute",
                         "Bincount", "DenseBincount", "SparseBincount", "UniqueV2",
                         "UniqueWithCountsV2",
                         "InTopKV2"}) {
    r->RegisterNoGradient(op);
  }
}

}  // namespace weft
