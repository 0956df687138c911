#include "ops/data/captured_function.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {

absl::StatusOr<tensorflow::NameAttrList> FuncAttr(OpKernelConstruction* c,
                                                  const std::string& attr) {
  auto it = c->def().attr().find(attr);
  if (it == c->def().attr().end() || !it->second.has_func() ||
      it->second.func().name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        NodeLabel(c->def()), ": attr '", attr, "' must name a function"));
  }
  return it->second.func();
}

absl::StatusOr<std::shared_ptr<const CapturedFunction>> CapturedFunction::Create(
    OpKernelContext* c, const tensorflow::NameAttrList& fn, int first_captured,
    int end_captured) {
  if (c->functions() == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        KernelLabel(c), " calls function ", fn.name(),
        " but its graph has no function library"));
  }
  absl::StatusOr<std::shared_ptr<const InstantiatedFunction>> f =
      c->functions()->Instantiate(fn, c->device(), c->resource_manager());
  if (!f.ok()) {
    return absl::Status(f.status().code(), absl::StrCat(KernelLabel(c), ": ",
                                                        f.status().message()));
  }
  std::vector<Tensor> captured;
  if (end_captured < 0) end_captured = c->num_inputs();
  for (int i = first_captured; i < end_captured; ++i) {
    captured.push_back(c->input(i));
  }
  return std::shared_ptr<const CapturedFunction>(
      new CapturedFunction(*std::move(f), std::move(captured)));
}

absl::Status CapturedFunction::Run(IteratorContext* ctx, std::vector<Tensor> args,
                                   std::vector<Tensor>* out) const {
  args.insert(args.end(), captured_.begin(), captured_.end());
  return fn_->Run(std::move(args), out, ctx->cancellation);
}

absl::StatusOr<bool> CapturedFunction::RunPredicate(
    IteratorContext* ctx, std::vector<Tensor> args) const {
  std::vector<Tensor> out;
  absl::Status s = Run(ctx, std::move(args), &out);
  if (!s.ok()) return s;
  if (out.size() != 1 || out[0].dtype() != DT_BOOL || out[0].NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "predicate ", name(), " must return a scalar bool, got ", out.size(),
        " results", out.empty() ? "" : absl::StrCat(", the first ",
                                                      DataTypeString(out[0].dtype()), " ",
                                                      out[0].shape().DebugString())));
  }
  return out[0].scalar<bool>();
}

absl::StatusOr<DatasetPtr> CapturedFunction::RunToDataset(
    IteratorContext* ctx, std::vector<Tensor> args, const std::string& where) const {
  std::vector<Tensor> result;
  WEFT_RETURN_IF_ERROR(WithContext(Run(ctx, std::move(args), &result), where));
  DatasetPtr ds = result.size() == 1 ? DatasetFromTensor(result[0]) : nullptr;
  if (ds == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(where, " must return one dataset"));
  }
  return ds;
}

absl::StatusOr<std::unique_ptr<IteratorBase>> CapturedFunction::RunToIterator(
    IteratorContext* ctx, std::vector<Tensor> args, const std::string& where) const {
  WEFT_ASSIGN_OR_RETURN(DatasetPtr ds, RunToDataset(ctx, std::move(args), where));
  return ds->MakeIterator();
}

}  // namespace data
}  // namespace weft
