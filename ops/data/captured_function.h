// A dataset's function (MapDataset's `f`, FilterDataset's `predicate`, a
// flat_map's or interleave's `f`) together with the tensors it captures
// (the op's `other_arguments`), instantiated once, when the dataset is made,
// on the kernel's device (ops/framework/function_runner.h). Each call passes
// an element's components followed by the captured tensors, as TensorFlow
// does.
//
// Thread safety: immutable; Run may be called from many threads at once.
#ifndef WEFT_OPS_DATA_CAPTURED_FUNCTION_H_
#define WEFT_OPS_DATA_CAPTURED_FUNCTION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/data/dataset.h"
#include "ops/framework/function_runner.h"
#include "proto/attr_value.pb.h"

namespace weft {
namespace data {

// The `attr` func attr of a kernel's node; INVALID_ARGUMENT naming it.
absl::StatusOr<tensorflow::NameAttrList> FuncAttr(OpKernelConstruction* c,
                                                  const std::string& attr);

class CapturedFunction {
 public:
  // Instantiates `fn` with the kernel's inputs [first_captured,
  // end_captured) as its captured arguments (-1: to the last input). FAILED_PRECONDITION when the graph gives its kernels
  // no function library; otherwise what instantiation reports.
  static absl::StatusOr<std::shared_ptr<const CapturedFunction>> Create(
      OpKernelContext* c, const tensorflow::NameAttrList& fn,
      int first_captured, int end_captured = -1);

  // Calls the function on `args` followed by the captured tensors.
  absl::Status Run(IteratorContext* ctx, std::vector<Tensor> args,
                   std::vector<Tensor>* out) const;
  // For a predicate: its one result as a bool scalar; INVALID_ARGUMENT
  // naming the function otherwise.
  absl::StatusOr<bool> RunPredicate(IteratorContext* ctx,
                                    std::vector<Tensor> args) const;
  // For a function returning a dataset (a one-shot iterator's factory):
  // that dataset; INVALID_ARGUMENT naming `where` unless it returns one.
  absl::StatusOr<DatasetPtr> RunToDataset(IteratorContext* ctx,
                                          std::vector<Tensor> args,
                                          const std::string& where) const;
  // For a function returning a dataset (flat_map's, interleave's): a new
  // iterator over it, as RunToDataset.
  absl::StatusOr<std::unique_ptr<IteratorBase>> RunToIterator(
      IteratorContext* ctx, std::vector<Tensor> args, const std::string& where) const;
  const std::string& name() const { return fn_->name(); }
  const DataTypeVector& ret_types() const { return fn_->ret_types(); }

 private:
  CapturedFunction(std::shared_ptr<const InstantiatedFunction> fn,
                   std::vector<Tensor> captured)
      : fn_(std::move(fn)), captured_(std::move(captured)) {}

  const std::shared_ptr<const InstantiatedFunction> fn_;
  const std::vector<Tensor> captured_;
};

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_CAPTURED_FUNCTION_H_
