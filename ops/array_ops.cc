// Array ops: constants, feeds, identity, shape manipulation, joining and
// splitting, slicing and gathering. OpDefs match TensorFlow's exactly; shape
// functions narrow what they can from constant inputs.
// The shape functions live in array_shape_fns.{h,cc} and
// array_slice_shape_fns.cc.
#include <string>

#include "ops/array_shape_fns.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {

void RegisterArrayOps(OpRegistry* r) {
  r->Register(OpDefBuilder("Const")
                  .Output("output: dtype")
                  .Attr("value: tensor")
                  .Attr("dtype: type"),
              array_shapes::ConstShape);
  r->Register(OpDefBuilder("Placeholder")
                  .Output("output: dtype")
                  .Attr("dtype: type")
                  .Attr("shape: shape = { unknown_rank: true }"),
              array_shapes::ShapeFromAttr);
  r->Register(OpDefBuilder("PlaceholderWithDefault")
                  .Input("input: dtype")
                  .Output("output: dtype")
                  .Attr("dtype: type")
                  .Attr("shape: shape"),
              array_shapes::PlaceholderWithDefaultShape);
  for (const char* op : {"Identity", "StopGradient"}) {
    r->Register(
        OpDefBuilder(op).Input("input: T").Output("output: T").Attr("T: type"),
        UnchangedShape);
  }
  r->Register(OpDefBuilder("IdentityN")
                  .Input("input: T")
                  .Output("output: T")
                  .Attr("T: list(type) >= 1"),
              array_shapes::PassThroughShapes);
  r->Register(OpDefBuilder("Reshape")
                  .Input("tensor: T")
                  .Input("shape: Tshape")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Tshape: {int32, int64} = DT_INT32"),
              array_shapes::ReshapeShape);
  r->Register(OpDefBuilder("Shape")
                  .Input("input: T")
                  .Output("output: out_type")
                  .Attr("T: type")
                  .Attr("out_type: {int32, int64} = DT_INT32"),
              array_shapes::VectorOfRankShape);
  r->Register(OpDefBuilder("Size")
                  .Input("input: T")
                  .Output("output: out_type")
                  .Attr("T: type")
                  .Attr("out_type: {int32, int64} = DT_INT32"),
              ScalarShape);
  r->Register(
      OpDefBuilder("Rank").Input("input: T").Output("output: int32").Attr("T: type"),
      ScalarShape);
  r->Register(OpDefBuilder("Fill")
                  .Input("dims: index_type")
                  .Input("value: T")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("index_type: {int32, int64} = DT_INT32"),
              array_shapes::FillShape);
  r->Register(
      OpDefBuilder("ZerosLike").Input("x: T").Output("y: T").Attr("T: type"),
      UnchangedShape);
  r->Register(OpDefBuilder("OnesLike")
                  .Input("x: T")
                  .Output("y: T")
                  .Attr("T: {bfloat16, half, float, double, int8, uint8, int16, "
                        "uint16, int32, uint32, int64, uint64, complex64, "
                        "complex128, bool}"),
              UnchangedShape);
  r->Register(OpDefBuilder("ExpandDims")
                  .Input("input: T")
                  .Input("dim: Tdim")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Tdim: {int32, int64} = DT_INT32"),
              array_shapes::ExpandDimsShape);
  r->Register(OpDefBuilder("Squeeze")
                  .Input("input: T")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("squeeze_dims: list(int) >= 0 = []"),
              array_shapes::SqueezeShape);
  for (const char* op : {"Transpose", "ConjugateTranspose"}) {
    r->Register(OpDefBuilder(op)
                    .Input("x: T")
                    .Input("perm: Tperm")
                    .Output("y: T")
                    .Attr("T: type")
                    .Attr("Tperm: {int32, int64} = DT_INT32"),
                array_shapes::TransposeShape);
  }
  r->Register(OpDefBuilder("ReverseV2")
                  .Input("tensor: T")
                  .Input("axis: Tidx")
                  .Output("output: T")
                  .Attr("Tidx: {int32, int64} = DT_INT32")
                  .Attr("T: {uint8, int8, uint16, int16, int32, uint32, int64, "
                        "uint64, bool, bfloat16, half, float, double, "
                        "complex64, complex128, string}"),
              UnchangedShape);
  r->Register(OpDefBuilder("ConcatV2")
                  .Input("values: N * T")
                  .Input("axis: Tidx")
                  .Output("output: T")
                  .Attr("N: int >= 2")
                  .Attr("T: type")
                  .Attr("Tidx: {int32, int64} = DT_INT32"),
              array_shapes::ConcatV2Shape);
  r->Register(OpDefBuilder("Pack")
                  .Input("values: N * T")
                  .Output("output: T")
                  .Attr("N: int >= 1")
                  .Attr("T: type")
                  .Attr("axis: int = 0"),
              array_shapes::PackShape);
  r->Register(OpDefBuilder("Unpack")
                  .Input("value: T")
                  .Output("output: num * T")
                  .Attr("num: int >= 0")
                  .Attr("T: type")
                  .Attr("axis: int = 0"),
              array_shapes::UnpackShape);
  r->Register(OpDefBuilder("Tile")
                  .Input("input: T")
                  .Input("multiples: Tmultiples")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Tmultiples: {int32, int64} = DT_INT32"),
              array_shapes::TileShape);
  r->Register(OpDefBuilder("Slice")
                  .Input("input: T")
                  .Input("begin: Index")
                  .Input("size: Index")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Index: {int32, int64}"),
              array_shapes::SliceShape);
  r->Register(OpDefBuilder("StridedSlice")
                  .Input("input: T")
                  .Input("begin: Index")
                  .Input("end: Index")
                  .Input("strides: Index")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Index: {int16, int32, int64}")
                  .Attr("begin_mask: int = 0")
                  .Attr("end_mask: int = 0")
                  .Attr("ellipsis_mask: int = 0")
                  .Attr("new_axis_mask: int = 0")
                  .Attr("shrink_axis_mask: int = 0"),
              array_shapes::StridedSliceShape);
  r->Register(OpDefBuilder("GatherV2")
                  .Input("params: Tparams")
                  .Input("indices: Tindices")
                  .Input("axis: Taxis")
                  .Output("output: Tparams")
                  .Attr("batch_dims: int = 0")
                  .Attr("Tparams: type")
                  .Attr("Tindices: {int16, int32, int64}")
                  .Attr("Taxis: {int32, int64}"),
              array_shapes::GatherV2Shape);
  // Unique, UniqueWithCounts: the distinct values of a vector in order of
  // first appearance, each element's index among them (and their counts).
  for (const char* op : {"Unique", "UniqueWithCounts"}) {
    OpDefBuilder b(op);
    b.Input("x: T").Output("y: T").Output("idx: out_idx");
    if (std::string(op) == "UniqueWithCounts") b.Output("count: out_idx");
    b.Attr("T: type").Attr("out_idx: {int32, int64} = DT_INT32");
    r->Register(b, [](InferenceContext* c) {
      WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
      c->set_output(0, PartialShape({-1}));
      c->set_output(1, c->input(0));
      if (c->num_outputs() > 2) c->set_output(2, PartialShape({-1}));
      return absl::OkStatus();
    });
  }
  // The coordinates of the true (nonzero) elements, row-major.
  r->Register(OpDefBuilder("Where")
                  .Input("input: T")
                  .Output("index: int64")
                  .Attr("T: {float, double, int32, uint8, int16, int8, complex64, "
                        "int64, qint8, quint8, qint32, bfloat16, qint16, quint16, "
                        "uint16, complex128, half, uint32, uint64, bool} = DT_BOOL"),
              [](InferenceContext* c) {
                const PartialShape& in = c->input(0);
                c->set_output(0, in.known_rank() ? PartialShape({-1, in.rank()})
                                                 : PartialShape({-1, -1}));
                return absl::OkStatus();
              });
  r->Register(OpDefBuilder("OneHot")
                  .Input("indices: TI")
                  .Input("depth: int32")
                  .Input("on_value: T")
                  .Input("off_value: T")
                  .Output("output: T")
                  .Attr("axis: int = -1")
                  .Attr("T: type")
                  .Attr("TI: {uint8, int8, int32, int64} = DT_INT64"),
              array_shapes::OneHotShape);
  r->Register(OpDefBuilder("Pad")
                  .Input("input: T")
                  .Input("paddings: Tpaddings")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Tpaddings: {int32, int64} = DT_INT32"),
              array_shapes::PadShape);
  r->Register(OpDefBuilder("Select")
                  .Input("condition: bool")
                  .Input("t: T")
                  .Input("e: T")
                  .Output("output: T")
                  .Attr("T: type"),
              array_shapes::SelectShape);
  r->Register(OpDefBuilder("SelectV2")
                  .Input("condition: bool")
                  .Input("t: T")
                  .Input("e: T")
                  .Output("output: T")
                  .Attr("T: type"),
              array_shapes::SelectV2Shape);
  r->Register(OpDefBuilder("Range")
                  .Input("start: Tidx")
                  .Input("limit: Tidx")
                  .Input("delta: Tidx")
                  .Output("output: Tidx")
                  .Attr("Tidx: {bfloat16, half, float, double, int8, int16, "
                        "int32, int64, uint16, uint32, uint64} = DT_INT32"),
              array_shapes::RangeShape);
  r->Register(OpDefBuilder("Split")
                  .Input("split_dim: int32")
                  .Input("value: T")
                  .Output("output: num_split * T")
                  .Attr("num_split: int >= 1")
                  .Attr("T: type"),
              array_shapes::SplitShape);
  r->Register(OpDefBuilder("SplitV")
                  .Input("value: T")
                  .Input("size_splits: Tlen")
                  .Input("split_dim: int32")
                  .Output("output: num_split * T")
                  .Attr("num_split: int >= 1")
                  .Attr("T: type")
                  .Attr("Tlen: {int8, int32, int64} = DT_INT64"),
              array_shapes::SplitVShape);
  r->Register(OpDefBuilder("BroadcastTo")
                  .Input("input: T")
                  .Input("shape: Tidx")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Tidx: {int32, int64} = DT_INT32"),
              array_shapes::BroadcastToShape);
  r->Register(OpDefBuilder("BroadcastArgs")
                  .Input("s0: T")
                  .Input("s1: T")
                  .Output("r0: T")
                  .Attr("T: {int32, int64} = DT_INT32"),
              array_shapes::BroadcastGradientArgsShape);
  r->Register(OpDefBuilder("BroadcastGradientArgs")
                  .Input("s0: T")
                  .Input("s1: T")
                  .Output("r0: T")
                  .Output("r1: T")
                  .Attr("T: {int32, int64} = DT_INT32"),
              array_shapes::BroadcastGradientArgsShape);
}

}  // namespace weft
