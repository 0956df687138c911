// TensorList kernels (EmptyTensorList, TensorListReserve, ...FromTensor,
// ...Stack, ...GetItem, ...SetItem, ...PushBack, ...PopBack, ...Length,
// ...ElementShape, ...Resize, ...Concat(V2), ...Split, ...Gather,
// ...Scatter(V2), ...ScatterIntoExistingList) and the variant forms of
// ZerosLike and AddN that gradients through lists need. Semantics follow
// TensorFlow's list_kernels; the list itself is ops/cpu/tensor_list.h.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/tensor_list.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

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

absl::Status CheckItem(const TensorList& list, const Tensor& item,
                       absl::string_view what) {
  if (item.dtype() != list.element_dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the list holds ", DataTypeString(list.element_dtype),
        " but the item is ", DataTypeString(item.dtype())));
  }
  if (!list.element_shape.IsCompatibleWith(item.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": item of shape ", item.shape().DebugString(),
        " does not match the list's element shape ",
        list.element_shape.DebugString()));
  }
  return absl::OkStatus();
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

class FromTensorOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& t = c->input(0);
    OP_REQUIRES(c, t.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListFromTensor needs a tensor of rank >= 1, got ",
                    t.shape().DebugString())));
    auto shape = PartialShapeFromTensor(c->input(1), "element_shape");
    OP_REQUIRES_OK(c, shape.status());
    TensorShape row = t.shape();
    row.RemoveDim(0);
    OP_REQUIRES(c, shape->IsCompatibleWith(row),
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListFromTensor: rows of shape ", row.DebugString(),
                    " do not match element_shape ", shape->DebugString())));
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
    auto given = PartialShapeFromTensor(c->input(1), "element_shape");
    OP_REQUIRES_OK(c, given.status());
    auto shape = MergeShapes((*list)->element_shape, *given, What());
    OP_REQUIRES_OK(c, shape.status());
    const auto& tensors = (*list)->tensors;
    OP_REQUIRES(c, num_elements_ == -1 ||
                       num_elements_ == static_cast<int64_t>(tensors.size()),
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListStack: num_elements is ", num_elements_,
                    " but the list has ", tensors.size())));
    // Unset elements take the shape of the set ones (or the known shape).
    PartialShape elem = *shape;
    for (const Tensor& t : tensors) {
      if (t.IsInitialized()) {
        auto merged = MergeShapes(elem, PartialShape::FromShape(t.shape()), What());
        OP_REQUIRES_OK(c, merged.status());
        elem = *merged;
        break;
      }
    }
    std::vector<Tensor> items;
    items.reserve(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      auto e = ElementOrZeros(tensors, i, element_dtype_, elem, What());
      OP_REQUIRES_OK(c, e.status());
      items.push_back(*std::move(e));
    }
    OP_REQUIRES_OK(c, StackIntoOutput(c, 0, items, element_dtype_, elem, What()));
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
    const auto& tensors = (*list)->tensors;
    OP_REQUIRES(c, *index >= 0 && *index < static_cast<int64_t>(tensors.size()),
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListGetItem: index ", *index,
                    " is out of range for a list of ", tensors.size())));
    if (tensors[*index].IsInitialized()) {
      c->set_output(0, tensors[*index]);
      return;
    }
    auto given = PartialShapeFromTensor(c->input(2), "element_shape");
    OP_REQUIRES_OK(c, given.status());
    auto shape = MergeShapes((*list)->element_shape, *given, What());
    OP_REQUIRES_OK(c, shape.status());
    auto e = ElementOrZeros(tensors, *index, element_dtype_, *shape, What());
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
    OP_REQUIRES_OK(c, CheckItem(**list, item, What()));
    const int64_t size = static_cast<int64_t>((*list)->tensors.size());
    OP_REQUIRES(c, *index >= 0 && (*index < size || resize_),
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListSetItem: index ", *index,
                    " is out of range for a list of ", size)));
    if (*index >= size) OP_REQUIRES_OK(c, CheckCount(*index + 1, "index + 1"));
    auto out = std::make_shared<TensorList>(**list);
    if (*index >= size) out->tensors.resize(*index + 1);
    out->tensors[*index] = item;
    SetOutputList(c, 0, std::move(out));
  }

 private:
  bool resize_ = false;
};

class PushBackOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    const Tensor& item = c->input(1);
    OP_REQUIRES_OK(c, CheckItem(**list, item, What()));
    const int64_t size = static_cast<int64_t>((*list)->tensors.size());
    const int64_t max = (*list)->max_num_elements;
    OP_REQUIRES(c, max == -1 || size < max,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListPushBack: the list is full: it holds its "
                    "max_num_elements of ",
                    max)));
    OP_REQUIRES_OK(c, CheckCount(size + 1, "the list's length"));
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
      OP_REQUIRES_OK(c, CheckItem(list, *row, What(absl::StrCat(" list ", b))));
      const int64_t size = static_cast<int64_t>(list.tensors.size());
      OP_REQUIRES(c, list.max_num_elements == -1 || size < list.max_num_elements,
                  absl::InvalidArgumentError(absl::StrCat(
                      What(), ": list ", b, " is full: it holds its "
                      "max_num_elements of ", list.max_num_elements)));
      OP_REQUIRES_OK(c, CheckCount(size + 1, "the list's length"));
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
    const auto& tensors = (*list)->tensors;
    OP_REQUIRES(c, !tensors.empty(),
                absl::InvalidArgumentError(
                    "TensorListPopBack: the list is empty"));
    auto given = PartialShapeFromTensor(c->input(1), "element_shape");
    OP_REQUIRES_OK(c, given.status());
    auto shape = MergeShapes((*list)->element_shape, *given, What());
    OP_REQUIRES_OK(c, shape.status());
    auto e = ElementOrZeros(tensors, tensors.size() - 1, element_dtype_,
                            *shape, What());
    OP_REQUIRES_OK(c, e.status());
    auto out = std::make_shared<TensorList>(**list);
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
    OP_REQUIRES_OK(c, CheckCount(*size, "size"));
    auto out = std::make_shared<TensorList>(**list);
    out->tensors.resize(*size);
    SetOutputList(c, 0, std::move(out));
  }
};

// TensorListConcat (element_shape attr) and TensorListConcatV2
// (element_shape and leading_dims inputs).
template <bool kV2>
class ConcatOp : public ListKernel {
 public:
  explicit ConcatOp(OpKernelConstruction* c) : ListKernel(c) {
    if (!kV2) c->SetStatus(c->GetAttr("element_shape", &attr_shape_));
  }
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    PartialShape given = attr_shape_;
    std::vector<int64_t> leading;
    if (kV2) {
      auto s = PartialShapeFromTensor(c->input(1), "element_shape");
      OP_REQUIRES_OK(c, s.status());
      given = *s;
      OP_REQUIRES_OK(c, ReadIntVector(c->input(2), "leading_dims", &leading));
    }
    auto shape = MergeShapes((*list)->element_shape, given, What());
    OP_REQUIRES_OK(c, shape.status());
    const auto& tensors = (*list)->tensors;
    std::vector<Tensor> items;
    items.reserve(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].IsInitialized()) {
        items.push_back(tensors[i]);
        continue;
      }
      // An unset element is zeros of leading_dims[i] rows.
      PartialShape elem = *shape;
      if (elem.known_rank() && elem.rank() >= 1 && i < leading.size()) {
        std::vector<int64_t> dims(elem.dims().begin(), elem.dims().end());
        dims[0] = leading[i];
        elem = PartialShape(dims);
      }
      auto e = ElementOrZeros(tensors, i, element_dtype_, elem, What());
      OP_REQUIRES_OK(c, e.status());
      items.push_back(*std::move(e));
    }
    OP_REQUIRES_OK(c, ConcatIntoOutputs(c, 0, 1, items, element_dtype_, *shape,
                                        What()));
  }

 private:
  PartialShape attr_shape_;
};

class SplitOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& t = c->input(0);
    OP_REQUIRES(c, t.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListSplit needs a tensor of rank >= 1, got ",
                    t.shape().DebugString())));
    auto shape = PartialShapeFromTensor(c->input(1), "element_shape");
    OP_REQUIRES_OK(c, shape.status());
    std::vector<int64_t> lengths;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(2), "lengths", &lengths));
    OP_REQUIRES_OK(c, CheckCount(static_cast<int64_t>(lengths.size()),
                                 "the number of lengths"));
    auto list = std::make_shared<TensorList>();
    list->element_dtype = element_dtype_;
    list->element_shape = *shape;
    int64_t begin = 0;
    for (int64_t n : lengths) {
      OP_REQUIRES(c, n >= 0 && n <= t.dim_size(0) - begin,
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorListSplit: lengths must be >= 0 and sum to the "
                      "tensor's dim 0 (",
                      t.dim_size(0), ")")));
      auto rows = RowsOf(t, begin, n);
      OP_REQUIRES_OK(c, rows.status());
      list->tensors.push_back(*std::move(rows));
      begin += n;
    }
    OP_REQUIRES(c, begin == t.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListSplit: lengths sum to ", begin,
                    " but the tensor's dim 0 is ", t.dim_size(0))));
    SetOutputList(c, 0, std::move(list));
  }
};

class GatherOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, element_dtype_);
    OP_REQUIRES_OK(c, list.status());
    std::vector<int64_t> indices;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "indices", &indices));
    auto given = PartialShapeFromTensor(c->input(2), "element_shape");
    OP_REQUIRES_OK(c, given.status());
    auto shape = MergeShapes((*list)->element_shape, *given, What());
    OP_REQUIRES_OK(c, shape.status());
    const auto& tensors = (*list)->tensors;
    std::vector<Tensor> items;
    items.reserve(indices.size());
    for (int64_t i : indices) {
      OP_REQUIRES(c, i >= 0 && i < static_cast<int64_t>(tensors.size()),
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorListGather: index ", i,
                      " is out of range for a list of ", tensors.size())));
      auto e = ElementOrZeros(tensors, i, element_dtype_, *shape, What());
      OP_REQUIRES_OK(c, e.status());
      items.push_back(*std::move(e));
    }
    OP_REQUIRES_OK(c, StackIntoOutput(c, 0, items, element_dtype_, *shape, What()));
  }
};

// Sets list->tensors[indices[i]] = rows i of `t`, growing the list to fit.
absl::Status ScatterRows(const Tensor& t, const Tensor& indices_t,
                         TensorList* list, absl::string_view what) {
  std::vector<int64_t> indices;
  WEFT_RETURN_IF_ERROR(ReadIntVector(indices_t, "indices", &indices));
  if (t.dims() < 1 || t.dim_size(0) != static_cast<int64_t>(indices.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the tensor of shape ", t.shape().DebugString(), " needs ",
        "one row per index (", indices.size(), ")"));
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    WEFT_RETURN_IF_ERROR(CheckCount(indices[i], "an index"));
    if (indices[i] >= static_cast<int64_t>(list->tensors.size())) {
      list->tensors.resize(indices[i] + 1);
    }
    WEFT_ASSIGN_OR_RETURN(list->tensors[indices[i]], RowOf(t, i));
  }
  return absl::OkStatus();
}

// TensorListScatter and TensorListScatterV2 (with num_elements).
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
    if (kV2) {
      auto n = ScalarInput(c, 3, "num_elements");
      OP_REQUIRES_OK(c, n.status());
      if (*n != -1) {
        OP_REQUIRES_OK(c, CheckCount(*n, "num_elements"));
        list->tensors.resize(*n);
      }
    }
    OP_REQUIRES_OK(c, ScatterRows(t, c->input(1), list.get(), What()));
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
    OP_REQUIRES_OK(c, ScatterRows(c->input(1), c->input(2), out.get(), What()));
    SetOutputList(c, 0, std::move(out));
  }
};

// ZerosLike of a list: the same length, each set element zeros.
class ZerosLikeListOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto list = GetInputList(c, 0, DT_INVALID);
    OP_REQUIRES_OK(c, list.status());
    auto out = std::make_shared<TensorList>(**list);
    for (Tensor& t : out->tensors) {
      if (!t.IsInitialized()) continue;
      auto z = ZerosTensor(t.dtype(), t.shape());
      OP_REQUIRES_OK(c, z.status());
      t = *std::move(z);
    }
    SetOutputList(c, 0, std::move(out));
  }
};

// AddN of lists: elementwise sums of lists of one length; an element unset
// in one list takes the other's.
class AddNListOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* c) override {
    auto first = GetInputList(c, 0, DT_INVALID);
    OP_REQUIRES_OK(c, first.status());
    auto out = std::make_shared<TensorList>(**first);
    for (int k = 1; k < c->num_inputs(); ++k) {
      auto next = GetInputList(c, k, out->element_dtype);
      OP_REQUIRES_OK(c, next.status());
      OP_REQUIRES(c, (*next)->tensors.size() == out->tensors.size(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "AddN of lists needs lists of one length, got ",
                      out->tensors.size(), " and ", (*next)->tensors.size())));
      for (size_t i = 0; i < out->tensors.size(); ++i) {
        const Tensor& b = (*next)->tensors[i];
        if (!b.IsInitialized()) continue;
        if (!out->tensors[i].IsInitialized()) {
          out->tensors[i] = b;
          continue;
        }
        auto sum = AddTensors(out->tensors[i], b, "AddN of lists");
        OP_REQUIRES_OK(c, sum.status());
        out->tensors[i] = *std::move(sum);
      }
    }
    SetOutputList(c, 0, std::move(out));
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
