// Fuzz target: the TensorProto decoder (what Consts carry today and what
// peers will send in RPCs). A proto that decodes must survive a round trip
// through both encodings unchanged: decode(encode(t)) has t's dtype, shape
// and bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "proto/tensor.pb.h"
#include "runtime/core/allocator.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_proto.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// Decoding may allocate what the proto claims (typed fields splat their last
// value): bounded as a session's memory limit bounds it, and low, because
// round trips of 100 MB tensors through typed fields only slow the campaign
// down (the first one timed out on them) without reaching new code.
weft::LimitedAllocator* Allocator() {
  static weft::LimitedAllocator* const a =
      weft::LimitedAllocator::New(weft::CpuAllocator(), int64_t{16} << 20);
  return a;
}

bool SameContents(const weft::Tensor& a, const weft::Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == weft::DT_STRING) {
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      if (a.data<std::string>()[i] != b.data<std::string>()[i]) return false;
    }
    return true;
  }
  if (weft::DataTypeIsObject(a.dtype())) return true;
  return a.TotalBytes() == b.TotalBytes() &&
         (a.TotalBytes() == 0 ||
          std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensorflow::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  absl::StatusOr<weft::Tensor> t = weft::TensorFromProto(proto, Allocator());
  if (!t.ok()) {
    weft::fuzz::ExpectClean(t.status(), "TensorFromProto");
    return 0;
  }
  (void)t->DebugString();
  for (weft::ProtoEncoding encoding : {weft::ProtoEncoding::kTensorContent,
                                       weft::ProtoEncoding::kTypedFields}) {
    tensorflow::TensorProto again;
    weft::TensorToProto(*t, &again, encoding);
    absl::StatusOr<weft::Tensor> back = weft::TensorFromProto(again, Allocator());
    if (!back.ok()) {
      // t itself holds up to the limit, so the copy may not fit beside it;
      // any other refusal of t's own encoding is a finding.
      weft::fuzz::ExpectTrue(
          back.status().code() == absl::StatusCode::kResourceExhausted,
          "TensorFromProto(TensorToProto(t)) succeeds or runs out of memory");
      continue;
    }
    weft::fuzz::ExpectTrue(SameContents(*t, *back), "decode(encode(t)) == t");
  }
  return 0;
}
