// tf.data's model, as the kernels in ops/data/ build it.
//
// A dataset is an immutable description of a sequence of elements (each a
// tuple of tensors with the dataset's output dtypes and shapes). It travels
// between kernels as a DT_VARIANT scalar holding a DatasetBase, so the
// graph's dataset ops run once, when an iterator is made from their result,
// not once per element. An iterator is the mutable reading position of one
// pass over a dataset; iterators hold their dataset (and the datasets hold
// their inputs and functions), so a pipeline stays alive for as long as
// something reads it.
//
//   DatasetPtr ds = ...;                        // from an input, or made
//   WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, ds->MakeIterator());
//   std::vector<Tensor> element;
//   bool end = false;
//   while (true) {
//     WEFT_RETURN_IF_ERROR(it->GetNext(&ctx, &element, &end));
//     if (end) break;
//     ...
//   }
//
// Errors end nothing: a GetNext that fails (a map function's error, a bad
// record) reports it and the caller may call again, as TensorFlow's
// iterators allow; end of sequence is not an error (the iterator op turns
// it into OUT_OF_RANGE, "End of sequence").
//
// Thread safety: a DatasetBase is immutable and may be shared; MakeIterator
// is thread-safe. An IteratorBase is used by one caller at a time (the
// iterator resource, ops/data/iterator_resource.h, serialises GetNext); an
// iterator that reads ahead on threads of its own (prefetch) guards its
// state itself.
#ifndef WEFT_OPS_DATA_DATASET_H_
#define WEFT_OPS_DATA_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_shape.h"
#include "runtime/core/types.h"

namespace weft {
namespace data {

// Cardinality() values that are not counts (TensorFlow's).
inline constexpr int64_t kInfiniteCardinality = -1;
inline constexpr int64_t kUnknownCardinality = -2;

// What GetNext may use beyond its iterator's own state.
struct IteratorContext {
  // The reading step's; a long wait (prefetch) ends CANCELLED when it is
  // cancelled. May be null.
  CancellationManager* cancellation = nullptr;
};

class IteratorBase {
 public:
  virtual ~IteratorBase() = default;
  // The next element into *out (replacing what it held), or
  // *end_of_sequence = true and *out empty. After the end, further calls
  // keep reporting the end.
  virtual absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                               bool* end_of_sequence) = 0;
};

class DatasetBase : public VariantValue,
                    public std::enable_shared_from_this<DatasetBase> {
 public:
  DatasetBase(std::string op, DataTypeVector dtypes,
              std::vector<PartialShape> shapes)
      : op_(std::move(op)), dtypes_(std::move(dtypes)), shapes_(std::move(shapes)) {}

  // The op that made it ("MapDataset"), for messages.
  const std::string& op() const { return op_; }
  const DataTypeVector& output_dtypes() const { return dtypes_; }
  const std::vector<PartialShape>& output_shapes() const { return shapes_; }

  // A new pass from the first element.
  virtual absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const = 0;
  // The number of elements, kInfiniteCardinality or kUnknownCardinality.
  virtual int64_t Cardinality() const { return kUnknownCardinality; }

  std::string TypeName() const override {
    return "tensorflow::DatasetVariantWrapper";
  }
  std::string DebugString() const override { return op_; }

 protected:
  // This dataset as its own type, for iterators to hold.
  template <typename D>
  std::shared_ptr<const D> self() const {
    return std::static_pointer_cast<const D>(shared_from_this());
  }

 private:
  const std::string op_;
  const DataTypeVector dtypes_;
  const std::vector<PartialShape> shapes_;
};
using DatasetPtr = std::shared_ptr<const DatasetBase>;

// "node 'name' (Op)" of the running kernel, for messages.
std::string KernelLabel(OpKernelContext* c);

// A DT_VARIANT scalar holding `dataset`.
Tensor DatasetToTensor(DatasetPtr dataset);
// The dataset a one-element variant tensor holds; null when `t` holds none.
DatasetPtr DatasetFromTensor(const Tensor& t);
// The dataset held by input `i`; INVALID_ARGUMENT naming the kernel's node
// and the input when it holds none.
absl::StatusOr<DatasetPtr> DatasetFromInput(OpKernelContext* c, int i);

// INVALID_ARGUMENT naming `what` unless `element` has `dtypes` and shapes
// compatible with `shapes` (what an iterator promised its readers).
absl::Status CheckElement(const std::vector<Tensor>& element,
                          const DataTypeVector& dtypes,
                          const std::vector<PartialShape>& shapes,
                          const std::string& what);

// Sets the kernel's outputs to `element`'s components; INVALID_ARGUMENT
// naming the kernel when their number or dtypes differ from its outputs'.
absl::Status SetElementOutputs(OpKernelContext* c, std::vector<Tensor> element);

// Base of the kernels that make a dataset: reads the output dtypes
// ("output_types", or "Toutput_types" where TensorFlow names it so) and
// "output_shapes" attrs, and outputs what MakeDataset returns.
class DatasetOpKernel : public OpKernel {
 public:
  explicit DatasetOpKernel(OpKernelConstruction* c);
  void Compute(OpKernelContext* c) final;

 protected:
  virtual absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) = 0;
  const DataTypeVector& output_dtypes() const { return dtypes_; }
  const std::vector<PartialShape>& output_shapes() const { return shapes_; }

 private:
  DataTypeVector dtypes_;
  std::vector<PartialShape> shapes_;
};

// Input `i` as a scalar int64 (or bool); INVALID_ARGUMENT naming `what`.
absl::StatusOr<int64_t> ScalarInt64Input(OpKernelContext* c, int i,
                                         const std::string& what);
absl::StatusOr<bool> ScalarBoolInput(OpKernelContext* c, int i,
                                     const std::string& what);

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_DATASET_H_
