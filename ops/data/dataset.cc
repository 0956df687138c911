#include "ops/data/dataset.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {

std::string KernelLabel(OpKernelContext* c) {
  return absl::StrCat("node '", c->op_kernel().name(), "' (",
                      c->op_kernel().type_string(), ")");
}

Tensor DatasetToTensor(DatasetPtr dataset) {
  Tensor t(DT_VARIANT, TensorShape());
  t.scalar<Variant>().value = std::move(dataset);
  return t;
}

DatasetPtr DatasetFromTensor(const Tensor& t) {
  if (t.dtype() != DT_VARIANT || t.NumElements() != 1) return nullptr;
  return std::dynamic_pointer_cast<const DatasetBase>(t.scalar<Variant>().value);
}

absl::StatusOr<DatasetPtr> DatasetFromInput(OpKernelContext* c, int i) {
  const Tensor& t = c->input(i);
  DatasetPtr ds = DatasetFromTensor(t);
  if (ds == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        KernelLabel(c), ": input ", i,
        " must be a dataset (a variant scalar made by a dataset op), got ",
        DataTypeString(t.dtype()), " ", t.shape().DebugString()));
  }
  return ds;
}

absl::Status CheckElement(const std::vector<Tensor>& element,
                          const DataTypeVector& dtypes,
                          const std::vector<PartialShape>& shapes,
                          const std::string& what) {
  if (element.size() != dtypes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": an element has ", element.size(),
                     " components, expected ", dtypes.size()));
  }
  for (size_t i = 0; i < element.size(); ++i) {
    if (element[i].dtype() != dtypes[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": component ", i, " of an element is ",
          DataTypeString(element[i].dtype()), ", expected ",
          DataTypeString(dtypes[i])));
    }
    if (i < shapes.size() && !shapes[i].IsCompatibleWith(element[i].shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": component ", i, " of an element has shape ",
          element[i].shape().DebugString(), ", incompatible with ",
          shapes[i].DebugString()));
    }
  }
  return absl::OkStatus();
}

absl::Status SetElementOutputs(OpKernelContext* c, std::vector<Tensor> element) {
  if (static_cast<int>(element.size()) != c->num_outputs()) {
    return absl::InvalidArgumentError(
        absl::StrCat(KernelLabel(c), ": the element has ", element.size(),
                     " components, the op has ", c->num_outputs(), " outputs"));
  }
  for (size_t i = 0; i < element.size(); ++i) {
    if (element[i].dtype() != c->expected_output_dtype(i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          KernelLabel(c), ": component ", i, " is ",
          DataTypeString(element[i].dtype()), ", the op expects ",
          DataTypeString(c->expected_output_dtype(i))));
    }
    c->set_output(i, std::move(element[i]));
  }
  return absl::OkStatus();
}

DatasetOpKernel::DatasetOpKernel(OpKernelConstruction* c) : OpKernel(c) {
  const char* types_attr =
      c->HasAttr("Toutput_types") ? "Toutput_types" : "output_types";
  absl::Status s = c->GetAttr(types_attr, &dtypes_);
  if (s.ok()) s = c->GetAttr("output_shapes", &shapes_);
  if (s.ok() && shapes_.size() != dtypes_.size()) {
    s = absl::InvalidArgumentError(absl::StrCat(
        NodeLabel(c->def()), ": ", shapes_.size(), " output_shapes for ",
        dtypes_.size(), " ", types_attr));
  }
  c->SetStatus(s);
}

void DatasetOpKernel::Compute(OpKernelContext* c) {
  absl::StatusOr<DatasetPtr> ds = MakeDataset(c);
  OP_REQUIRES_OK(c, ds.status());
  c->set_output(0, DatasetToTensor(*std::move(ds)));
}

absl::StatusOr<int64_t> ScalarInt64Input(OpKernelContext* c, int i,
                                         const std::string& what) {
  const Tensor& t = c->input(i);
  if (t.dims() != 0 || (t.dtype() != DT_INT64 && t.dtype() != DT_INT32)) {
    return absl::InvalidArgumentError(absl::StrCat(
        KernelLabel(c), ": ", what,
        " must be an int64 scalar, got ", DataTypeString(t.dtype()), " ",
        t.shape().DebugString()));
  }
  return t.dtype() == DT_INT64 ? t.scalar<int64_t>() : t.scalar<int32_t>();
}

absl::StatusOr<bool> ScalarBoolInput(OpKernelContext* c, int i,
                                     const std::string& what) {
  const Tensor& t = c->input(i);
  if (t.dims() != 0 || t.dtype() != DT_BOOL) {
    return absl::InvalidArgumentError(absl::StrCat(
        KernelLabel(c), ": ", what,
        " must be a bool scalar, got ", DataTypeString(t.dtype()), " ",
        t.shape().DebugString()));
  }
  return t.scalar<bool>();
}

}  // namespace data
}  // namespace weft
