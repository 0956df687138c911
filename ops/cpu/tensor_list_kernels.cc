// TensorList kernels (EmptyTensorList, TensorListReserve, ...FromTensor,
// ...Stack, ...GetItem, ...SetItem, ...PushBack, ...PopBack, ...Length,
// ...ElementShape, ...Resize, ...Concat(V2), ...Split, ...Gather,
// ...Scatter(V2), ...ScatterIntoExistingList) and the variant forms of
// ZerosLike and AddN that gradients through lists need. Semantics follow
// TensorFlow's list_kernels, and so does the first clause of each error a
// user's graph can cause (Weft's own detail follows it); the list itself is
// ops/cpu/tensor_list.h.
#include <algorithm>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/tensor_list.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

// Reads a scalar int32 input `i`, naming it `what`.
absl::StatusOr<int64_t> ScalarInput(OpKernelContext* c, int i,
                                    absl::string_view what) {
  int64_t v = 0;
  WEFT_RETURN_IF_ERROR(ReadIntScalar(c->input(i), what, &v));
  return v;
}

absl::Status CheckCount(int64_t n, absl::string_view what) {
  if (n < 0 || n > kMaxListElements) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be in [0, ", kMaxListElements, "], got ", n));
  }
  return absl::OkStatus();
}

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

// The shape of an element input (`i` of `c`) merged with the list's own
// element shape, the input's named first when they conflict.
absl::StatusOr<PartialShape> ElementShapeInput(OpKernelContext* c, int i,
                                               const TensorList& list,
                                               absl::string_view what) {
  WEFT_ASSIGN_OR_RETURN(PartialShape given,
                        PartialShapeFromTensor(c->input(i), "element_shape"));
  return MergeShapes(given, list.element_shape, what);
}

// `shape` merged with the shape of each set element at `indices`: how an
// element that was never set learns its shape from the ones that were.
absl::StatusOr<PartialShape> MergeSetElements(PartialShape shape,
                                              const TensorList& list,
                                              absl::Span<const int64_t> indices,
                                              absl::string_view what) {
  for (int64_t i : indices) {
    const Tensor& t = list.tensors[i];
    if (!t.IsInitialized()) continue;
    WEFT_ASSIGN_OR_RETURN(
        shape, MergeShapes(shape, PartialShape::FromShape(t.shape()),
                           absl::StrCat(what, " element ", i)));
  }
  return shape;
}

std::vector<int64_t> AllIndices(const TensorList& list) {
  std::vector<int64_t> all(list.tensors.size());
  std::iota(all.begin(), all.end(), int64_t{0});
  return all;
}

// Zeros of `shape`, which the caller has checked is fully defined.
absl::StatusOr<Tensor> ZerosOf(DataType dtype, const PartialShape& shape) {
  WEFT_ASSIGN_OR_RETURN(TensorShape full, TensorShape::Build(shape.dims()));
  return ZerosTensor(dtype, full);
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

// The elements at `indices`, unset ones as zeros of `shape` (fully defined).
absl::StatusOr<std::vector<Tensor>> ElementsAt(const TensorList& list,
                                               absl::Span<const int64_t> indices,
                                               const PartialShape& shape) {
  std::vector<Tensor> items;
  items.reserve(indices.size());
  Tensor zeros;  // made once, shared by every unset element
  for (int64_t i : indices) {
    if (list.tensors[i].IsInitialized()) {
      items.push_back(list.tensors[i]);
      continue;
    }
    if (!zeros.IsInitialized()) {
      WEFT_ASSIGN_OR_RETURN(zeros, ZerosOf(list.element_dtype, shape));
    }
    items.push_back(zeros);
  }
  return items;
}

// A variant tensor of `shape` holding `lists` in order.
absl::StatusOr<Tensor> ListsTensor(
    const TensorShape& shape,
    std::vector<std::shared_ptr<const TensorList>> lists) {
  Tensor t(DT_VARIANT, shape);
  if (!t.IsInitialized()) {
    return absl::ResourceExhaustedError("out of memory for list handles");
  }
  for (size_t j = 0; j < lists.size(); ++j) {
    t.data<Variant>()[j].value = std::move(lists[j]);
  }
  return t;
}

// Every list kernel reads element_dtype (those that have it).
class ListKernel : public OpKernel {
 public:
  explicit ListKernel(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("element_dtype")) {
      c->SetStatus(c->GetAttr("element_dtype", &element_dtype_));
    }
  }

 protected:
  std::string What(absl::string_view detail = "") const {
    return absl::StrCat(type_string(), detail);
  }
  DataType element_dtype_ = DT_INVALID;
};

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

