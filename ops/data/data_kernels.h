// Registration of the tf.data kernels, one function per file of ops/data/;
// RegisterDatasetKernels (ops/registration.h) calls them all.
#ifndef WEFT_OPS_DATA_DATA_KERNELS_H_
#define WEFT_OPS_DATA_DATA_KERNELS_H_

#include "ops/framework/kernel_registry.h"

namespace weft {
namespace data {

void RegisterIteratorKernels(KernelRegistry* r);       // iterator_ops.cc
void RegisterSourceDatasetKernels(KernelRegistry* r);  // source_datasets.cc
void RegisterMapDatasetKernels(KernelRegistry* r);     // map_datasets.cc
void RegisterBatchDatasetKernels(KernelRegistry* r);   // batch_datasets.cc
void RegisterSequenceDatasetKernels(KernelRegistry* r);  // sequence_datasets.cc
void RegisterScanDatasetKernels(KernelRegistry* r);     // scan_datasets.cc
void RegisterFileDatasetKernels(KernelRegistry* r);  // file_datasets.cc
void RegisterSeedGeneratorKernels(KernelRegistry* r);    // seed_generator.cc
void RegisterShuffleDatasetKernels(KernelRegistry* r);   // shuffle_datasets.cc
void RegisterPrefetchDatasetKernels(KernelRegistry* r);  // prefetch_dataset.cc
void RegisterPaddedBatchDatasetKernels(KernelRegistry* r);  // padded_batch_dataset.cc
void RegisterShardCacheDatasetKernels(KernelRegistry* r);  // shard_cache_datasets.cc
void RegisterInterleaveDatasetKernels(KernelRegistry* r);  // interleave_datasets.cc

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_DATA_KERNELS_H_
