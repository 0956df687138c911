#include "ops/data/data_kernels.h"
#include "ops/registration.h"

namespace weft {

void RegisterDatasetKernels(KernelRegistry* r) {
  data::RegisterIteratorKernels(r);
  data::RegisterSourceDatasetKernels(r);
  data::RegisterMapDatasetKernels(r);
  data::RegisterBatchDatasetKernels(r);
  data::RegisterSequenceDatasetKernels(r);
  data::RegisterScanDatasetKernels(r);
  data::RegisterFileDatasetKernels(r);
  data::RegisterSeedGeneratorKernels(r);
  data::RegisterShuffleDatasetKernels(r);
  data::RegisterPrefetchDatasetKernels(r);
  data::RegisterPaddedBatchDatasetKernels(r);
  data::RegisterShardCacheDatasetKernels(r);
  data::RegisterInterleaveDatasetKernels(r);
}

}  // namespace weft