// The INVALID_ARGUMENT for a tensor of rank 0 where a list needs rows.
absl::Status CheckAtLeastVector(const Tensor& t, absl::string_view what) {
  if (t.dims() >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor must be at least a vector, but saw shape: ",
      t.shape().DebugString(), " (", what, ")"));
}

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

class StackOp : public ListKernel {
 public:
  explicit StackOp(OpKernelConstruction* c) : ListKernel(c) {
    c->SetStatus(c->GetAttr("num_elements", &num_elements_));
  }
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    const TensorList& l = **list;
    const int64_t size = static_cast<int64_t>(l.tensors.size());
    OP_REQUIRES(c, num_elements_ == -1 || num_elements_ == size,
                absl::InvalidArgumentError(absl::StrCat(
                    "Operation expected a list with ", num_elements_,
                    " elements but got a list with ", size, " elements.")));
    auto given = ElementShapeInput(c, 1, l, What());
    OP_REQUIRES_OK(c, given.status());
    const std::vector<int64_t> all = AllIndices(l);
    auto shape = MergeSetElements(*given, l, all, What());
    OP_REQUIRES_OK(c, shape.status());
    OP_REQUIRES(c, shape->IsFullyDefined(),
                absl::InvalidArgumentError(absl::StrCat(
                    size == 0 ? "Tried to stack elements of an empty list with"
                              : "Tried to stack list which only contains "
                                "uninitialized tensors and has a",
                    " non-fully-defined element_shape: ",
                    shape->DebugString())));
    auto items = ElementsAt(l, all, *shape);
    OP_REQUIRES_OK(c, items.status());
    OP_REQUIRES_OK(c, StackIntoOutput(c, 0, *items, element_dtype_, *shape,
                                      What()));
  }

 private:
  int64_t num_elements_ = -1;
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

// `shape` without its dim 0 (unknown when its rank is).
PartialShape PastDimZero(const PartialShape& shape) {
  if (!shape.known_rank()) return shape;
  return PartialShape(shape.dims().subspan(1));
}

