#include "ops/cpu/tensor_list.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"
#include "proto/tensor.pb.h"
#include "runtime/checkpoint/coding.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

// Copies every element of `src` into `dst` starting at element `offset`.
void CopyElementsTo(const Tensor& src, Tensor* dst, int64_t offset) {
  const int64_t n = src.NumElements();
  if (n == 0) return;
  if (!DataTypeIsObject(src.dtype())) {
    const size_t size = DataTypeSize(src.dtype());
    std::memcpy(static_cast<char*>(dst->raw_data()) + offset * size,
                src.raw_data(), n * size);
    return;
  }
  VisitStorage(src.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::copy_n(src.data<T>(), n, dst->data<T>() + offset);
  });
}

template <typename T>
void AddInto(const Tensor& a, const Tensor& b, Tensor* out) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = out->data<T>();
  for (int64_t i = 0, n = a.NumElements(); i < n; ++i) z[i] = x[i] + y[i];
}

void EncodeTensorList(const VariantValue& value,
                      tensorflow::VariantTensorDataProto* out) {
  const auto& list = static_cast<const TensorList&>(value);
  std::vector<uint64_t> unset;
  for (size_t i = 0; i < list.tensors.size(); ++i) {
    if (list.tensors[i].IsInitialized()) {
      TensorToProto(list.tensors[i], out->add_tensors());
    } else {
      unset.push_back(i);
    }
  }
  std::string metadata;
  coding::PutVarint(&metadata, unset.size());
  for (uint64_t i : unset) coding::PutVarint(&metadata, i);
  coding::PutVarint(&metadata, static_cast<uint64_t>(list.element_dtype));
  coding::PutVarint(&metadata, static_cast<uint64_t>(list.max_num_elements));
  tensorflow::TensorShapeProto shape;
  if (!list.element_shape.known_rank()) {
    shape.set_unknown_rank(true);
  } else {
    for (int64_t d : list.element_shape.dims()) shape.add_dim()->set_size(d);
  }
  shape.AppendToString(&metadata);
  out->set_metadata(std::move(metadata));
}

absl::StatusOr<Variant> DecodeTensorList(
    const tensorflow::VariantTensorDataProto& in) {
  auto bad = [](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed TensorList variant: ", what));
  };
  absl::string_view meta = in.metadata();
  uint64_t unset = 0, dtype = 0, max = 0;
  if (!coding::GetVarint(&meta, &unset)) return bad("no count of unset elements");
  const uint64_t total = unset + static_cast<uint64_t>(in.tensors_size());
  // Each unset index takes at least a byte of the metadata: a count beyond
  // what the metadata holds is refused before anything is allocated.
  if (unset > meta.size()) return bad("more unset elements than metadata bytes");
  if (unset > static_cast<uint64_t>(kMaxListElements) ||
      total > static_cast<uint64_t>(kMaxListElements)) {
    return bad(absl::StrCat("more than ", kMaxListElements, " elements"));
  }
  auto list = std::make_shared<TensorList>();
  list->tensors.resize(total);
  std::vector<bool> is_unset(total, false);
  for (uint64_t k = 0; k < unset; ++k) {
    uint64_t i = 0;
    if (!coding::GetVarint(&meta, &i) || i >= total || is_unset[i]) {
      return bad("an unset element's index is missing, repeated or out of range");
    }
    is_unset[i] = true;
  }
  if (!coding::GetVarint(&meta, &dtype) || !coding::GetVarint(&meta, &max)) {
    return bad("no element dtype or max_num_elements");
  }
  if (dtype > 1000 ||  // checked before it becomes an enum
      !DataTypeIsSupported(list->element_dtype = static_cast<DataType>(dtype))) {
    return bad(absl::StrCat("unsupported element dtype ", dtype));
  }
  list->max_num_elements = static_cast<int64_t>(max);
  tensorflow::TensorShapeProto shape;
  if (!shape.ParseFromArray(meta.data(), static_cast<int>(meta.size()))) {
    return bad("the element shape is not a TensorShapeProto");
  }
  if (shape.dim_size() > kMaxTensorRank) {
    return bad(absl::StrCat("element shape of rank ", shape.dim_size(),
                            " (at most ", kMaxTensorRank, ")"));
  }
  list->element_shape = PartialShape::FromProto(shape);
  int next = 0;
  for (uint64_t i = 0; i < total; ++i) {
    if (is_unset[i]) continue;
    WEFT_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(in.tensors(next++)));
    if (t.dtype() != list->element_dtype) {
      return bad(absl::StrCat("element ", i, " is ", DataTypeString(t.dtype()),
                              ", not ", DataTypeString(list->element_dtype)));
    }
    list->tensors[i] = std::move(t);
  }
  Variant v;
  v.value = std::move(list);
  return v;
}

}  // namespace

