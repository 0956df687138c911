// The TensorList ops (TensorFlow 2.x's list of tensors in a DT_VARIANT
// scalar: what while_v2 turns a TensorArray into, and what every Keras RNN
// loop reads its inputs from and writes its outputs to), and the v1
// TensorArrayV3 family (a per-step resource behind a DT_RESOURCE handle and
// a float "flow" that orders the reads after the writes), as TensorFlow
// declares them. Kernels: ops/cpu/tensor_list_kernels.cc and
// ops/cpu/tensor_array_kernels.cc.
#include <string>

#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {
namespace {

constexpr char kShapeType[] = "shape_type: {int32, int64}";

// Output 0 is a scalar (a list handle, or a TensorArray's flow); any
// others are unknown (PopBack's element).
absl::Status ListHandleShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  return absl::OkStatus();
}

// A TensorArray's handle and flow are scalars.
absl::Status TensorArrayShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  c->set_output(1, PartialShape({}));
  return absl::OkStatus();
}

void RegisterTensorListOps(OpRegistry* r) {
  r->Register(OpDefBuilder("EmptyTensorList")
                  .Input("element_shape: shape_type")
                  .Input("max_num_elements: int32")
                  .Output("handle: variant")
                  .Attr("element_dtype: type")
                  .Attr(kShapeType),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorListReserve")
                  .Input("element_shape: shape_type")
                  .Input("num_elements: int32")
                  .Output("handle: variant")
                  .Attr("element_dtype: type")
                  .Attr(kShapeType),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorListFromTensor")
                  .Input("tensor: element_dtype")
                  .Input("element_shape: shape_type")
                  .Output("output_handle: variant")
                  .Attr("element_dtype: type")
                  .Attr(kShapeType),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorListStack")
                  .Input("input_handle: variant")
                  .Input("element_shape: int32")
                  .Output("tensor: element_dtype")
                  .Attr("element_dtype: type")
                  .Attr("num_elements: int = -1"),
              UnknownShape);
  r->Register(OpDefBuilder("TensorListGetItem")
                  .Input("input_handle: variant")
                  .Input("index: int32")
                  .Input("element_shape: Tshape")
                  .Output("item: element_dtype")
                  .Attr("element_dtype: type")
                  .Attr("Tshape: {int32, int64} = DT_INT32"),
              UnknownShape);
  r->Register(OpDefBuilder("TensorListSetItem")
                  .Input("input_handle: variant")
                  .Input("index: int32")
                  .Input("item: element_dtype")
                  .Output("output_handle: variant")
                  .Attr("element_dtype: type")
                  .Attr("resize_if_index_out_of_bounds: bool = false"),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorListPushBack")
                  .Input("input_handle: variant")
                  .Input("tensor: element_dtype")
                  .Output("output_handle: variant")
                  .Attr("element_dtype: type"),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorListPushBackBatch")
                  .Input("input_handles: variant")
                  .Input("tensor: element_dtype")
                  .Output("output_handles: variant")
                  .Attr("element_dtype: type"),
              UnchangedShape);
  r->Register(OpDefBuilder("TensorListConcatLists")
                  .Input("input_a: variant")
                  .Input("input_b: variant")
                  .Output("output: variant")
                  .Attr("element_dtype: type"),
              UnchangedShape);
  r->Register(OpDefBuilder("TensorListPopBack")
                  .Input("input_handle: variant")
                  .Input("element_shape: int32")
                  .Output("output_handle: variant")
                  .Output("tensor: element_dtype")
                  .Attr("element_dtype: type"),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorListLength")
                  .Input("input_handle: variant")
                  .Output("length: int32"),
              ScalarShape);
  r->Register(OpDefBuilder("TensorListElementShape")
                  .Input("input_handle: variant")
                  .Output("element_shape: shape_type")
                  .Attr(kShapeType),
              UnknownShape);
  r->Register(OpDefBuilder("TensorListResize")
                  .Input("input_handle: variant")
                  .Input("size: int32")
                  .Output("output_handle: variant"),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorListConcat")
                  .Input("input_handle: variant")
                  .Output("tensor: element_dtype")
                  .Output("lengths: int64")
                  .Attr("element_dtype: type")
                  .Attr("element_shape: shape = { unknown_rank: true }"),
              UnknownShape);
  r->Register(OpDefBuilder("TensorListConcatV2")
                  .Input("input_handle: variant")
                  .Input("element_shape: shape_type")
                  .Input("leading_dims: int64")
                  .Output("tensor: element_dtype")
                  .Output("lengths: int64")
                  .Attr("element_dtype: type")
                  .Attr(kShapeType),
              UnknownShape);
  r->Register(OpDefBuilder("TensorListSplit")
                  .Input("tensor: element_dtype")
                  .Input("element_shape: shape_type")
                  .Input("lengths: int64")
                  .Output("output_handle: variant")
                  .Attr("element_dtype: type")
                  .Attr(kShapeType),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorListGather")
                  .Input("input_handle: variant")
                  .Input("indices: int32")
                  .Input("element_shape: int32")
                  .Output("values: element_dtype")
                  .Attr("element_dtype: type"),
              UnknownShape);
  r->Register(OpDefBuilder("TensorListScatter")
                  .Input("tensor: element_dtype")
                  .Input("indices: int32")
                  .Input("element_shape: shape_type")
                  .Output("output_handle: variant")
                  .Attr("element_dtype: type")
                  .Attr(kShapeType),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorListScatterV2")
                  .Input("tensor: element_dtype")
                  .Input("indices: int32")
                  .Input("element_shape: shape_type")
                  .Input("num_elements: int32")
                  .Output("output_handle: variant")
                  .Attr("element_dtype: type")
                  .Attr(kShapeType),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorListScatterIntoExistingList")
                  .Input("input_handle: variant")
                  .Input("tensor: element_dtype")
                  .Input("indices: int32")
                  .Output("output_handle: variant")
                  .Attr("element_dtype: type"),
              ListHandleShape);
}

