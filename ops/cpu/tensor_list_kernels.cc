// TensorList kernels for single elements and whole lists (EmptyTensorList,
// TensorListReserve, ...FromTensor, ...GetItem, ...SetItem, ...PushBack,
// ...PushBackBatch, ...PopBack, ...ConcatLists, ...Length, ...ElementShape,
// ...Resize) and RegisterTensorListKernels, which also registers the bulk
// kernels (tensor_list_bulk_kernels.cc: Stack, Gather, Scatter, Concat,
// Split) and the variant forms of ZerosLike and AddN that gradients through
// lists need (tensor_list_arith_kernels.cc). Semantics follow TensorFlow's
// list_kernels, and so does the first clause of each error a user's graph
// can cause (Weft's own detail follows it); the list itself is
// ops/cpu/tensor_list.h, the helpers these files share
// tensor_list_kernel_util.h.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/tensor_list.h"
#include "ops/cpu/tensor_list_kernel_util.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using tensor_list_internal::AllIndices;
using tensor_list_internal::CheckAtLeastVector;
using tensor_list_internal::CheckCount;
using tensor_list_internal::ElementShapeInput;
using tensor_list_internal::ListKernel;
using tensor_list_internal::MergeSetElements;
using tensor_list_internal::RegisterList;
using tensor_list_internal::ScalarInput;
using tensor_list_internal::ZerosOf;

// OK when `item` has the list's element dtype and a shape its element shape
// allows; otherwise INVALID_ARGUMENT, a shape mismatch starting with
// `shape_clause`.
absl::Status CheckItem(const TensorList& list, const Tensor& item,
                       absl::string_view shape_clause) {
  if (item.dtype() != list.element_dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Invalid data types; the list holds ",
        DataTypeString(list.element_dtype), " but the item is ",
        DataTypeString(item.dtype())));
  }
  if (!list.element_shape.IsCompatibleWith(item.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        shape_clause, ": item shape ", item.shape().DebugString(),
        ", the list's element shape ", list.element_shape.DebugString()));
  }
  return absl::OkStatus();
}

// Element `i` of the list; when it was never set, zeros of the shape the
// element_shape input (`shape_input` of `c`), the list's element shape and
// the set elements agree on.
absl::StatusOr<Tensor> ReadElement(OpKernelContext* c, int shape_input,
                                   const TensorList& list, int64_t i,
                                   absl::string_view what) {
  if (list.tensors[i].IsInitialized()) return list.tensors[i];
  WEFT_ASSIGN_OR_RETURN(PartialShape shape,
                        ElementShapeInput(c, shape_input, list, what));
  WEFT_ASSIGN_OR_RETURN(PartialShape merged,
                        MergeSetElements(shape, list, AllIndices(list), what));
  if (!merged.IsFullyDefined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to read an uninitialized tensor but element_shape is not "
        "fully defined: ",
        merged.DebugString(), " and no list element is set (", what,
        " element ", i, ")"));
  }
  return ZerosOf(list.element_dtype, merged);
}

// EmptyTensorList(element_shape, max_num_elements) and
// TensorListReserve(element_shape, num_elements).
template <bool kReserve>
class NewListOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto shape = PartialShapeFromTensor(c->input(0), "element_shape");
    OP_REQUIRES_OK(c, shape.status());
    auto n = ScalarInput(c, 1, kReserve ? "num_elements" : "max_num_elements");
    OP_REQUIRES_OK(c, n.status());
    auto list = std::make_shared<TensorList>();
    list->element_dtype = element_dtype_;
    list->element_shape = *shape;
    if (kReserve) {
      OP_REQUIRES_OK(c, CheckCount(*n, "num_elements"));
      list->tensors.resize(*n);
    } else {
      OP_REQUIRES(c, *n >= -1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "max_num_elements must be -1 (unbounded) or >= 0, got ",
                      *n)));
      list->max_num_elements = *n;
    }
    SetOutputList(c, 0, std::move(list));
  }
};

class FromTensorOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& t = c->input(0);
    OP_REQUIRES_OK(c, CheckAtLeastVector(t, What()));
    auto shape = PartialShapeFromTensor(c->input(1), "element_shape");
    OP_REQUIRES_OK(c, shape.status());
    TensorShape row = t.shape();
    row.RemoveDim(0);
    OP_REQUIRES(c, shape->IsCompatibleWith(row),
                absl::InvalidArgumentError(absl::StrCat(
                    "Specified a list with shape ", shape->DebugString(),
                    " from a tensor with shape ", t.shape().DebugString(),
                    ": its rows are ", row.DebugString())));
    auto list = std::make_shared<TensorList>();
    list->element_dtype = element_dtype_;
    list->element_shape = *shape;
    list->tensors.reserve(t.dim_size(0));
    for (int64_t i = 0; i < t.dim_size(0); ++i) {
      auto r = RowOf(t, i);
      OP_REQUIRES_OK(c, r.status());
      list->tensors.push_back(*std::move(r));
    }
    SetOutputList(c, 0, std::move(list));
  }
};

class GetItemOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    auto index = ScalarInput(c, 1, "index");
    OP_REQUIRES_OK(c, index.status());
    const int64_t size = static_cast<int64_t>((*list)->tensors.size());
    OP_REQUIRES(c, *index >= 0 && *index < size,
                absl::InvalidArgumentError(absl::StrCat(
                    "Trying to access element ", *index, " in a list with ",
                    size, " elements.")));
    auto e = ReadElement(c, 2, **list, *index, What());
    OP_REQUIRES_OK(c, e.status());
    c->set_output(0, *std::move(e));
  }
};

class SetItemOp : public ListKernel {
 public:
  explicit SetItemOp(OpKernelConstruction* c) : ListKernel(c) {
    if (c->HasAttr("resize_if_index_out_of_bounds")) {
      c->SetStatus(c->GetAttr("resize_if_index_out_of_bounds", &resize_));
    }
  }
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    auto index = ScalarInput(c, 1, "index");
    OP_REQUIRES_OK(c, index.status());
    const Tensor& item = c->input(2);
    OP_REQUIRES_OK(c, CheckItem(**list, item,
                                absl::StrCat("Tried to set a tensor with "
                                             "incompatible shape at index ",
                                             *index)));
    const int64_t size = static_cast<int64_t>((*list)->tensors.size());
    const int64_t max = (*list)->max_num_elements;
    const std::string clause = absl::StrCat(
        "Trying to modify element ", *index, " in a list with ", size,
        " elements.");
    OP_REQUIRES(c, *index >= 0 && (*index < size || resize_),
                absl::InvalidArgumentError(clause));
    if (*index >= size) {
      OP_REQUIRES(c, max == -1 || *index < max,
                  absl::InvalidArgumentError(absl::StrCat(
                      clause, " Growing it to fit the index would pass its "
                              "max_num_elements of ",
                      max)));
      OP_REQUIRES_OK(c, CheckCount(*index + 1, "index + 1"));
    }
    auto out = std::make_shared<TensorList>(**list);
    if (*index >= size) out->tensors.resize(*index + 1);
    out->tensors[*index] = item;
    SetOutputList(c, 0, std::move(out));
  }

 private:
  bool resize_ = false;
};

// OK when one more element fits in `list`; `clause` starts the error.
absl::Status CheckRoomForOne(const TensorList& list, absl::string_view clause) {
  const int64_t size = static_cast<int64_t>(list.tensors.size());
  if (list.max_num_elements != -1 && size >= list.max_num_elements) {
    return absl::InvalidArgumentError(absl::StrCat(
        clause, ": it holds its max_num_elements of ", list.max_num_elements));
  }
  return CheckCount(size + 1, "the list's length");
}

class PushBackOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    const Tensor& item = c->input(1);
    OP_REQUIRES_OK(c, CheckItem(**list, item,
                                "Tried to append a tensor with incompatible "
                                "shape to a list"));
    OP_REQUIRES_OK(c, CheckRoomForOne(**list,
                                      "Tried to push item into a full list"));
    auto out = std::make_shared<TensorList>(**list);
    out->tensors.push_back(item);
    SetOutputList(c, 0, std::move(out));
  }
};

// TensorListPushBackBatch(input_handles [B], tensor [B, ...]): row b of
// the tensor pushed onto list b (pfor's vectorised PushBack).
class PushBackBatchOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& handles = c->input(0);
    const Tensor& items = c->input(1);
    OP_REQUIRES(c, handles.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    What(), ": input_handles must be a vector, got shape ",
                    handles.shape().DebugString())));
    OP_REQUIRES(c, items.dims() >= 1 && items.dim_size(0) == handles.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    What(), ": tensor of shape ", items.shape().DebugString(),
                    " does not have a row for each of the ", handles.dim_size(0),
                    " lists")));
    auto lists = ListsIn(handles, element_dtype_, "input_handles");
    OP_REQUIRES_OK(c, lists.status());
    std::vector<std::shared_ptr<const TensorList>> out;
    for (size_t b = 0; b < lists->size(); ++b) {
      const TensorList& list = *(*lists)[b];
      auto row = RowOf(items, static_cast<int64_t>(b));
      OP_REQUIRES_OK(c, row.status());
      OP_REQUIRES_OK(c, CheckItem(list, *row,
                                  absl::StrCat("Tried to push item with "
                                               "incompatible shape to a list "
                                               "at index ",
                                               b)));
      OP_REQUIRES_OK(c, CheckRoomForOne(
                            list, absl::StrCat("Tried to push item into a "
                                               "full list at index ",
                                               b)));
      auto next = std::make_shared<TensorList>(list);
      next->tensors.push_back(*std::move(row));
      out.push_back(std::move(next));
    }
    SetOutputLists(c, 0, handles.shape(), std::move(out));
  }
};
// TensorListConcatLists(input_a, input_b): list j of a followed by list j
// of b, for lists of the same shape of tensor (pfor's concatenation).
class ConcatListsOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& a = c->input(0);
    const Tensor& b = c->input(1);
    OP_REQUIRES(c, a.shape() == b.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    What(), ": input_a of shape ", a.shape().DebugString(),
                    " and input_b of shape ", b.shape().DebugString(),
                    " must have the same shape")));
    auto la = ListsIn(a, element_dtype_, "input_a");
    OP_REQUIRES_OK(c, la.status());
    auto lb = ListsIn(b, element_dtype_, "input_b");
    OP_REQUIRES_OK(c, lb.status());
    std::vector<std::shared_ptr<const TensorList>> out;
    for (size_t j = 0; j < la->size(); ++j) {
      const TensorList& x = *(*la)[j];
      const TensorList& y = *(*lb)[j];
      auto shape = MergeShapes(x.element_shape, y.element_shape,
                               What(absl::StrCat(" lists ", j, "' element shapes")));
      OP_REQUIRES_OK(c, shape.status());
      const int64_t n = static_cast<int64_t>(x.tensors.size() + y.tensors.size());
      OP_REQUIRES_OK(c, CheckCount(n, "the concatenated list's length"));
      OP_REQUIRES(c, x.max_num_elements == -1 || n <= x.max_num_elements,
                  absl::InvalidArgumentError(absl::StrCat(
                      What(), ": list ", j, " of input_a may hold ",
                      x.max_num_elements, " elements, not ", n)));
      auto joined = std::make_shared<TensorList>(x);
      joined->element_shape = *shape;
      joined->tensors.insert(joined->tensors.end(), y.tensors.begin(), y.tensors.end());
      out.push_back(std::move(joined));
    }
    SetOutputLists(c, 0, a.shape(), std::move(out));
  }
};

class PopBackOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    const TensorList& l = **list;
    OP_REQUIRES(c, !l.tensors.empty(),
                absl::InvalidArgumentError(
                    "Trying to pop from an empty list."));
    auto e = ReadElement(c, 1, l, static_cast<int64_t>(l.tensors.size()) - 1,
                         What());
    OP_REQUIRES_OK(c, e.status());
    auto out = std::make_shared<TensorList>(l);
    out->tensors.pop_back();
    SetOutputList(c, 0, std::move(out));
    c->set_output(1, *std::move(e));
  }
};

class LengthOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, DT_INVALID);
    OP_REQUIRES_OK(c, list.status());
    c->set_output(0, Tensor::Scalar<int32_t>(
                         static_cast<int32_t>((*list)->tensors.size())));
  }
};

class ElementShapeOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, DT_INVALID);
    OP_REQUIRES_OK(c, list.status());
    const PartialShape& shape = (*list)->element_shape;
    const bool known = shape.known_rank();
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, known ? TensorShape({shape.rank()}) : TensorShape(),
                          &out));
    for (int i = 0; i < (known ? shape.rank() : 1); ++i) {
      const int64_t d = known ? shape.dim(i) : -1;
      if (out->dtype() == DT_INT32) {
        out->data<int32_t>()[i] = static_cast<int32_t>(d);
      } else {
        out->data<int64_t>()[i] = d;
      }
    }
  }
};

class ResizeOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, DT_INVALID);
    OP_REQUIRES_OK(c, list.status());
    auto size = ScalarInput(c, 1, "size");
    OP_REQUIRES_OK(c, size.status());
    OP_REQUIRES(c, *size >= 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListSlice expects size to be non-negative. Got: ",
                    *size)));
    OP_REQUIRES_OK(c, CheckCount(*size, "size"));
    auto out = std::make_shared<TensorList>(**list);
    out->tensors.resize(*size);
    SetOutputList(c, 0, std::move(out));
  }
};

}  // namespace

void RegisterTensorListKernels(KernelRegistry* r) {
  RegisterTensorListCoder();
  RegisterList(r, "EmptyTensorList", MakeKernel<NewListOp<false>>);
  RegisterList(r, "TensorListReserve", MakeKernel<NewListOp<true>>);
  RegisterList(r, "TensorListFromTensor", MakeKernel<FromTensorOp>);
  RegisterList(r, "TensorListGetItem", MakeKernel<GetItemOp>);
  RegisterList(r, "TensorListSetItem", MakeKernel<SetItemOp>);
  RegisterList(r, "TensorListPushBack", MakeKernel<PushBackOp>);
  RegisterList(r, "TensorListPopBack", MakeKernel<PopBackOp>);
  RegisterList(r, "TensorListPushBackBatch", MakeKernel<PushBackBatchOp>);
  RegisterList(r, "TensorListConcatLists", MakeKernel<ConcatListsOp>);
  RegisterList(r, "TensorListLength", MakeKernel<LengthOp>);
  RegisterList(r, "TensorListElementShape", MakeKernel<ElementShapeOp>);
  RegisterList(r, "TensorListResize", MakeKernel<ResizeOp>);
  RegisterTensorListBulkKernels(r);
  RegisterTensorListArithKernels(r);
}

}  // namespace weft
