#include "ops/framework/op_kernel.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include "absl/strings/str_cat.h"

namespace weft {

OpKernel::OpKernel(OpKernelConstruction* c)
    : name_(c->def().name()),
      type_(c->def().op()),
      input_types_(c->input_types()),
      output_types_(c->output_types()) {}

OpKernel::~OpKernel() = default;

void OpKernel::ComputeAsync(OpKernelContext* c, std::function<void()> done) {
  Compute(c);
  done();
}

void OpKernelContext::SnapshotRef(TensorEntry* e) {
  absl::ReaderMutexLock lock(e->ref_mu);
  e->value = *e->ref;
}

const Eigen::ThreadPoolDevice& OpKernelContext::eigen_cpu_device() const {
  return p_.device->intra_op_pool()->eigen_device();
}

absl::Status OpKernelContext::allocate_output(int i, const TensorShape& shape,
                                              Tensor** out) {
  TensorEntry& e = p_.outputs[i];
  absl::StatusOr<Tensor> t = Tensor::Allocate(
      p_.device->allocator(), BaseType(expected_output_dtype(i)), shape);
  if (!t.ok()) return t.status();
  e.value = *std::move(t);
  e.has_value = true;
  *out = &e.value;
  return absl::OkStatus();
}

absl::Status OpKernelContext::forward_input_or_allocate_output(
    int in, int out, const TensorShape& shape, Tensor** result) {
  TensorEntry& src = p_.inputs[in];
  const DataType dtype = BaseType(expected_output_dtype(out));
  if (!src.is_ref() && src.has_value && src.value.dtype() == dtype &&
      !DataTypeIsObject(dtype) &&
      src.value.NumElements() == shape.num_elements() &&
      src.value.BufferIsUnique()) {
    TensorEntry& e = p_.outputs[out];
    e.value = src.value.shape() == shape ? src.value : src.value.Reshaped(shape);
    e.has_value = true;
    *result = &e.value;
    return absl::OkStatus();
  }
  return allocate_output(out, shape, result);
}

absl::Status OpKernelContext::allocate_temp(DataType dtype,
                                            const TensorShape& shape,
                                            Tensor* out) {
  absl::StatusOr<Tensor> t =
      Tensor::Allocate(p_.device->allocator(), dtype, shape);
  if (!t.ok()) return t.status();
  *out = *std::move(t);
  return absl::OkStatus();
}

void OpKernelContext::set_output(int i, Tensor value) {
  TensorEntry& e = p_.outputs[i];
  e.value = std::move(value);
  e.ref = nullptr;
  e.ref_mu = nullptr;
  e.has_value = true;
}

void OpKernelContext::set_output_ref(int i, absl::Mutex* mu, Tensor* ref) {
  TensorEntry& e = p_.outputs[i];
  e.value = Tensor();
  e.ref = ref;
  e.ref_mu = mu;
  e.has_value = true;
}

void OpKernelContext::forward_ref_input_to_ref_output(int in, int out) {
  set_output_ref(out, p_.inputs[in].ref_mu, p_.inputs[in].ref);
}

}  // namespace weft
