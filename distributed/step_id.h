// Step ids for the steps a process starts on other tasks (a master's steps,
// a remote function's calls).
#ifndef WEFT_DISTRIBUTED_STEP_ID_H_
#define WEFT_DISTRIBUTED_STEP_ID_H_

#include <cstdint>

namespace weft {

// Random, with the top 7 bits clear as TensorFlow's masters make them (it
// reserves the rest of the range), so ids from many processes do not
// collide in practice. Thread-safe.
int64_t NewStepId();

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_STEP_ID_H_
