// CallFrame: how a step's feeds reach `_Arg` nodes and how `_Retval` nodes
// hand back fetches. The session prunes a graph, replaces each fed tensor by
// an `_Arg` (attr index) and each fetch by a `_Retval` (attr index), then runs
// it with a frame holding the feed values and collecting the results.
#ifndef WEFT_OPS_FRAMEWORK_CALL_FRAME_H_
#define WEFT_OPS_FRAMEWORK_CALL_FRAME_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "runtime/core/tensor.h"

namespace weft {

class CallFrame {
 public:
  virtual ~CallFrame() = default;
  virtual absl::Status GetArg(int index, Tensor* value) const = 0;
  virtual absl::Status SetRetval(int index, const Tensor& value) = 0;
};

// A frame over vectors. Thread-safe: _Retval kernels may run concurrently.
class SimpleCallFrame : public CallFrame {
 public:
  SimpleCallFrame(std::vector<Tensor> args, int num_retvals)
      : args_(std::move(args)), retvals_(num_retvals), set_(num_retvals) {}

  absl::Status GetArg(int index, Tensor* value) const override;
  absl::Status SetRetval(int index, const Tensor& value) override;
  // FAILED_PRECONDITION naming the first retval never set.
  absl::Status TakeRetvals(std::vector<Tensor>* out);

 private:
  const std::vector<Tensor> args_;
  absl::Mutex mu_;
  std::vector<Tensor> retvals_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> set_ ABSL_GUARDED_BY(mu_);
};

}  // namespace weft

#endif  // WEFT_OPS_FRAMEWORK_CALL_FRAME_H_
