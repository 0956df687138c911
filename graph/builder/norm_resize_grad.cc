// Gradients of the fused batch norms and the image resizes, through their
// gradient kernels, as TensorFlow's Python gradients build them:
//   FusedBatchNorm / V2 / V3 -> FusedBatchNormGrad / V2 / V3 with the
//     forward node's epsilon, data_format and is_training. Training reads
//     the batch statistics the forward op saved (reserve_space_1/2, and V3's
//     reserve_space_3); inference reads the population mean and variance
//     (inputs 3 and 4) and, since the CPU gradient kernel is NHWC-only
//     there, runs channels-first graphs through transposes. Only x, scale
//     and offset get gradients; none flows from the statistics outputs.
//   ResizeBilinear -> ResizeBilinearGrad(dy, images);
//   ResizeNearestNeighbor -> ResizeNearestNeighborGrad(dy, the images'
//     height and width); `size` gets none.
#include <string>

#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::CopyAttrs;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

GradFn BatchNormGrad(const char* grad_op, bool v3) {
  return [grad_op, v3](const Scope& s, In in, Dx dx) -> absl::Status {
    if (!in.dy[0].valid()) return absl::OkStatus();  // only y's gradient flows
    bool is_training = true;
    std::string format = "NHWC";
    WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "is_training", &is_training));
    WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "data_format", &format));
    Output x = in.x[0], dy = in.dy[0];
    const Output& scale = in.x[1];
    Output saved_mean = in.y[3], saved_var = in.y[4];
    const bool nchw = format == "NCHW", ncdhw = format == "NCDHW";
    const bool transpose = !is_training && (nchw || ncdhw);
    if (!is_training) {
      saved_mean = in.x[3];
      saved_var = in.x[4];
      if (transpose) {
        Output to_last = nchw ? Const(s, {0, 2, 3, 1}) : Const(s, {0, 2, 3, 4, 1});
        x = Transpose(s, x, to_last);
        dy = Transpose(s, dy, to_last);
        format = nchw ? "NHWC" : "NDHWC";
      }
    }
    std::vector<Input> inputs = {dy, x, scale, saved_mean, saved_var};
    if (v3) inputs.push_back(in.y[5]);
    AttrList attrs = CopyAttrs(*in.node, {"epsilon"});
    attrs.push_back({"data_format", Attr(format)});
    attrs.push_back({"is_training", Attr(is_training)});
    std::vector<Output> g = AddNode(s, grad_op, inputs, attrs);
    if (g.size() < 3) return s.status();
    Output grad_x = g[0];
    if (transpose) {
      grad_x = Transpose(s, grad_x, nchw ? Const(s, {0, 3, 1, 2})
                                         : Const(s, {0, 4, 1, 2, 3}));
    }
    (*dx)[0] = grad_x;
    (*dx)[1] = g[1];
    (*dx)[2] = g[2];
    return absl::OkStatus();
  };
}

absl::Status ResizeBilinearGradFn(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "ResizeBilinearGrad", {in.dy[0], in.x[0]},
                      CopyAttrs(*in.node, {"align_corners", "half_pixel_centers"}));
  return absl::OkStatus();
}

absl::Status ResizeNearestNeighborGradFn(const Scope& s, In in, Dx dx) {
  Output hw = Slice(s, Shape(s, in.x[0]), Const(s, {1}), Const(s, {2}));
  (*dx)[0] = AddNode1(s, "ResizeNearestNeighborGrad", {in.dy[0], hw},
                      CopyAttrs(*in.node, {"align_corners", "half_pixel_centers"}));
  return absl::OkStatus();
}

}  // namespace

void RegisterNormResizeGrads(GradRegistry* r) {
  r->Register("FusedBatchNorm", BatchNormGrad("FusedBatchNormGrad", false));
  r->Register("FusedBatchNormV2", BatchNormGrad("FusedBatchNormGradV2", false));
  r->Register("FusedBatchNormV3", BatchNormGrad("FusedBatchNormGradV3", true));
  r->Register("ResizeBilinear", ResizeBilinearGradFn);
  r->Register("ResizeNearestNeighbor", ResizeNearestNeighborGradFn);
}

}  // namespace weft