// TensorListConcat (element_shape attr) and TensorListConcatV2
// (element_shape and leading_dims inputs). Every element is of rank >= 1
// and they agree past dim 0; an unset element is zeros of leading_dims[i]
// rows, or of as many rows as the element shape (merged with the set
// elements') fixes.
template <bool kV2>
class ConcatOp : public ListKernel {
 public:
  explicit ConcatOp(OpKernelConstruction* c) : ListKernel(c) {
    if (!kV2) c->SetStatus(c->GetAttr("element_shape", &attr_shape_));
  }
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    const TensorList& l = **list;
    std::vector<int64_t> leading;
    absl::StatusOr<PartialShape> shape = attr_shape_;
    if (kV2) {
      shape = ElementShapeInput(c, 1, l, What());
      OP_REQUIRES_OK(c, ReadIntVector(c->input(2), "leading_dims", &leading));
    } else {
      OP_REQUIRES(c, !attr_shape_.known_rank() || attr_shape_.rank() > 0,
                  absl::InvalidArgumentError(
                      "element_shape must not be empty: TensorListConcat's "
                      "element_shape attr is a scalar shape"));
      shape = MergeShapes(attr_shape_, l.element_shape, What());
    }
    OP_REQUIRES_OK(c, shape.status());
    OP_REQUIRES(c, !shape->known_rank() || shape->rank() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Concat requires elements to be at least vectors, found "
                    "scalars instead (element_shape ",
                    shape->DebugString(), ")")));
    auto rest = RestOfElements(l, PastDimZero(*shape));
    OP_REQUIRES_OK(c, rest.status());
    const int64_t shape_rows = RowsOfShape(l, *shape);
    std::vector<Tensor> items;
    items.reserve(l.tensors.size());
    for (size_t i = 0; i < l.tensors.size(); ++i) {
      if (l.tensors[i].IsInitialized()) {
        items.push_back(l.tensors[i]);
        continue;
      }
      auto rows = UnsetRows(leading, shape_rows, i);
      OP_REQUIRES_OK(c, rows.status());
      std::vector<int64_t> dims = {*rows};
      dims.insert(dims.end(), rest->dims().begin(), rest->dims().end());
      auto zeros = ZerosOf(element_dtype_, PartialShape(dims));
      OP_REQUIRES_OK(c, zeros.status());
      items.push_back(*std::move(zeros));
    }
    // `rest` is known here: fully defined, or merged with a set element.
    std::vector<int64_t> out_shape = {-1};
    out_shape.insert(out_shape.end(), rest->dims().begin(), rest->dims().end());
    OP_REQUIRES_OK(c, ConcatIntoOutputs(c, 0, 1, items, element_dtype_,
                                        PartialShape(out_shape), What()));
  }

 private:
  // The dims past 0 every element shares: `rest` merged with the set
  // elements'; it must be fully defined when an element is unset or the
  // list is empty.
  absl::StatusOr<PartialShape> RestOfElements(const TensorList& l,
                                              PartialShape rest) const {
    if (l.tensors.empty() && !rest.IsFullyDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "All except the first dimension must be fully defined when "
          "concating an empty tensor list. element_shape past dim 0: ",
          rest.DebugString()));
    }
    bool any_unset = false;
    for (size_t i = 0; i < l.tensors.size(); ++i) {
      const Tensor& t = l.tensors[i];
      if (!t.IsInitialized()) {
        any_unset = true;
        continue;
      }
      if (t.dims() < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Concat saw a scalar shape at index ", i,
            " but requires at least vectors."));
      }
      WEFT_ASSIGN_OR_RETURN(
          rest, MergeShapes(rest, PastDimZero(PartialShape::FromShape(t.shape())),
                            What(absl::StrCat(" element ", i, " past dim 0"))));
    }
    if (any_unset && !rest.IsFullyDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Trying to concat list with only uninitialized tensors but "
          "element_shape_except_first_dim is not fully defined: ",
          rest.DebugString()));
    }
    return rest;
  }

  // Dim 0 of `shape` merged with every set element's shape, or -1 when
  // that is unknown or the set elements disagree.
  static int64_t RowsOfShape(const TensorList& l, const PartialShape& shape) {
    auto merged = MergeSetElements(shape, l, AllIndices(l), "");
    if (!merged.ok() || !merged->known_rank()) return -1;
    return merged->dim(0);
  }

  // How many rows unset element `i` has: leading_dims[i] when given, else
  // `shape_rows` (RowsOfShape) when known.
  static absl::StatusOr<int64_t> UnsetRows(absl::Span<const int64_t> leading,
                                           int64_t shape_rows, size_t i) {
    if (i < leading.size()) {
      if (leading[i] < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "leading_dims[", i, "] is ", leading[i], "; it must be >= 0"));
      }
      return leading[i];
    }
    if (shape_rows >= 0) return shape_rows;
    return absl::InvalidArgumentError(absl::StrCat(
        "List contains uninitialized tensor at index ", i,
        " but leading_dims has only ", leading.size(),
        " elements. The set elements do not fix its number of rows either."));
  }

  PartialShape attr_shape_;
};

class SplitOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& t = c->input(0);
    OP_REQUIRES_OK(c, CheckAtLeastVector(t, What()));
    auto shape = PartialShapeFromTensor(c->input(1), "element_shape");
    OP_REQUIRES_OK(c, shape.status());
    OP_REQUIRES(c, !shape->known_rank() || shape->rank() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListSplit requires element_shape to be at least of "
                    "rank 1, but saw: ",
                    shape->DebugString())));
    TensorShape rows_shape = t.shape();
    rows_shape.RemoveDim(0);
    OP_REQUIRES(c, PastDimZero(*shape).IsCompatibleWith(rows_shape),
                absl::InvalidArgumentError(absl::StrCat(
                    "tensor shape ", t.shape().DebugString(),
                    " is not compatible with element_shape ",
                    shape->DebugString(), " past dim 0")));
    const Tensor& lengths_t = c->input(2);
    OP_REQUIRES(c, lengths_t.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected lengths to be a vector, received shape: ",
                    lengths_t.shape().DebugString())));
    std::vector<int64_t> lengths;
    OP_REQUIRES_OK(c, ReadIntVector(lengths_t, "lengths", &lengths));
    OP_REQUIRES_OK(c, CheckCount(static_cast<int64_t>(lengths.size()),
                                 "the number of lengths"));
    auto list = std::make_shared<TensorList>();
    list->element_dtype = element_dtype_;
    list->element_shape = *shape;
    const int64_t total = t.dim_size(0);
    int64_t begin = 0;
    for (int64_t n : lengths) {
      OP_REQUIRES(c, n >= 0,
                  absl::InvalidArgumentError(
                      absl::StrCat("Invalid value in lengths: ", n)));
      OP_REQUIRES(c, n <= total - begin,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Attempting to slice [", begin, ", ", begin + n,
                      "] from tensor with length ", total)));
      auto rows = RowsOf(t, begin, n);
      OP_REQUIRES_OK(c, rows.status());
      list->tensors.push_back(*std::move(rows));
      begin += n;
    }
    OP_REQUIRES(c, begin == total,
                absl::InvalidArgumentError(absl::StrCat(
                    "Unused values in tensor. Length of tensor: ", total,
                    " Values used: ", begin)));
    SetOutputList(c, 0, std::move(list));
  }
};

class GatherOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    const TensorList& l = **list;
    std::vector<int64_t> indices;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "indices", &indices));
    const int64_t size = static_cast<int64_t>(l.tensors.size());
    for (int64_t i : indices) {
      OP_REQUIRES(c, i >= 0 && i < size,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Trying to gather element ", i, " in a list with ", size,
                      " elements.")));
    }
    auto given = ElementShapeInput(c, 2, l, What());
    OP_REQUIRES_OK(c, given.status());
    auto shape = MergeSetElements(*given, l, indices, What());
    OP_REQUIRES_OK(c, shape.status());
    OP_REQUIRES(c, shape->IsFullyDefined(),
                absl::InvalidArgumentError(absl::StrCat(
                    size == 0 ? "Tried to gather elements from an empty list"
                              : "Tried to gather uninitialized tensors from a "
                                "list",
                    " with non-fully-defined element_shape: ",
                    shape->DebugString())));
    auto items = ElementsAt(l, indices, *shape);
    OP_REQUIRES_OK(c, items.status());
    OP_REQUIRES_OK(c, StackIntoOutput(c, 0, *items, element_dtype_, *shape,
                                      What()));
  }
};

// Sets list->tensors[indices[i]] = row i of `t`; an index past the list's
// end grows it when `grow`, and is an error otherwise.
absl::Status ScatterRows(const Tensor& t, const Tensor& indices_t, bool grow,
                         TensorList* list, absl::string_view what) {
  WEFT_RETURN_IF_ERROR(CheckAtLeastVector(t, what));
  std::vector<int64_t> indices;
  WEFT_RETURN_IF_ERROR(ReadIntVector(indices_t, "indices", &indices));
  if (t.dim_size(0) != static_cast<int64_t>(indices.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Invalid number of rows in input tensor. Expected: ", indices.size(),
        " Actual: ", t.dim_size(0)));
  }
  TensorShape row_shape = t.shape();
  row_shape.RemoveDim(0);
  if (!list->element_shape.IsCompatibleWith(row_shape)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Tried to scatter rows of shape ", row_shape.DebugString(),
        " into a list with element_shape ", list->element_shape.DebugString(),
        " (", what, ")"));
  }
  const int64_t size = static_cast<int64_t>(list->tensors.size());
  for (int64_t index : indices) {
    if (index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Indices in TensorListScatter must all be non-negative. Got ",
          index, " (", what, ")"));
    }
    if (!grow && index >= size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorListScatter: Trying to scatter at index ", index,
          " in list with size ", size));
    }
    WEFT_RETURN_IF_ERROR(CheckCount(index + 1, "the largest index + 1"));
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] >= static_cast<int64_t>(list->tensors.size())) {
      list->tensors.resize(indices[i] + 1);
    }
    WEFT_ASSIGN_OR_RETURN(list->tensors[indices[i]], RowOf(t, i));
  }
  return absl::OkStatus();
}

// TensorListScatter and TensorListScatterV2 (with num_elements: the list's
// length, or -1 for as long as the largest index needs).
template <bool kV2>
class ScatterOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& t = c->input(0);
    auto shape = PartialShapeFromTensor(c->input(2), "element_shape");
    OP_REQUIRES_OK(c, shape.status());
    auto list = std::make_shared<TensorList>();
    list->element_dtype = element_dtype_;
    list->element_shape = *shape;
    bool grow = true;
    if (kV2) {
      auto n = ScalarInput(c, 3, "num_elements");
      OP_REQUIRES_OK(c, n.status());
      OP_REQUIRES(c, *n >= -1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorListScatter expects num_elements >= -1, found: ",
                      *n)));
      if (*n != -1) {
        OP_REQUIRES_OK(c, CheckCount(*n, "num_elements"));
        list->tensors.resize(*n);
        grow = false;
      }
    }
    OP_REQUIRES_OK(c, ScatterRows(t, c->input(1), grow, list.get(), What()));
    SetOutputList(c, 0, std::move(list));
  }
};

class ScatterIntoExistingOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    auto out = std::make_shared<TensorList>(**list);
    OP_REQUIRES_OK(c, ScatterRows(c->input(1), c->input(2), /*grow=*/true,
                                  out.get(), What()));
    SetOutputList(c, 0, std::move(out));
  }
};

// ZerosLike and AddN walk lists of lists recursively. A loop can nest lists
// deeper than they could be sent between tasks; the walk stops at that
// depth, `depth` being the walk's current one.
absl::Status CheckNesting(int depth, absl::string_view op) {
  if (depth < kMaxVariantNesting) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      op, " of lists: the lists nest more than ", kMaxVariantNesting,
      " deep"));
}

absl::StatusOr<std::shared_ptr<const TensorList>> ZerosLikeList(
    const TensorList& list, int depth);

// Zeros like one set element: for a variant element (a list of lists),
// each list in it zeroed the same way.
absl::StatusOr<Tensor> ZerosLikeElement(const Tensor& t, int depth) {
  if (t.dtype() != DT_VARIANT) return ZerosTensor(t.dtype(), t.shape());
  WEFT_RETURN_IF_ERROR(CheckNesting(depth, "ZerosLike"));
  std::vector<std::shared_ptr<const TensorList>> lists;
  for (int64_t j = 0; j < t.NumElements(); ++j) {
    const TensorList* inner = t.data<Variant>()[j].get<TensorList>();
    if (inner == nullptr) {
      lists.push_back(nullptr);
      continue;
    }
    WEFT_ASSIGN_OR_RETURN(auto zeros, ZerosLikeList(*inner, depth + 1));
    lists.push_back(std::move(zeros));
  }
  return ListsTensor(t.shape(), std::move(lists));
}

// ZerosLike of a list: the same length, each set element zeros, each unset
// element still unset.
absl::StatusOr<std::shared_ptr<const TensorList>> ZerosLikeList(
    const TensorList& list, int depth) {
  auto out = std::make_shared<TensorList>(list);
  for (Tensor& t : out->tensors) {
    if (!t.IsInitialized()) continue;
    WEFT_ASSIGN_OR_RETURN(t, ZerosLikeElement(t, depth));
  }
  return out;
}

class ZerosLikeListOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, DT_INVALID);
    OP_REQUIRES_OK(c, list.status());
    auto zeros = ZerosLikeList(**list, 0);
    OP_REQUIRES_OK(c, zeros.status());
    SetOutputList(c, 0, *std::move(zeros));
  }
};

absl::StatusOr<std::shared_ptr<const TensorList>> AddLists(const TensorList& a,
                                                           const TensorList& b,
                                                           int depth);

// a + b for two set elements of lists being added; variant elements (lists
// of lists) add list by list.
absl::StatusOr<Tensor> AddElements(const Tensor& a, const Tensor& b,
                                   int depth) {
  if (a.dtype() != DT_VARIANT) return AddTensors(a, b, "AddN of lists");
  WEFT_RETURN_IF_ERROR(CheckNesting(depth, "AddN"));
  if (a.shape() != b.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AddN of lists: nested list tensors of shapes ", a.shape().DebugString(),
        " and ", b.shape().DebugString(), " cannot be added"));
  }
  std::vector<std::shared_ptr<const TensorList>> sums;
  for (int64_t j = 0; j < a.NumElements(); ++j) {
    WEFT_ASSIGN_OR_RETURN(const TensorList* x,
                          ListIn(a.data<Variant>()[j], DT_INVALID, "a nested list"));
    WEFT_ASSIGN_OR_RETURN(const TensorList* y,
                          ListIn(b.data<Variant>()[j], DT_INVALID, "a nested list"));
    WEFT_ASSIGN_OR_RETURN(auto sum, AddLists(*x, *y, depth + 1));
    sums.push_back(std::move(sum));
  }
  return ListsTensor(a.shape(), std::move(sums));
}

