#include "ops/registration.h"

namespace weft {

void RegisterStateKernels(KernelRegistry* r) {}

}  // namespace weft
