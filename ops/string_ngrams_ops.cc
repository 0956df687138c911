// StringNGrams (tf.strings.ngrams, Keras TextVectorization with ngrams):
// the n-grams of every row of a ragged string tensor, given as flat tokens
// plus row splits. The OpDef matches TensorFlow 2.21's
// (tests/ops/op_def_compat_test checks). Kernel:
// ops/cpu/string_ngrams_kernels.cc.
#include "ops/framework/op_def_builder.h"
#include "ops/framework/op_registry.h"
#include "ops/framework/shape_inference.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// data [?] and data_splits [rows + 1] in; ngrams [?] and splits shaped as
// data_splits out.
absl::Status StringNGramsShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  c->set_output(0, PartialShape({-1}));
  c->set_output(1, c->input(1));
  return absl::OkStatus();
}

}  // namespace

// Called by RegisterStringOps (string_ops.cc).
void RegisterStringNGramsOps(OpRegistry* r) {
  r->Register(OpDefBuilder("StringNGrams")
                  .Input("data: string")
                  .Input("data_splits: Tsplits")
                  .Output("ngrams: string")
                  .Output("ngrams_splits: Tsplits")
                  .Attr("separator: string")
                  .Attr("ngram_widths: list(int) >= 0")
                  .Attr("left_pad: string")
                  .Attr("right_pad: string")
                  .Attr("pad_width: int")
                  .Attr("preserve_short_sequences: bool")
                  .Attr("Tsplits: {int32, int64} = DT_INT64"),
              StringNGramsShape);
}

}  // namespace weft
