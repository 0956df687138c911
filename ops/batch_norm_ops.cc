// The fused batch-norm ops: FusedBatchNorm, FusedBatchNormV2/V3 and their
// gradients FusedBatchNormGrad/V2/V3, as TF1 layers, Keras 2's
// BatchNormalization and frozen CNNs write them. OpDefs match TensorFlow
// 2.21's exactly (tests/ops/op_def_compat_test). The shape functions follow
// TensorFlow's: x has rank 4 (rank 5 for NDHWC / NCDHW); every 1-D input
// that is read merges into the channel dim (mean and variance only when
// they are used: inference, or exponential_avg_factor != 1); the per-channel
// outputs are vectors of that dim, a gradient's two placeholder outputs
// vectors of 0 elements.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// Where the channel dim of a rank-`rank` tensor in `format` is.
int ChannelIndex(const std::string& format, int rank) {
  return format == "NCHW" || format == "NCDHW" ? 1 : rank - 1;
}

absl::StatusOr<int> RankFor(InferenceContext* c, std::string* format) {
  WEFT_RETURN_IF_ERROR(c->GetAttr("data_format", format));
  return *format == "NDHWC" || *format == "NCDHW" ? 5 : 4;
}

// Merges the channel count `*channels` (-1: unknown) with `dim`.
absl::Status MergeChannels(InferenceContext* c, int input, int64_t dim,
                           int64_t* channels) {
  if (dim < 0) return absl::OkStatus();
  if (*channels >= 0 && *channels != dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Dimensions must be equal, but are ", *channels, " and ", dim,
        " (channels of x vs. input ", input, " of ", c->node().op(), ")"));
  }
  *channels = dim;
  return absl::OkStatus();
}

// Checks inputs [first, last) are vectors and merges their lengths into
// *channels.
absl::Status MergeVectors(InferenceContext* c, int first, int last,
                          int64_t* channels) {
  for (int i = first; i < last; ++i) {
    WEFT_RETURN_IF_ERROR(c->WithRank(i, 1));
    if (c->input(i).known_rank()) {
      WEFT_RETURN_IF_ERROR(MergeChannels(c, i, c->input(i).dim(0), channels));
    }
  }
  return absl::OkStatus();
}

// `shape` (rank `rank` or unknown) with its channel dim set to `channels`.
PartialShape WithChannels(const PartialShape& shape, int rank, int channel,
                          int64_t channels) {
  std::vector<int64_t> dims(rank, -1);
  if (shape.known_rank()) dims.assign(shape.dims().begin(), shape.dims().end());
  dims[channel] = channels;
  return PartialShape(dims);
}

absl::Status FusedBatchNormShape(InferenceContext* c) {
  std::string format;
  WEFT_ASSIGN_OR_RETURN(const int rank, RankFor(c, &format));
  WEFT_RETURN_IF_ERROR(c->WithRank(0, rank));
  bool is_training = true;
  float factor = 1.0f;
  WEFT_RETURN_IF_ERROR(c->GetAttr("is_training", &is_training));
  WEFT_RETURN_IF_ERROR(c->GetAttr("exponential_avg_factor", &factor));
  const int channel = ChannelIndex(format, rank);
  const PartialShape& x = c->input(0);
  int64_t channels = x.known_rank() ? x.dim(channel) : -1;
  // scale and offset; mean and variance too where they are read.
  const int used = is_training && factor == 1.0f ? 3 : 5;
  WEFT_RETURN_IF_ERROR(MergeVectors(c, 1, used, &channels));
  c->set_output(0, WithChannels(x, rank, channel, channels));
  for (int i = 1; i <= 4; ++i) c->set_output(i, PartialShape({channels}));
  if (c->num_outputs() > 5) c->set_output(5, PartialShape::UnknownRank());
  return absl::OkStatus();
}

