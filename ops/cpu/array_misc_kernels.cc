// Kernels of ops/array_misc_ops.cc that only place bytes: Empty (a new
// tensor, zeroed when `init`), EnsureShape (the input itself, after its
// shape is checked against the attr) and Bitcast (the input's bytes
// reread as another dtype: the same shape when the sizes agree, else a
// last dim gained or lost). RegisterArrayMiscKernels also registers the
// family's other kernel files (each named for its job), declared below (declared here, not in a
// header, so that the kernels library's headers stay as they were).
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

class EmptyOp : public OpKernel {
 public:
  explicit EmptyOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("init", &init_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& dims = c->input(0);
    OP_REQUIRES(c, dims.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "shape must be a vector of int32, got shape ",
                    dims.shape().DebugString())));
    std::vector<int64_t> sizes;
    OP_REQUIRES_OK(c, ReadIntVector(dims, "shape", &sizes));
    TensorShape shape;
    OP_REQUIRES_OK(c, ShapeFromDims(sizes, "shape", &shape));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (!init_ || out->NumElements() == 0) return;
    VisitStorage(out->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill(out->data<T>(), out->data<T>() + out->NumElements(), T{});
    });
  }

 private:
  bool init_ = false;
};

class EnsureShapeOp : public OpKernel {
 public:
  explicit EnsureShapeOp(OpKernelConstruction* c)
      : OpKernel(c), input_name_(c->def().input_size() > 0 ? c->def().input(0) : "") {
    c->SetStatus(c->GetAttr("shape", &expected_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES(c, expected_.IsCompatibleWith(in.shape()),
                absl::InvalidArgumentError(absl::StrCat(
                    "Shape of tensor ", input_name_, " ", in.shape().DebugString(),
                    " is not compatible with expected shape ",
                    expected_.DebugString(), " (node ", name(), ").")));
    c->set_output(0, in);
  }

 private:
  PartialShape expected_;
  std::string input_name_;
};

class BitcastOp : public OpKernel {
 public:
  explicit BitcastOp(OpKernelConstruction* c) : OpKernel(c) {
    DataType to = DT_INVALID;
    c->SetStatus(c->GetAttr("type", &to));
    in_size_ = DataTypeSize(c->input_types()[0]);
    out_size_ = DataTypeSize(to);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    TensorShape shape = in.shape();
    if (in_size_ > out_size_) {
      shape.AddDim(in_size_ / out_size_);
    } else if (in_size_ < out_size_) {
      OP_REQUIRES(c, in.dims() > 0 &&
                         in.dim_size(in.dims() - 1) == out_size_ / in_size_,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Cannot bitcast from ", static_cast<int>(in.dtype()), " to ",
                      static_cast<int>(c->expected_output_dtype(0)), " (",
                      DataTypeString(in.dtype()), " to ",
                      DataTypeString(c->expected_output_dtype(0)), "): shape ",
                      in.shape().DebugString(), " does not end in ",
                      out_size_ / in_size_)));
      shape.RemoveDim(shape.dims() - 1);
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (in.TotalBytes() > 0) std::memcpy(out->raw_data(), in.raw_data(), in.TotalBytes());
  }

 private:
  int64_t in_size_ = 0, out_size_ = 0;
};

// The numeric dtypes Weft holds that Bitcast accepts.
DataTypeVector BitcastTypes() {
  return {DT_BFLOAT16, DT_HALF,   DT_FLOAT,  DT_DOUBLE, DT_INT64,
          DT_INT32,    DT_UINT8,  DT_UINT16, DT_UINT32, DT_UINT64,
          DT_INT8,     DT_INT16};
}

}  // namespace

void RegisterSequenceKernels(KernelRegistry* r);       // LinSpace, UnravelIndex
void RegisterSearchSortedKernels(KernelRegistry* r);   // LowerBound, UpperBound
void RegisterDataFormatKernels(KernelRegistry* r);     // DataFormat*
void RegisterBincountKernels(KernelRegistry* r);       // *Bincount
void RegisterPartitionKernels(KernelRegistry* r);      // DynamicPartition, UniqueV2
void RegisterSelectKernels(KernelRegistry* r);         // InTopKV2, NthElement
void RegisterLogsumexpScanKernels(KernelRegistry* r);  // CumulativeLogsumexp
// (Betainc lives with the special functions, math_special_kernels.cc;
// MaxPoolV2 with the pools, pool_kernels.cc; BatchMatMulV3 with
// BatchMatMulV2, math_batch_matmul.cc.)

void RegisterArrayMiscKernels(KernelRegistry* r) {
  r->Register(KernelDef("Empty", kDeviceTypeCpu).TypeConstraint("dtype", PodAndStringTypes()),
              MakeKernel<EmptyOp>);
  r->Register(KernelDef("EnsureShape", kDeviceTypeCpu), MakeKernel<EnsureShapeOp>);
  r->Register(KernelDef("Bitcast", kDeviceTypeCpu)
                  .TypeConstraint("T", BitcastTypes())
                  .TypeConstraint("type", BitcastTypes()),
              MakeKernel<BitcastOp>);
  RegisterSequenceKernels(r);
  RegisterSearchSortedKernels(r);
  RegisterDataFormatKernels(r);
  RegisterBincountKernels(r);
  RegisterPartitionKernels(r);
  RegisterSelectKernels(r);
  RegisterLogsumexpScanKernels(r);
}

}  // namespace weft