// The elementwise sum of two lists of one dtype, length and element shape;
// an element unset in one list takes the other's.
absl::StatusOr<std::shared_ptr<const TensorList>> AddLists(const TensorList& a,
                                                           const TensorList& b,
                                                           int depth) {
  if (a.element_dtype != b.element_dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to add two lists of tensors of different dtypes. One is ",
        DataTypeString(a.element_dtype), " and the other is ",
        DataTypeString(b.element_dtype)));
  }
  if (!a.element_shape.IsCompatibleWith(b.element_shape)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to add two lists of tensors with incompatible element shapes. "
        "One is ",
        a.element_shape.DebugString(), " and the other is ",
        b.element_shape.DebugString()));
  }
  if (a.tensors.size() != b.tensors.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to add two lists of tensors with different lengths. One is ",
        a.tensors.size(), " and the other is ", b.tensors.size()));
  }
  auto out = std::make_shared<TensorList>(a);
  WEFT_ASSIGN_OR_RETURN(out->element_shape,
                        MergeShapes(a.element_shape, b.element_shape, "AddN"));
  for (size_t i = 0; i < out->tensors.size(); ++i) {
    const Tensor& y = b.tensors[i];
    if (!y.IsInitialized()) continue;
    if (!out->tensors[i].IsInitialized()) {
      out->tensors[i] = y;
      continue;
    }
    WEFT_ASSIGN_OR_RETURN(out->tensors[i],
                          AddElements(out->tensors[i], y, depth));
  }
  return out;
}

// AddN of lists: the lists summed pairwise, left to right.
class AddNListOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto first = GetInputList(c, 0, DT_INVALID);
    OP_REQUIRES_OK(c, first.status());
    std::shared_ptr<const TensorList> sum = std::make_shared<TensorList>(**first);
    for (int k = 1; k < c->num_inputs(); ++k) {
      auto next = GetInputList(c, k, DT_INVALID);
      OP_REQUIRES_OK(c, next.status());
      auto added = AddLists(*sum, **next, 0);
      OP_REQUIRES_OK(c, added.status());
      sum = *std::move(added);
    }
    SetOutputList(c, 0, std::move(sum));
  }
};

void RegisterList(KernelRegistry* r, const char* op, KernelFactory make) {
  r->Register(KernelDef(op, kDeviceTypeCpu), std::move(make));
}

}  // namespace

void RegisterTensorListKernels(KernelRegistry* r) {
  RegisterTensorListCoder();
  RegisterList(r, "EmptyTensorList", MakeKernel<NewListOp<false>>);
  RegisterList(r, "TensorListReserve", MakeKernel<NewListOp<true>>);
  RegisterList(r, "TensorListFromTensor", MakeKernel<FromTensorOp>);
  RegisterList(r, "TensorListStack", MakeKernel<StackOp>);
  RegisterList(r, "TensorListGetItem", MakeKernel<GetItemOp>);
  RegisterList(r, "TensorListSetItem", MakeKernel<SetItemOp>);
  RegisterList(r, "TensorListPushBack", MakeKernel<PushBackOp>);
  RegisterList(r, "TensorListPopBack", MakeKernel<PopBackOp>);
  RegisterList(r, "TensorListPushBackBatch", MakeKernel<PushBackBatchOp>);
  RegisterList(r, "TensorListConcatLists", MakeKernel<ConcatListsOp>);
  RegisterList(r, "TensorListLength", MakeKernel<LengthOp>);
  RegisterList(r, "TensorListElementShape", MakeKernel<ElementShapeOp>);
  RegisterList(r, "TensorListResize", MakeKernel<ResizeOp>);
  RegisterList(r, "TensorListConcat", MakeKernel<ConcatOp<false>>);
  RegisterList(r, "TensorListConcatV2", MakeKernel<ConcatOp<true>>);
  RegisterList(r, "TensorListSplit", MakeKernel<SplitOp>);
  RegisterList(r, "TensorListGather", MakeKernel<GatherOp>);
  RegisterList(r, "TensorListScatter", MakeKernel<ScatterOp<false>>);
  RegisterList(r, "TensorListScatterV2", MakeKernel<ScatterOp<true>>);
  RegisterList(r, "TensorListScatterIntoExistingList",
               MakeKernel<ScatterIntoExistingOp>);
  r->Register(KernelDef("ZerosLike", kDeviceTypeCpu)
                  .TypeConstraint("T", DT_VARIANT),
              MakeKernel<ZerosLikeListOp>);
  r->Register(KernelDef("AddN", kDeviceTypeCpu).TypeConstraint("T", DT_VARIANT),
              MakeKernel<AddNListOp>);
}

}  // namespace weft