void RegisterTensorListCoder() {
  RegisterVariantCoder("tensorflow::TensorList",
                       VariantCoder{EncodeTensorList, DecodeTensorList});
}

std::string TensorList::DebugString() const {
  return absl::StrCat("TensorList<element_dtype=", DataTypeString(element_dtype),
                      ", element_shape=", element_shape.DebugString(),
                      ", length=", tensors.size(), ">");
}

absl::StatusOr<const TensorList*> ListIn(const Variant& v, DataType element_dtype,
                                         absl::string_view what) {
  const TensorList* list = v.get<TensorList>();
  if (list == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must hold a TensorList, but holds ",
        v.value == nullptr ? "nothing" : v.value->TypeName()));
  }
  if (element_dtype != DT_INVALID && list->element_dtype != element_dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the list in ", what, " holds ", DataTypeString(list->element_dtype),
        " elements but element_dtype is ", DataTypeString(element_dtype)));
  }
  return list;
}

absl::StatusOr<const TensorList*> GetInputList(OpKernelContext* c, int i,
                                               DataType element_dtype) {
  const Tensor& t = c->input(i);
  if (t.dtype() != DT_VARIANT || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", i, " must be a TensorList (a variant scalar), got ",
        t.DebugString()));
  }
  return ListIn(t.data<Variant>()[0], element_dtype, absl::StrCat("input ", i));
}

absl::StatusOr<std::vector<const TensorList*>> ListsIn(const Tensor& t,
                                                       DataType element_dtype,
                                                       absl::string_view what) {
  if (t.dtype() != DT_VARIANT) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be variant TensorLists, got ", DataTypeString(t.dtype())));
  }
  std::vector<const TensorList*> out;
  for (int64_t j = 0; j < t.NumElements(); ++j) {
    WEFT_ASSIGN_OR_RETURN(const TensorList* list,
                          ListIn(t.data<Variant>()[j], element_dtype,
                                 absl::StrCat(what, "[", j, "]")));
    out.push_back(list);
  }
  return out;
}

void SetOutputLists(OpKernelContext* c, int i, const TensorShape& shape,
                    std::vector<std::shared_ptr<const TensorList>> lists) {
  Tensor t(DT_VARIANT, shape);
  if (!t.IsInitialized()) {
    c->SetStatus(absl::ResourceExhaustedError("out of memory for list handles"));
    return;
  }
  for (size_t j = 0; j < lists.size(); ++j) t.data<Variant>()[j].value = std::move(lists[j]);
  c->set_output(i, std::move(t));
}

void SetOutputList(OpKernelContext* c, int i,
                   std::shared_ptr<const TensorList> list) {
  SetOutputLists(c, i, TensorShape(), {std::move(list)});
}

absl::StatusOr<PartialShape> PartialShapeFromTensor(const Tensor& t,
                                                    absl::string_view what) {
  if (t.dtype() != DT_INT32 && t.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be int32 or int64, got ", DataTypeString(t.dtype())));
  }
  auto at = [&](int64_t i) -> int64_t {
    return t.dtype() == DT_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  };
  if (t.dims() == 0) {
    if (at(0) != -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " as a scalar must be -1 (unknown rank), got ", at(0)));
    }
    return PartialShape::UnknownRank();
  }
  if (t.dims() != 1 || t.NumElements() > kMaxTensorRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be a vector of at most ", kMaxTensorRank,
        " dims or -1, got shape ",
        t.shape().DebugString()));
  }
  std::vector<int64_t> dims(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    dims[i] = at(i);
    if (dims[i] < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has dimension ", dims[i], " (", i,
                       "); dimensions are >= 0, or -1 when unknown"));
    }
  }
  return PartialShape(dims);
}

