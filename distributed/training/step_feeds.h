// What each training step feeds: the interface the trainers read their
// data through. tools/step_feeds.h makes them from the CLI's flags
// (--data, --input); a test or another program may bring its own.
//
// A StepFeeds is used from one thread. Errors name the flag, file or input.
#ifndef WEFT_DISTRIBUTED_TRAINING_STEP_FEEDS_H_
#define WEFT_DISTRIBUTED_TRAINING_STEP_FEEDS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/core/tensor.h"

namespace weft {

class StepFeeds {
 public:
  virtual ~StepFeeds() = default;
  // Examples one step of this worker trains on.
  virtual int64_t batch() const = 0;
  // "synthetic data (2000 examples)", for the first progress line.
  virtual std::string Describe() const = 0;
  // The feeds of the next step.
  virtual absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> Next() = 0;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_STEP_FEEDS_H_
