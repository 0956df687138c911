// TensorFlow's string ops (tf.strings: formatting, case, splitting, regexes,
// parsing, substrings, hashing, base64) and the printing ops (Print,
// PrintV2, StringFormat, Timestamp). OpDefs match TensorFlow 2.21's
// (tests/ops/op_def_compat_test checks). Kernels: ops/cpu/string_*.cc.
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// Sparse results of the splits: indices [?, 2], values [?], shape [2].
absl::Status SplitShape(InferenceContext* c) {
  c->set_output(0, PartialShape({-1, 2}));
  c->set_output(1, PartialShape({-1}));
  c->set_output(2, PartialShape({2}));
  return absl::OkStatus();
}

// Substr: pos and len broadcast against the input.
absl::Status SubstrShape(InferenceContext* c) {
  absl::StatusOr<PartialShape> s = BroadcastShapes(c->input(0), c->input(1));
  if (s.ok()) s = BroadcastShapes(*s, c->input(2));
  if (!s.ok()) return s.status();
  c->set_output(0, *s);
  return absl::OkStatus();
}

// Fingerprint: [dim0(data), 8].
absl::Status FingerprintShape(InferenceContext* c) {
  const PartialShape& d = c->input(0);
  c->set_output(0, PartialShape({d.known_rank() && d.rank() > 0 ? d.dim(0) : -1,
                                 8}));
  return absl::OkStatus();
}

// StringFormat: a scalar; the template must have one placeholder per input.
absl::Status StringFormatShape(InferenceContext* c) {
  std::string tmpl, placeholder;
  WEFT_RETURN_IF_ERROR(c->GetAttr("template", &tmpl));
  WEFT_RETURN_IF_ERROR(c->GetAttr("placeholder", &placeholder));
  int64_t n = 0;
  if (!placeholder.empty()) {
    for (size_t at = tmpl.find(placeholder); at != std::string::npos;
         at = tmpl.find(placeholder, at + placeholder.size())) {
      ++n;
    }
  }
  if (n != c->num_inputs()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num placeholders in template and num inputs must match: ", n,
        " vs. ", c->num_inputs()));
  }
  c->set_output(0, PartialShape({}));
  return absl::OkStatus();
}

// One string in, one string out, with the same shape.
void UnaryString(OpRegistry* r, const char* name, const char* attr) {
  OpDefBuilder b(name);
  b.Input("input: string").Output("output: string");
  if (attr != nullptr) b.Attr(attr);
  r->Register(std::move(b), UnchangedShape);
}

}  // namespace

// string_ngrams_ops.cc: StringNGrams.
void RegisterStringNGramsOps(OpRegistry* r);

void RegisterStringOps(OpRegistry* r) {
  RegisterStringNGramsOps(r);
  r->Register(OpDefBuilder("AsString")
                  .Input("input: T")
                  .Output("output: string")
                  .Attr("T: {float, double, int32, uint8, int16, int8, int64, "
                        "bfloat16, uint16, half, uint32, uint64, complex64, "
                        "complex128, bool, variant, string}")
                  .Attr("precision: int = -1")
                  .Attr("scientific: bool = false")
                  .Attr("shortest: bool = false")
                  .Attr("width: int = -1")
                  .Attr("fill: string = ''"),
              UnchangedShape);
  r->Register(OpDefBuilder("ReduceJoin")
                  .Input("inputs: string")
                  .Input("reduction_indices: int32")
                  .Output("output: string")
                  .Attr("keep_dims: bool = false")
                  .Attr("separator: string = ''"),
              UnknownShape);
  r->Register(OpDefBuilder("StringLength")
                  .Input("input: string")
                  .Output("output: int32")
                  .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"),
              UnchangedShape);
  UnaryString(r, "StringUpper", "encoding: string = ''");
  UnaryString(r, "StringLower", "encoding: string = ''");
  UnaryString(r, "StringStrip", nullptr);
  UnaryString(r, "EncodeBase64", "pad: bool = false");
  UnaryString(r, "DecodeBase64", nullptr);
  r->Register(OpDefBuilder("StringSplit")
                  .Input("input: string")
                  .Input("delimiter: string")
                  .Output("indices: int64")
                  .Output("values: string")
                  .Output("shape: int64")
                  .Attr("skip_empty: bool = true"),
              SplitShape);
  r->Register(OpDefBuilder("StringSplitV2")
                  .Input("input: string")
                  .Input("sep: string")
                  .Output("indices: int64")
                  .Output("values: string")
                  .Output("shape: int64")
                  .Attr("maxsplit: int = -1"),
              SplitShape);
  r->Register(OpDefBuilder("StaticRegexReplace")
                  .Input("input: string")
                  .Output("output: string")
                  .Attr("pattern: string")
                  .Attr("rewrite: string")
                  .Attr("replace_global: bool = true"),
              UnchangedShape);
  r->Register(OpDefBuilder("RegexReplace")
                  .Input("input: string")
                  .Input("pattern: string")
                  .Input("rewrite: string")
                  .Output("output: string")
                  .Attr("replace_global: bool = true"),
              UnchangedShape);
  r->Register(OpDefBuilder("RegexFullMatch")
                  .Input("input: string")
                  .Input("pattern: string")
                  .Output("output: bool"),
              UnchangedShape);
  r->Register(OpDefBuilder("StringToNumber")
                  .Input("string_tensor: string")
                  .Output("output: out_type")
                  .Attr("out_type: {float, double, int32, int64, uint32, "
                        "uint64} = float"),
              UnchangedShape);
  r->Register(OpDefBuilder("Substr")
                  .Input("input: string")
                  .Input("pos: T")
                  .Input("len: T")
                  .Output("output: string")
                  .Attr("T: {int32, int64}")
                  .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"),
              SubstrShape);
  r->Register(OpDefBuilder("StringToHashBucket")
                  .Input("string_tensor: string")
                  .Output("output: int64")
                  .Attr("num_buckets: int >= 1"),
              UnchangedShape);
  r->Register(OpDefBuilder("StringToHashBucketFast")
                  .Input("input: string")
                  .Output("output: int64")
                  .Attr("num_buckets: int >= 1"),
              UnchangedShape);
  r->Register(OpDefBuilder("StringToHashBucketStrong")
                  .Input("input: string")
                  .Output("output: int64")
                  .Attr("num_buckets: int >= 1")
                  .Attr("key: list(int)"),
              UnchangedShape);
  r->Register(OpDefBuilder("Fingerprint")
                  .Input("data: T")
                  .Input("method: string")
                  .Output("fingerprint: uint8")
                  .Attr("T: type"),
              FingerprintShape);
  r->Register(OpDefBuilder("StringFormat")
                  .Input("inputs: T")
                  .Output("output: string")
                  .Attr("T: list(type) >= 0")
                  .Attr("template: string = '%s'")
                  .Attr("placeholder: string = '%s'")
                  .Attr("summarize: int = 3"),
              StringFormatShape);
  r->Register(OpDefBuilder("PrintV2")
                  .Input("input: string")
                  .Attr("output_stream: string = 'stderr'")
                  .Attr("end: string = '\n'")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("Print")
                  .Input("input: T")
                  .Input("data: U")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("U: list(type) >= 0")
                  .Attr("message: string = ''")
                  .Attr("first_n: int = -1")
                  .Attr("summarize: int = 3")
                  .SetIsStateful(),
              UnchangedShape);
  r->Register(OpDefBuilder("Timestamp").Output("ts: double").SetIsStateful(),
              ScalarShape);
}

}  // namespace weft
