// The variant forms of ZerosLike and AddN that gradients through
// TensorLists need: zeros like a list, and the elementwise sum of lists,
// recursing into lists of lists at most kMaxVariantNesting deep. Errors
// start with TensorFlow's first clause (see tensor_list_kernels.cc).
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/tensor_list.h"
#include "ops/cpu/tensor_list_kernel_util.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

using tensor_list_internal::ListKernel;

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

}  // namespace

void RegisterTensorListArithKernels(KernelRegistry* r) {
  r->Register(KernelDef("ZerosLike", kDeviceTypeCpu)
                  .TypeConstraint("T", DT_VARIANT),
              MakeKernel<ZerosLikeListOp>);
  r->Register(KernelDef("AddN", kDeviceTypeCpu).TypeConstraint("T", DT_VARIANT),
              MakeKernel<AddNListOp>);
}

}  // namespace weft
