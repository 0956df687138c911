// The op and kernel families. Each function registers one family; the
// global registries call them all, in this order (ops/all_ops.cc,
// ops/all_kernels.cc). Adding a family = adding a line here and there.
#ifndef WEFT_OPS_REGISTRATION_H_
#define WEFT_OPS_REGISTRATION_H_

#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"

namespace weft {

// Op definitions (OpDef + shape function), ops/<family>_ops.cc.
void RegisterArrayOps(OpRegistry* r);
void RegisterMathOps(OpRegistry* r);
void RegisterNnOps(OpRegistry* r);
void RegisterStateOps(OpRegistry* r);
void RegisterControlFlowOps(OpRegistry* r);
void RegisterRandomOps(OpRegistry* r);
void RegisterConvOps(OpRegistry* r);
void RegisterTrainingOps(OpRegistry* r);
void RegisterSendRecvOps(OpRegistry* r);
void RegisterNnActivationOps(OpRegistry* r);  // nn_activation_ops.cc
void RegisterMathExtraOps(OpRegistry* r);      // math_extra_ops.cc
void RegisterArrayGradOps(OpRegistry* r);      // array_grad_ops.cc
void RegisterIoOps(OpRegistry* r);             // io_ops.cc: checkpoints
void RegisterDatasetOps(OpRegistry* r);        // dataset_ops.cc: tf.data
void RegisterFileDataOps(OpRegistry* r);       // file_data_ops.cc: file datasets, parsing
void RegisterDatasetTransformOps(OpRegistry* r);  // dataset_transform_ops.cc
void RegisterDataFlowOps(OpRegistry* r);       // data_flow_ops.cc
void RegisterListOps(OpRegistry* r);           // list_ops.cc: TensorList, TensorArrayV3
void RegisterFunctionalOps(OpRegistry* r);     // functional_ops.cc: calls, If, While
void RegisterLoggingOps(OpRegistry* r);        // logging_ops.cc: Assert
void RegisterCollectiveOps(OpRegistry* r);     // collective_ops.cc: all-reduce
void RegisterScatterNdOps(OpRegistry* r);      // scatter_nd_ops.cc: GatherNd, ScatterNd, ...
void RegisterEinsumOps(OpRegistry* r);         // einsum_ops.cc
void RegisterArrayLayoutOps(OpRegistry* r);    // array_layout_ops.cc: SpaceToBatchND, MirrorPad, ...
void RegisterArrayIndexOps(OpRegistry* r);     // array_index_ops.cc: TopKV2, Roll, CheckNumerics, ...
// Called by RegisterArrayIndexOps (matrix_diag_ops.cc: MatrixDiagV3, ...).
void RegisterMatrixDiagOps(OpRegistry* r);
void RegisterBatchNormOps(OpRegistry* r);      // batch_norm_ops.cc: FusedBatchNorm*
void RegisterImageResizeOps(OpRegistry* r);    // image_resize_ops.cc: Resize*
void RegisterImageOps(OpRegistry* r);          // image_ops.cc: colour, crops, NMS, patches, ...
void RegisterMathCwiseOps(OpRegistry* r);      // math_cwise_ops.cc: Sin, Erf, BitwiseAnd, ...
void RegisterLinalgOps(OpRegistry* r);         // linalg_ops.cc: MatrixInverse, Qr, Svd, ...
void RegisterNn3dOps(OpRegistry* r);           // nn3d_ops.cc: Conv3D, MaxPool3D, LRN, MaxPoolWithArgmax, ...
void RegisterLookupOps(OpRegistry* r);         // lookup_ops.cc: HashTableV2, LookupTableFindV2, ...
void RegisterReaderOps(OpRegistry* r);         // reader_ops.cc: TFRecordReaderV2, ReaderReadV2, ...
void RegisterSummaryOps(OpRegistry* r);        // summary_ops.cc: ScalarSummary
void RegisterArrayMiscOps(OpRegistry* r);      // array_misc_ops.cc: Bitcast, LinSpace, Bincount, ...
void RegisterStringOps(OpRegistry* r);         // string_ops.cc: AsString, ReduceJoin, regexes, hashes, ...
void RegisterSetOps(OpRegistry* r);            // set_ops.cc: DenseToDenseSetOperation, SetSize, ...
void RegisterImageCodecOps(OpRegistry* r);     // image_codec_ops.cc: DecodePng, EncodeJpeg, ...
void RegisterComplexOps(OpRegistry* r);        // complex_ops.cc: Complex, Real, Conj, FFT, ...
void RegisterRaggedOps(OpRegistry* r);         // ragged_ops.cc: RaggedTensorToTensor, RaggedBincount, ...

// CPU kernels, ops/cpu/*.cc.
void RegisterArrayKernels(KernelRegistry* r);
void RegisterCwiseKernels(KernelRegistry* r);
void RegisterReductionKernels(KernelRegistry* r);
void RegisterMatMulKernels(KernelRegistry* r);
void RegisterNnKernels(KernelRegistry* r);
void RegisterStateKernels(KernelRegistry* r);
void RegisterControlFlowKernels(KernelRegistry* r);
// Called by RegisterControlFlowKernels (ops/cpu/stack_kernels.cc).
void RegisterStackKernels(KernelRegistry* r);
// Called by RegisterControlFlowKernels (ops/cpu/assert_kernel.cc).
void RegisterAssertKernel(KernelRegistry* r);
void RegisterRandomKernels(KernelRegistry* r);
// Called by RegisterRandomKernels (ops/cpu/stateless_random_kernels.cc).
void RegisterStatelessRandomKernels(KernelRegistry* r);
// Called by RegisterRandomKernels (ops/cpu/multinomial_kernels.cc).
void RegisterMultinomialKernels(KernelRegistry* r);
void RegisterConvKernels(KernelRegistry* r);
void RegisterTrainingKernels(KernelRegistry* r);
void RegisterSendRecvKernels(KernelRegistry* r);
void RegisterNnActivationKernels(KernelRegistry* r);
void RegisterMathExtraKernels(KernelRegistry* r);
void RegisterArrayGradKernels(KernelRegistry* r);
void RegisterIoKernels(KernelRegistry* r);  // cpu/io_kernels.cc
void RegisterDatasetKernels(KernelRegistry* r);  // data/*.cc: tf.data
void RegisterParseKernels(KernelRegistry* r);    // cpu/parse_example_kernels.cc
// Called by RegisterParseKernels (ops/cpu/decode_raw_kernel.cc).
void RegisterDecodeRawKernel(KernelRegistry* r);
void RegisterAccumulatorKernels(KernelRegistry* r);  // cpu/accumulator_kernels.cc
void RegisterQueueKernels(KernelRegistry* r);        // cpu/queue_kernels.cc
void RegisterStageKernels(KernelRegistry* r);        // cpu/stage_kernels.cc
void RegisterTensorListKernels(KernelRegistry* r);   // cpu/tensor_list_kernels.cc
void RegisterTensorArrayKernels(KernelRegistry* r);  // cpu/tensor_array_kernels.cc
void RegisterCollectiveKernels(KernelRegistry* r);   // cpu/collective_kernels.cc
void RegisterScatterNdKernels(KernelRegistry* r);    // cpu/scatter_nd_kernels.cc
void RegisterEinsumKernels(KernelRegistry* r);       // cpu/einsum_kernels.cc
void RegisterArrayIndexKernels(KernelRegistry* r);   // cpu/array_index_kernels.cc
void RegisterBatchNormKernels(KernelRegistry* r);    // cpu/batch_norm_kernels.cc
void RegisterImageResizeKernels(KernelRegistry* r);  // cpu/image_resize_kernels.cc
void RegisterImageColorKernels(KernelRegistry* r);   // cpu/image_color_kernels.cc
void RegisterRaggedKernels(KernelRegistry* r);       // cpu/ragged_to_tensor_kernels.cc
// Called by RegisterRaggedKernels (ops/cpu/ragged_bincount_kernels.cc).
void RegisterRaggedBincountKernels(KernelRegistry* r);
// Called by RegisterRaggedKernels (ops/cpu/ragged_range_kernels.cc:
// RaggedRange, RaggedTensorToSparse, RaggedGather).
void RegisterRaggedRangeKernels(KernelRegistry* r);
// Called by RegisterRaggedKernels (ops/cpu/ragged_fill_kernels.cc:
// RaggedFillEmptyRows, RaggedFillEmptyRowsGrad).
void RegisterRaggedFillKernels(KernelRegistry* r);
void RegisterImageDrawKernels(KernelRegistry* r);    // cpu/image_draw_kernels.cc
void RegisterImageNmsKernels(KernelRegistry* r);     // cpu/image_nms_kernels.cc
void RegisterImageCropKernels(KernelRegistry* r);    // cpu/image_crop_kernels.cc
void RegisterImageResampleKernels(KernelRegistry* r);  // cpu/image_resample_kernels.cc
void RegisterImageScaleKernels(KernelRegistry* r);   // cpu/image_scale_kernels.cc
void RegisterImagePatchesKernels(KernelRegistry* r);  // cpu/image_patches_kernels.cc
void RegisterMathCwiseKernels(KernelRegistry* r);    // cpu/math_cwise_kernels.cc
void RegisterLinalgKernels(KernelRegistry* r);       // cpu/linalg_kernels.cc
void RegisterNn3dKernels(KernelRegistry* r);         // cpu/conv3d_kernels.cc and the files it names
void RegisterLookupKernels(KernelRegistry* r);       // cpu/lookup_kernels.cc
void RegisterReaderKernels(KernelRegistry* r);       // cpu/reader_kernels.cc
void RegisterFileIoKernels(KernelRegistry* r);       // cpu/file_io_kernels.cc: ReadFile, WriteFile
void RegisterSummaryKernels(KernelRegistry* r);      // cpu/summary_kernels.cc
void RegisterArrayMiscKernels(KernelRegistry* r);    // cpu/array_misc_kernels.cc and the files it names
void RegisterStringKernels(KernelRegistry* r);       // cpu/string_*_kernels.cc
void RegisterRemoteCallKernel(KernelRegistry* r);    // cpu/remote_call_kernel.cc
void RegisterSetKernels(KernelRegistry* r);          // cpu/set_kernels.cc
void RegisterImageCodecKernels(KernelRegistry* r);   // cpu/image_codec_*_kernels.cc: PNG, JPEG, BMP
void RegisterFusedPadConvKernels(KernelRegistry* r);  // cpu/fused_pad_conv_kernels.cc
void RegisterComplexKernels(KernelRegistry* r);      // cpu/complex_kernels.cc: Complex, Real, Conj, ...
void RegisterFftKernels(KernelRegistry* r);          // cpu/fft_kernels.cc

}  // namespace weft

#endif  // WEFT_OPS_REGISTRATION_H_
