// Layout-changing array ops as TensorFlow declares them: SpaceToBatchND,
// BatchToSpaceND, SpaceToDepth, DepthToSpace (block rearrangements used by
// dilated convolutions and super-resolution models), MirrorPad and its
// gradient. The shape functions work out what constant block sizes,
// paddings and crops fix and leave the rest unknown. Kernels:
// ops/cpu/space_batch_kernels.cc, ops/cpu/mirror_pad_kernels.cc.
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/array_shape_fns.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using array_shapes::Dims;

// SpaceToBatchND (to_batch) and BatchToSpaceND: input 1 is block_shape,
// input 2 the paddings (added) or crops (removed).
absl::Status SpaceBatchShape(InferenceContext* c, bool to_batch) {
  const PartialShape& in = c->input(0);
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  WEFT_RETURN_IF_ERROR(c->WithRank(2, 2));
  Dims block, pads;
  const bool have_block = array_shapes::ConstInts(c, 1, &block);
  const bool have_pads = array_shapes::ConstInts(c, 2, &pads);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims out(in.rank(), -1);
  for (int i = 0; i < in.rank(); ++i) out[i] = in.dim(i);
  if (!have_block) {
    for (int i = 0; i < in.rank(); ++i) out[i] = -1;
    c->set_output(0, PartialShape(out));
    return absl::OkStatus();
  }
  const int m = static_cast<int>(block.size());
  if (in.rank() < 1 + m) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input rank should be >= ", 1 + m, " instead of ", in.rank()));
  }
  int64_t product = 1;
  for (int i = 0; i < m; ++i) {
    if (block[i] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "All values in block_shape must be positive, got value, ", block[i],
          " at index ", i, "."));
    }
    product *= block[i];
  }
  if (have_pads && pads.size() != static_cast<size_t>(2 * m)) {
    return absl::InvalidArgumentError(absl::StrCat(
        to_batch ? "paddings" : "crops", " should have shape [", m,
        ", 2] instead of ", pads.size(), " values"));
  }
  if (to_batch) {
    out[0] = array_shapes::MulDims(in.dim(0), product);
  } else if (in.dim(0) >= 0) {
    if (in.dim(0) % product != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input batch dimension (", in.dim(0),
          ") is not divisible by product of block sizes (", product, ")"));
    }
    out[0] = in.dim(0) / product;
  }
  for (int i = 0; i < m; ++i) {
    const int64_t d = in.dim(1 + i);
    out[1 + i] = -1;
    if (!have_pads || d < 0) continue;
    const int64_t a = pads[2 * i], b = pads[2 * i + 1];
    if (a < 0 || b < 0) {
      return absl::InvalidArgumentError(
          to_batch ? "Paddings must be non-negative" : "Crops must be non-negative");
    }
    if (to_batch) {
      if ((d + a + b) % block[i] != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "padded_shape[", i, "]=", d + a + b,
            " is not divisible by block_shape[", i, "]=", block[i]));
      }
      out[1 + i] = (d + a + b) / block[i];
    } else {
      const int64_t size = d * block[i] - a - b;
      if (size < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cropped_shape[", i, "]=", size, " must be non-negative"));
      }
      out[1 + i] = size;
    }
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// SpaceToDepth (to_depth) and DepthToSpace on NHWC (NCHW is rejected by the
// CPU kernels, as in TensorFlow).
absl::Status SpaceDepthShape(InferenceContext* c, bool to_depth) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  int64_t bs = 0;
  std::string format;
  WEFT_RETURN_IF_ERROR(c->GetAttr("block_size", &bs));
  WEFT_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  const PartialShape& in = c->input(0);
  if (!in.known_rank() || format != "NHWC") {
    c->set_output(0, in.known_rank() ? PartialShape(Dims(4, -1))
                                     : PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims out = array_shapes::DimsOf(in);
  if (to_depth) {
    for (int i : {1, 2}) {
      if (in.dim(i) >= 0 && in.dim(i) % bs != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Image height ", in.dim(1), " and width ", in.dim(2),
            " should be divisible by block_size: ", bs));
      }
      out[i] = in.dim(i) < 0 ? -1 : in.dim(i) / bs;
    }
    out[3] = array_shapes::MulDims(in.dim(3), bs * bs);
  } else {
    for (int i : {1, 2}) out[i] = array_shapes::MulDims(in.dim(i), bs);
    if (in.dim(3) >= 0 && in.dim(3) % (bs * bs) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input depth dimension ", in.dim(3),
          " should be divisible by: ", bs * bs));
    }
    out[3] = in.dim(3) < 0 ? -1 : in.dim(3) / (bs * bs);
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// MirrorPadGrad: the padded gradient's dims less the paddings.
absl::Status MirrorPadGradShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  Dims pads;
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims out(in.rank(), -1);
  if (array_shapes::ConstInts(c, 1, &pads)) {
    if (pads.size() != static_cast<size_t>(2 * in.rank())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "paddings must be a matrix with 2 columns and ", in.rank(),
          " rows: ", pads.size(), " values"));
    }
    for (int i = 0; i < in.rank(); ++i) {
      if (in.dim(i) >= 0) out[i] = in.dim(i) - pads[2 * i] - pads[2 * i + 1];
      if (in.dim(i) >= 0 && out[i] < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "MirrorPadGrad: paddings of dim ", i, " exceed its size ", in.dim(i)));
      }
    }
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

OpDefBuilder SpaceBatchDef(const char* op, const char* third, const char* attr) {
  return std::move(OpDefBuilder(op)
                       .Input("input: T")
                       .Input("block_shape: Tblock_shape")
                       .Input(absl::StrCat(third, ": ", attr))
                       .Output("output: T")
                       .Attr("T: type")
                       .Attr("Tblock_shape: {int32, int64} = DT_INT32")
                       .Attr(absl::StrCat(attr, ": {int32, int64} = DT_INT32")));
}

OpDefBuilder SpaceDepthDef(const char* op) {
  return std::move(OpDefBuilder(op)
                       .Input("input: T")
                       .Output("output: T")
                       .Attr("T: type")
                       .Attr("block_size: int >= 2")
                       .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"));
}

OpDefBuilder MirrorPadDef(const char* op) {
  return std::move(OpDefBuilder(op)
                       .Input("input: T")
                       .Input("paddings: Tpaddings")
                       .Output("output: T")
                       .Attr("T: type")
                       .Attr("Tpaddings: {int32, int64} = DT_INT32")
                       .Attr("mode: {'REFLECT', 'SYMMETRIC'}"));
}

}  // namespace

void RegisterArrayLayoutOps(OpRegistry* r) {
  r->Register(SpaceBatchDef("SpaceToBatchND", "paddings", "Tpaddings"),
              [](InferenceContext* c) { return SpaceBatchShape(c, true); });
  r->Register(SpaceBatchDef("BatchToSpaceND", "crops", "Tcrops"),
              [](InferenceContext* c) { return SpaceBatchShape(c, false); });
  r->Register(SpaceDepthDef("SpaceToDepth"),
              [](InferenceContext* c) { return SpaceDepthShape(c, true); });
  r->Register(SpaceDepthDef("DepthToSpace"),
              [](InferenceContext* c) { return SpaceDepthShape(c, false); });
  r->Register(MirrorPadDef("MirrorPad"), array_shapes::PadShape);
  r->Register(MirrorPadDef("MirrorPadGrad"), MirrorPadGradShape);
}

}  // namespace weft
