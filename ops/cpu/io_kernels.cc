// SaveV2, RestoreV2 and MergeV2Checkpoints on the CPU: whole tensors in
// one shard per SaveV2 (runtime/checkpoint/tensor_bundle.h). A slice spec
// (saving or restoring part of a partitioned variable) is UNIMPLEMENTED,
// naming the tensor. And the file-name ops of the Saver and of TF1 input
// pipelines: ShardedFilename, StringJoin, Add on strings (concatenation,
// broadcast), StaticRegexFullMatch (RE2, TensorFlow's engine: linear time
// whatever the pattern).
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "re2/re2.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/checkpoint/tensor_bundle.h"
#include "runtime/core/file_policy.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// The string tensor input `i` as a scalar, or INVALID_ARGUMENT.
absl::StatusOr<std::string> ScalarString(OpKernelContext* c, int i,
                                         const char* what) {
  const Tensor& t = c->input(i);
  if (t.dtype() != DT_STRING || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be one string, got ", t.shape().DebugString()));
  }
  return t.flat<std::string>()[0];
}

// `path` as the device's file policy lets this op open it (the policy may
// confine a server's graphs to its file roots: runtime/core/file_policy.h).
absl::StatusOr<std::string> AllowedPath(OpKernelContext* c,
                                        const std::string& path,
                                        const char* what) {
  absl::StatusOr<std::string> allowed = c->device()->file_policy().Resolve(path);
  if (!allowed.ok()) return WithContext(allowed.status(), what);
  return allowed;
}

// Names and slice specs: string vectors of `n` entries, the specs empty.
absl::Status CheckNamesAndSlices(OpKernelContext* c, int64_t n) {
  const Tensor& names = c->input(1);
  const Tensor& slices = c->input(2);
  if (names.dtype() != DT_STRING || names.dims() != 1 || names.NumElements() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor_names must be a vector of ", n, " strings (one per tensor), "
        "got ", names.shape().DebugString()));
  }
  if (slices.dtype() != DT_STRING || slices.dims() != 1 ||
      slices.NumElements() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape_and_slices must be a vector of ", n, " strings, got ",
        slices.shape().DebugString()));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!slices.flat<std::string>()[i].empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "tensor '", names.flat<std::string>()[i], "': shape_and_slices '",
          slices.flat<std::string>()[i],
          "' asks for a slice; only whole tensors (\"\") are supported"));
    }
  }
  return absl::OkStatus();
}

class SaveV2Op : public OpKernel {
 public:
  explicit SaveV2Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::string> given = ScalarString(c, 0, "prefix");
    OP_REQUIRES_OK(c, given.status());
    absl::StatusOr<std::string> prefix = AllowedPath(c, *given, "prefix");
    OP_REQUIRES_OK(c, prefix.status());
    const int64_t n = c->num_inputs() - 3;
    OP_REQUIRES_OK(c, CheckNamesAndSlices(c, n));
    BundleWriter writer(*prefix);
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES_OK(c, writer.Add(c->input(1).flat<std::string>()[i],
                                   c->input(3 + static_cast<int>(i))));
    }
    OP_REQUIRES_OK(c, writer.Finish());
  }
};

class RestoreV2Op : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::string> given = ScalarString(c, 0, "prefix");
    OP_REQUIRES_OK(c, given.status());
    absl::StatusOr<std::string> prefix = AllowedPath(c, *given, "prefix");
    OP_REQUIRES_OK(c, prefix.status());
    const int64_t n = c->num_outputs();
    OP_REQUIRES_OK(c, CheckNamesAndSlices(c, n));
    absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(*prefix);
    OP_REQUIRES_OK(c, reader.status());
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<Tensor> t =
          (*reader)->Read(c->input(1).flat<std::string>()[i], output_types()[i]);
      OP_REQUIRES_OK(c, t.status());
      c->set_output(i, *std::move(t));
    }
  }
};

class MergeV2CheckpointsOp : public OpKernel {
 public:
  explicit MergeV2CheckpointsOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("delete_old_dirs", &delete_old_dirs_);
    if (s.ok()) s = c->GetAttr("allow_missing_files", &allow_missing_files_);
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& sources = c->input(0);
    OP_REQUIRES(c, sources.dtype() == DT_STRING && sources.dims() <= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "checkpoint_prefixes must be a vector of strings, got ",
                    sources.shape().DebugString())));
    absl::StatusOr<std::string> given = ScalarString(c, 1, "destination_prefix");
    OP_REQUIRES_OK(c, given.status());
    absl::StatusOr<std::string> destination =
        AllowedPath(c, *given, "destination_prefix");
    OP_REQUIRES_OK(c, destination.status());
    std::vector<std::string> list;
    for (const std::string& source : sources.flat<std::string>()) {
      absl::StatusOr<std::string> allowed =
          AllowedPath(c, source, "checkpoint_prefixes");
      OP_REQUIRES_OK(c, allowed.status());
      list.push_back(*std::move(allowed));
    }
    OP_REQUIRES_OK(c, MergeBundles(list, *destination, delete_old_dirs_,
                                   allow_missing_files_));
  }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

