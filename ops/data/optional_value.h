// tf.data's optional: a DT_VARIANT scalar holding an element or nothing
// (IteratorGetNextAsOptional at the end of a dataset), with the ops that
// make and read one: OptionalFromValue, OptionalNone, OptionalHasValue,
// OptionalGetValue.
#ifndef WEFT_OPS_DATA_OPTIONAL_VALUE_H_
#define WEFT_OPS_DATA_OPTIONAL_VALUE_H_

#include <optional>
#include <string>
#include <vector>

#include "ops/framework/kernel_registry.h"
#include "runtime/core/tensor.h"

namespace weft {
namespace data {

class OptionalValue : public VariantValue {
 public:
  explicit OptionalValue(std::optional<std::vector<Tensor>> value)
      : value_(std::move(value)) {}
  bool has_value() const { return value_.has_value(); }
  // Requires has_value().
  const std::vector<Tensor>& value() const { return *value_; }
  std::string TypeName() const override {
    return "tensorflow::data::OptionalVariant";
  }
  std::string DebugString() const override {
    return has_value() ? "Optional<value>" : "Optional<none>";
  }

 private:
  const std::optional<std::vector<Tensor>> value_;
};

// A DT_VARIANT scalar holding the optional.
Tensor OptionalTensor(std::optional<std::vector<Tensor>> value);

// OptionalFromValue, OptionalNone, OptionalHasValue, OptionalGetValue.
void RegisterOptionalKernels(KernelRegistry* r);

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_OPTIONAL_VALUE_H_
