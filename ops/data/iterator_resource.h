// The resource behind an iterator handle (IteratorV2, OneShotIterator,
// AnonymousIteratorV2/V3): the element signature it promises and the pass
// over a dataset it is currently reading, replaced by each MakeIterator.
//
// Thread safety: one mutex serialises GetNext and SetDataset, so two steps
// reading the same iterator get distinct elements, in order, as in
// TensorFlow. A GetNext that waits (a prefetch's reader thread) holds it.
#ifndef WEFT_OPS_DATA_ITERATOR_RESOURCE_H_
#define WEFT_OPS_DATA_ITERATOR_RESOURCE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "ops/data/dataset.h"
#include "runtime/core/resource_mgr.h"

namespace weft {
namespace data {

class IteratorResource : public ResourceBase {
 public:
  IteratorResource(DataTypeVector dtypes, std::vector<PartialShape> shapes)
      : dtypes_(std::move(dtypes)), shapes_(std::move(shapes)) {}

  const DataTypeVector& output_dtypes() const { return dtypes_; }
  const std::vector<PartialShape>& output_shapes() const { return shapes_; }

  // Starts a new pass over `dataset`. INVALID_ARGUMENT when its element
  // signature differs from this iterator's (TensorFlow's check).
  absl::Status SetDataset(DatasetPtr dataset);
  // True once SetDataset has succeeded.
  bool initialized() const;
  // The next element, checked against the signature. FAILED_PRECONDITION
  // (TensorFlow's wording) before the first SetDataset.
  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                       bool* end_of_sequence);

  std::string DebugString() const override { return "Iterator resource"; }

 private:
  const DataTypeVector dtypes_;
  const std::vector<PartialShape> shapes_;
  mutable absl::Mutex mu_;
  DatasetPtr dataset_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<IteratorBase> iterator_ ABSL_GUARDED_BY(mu_);
};

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_ITERATOR_RESOURCE_H_