absl::StatusOr<PartialShape> MergeShapes(const PartialShape& a,
                                         const PartialShape& b,
                                         absl::string_view what) {
  if (!a.known_rank()) return b;
  if (!b.known_rank()) return a;
  if (a.rank() != b.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Incompatible ranks during merge: ", a.rank(), " vs. ",
                     b.rank(), " (", what, ")"));
  }
  if (!a.IsCompatibleWith(b)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Incompatible shapes during merge: ", a.DebugString(), " vs. ",
        b.DebugString(), " (", what, ")"));
  }
  std::vector<int64_t> dims(a.rank());
  for (int i = 0; i < a.rank(); ++i) {
    dims[i] = a.dim(i) >= 0 ? a.dim(i) : b.dim(i);
  }
  return PartialShape(dims);
}

absl::StatusOr<Tensor> ZerosTensor(DataType dtype, const TensorShape& shape) {
  WEFT_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(CpuAllocator(), dtype, shape));
  if (!DataTypeIsObject(dtype) && t.NumElements() > 0) {
    std::memset(t.raw_data(), 0, t.TotalBytes());
  }
  return t;
}

absl::StatusOr<Tensor> ElementOrZeros(const std::vector<Tensor>& elements,
                                      int64_t i, DataType dtype,
                                      const PartialShape& shape,
                                      absl::string_view what) {
  const Tensor& t = elements[i];
  if (t.IsInitialized()) return t;
  if (!shape.known_rank() || !shape.IsFullyDefined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": element ", i, " was never set and its shape ",
        shape.DebugString(),
        " is not fully defined, so it cannot be read as zeros"));
  }
  WEFT_ASSIGN_OR_RETURN(TensorShape full, TensorShape::Build(shape.dims()));
  return ZerosTensor(dtype, full);
}

absl::Status StackIntoOutput(OpKernelContext* c, int out,
                             absl::Span<const Tensor> elements, DataType dtype,
                             const PartialShape& element_shape,
                             absl::string_view what) {
  TensorShape shape;
  if (elements.empty()) {
    if (!element_shape.known_rank() || !element_shape.IsFullyDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": stacking no elements needs a fully defined element shape, "
                "got ",
          element_shape.DebugString()));
    }
    WEFT_ASSIGN_OR_RETURN(shape, TensorShape::Build(element_shape.dims()));
  } else {
    shape = elements[0].shape();
  }
  for (size_t i = 0; i < elements.size(); ++i) {
    if (elements[i].dtype() != dtype || elements[i].shape() != shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": element ", i, " is ", DataTypeString(elements[i].dtype()),
          " ", elements[i].shape().DebugString(), " but element 0 is ",
          DataTypeString(dtype), " ", shape.DebugString(),
          "; stacking needs one shape"));
    }
  }
  TensorShape stacked = shape;
  stacked.InsertDim(0, static_cast<int64_t>(elements.size()));
  Tensor* result;
  WEFT_RETURN_IF_ERROR(c->allocate_output(out, stacked, &result));
  for (size_t i = 0; i < elements.size(); ++i) {
    CopyElementsTo(elements[i], result, i * shape.num_elements());
  }
  return absl::OkStatus();
}

