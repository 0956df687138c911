#include "ops/cpu/reduction_register.h"
#include "ops/cpu/reduction_widened.h"

namespace weft {

void RegisterReductionSmallIntKernels(KernelRegistry* r) {
  RegisterIntegerReductions<int8_t>(r);
  RegisterIntegerReductions<int16_t>(r);
  RegisterIntegerReductions<uint8_t>(r);
  RegisterIntegerReductions<uint16_t>(r);
  RegisterIntegerReductions<uint32_t>(r);
  RegisterIntegerReductions<uint64_t>(r);
}

}  // namespace weft
