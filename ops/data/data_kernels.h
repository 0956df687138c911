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

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_DATA_KERNELS_H_
