#include "ops/registration.h"

namespace weft {

void RegisterControlFlowOps(OpRegistry* r) {}

}  // namespace weft