class ShardedFilenameOp : public OpKernel {
 public:
  explicit ShardedFilenameOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::string> base = ScalarString(c, 0, "basename");
    OP_REQUIRES_OK(c, base.status());
    const Tensor& shard = c->input(1);
    const Tensor& shards = c->input(2);
    OP_REQUIRES(c, shard.NumElements() == 1 && shards.NumElements() == 1,
                absl::InvalidArgumentError("shard and num_shards must be scalars"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    out->flat<std::string>()[0] =
        absl::StrFormat("%s-%05d-of-%05d", *base, shard.flat<int32_t>()[0],
                        shards.flat<int32_t>()[0]);
  }
};

// Joins elementwise; scalars broadcast against the (equal) shapes of the rest.
class StringJoinOp : public OpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("separator", &separator_));
  }
  void Compute(OpKernelContext* c) override {
    TensorShape shape;
    for (int i = 0; i < c->num_inputs(); ++i) {
      const Tensor& t = c->input(i);
      if (t.dims() == 0) continue;
      OP_REQUIRES(c, shape.dims() == 0 || shape == t.shape(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "StringJoin inputs must be scalars or of one shape: ",
                      shape.DebugString(), " vs ", t.shape().DebugString())));
      shape = t.shape();
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    auto o = out->flat<std::string>();
    for (int64_t j = 0; j < out->NumElements(); ++j) {
      std::string s;
      for (int i = 0; i < c->num_inputs(); ++i) {
        const Tensor& t = c->input(i);
        if (i > 0) s += separator_;
        s += t.flat<std::string>()[t.dims() == 0 ? 0 : j];
      }
      o[j] = std::move(s);
    }
  }

 private:
  std::string separator_;
};

// Add on strings: x + y concatenated, element by element, broadcasting as
// the numeric Add does.
class StringAddOp : public OpKernel {
 public:
  explicit StringAddOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const std::string* a = c->input(0).data<std::string>();
    const std::string* b = c->input(1).data<std::string>();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, BroadcastBinary(c, &out, [&](int64_t i, const std::array<int64_t, 2>& off) {
      out->data<std::string>()[i] = absl::StrCat(a[off[0]], b[off[1]]);
    }));
  }
};

// Equal and NotEqual on strings (Keras' StringLookup compares tokens with
// its mask and OOV tokens), broadcasting as the numeric forms do.
template <bool kEqual>
class StringEqualityOp : public OpKernel {
 public:
  explicit StringEqualityOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const std::string* a = c->input(0).data<std::string>();
    const std::string* b = c->input(1).data<std::string>();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, BroadcastBinary(c, &out, [&](int64_t i, const std::array<int64_t, 2>& off) {
      out->data<bool>()[i] = (a[off[0]] == b[off[1]]) == kEqual;
    }));
  }
};

class StaticRegexFullMatchOp : public OpKernel {
 public:
  explicit StaticRegexFullMatchOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string pattern;
    absl::Status s = c->GetAttr("pattern", &pattern);
    if (s.ok()) {
      re_ = std::make_unique<RE2>(pattern, RE2::Quiet);
      if (!re_->ok()) {
        s = absl::InvalidArgumentError(absl::StrCat(
            "invalid pattern '", absl::CEscape(pattern), "': ", re_->error()));
      }
    }
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      out->flat<bool>()[i] = RE2::FullMatch(in.flat<std::string>()[i], *re_);
    }
  }

 private:
  std::unique_ptr<RE2> re_;
};

}  // namespace

void RegisterIoKernels(KernelRegistry* r) {
  r->Register(KernelDef("ShardedFilename", kDeviceTypeCpu),
              MakeKernel<ShardedFilenameOp>);
  r->Register(KernelDef("StringJoin", kDeviceTypeCpu), MakeKernel<StringJoinOp>);
  r->Register(KernelDef("Add", kDeviceTypeCpu).TypeConstraint("T", DT_STRING),
              MakeKernel<StringAddOp>);
  r->Register(KernelDef("Equal", kDeviceTypeCpu).TypeConstraint("T", DT_STRING),
              MakeKernel<StringEqualityOp<true>>);
  r->Register(KernelDef("NotEqual", kDeviceTypeCpu).TypeConstraint("T", DT_STRING),
              MakeKernel<StringEqualityOp<false>>);
  r->Register(KernelDef("StaticRegexFullMatch", kDeviceTypeCpu),
              MakeKernel<StaticRegexFullMatchOp>);
  r->Register(KernelDef("SaveV2", kDeviceTypeCpu), MakeKernel<SaveV2Op>);
  r->Register(KernelDef("RestoreV2", kDeviceTypeCpu), MakeKernel<RestoreV2Op>);
  r->Register(KernelDef("MergeV2Checkpoints", kDeviceTypeCpu),
              MakeKernel<MergeV2CheckpointsOp>);
}

}  // namespace weft