absl::Status FusedBatchNormGradShape(InferenceContext* c) {
  std::string format;
  WEFT_ASSIGN_OR_RETURN(const int rank, RankFor(c, &format));
  WEFT_RETURN_IF_ERROR(c->WithRank(0, rank));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, rank));
  const int channel = ChannelIndex(format, rank);
  const PartialShape& dy = c->input(0);
  const PartialShape& x = c->input(1);
  int64_t channels = dy.known_rank() ? dy.dim(channel) : -1;
  if (x.known_rank()) {
    WEFT_RETURN_IF_ERROR(MergeChannels(c, 1, x.dim(channel), &channels));
  }
  // scale, reserve_space_1 and reserve_space_2.
  WEFT_RETURN_IF_ERROR(MergeVectors(c, 2, 5, &channels));
  c->set_output(0, WithChannels(dy, rank, channel, channels));
  c->set_output(1, PartialShape({channels}));
  c->set_output(2, PartialShape({channels}));
  c->set_output(3, PartialShape({0}));
  c->set_output(4, PartialShape({0}));
  return absl::OkStatus();
}

constexpr char kEpsilon[] = "epsilon: float = 0.0001";
constexpr char kFactor[] = "exponential_avg_factor: float = 1";
constexpr char kFormat4[] = "data_format: {'NHWC', 'NCHW'} = 'NHWC'";
constexpr char kFormat5[] =
    "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'";
constexpr char kTraining[] = "is_training: bool = true";

// FusedBatchNorm (everything T) and V2 / V3 (statistics in U).
OpDefBuilder ForwardDef(const char* name, bool v1, bool v3) {
  const char* u = v1 ? "T" : "U";
  OpDefBuilder b(name);
  b.Input("x: T");
  for (const char* in : {"scale", "offset", "mean", "variance"}) {
    b.Input(absl::StrCat(in, ": ", u));
  }
  b.Output("y: T");
  for (const char* out : {"batch_mean", "batch_variance", "reserve_space_1",
                          "reserve_space_2"}) {
    b.Output(absl::StrCat(out, ": ", u));
  }
  if (v3) b.Output("reserve_space_3: U");
  if (v1) {
    b.Attr("T: {float}");
  } else {
    b.Attr("T: {half, bfloat16, float}");
    b.Attr(v3 ? "U: {bfloat16, float}" : "U: {float}");
  }
  b.Attr(kEpsilon).Attr(kFactor).Attr(v3 ? kFormat5 : kFormat4).Attr(kTraining);
  return b;
}

OpDefBuilder GradDef(const char* name, bool v1, bool v3) {
  const char* u = v1 ? "T" : "U";
  OpDefBuilder b(name);
  b.Input("y_backprop: T").Input("x: T");
  b.Input(v1 ? "scale: T" : "scale: float");
  b.Input(absl::StrCat("reserve_space_1: ", u));
  b.Input(absl::StrCat("reserve_space_2: ", u));
  if (v3) b.Input("reserve_space_3: U");
  b.Output("x_backprop: T");
  b.Output(absl::StrCat("scale_backprop: ", u));
  b.Output(absl::StrCat("offset_backprop: ", u));
  b.Output(absl::StrCat(v3 ? "reserve_space_4: " : "reserve_space_3: ", u));
  b.Output(absl::StrCat(v3 ? "reserve_space_5: " : "reserve_space_4: ", u));
  if (v1) {
    b.Attr("T: {float}");
  } else {
    b.Attr("T: {half, bfloat16, float}").Attr("U: {float}");
  }
  b.Attr(kEpsilon).Attr(v3 ? kFormat5 : kFormat4).Attr(kTraining);
  return b;
}

}  // namespace

void RegisterBatchNormOps(OpRegistry* r) {
  r->Register(ForwardDef("FusedBatchNorm", true, false), FusedBatchNormShape);
  r->Register(ForwardDef("FusedBatchNormV2", false, false),
              FusedBatchNormShape);
  r->Register(ForwardDef("FusedBatchNormV3", false, true),
              FusedBatchNormShape);
  r->Register(GradDef("FusedBatchNormGrad", true, false),
              FusedBatchNormGradShape);
  r->Register(GradDef("FusedBatchNormGradV2", false, false),
              FusedBatchNormGradShape);
  r->Register(GradDef("FusedBatchNormGradV3", false, true),
              FusedBatchNormGradShape);
}

}  // namespace weft
