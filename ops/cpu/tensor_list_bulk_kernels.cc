// TensorList kernels that move many elements at once: TensorListStack,
// ...Gather, ...Scatter, ...ScatterV2, ...ScatterIntoExistingList,
// ...Concat, ...ConcatV2 and ...Split. Semantics and the first clause of
// each error follow TensorFlow's list_kernels (see tensor_list_kernels.cc);
// the shared helpers are tensor_list_kernel_util.h.
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/tensor_list.h"
#include "ops/cpu/tensor_list_kernel_util.h"
#include "ops/framework/op_kernel.h"
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

// Stack and Gather: the elements at `indices` stacked into output 0, unset
// ones as zeros of the element shape (input `shape_input` merged with the
// list's and the set elements'). When that shape is not fully defined,
// INVALID_ARGUMENT starting with `lead` (TensorFlow's wording).
absl::Status StackElements(OpKernelContext* c, const TensorList& l,
                           const std::vector<int64_t>& indices, int shape_input,
                           absl::string_view lead, absl::string_view what) {
  WEFT_ASSIGN_OR_RETURN(PartialShape given, ElementShapeInput(c, shape_input, l, what));
  WEFT_ASSIGN_OR_RETURN(PartialShape shape, MergeSetElements(given, l, indices, what));
  if (!shape.IsFullyDefined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        lead, " non-fully-defined element_shape: ", shape.DebugString()));
  }
  WEFT_ASSIGN_OR_RETURN(std::vector<Tensor> items, ElementsAt(l, indices, shape));
  return StackIntoOutput(c, 0, items, l.element_dtype, shape, what);
}

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
    OP_REQUIRES_OK(c, StackElements(c, l, AllIndices(l), /*shape_input=*/1,
                                    size == 0 ? "Tried to stack elements of an empty list with"
                                              : "Tried to stack list which only contains "
                                                "uninitialized tensors and has a",
                                    What()));
  }

 private:
  int64_t num_elements_ = -1;
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
    OP_REQUIRES_OK(c, StackElements(c, l, indices, /*shape_input=*/2,
                                    size == 0 ? "Tried to gather elements from an empty list with"
                                              : "Tried to gather uninitialized tensors from a "
                                                "list with",
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

}  // namespace

void RegisterTensorListBulkKernels(KernelRegistry* r) {
  RegisterList(r, "TensorListStack", MakeKernel<StackOp>);
  RegisterList(r, "TensorListConcat", MakeKernel<ConcatOp<false>>);
  RegisterList(r, "TensorListConcatV2", MakeKernel<ConcatOp<true>>);
  RegisterList(r, "TensorListSplit", MakeKernel<SplitOp>);
  RegisterList(r, "TensorListGather", MakeKernel<GatherOp>);
  RegisterList(r, "TensorListScatter", MakeKernel<ScatterOp<false>>);
  RegisterList(r, "TensorListScatterV2", MakeKernel<ScatterOp<true>>);
  RegisterList(r, "TensorListScatterIntoExistingList",
               MakeKernel<ScatterIntoExistingOp>);
}

}  // namespace weft