absl::Status ConcatIntoOutputs(OpKernelContext* c, int out, int lengths_out,
                               absl::Span<const Tensor> elements,
                               DataType dtype,
                               const PartialShape& element_shape,
                               absl::string_view what) {
  TensorShape inner;  // the dims past 0 every element shares
  if (elements.empty()) {
    if (!element_shape.known_rank() || element_shape.rank() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": concatenating no elements needs an element shape of rank "
                ">= 1, got ",
          element_shape.DebugString()));
    }
    for (int d = 1; d < element_shape.rank(); ++d) {
      if (element_shape.dim(d) < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": concatenating no elements needs the element shape past "
                  "dim 0 fully defined, got ",
            element_shape.DebugString()));
      }
      inner.AddDim(element_shape.dim(d));
    }
  } else {
    if (elements[0].dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": concatenation needs elements of rank >= 1, element 0 is a "
                "scalar"));
    }
    inner = elements[0].shape();
    inner.RemoveDim(0);
  }
  int64_t rows = 0;
  for (size_t i = 0; i < elements.size(); ++i) {
    const Tensor& e = elements[i];
    TensorShape rest = e.shape();
    if (e.dims() >= 1) rest.RemoveDim(0);
    if (e.dtype() != dtype || e.dims() < 1 || rest != inner) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": element ", i, " is ", DataTypeString(e.dtype()), " ",
          e.shape().DebugString(), "; every element must be ",
          DataTypeString(dtype), " [?", inner.dims() ? "," : "",
          inner.DebugString().substr(1)));
    }
    rows += e.dim_size(0);
  }
  TensorShape shape = inner;
  shape.InsertDim(0, rows);
  Tensor* result;
  WEFT_RETURN_IF_ERROR(c->allocate_output(out, shape, &result));
  Tensor* lengths;
  WEFT_RETURN_IF_ERROR(c->allocate_output(
      lengths_out, TensorShape({static_cast<int64_t>(elements.size())}),
      &lengths));
  int64_t offset = 0;
  for (size_t i = 0; i < elements.size(); ++i) {
    CopyElementsTo(elements[i], result, offset);
    offset += elements[i].NumElements();
    lengths->data<int64_t>()[i] = elements[i].dim_size(0);
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> RowsOf(const Tensor& t, int64_t begin, int64_t n) {
  const int64_t row_elements =
      t.dim_size(0) == 0 ? 0 : t.NumElements() / t.dim_size(0);
  const size_t elem = DataTypeIsObject(t.dtype()) ? 0 : DataTypeSize(t.dtype());
  if (elem > 0 && (begin * row_elements * elem) % kTensorAlignment == 0) {
    return t.Slice(begin, begin + n);
  }
  TensorShape shape = t.shape();
  shape.set_dim(0, n);
  WEFT_ASSIGN_OR_RETURN(Tensor copy,
                        Tensor::Allocate(CpuAllocator(), t.dtype(), shape));
  if (copy.NumElements() > 0) {
    const Tensor rows = t.Slice(begin, begin + n);  // unaligned: read only
    CopyElementsTo(rows, &copy, 0);
  }
  return copy;
}

absl::StatusOr<Tensor> RowOf(const Tensor& t, int64_t i) {
  WEFT_ASSIGN_OR_RETURN(Tensor row, RowsOf(t, i, 1));
  TensorShape shape = t.shape();
  shape.RemoveDim(0);
  return row.Reshaped(shape);
}

absl::StatusOr<Tensor> AddTensors(const Tensor& a, const Tensor& b,
                                  absl::string_view what) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": cannot add ", DataTypeString(a.dtype()), " ",
        a.shape().DebugString(), " and ", DataTypeString(b.dtype()), " ",
        b.shape().DebugString()));
  }
  WEFT_ASSIGN_OR_RETURN(Tensor out,
                        Tensor::Allocate(CpuAllocator(), a.dtype(), a.shape()));
  switch (a.dtype()) {
    case DT_FLOAT:
      AddInto<float>(a, b, &out);
      break;
    case DT_DOUBLE:
      AddInto<double>(a, b, &out);
      break;
    case DT_INT32:
      AddInto<int32_t>(a, b, &out);
      break;
    case DT_INT64:
      AddInto<int64_t>(a, b, &out);
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": adding ", DataTypeString(a.dtype()),
          " tensors is not supported (float, double, int32, int64 are)"));
  }
  return out;
}

}  // namespace weft
