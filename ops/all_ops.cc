#include "ops/framework/op_registry.h"
#include "ops/registration.h"

namespace weft {

const OpRegistry& GlobalOpRegistry() {
  static const OpRegistry* const registry = [] {
    auto* r = new OpRegistry;
    RegisterArrayOps(r);
    RegisterMathOps(r);
    RegisterNnOps(r);
    RegisterStateOps(r);
    RegisterControlFlowOps(r);
    RegisterRandomOps(r);
    RegisterReaderOps(r);
    RegisterSummaryOps(r);
    RegisterConvOps(r);
    RegisterTrainingOps(r);
    RegisterSendRecvOps(r);
    RegisterNnActivationOps(r);
    RegisterMathExtraOps(r);
    RegisterArrayGradOps(r);
    RegisterIoOps(r);
    RegisterDatasetOps(r);
    RegisterFileDataOps(r);
    RegisterDatasetTransformOps(r);
    RegisterDataFlowOps(r);
    RegisterListOps(r);
    RegisterFunctionalOps(r);
    RegisterLoggingOps(r);
    RegisterCollectiveOps(r);
    RegisterScatterNdOps(r);
    RegisterEinsumOps(r);
    RegisterArrayLayoutOps(r);
    RegisterArrayIndexOps(r);
    RegisterBatchNormOps(r);
    RegisterImageResizeOps(r);
    RegisterImageOps(r);
    RegisterMathCwiseOps(r);
    RegisterLinalgOps(r);
    RegisterNn3dOps(r);
    RegisterArrayMiscOps(r);
    RegisterLookupOps(r);
    RegisterStringOps(r);
    RegisterRaggedOps(r);
    RegisterSetOps(r);
    RegisterImageCodecOps(r);
    RegisterComplexOps(r);
    return r;
  }();
  return *registry;
}

}  // namespace weft
