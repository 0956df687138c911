#include "ops/registration.h"

namespace weft {

void RegisterStateOps(OpRegistry* r) {}

}  // namespace weft