void RegisterTensorArrayOps(OpRegistry* r) {
  r->Register(OpDefBuilder("TensorArrayV3")
                  .Input("size: int32")
                  .Output("handle: resource")
                  .Output("flow: float")
                  .Attr("dtype: type")
                  .Attr("element_shape: shape = { unknown_rank: true }")
                  .Attr("dynamic_size: bool = false")
                  .Attr("clear_after_read: bool = true")
                  .Attr("identical_element_shapes: bool = false")
                  .Attr("tensor_array_name: string = ''")
                  .SetIsStateful(),
              TensorArrayShape);
  r->Register(OpDefBuilder("TensorArrayGradV3")
                  .Input("handle: resource")
                  .Input("flow_in: float")
                  .Output("grad_handle: resource")
                  .Output("flow_out: float")
                  .Attr("source: string")
                  .SetIsStateful(),
              TensorArrayShape);
  r->Register(OpDefBuilder("TensorArrayGradWithShape")
                  .Input("handle: resource")
                  .Input("flow_in: float")
                  .Input("shape_to_prepend: int32")
                  .Output("grad_handle: resource")
                  .Output("flow_out: float")
                  .Attr("source: string")
                  .SetIsStateful(),
              TensorArrayShape);
  r->Register(OpDefBuilder("TensorArrayWriteV3")
                  .Input("handle: resource")
                  .Input("index: int32")
                  .Input("value: T")
                  .Input("flow_in: float")
                  .Output("flow_out: float")
                  .Attr("T: type")
                  .SetIsStateful(),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorArrayReadV3")
                  .Input("handle: resource")
                  .Input("index: int32")
                  .Input("flow_in: float")
                  .Output("value: dtype")
                  .Attr("dtype: type")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("TensorArrayScatterV3")
                  .Input("handle: resource")
                  .Input("indices: int32")
                  .Input("value: T")
                  .Input("flow_in: float")
                  .Output("flow_out: float")
                  .Attr("T: type")
                  .SetIsStateful(),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorArrayGatherV3")
                  .Input("handle: resource")
                  .Input("indices: int32")
                  .Input("flow_in: float")
                  .Output("value: dtype")
                  .Attr("dtype: type")
                  .Attr("element_shape: shape = { unknown_rank: true }")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("TensorArrayConcatV3")
                  .Input("handle: resource")
                  .Input("flow_in: float")
                  .Output("value: dtype")
                  .Output("lengths: int64")
                  .Attr("dtype: type")
                  .Attr("element_shape_except0: shape = { unknown_rank: true }")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("TensorArraySplitV3")
                  .Input("handle: resource")
                  .Input("value: T")
                  .Input("lengths: int64")
                  .Input("flow_in: float")
                  .Output("flow_out: float")
                  .Attr("T: type")
                  .SetIsStateful(),
              ListHandleShape);
  r->Register(OpDefBuilder("TensorArraySizeV3")
                  .Input("handle: resource")
                  .Input("flow_in: float")
                  .Output("size: int32")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("TensorArrayCloseV3")
                  .Input("handle: resource")
                  .SetIsStateful(),
              UnknownShape);
}

}  // namespace

void RegisterListOps(OpRegistry* r) {
  RegisterTensorListOps(r);
  RegisterTensorArrayOps(r);
}

}  // namespace weft
