// Neural-network ops: activations, bias, softmax and the sparse softmax
// cross-entropy loss. OpDefs match TensorFlow 2.21's exactly
// (tests/ops/math_op_defs_test checks them against TensorFlow's own).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// dims[i] and want must agree where both are known; returns the known one.
absl::StatusOr<int64_t> MergeDim(int64_t have, int64_t want,
                                 absl::string_view what) {
  if (have >= 0 && want >= 0 && have != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Dimensions must be equal, but are ", have, " and ", want, " (", what,
        ")"));
  }
  return have >= 0 ? have : want;
}

// The channel dim of BiasAdd's value: 1 for NCHW, else the last.
absl::StatusOr<int> ChannelDim(InferenceContext* c, int rank) {
  std::string format;
  WEFT_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  return format == "NCHW" ? 1 : rank - 1;
}

absl::Status CheckBiasInputRank(InferenceContext* c) {
  std::string format;
  WEFT_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  return c->WithRankAtLeast(0, format == "NCHW" ? 3 : 2);
}

absl::Status BiasAddShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(CheckBiasInputRank(c));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  const PartialShape& value = c->input(0);
  const PartialShape& bias = c->input(1);
  if (!value.known_rank()) {
    c->set_output(0, value);
    return absl::OkStatus();
  }
  std::vector<int64_t> dims(value.dims().begin(), value.dims().end());
  WEFT_ASSIGN_OR_RETURN(const int channel, ChannelDim(c, value.rank()));
  if (bias.known_rank()) {
    WEFT_ASSIGN_OR_RETURN(
        dims[channel],
        MergeDim(dims[channel], bias.dim(0),
                 absl::StrCat("channel dim of value ", value.DebugString(),
                              " vs. bias ", bias.DebugString())));
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status BiasAddGradShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(CheckBiasInputRank(c));
  const PartialShape& grad = c->input(0);
  if (!grad.known_rank()) {
    c->set_output(0, PartialShape({-1}));
    return absl::OkStatus();
  }
  WEFT_ASSIGN_OR_RETURN(const int channel, ChannelDim(c, grad.rank()));
  c->set_output(0, PartialShape({grad.dim(channel)}));
  return absl::OkStatus();
}

absl::Status SoftmaxShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status ReluGradShape(InferenceContext* c) {
  const PartialShape& g = c->input(0);
  const PartialShape& f = c->input(1);
  if (g.known_rank() && f.known_rank()) {
    if (g.rank() != f.rank()) {
      return absl::InvalidArgumentError(
          absl::StrCat("gradients ", g.DebugString(), " and features ",
                       f.DebugString(), " must have the same shape"));
    }
    std::vector<int64_t> dims(g.rank());
    for (int i = 0; i < g.rank(); ++i) {
      WEFT_ASSIGN_OR_RETURN(
          dims[i], MergeDim(g.dim(i), f.dim(i),
                            absl::StrCat("gradients ", g.DebugString(),
                                         " vs. features ", f.DebugString())));
    }
    c->set_output(0, PartialShape(dims));
  } else {
    c->set_output(0, g.known_rank() ? g : f);
  }
  return absl::OkStatus();
}

// features [batch, classes], labels [batch] -> loss [batch], backprop.
absl::Status SparseSoftmaxXentShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 2));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  const PartialShape& features = c->input(0);
  const PartialShape& labels = c->input(1);
  int64_t batch = features.known_rank() ? features.dim(0) : -1;
  const int64_t classes = features.known_rank() ? features.dim(1) : -1;
  if (labels.known_rank()) {
    WEFT_ASSIGN_OR_RETURN(
        batch, MergeDim(batch, labels.dim(0),
                        absl::StrCat("batch of features ",
                                     features.DebugString(), " vs. labels ",
                                     labels.DebugString())));
  }
  c->set_output(0, PartialShape({batch}));
  c->set_output(1, PartialShape({batch, classes}));
  return absl::OkStatus();
}

const char kReluTypes[] =
    "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, "
    "half, uint32, uint64, qint8}";
const char kReluGradTypes[] =
    "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, "
    "half, uint32, uint64}";
const char kBiasTypes[] =
    "{float, double, int32, uint8, int16, int8, complex64, int64, qint8, "
    "quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, half, "
    "uint32, uint64}";
const char kSoftmaxTypes[] = "{half, bfloat16, float, double}";

}  // namespace

void RegisterNnOps(OpRegistry* r) {
  r->Register(OpDefBuilder("Relu")
                  .Input("features: T")
                  .Output("activations: T")
                  .Attr(absl::StrCat("T: ", kReluTypes)),
              UnchangedShape);
  r->Register(OpDefBuilder("ReluGrad")
                  .Input("gradients: T")
                  .Input("features: T")
                  .Output("backprops: T")
                  .Attr(absl::StrCat("T: ", kReluGradTypes)),
              ReluGradShape);
  r->Register(OpDefBuilder("BiasAdd")
                  .Input("value: T")
                  .Input("bias: T")
                  .Output("output: T")
                  .Attr(absl::StrCat("T: ", kBiasTypes))
                  .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'"),
              BiasAddShape);
  r->Register(OpDefBuilder("BiasAddGrad")
                  .Input("out_backprop: T")
                  .Output("output: T")
                  .Attr(absl::StrCat("T: ", kBiasTypes))
                  .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'"),
              BiasAddGradShape);
  r->Register(OpDefBuilder("Softmax")
                  .Input("logits: T")
                  .Output("softmax: T")
                  .Attr(absl::StrCat("T: ", kSoftmaxTypes)),
              SoftmaxShape);
  r->Register(OpDefBuilder("LogSoftmax")
                  .Input("logits: T")
                  .Output("logsoftmax: T")
                  .Attr(absl::StrCat("T: ", kSoftmaxTypes)),
              SoftmaxShape);
  r->Register(OpDefBuilder("SparseSoftmaxCrossEntropyWithLogits")
                  .Input("features: T")
                  .Input("labels: Tlabels")
                  .Output("loss: T")
                  .Output("backprop: T")
                  .Attr(absl::StrCat("T: ", kSoftmaxTypes))
                  .Attr("Tlabels: {int32, int64} = int64"),
              SparseSoftmaxXentShape);
}

}  // namespace weft
