// The array kernels are split by theme into ops/cpu/array_*_kernels.cc; each
// file registers its own with one of these functions, and
// RegisterArrayKernels (array_kernels.cc) calls them all.
#ifndef WEFT_OPS_CPU_ARRAY_KERNELS_H_
#define WEFT_OPS_CPU_ARRAY_KERNELS_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

// Reshape, Shape, ShapeN, Size, Rank, ExpandDims, Squeeze, BroadcastGradientArgs.
void RegisterArrayShapeKernels(KernelRegistry* r);
// Fill, ZerosLike, OnesLike, Range, OneHot.
void RegisterArrayFillKernels(KernelRegistry* r);
// Transpose.
void RegisterArrayTransposeKernels(KernelRegistry* r);
// ConcatV2, Pack, Unpack, Split, SplitV.
void RegisterArrayConcatKernels(KernelRegistry* r);
// Tile, BroadcastTo, Pad, PadV2.
void RegisterArrayTileKernels(KernelRegistry* r);
// Slice, StridedSlice, StridedSliceGrad.
void RegisterArraySliceKernels(KernelRegistry* r);
// GatherV2, Select, SelectV2.
void RegisterArrayGatherKernels(KernelRegistry* r);
// ReverseV2 (array_reverse_kernels.cc).
void RegisterArrayReverseKernels(KernelRegistry* r);

}  // namespace weft

#endif  // WEFT_OPS_CPU_ARRAY_KERNELS_H_
