// A one-block transformer classifier: each image row is a token (rows =
// sequence length, cols = features), embedded to `hidden` with a learned
// position embedding; a pre-norm block of multi-head self-attention and a
// ReLU feed-forward layer, both residual; then a final layer norm, the mean
// over tokens, and a dense layer to the logits.
//
// Attention is batched: queries, keys and values are reshaped to
// [batch, heads, seq, d / heads] and scored with BatchMatMulV2, so the graph
// works for any batch size (only seq and the widths are fixed).
#include <cmath>

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "graph/models/layers.h"

namespace weft {
namespace models_internal {

namespace {
void NormParams(ParamMaker* m, const std::string& name, int64_t d) {
  m->Constant(name + "/gamma", {d}, 1.f);
  m->Constant(name + "/beta", {d}, 0.f);
}

// [batch * seq, d] -> [batch, heads, seq, d / heads].
Output SplitHeads(const Scope& s, const ModelOptions& o, const Output& x) {
  Output y = Reshape(s, x, ShapeOf(s, {-1, o.image_rows, o.heads,
                                       o.hidden / o.heads}));
  return Transpose(s, y, Const(s, {0, 2, 1, 3}));
}

// The inverse of SplitHeads.
Output MergeHeads(const Scope& s, const ModelOptions& o, const Output& x) {
  Output y = Transpose(s, x, Const(s, {0, 2, 1, 3}));
  return Reshape(s, y, ShapeOf(s, {-1, o.hidden}));
}

Output SelfAttention(const Scope& scope, const ModelOptions& o,
                     const ModelParams& p, const Output& x) {
  Scope s = scope.NewSubScope("attention");
  Output q = SplitHeads(s, o, Dense(s, p, "attention/q", x));
  Output k = SplitHeads(s, o, Dense(s, p, "attention/k", x));
  Output v = SplitHeads(s, o, Dense(s, p, "attention/v", x));
  const float scale =
      1.f / std::sqrt(static_cast<float>(o.hidden / o.heads));
  Output scale_c = Const(s.WithOpName("scale"), scale);
  // [batch, heads, seq, seq] scores; softmax over the keys.
  Output scores = Mul(s, BatchMatMulV2(s, q, k, false, true), scale_c);
  Output out = BatchMatMulV2(s, Softmax(s, scores), v);
  return Dense(s, p, "attention/out", MergeHeads(s, o, out));
}
}  // namespace

absl::Status CreateTransformerParams(ParamMaker* m, const ModelOptions& o) {
  const int64_t d = o.hidden;
  m->DenseParams("embed", o.image_cols, d);
  m->Weight("position", {o.image_rows, d}, d);
  NormParams(m, "norm1", d);
  for (const char* proj : {"attention/q", "attention/k", "attention/v",
                           "attention/out"}) {
    m->DenseParams(proj, d, d);
  }
  NormParams(m, "norm2", d);
  m->DenseParams("ffn1", d, 2 * d);
  m->DenseParams("ffn2", 2 * d, d);
  NormParams(m, "norm_final", d);
  m->DenseParams("output", d, o.num_classes);
  return absl::OkStatus();
}

Output TransformerLogits(const Scope& s, const ModelOptions& o,
                         const ModelParams& p, const Output& images) {
  const int64_t t = o.image_rows, d = o.hidden;
  Output tokens = Reshape(s, images, ShapeOf(s, {-1, o.image_cols}));
  Output x = Reshape(s, Dense(s, p, "embed", tokens), ShapeOf(s, {-1, t, d}));
  x = AddV2(s, x, Param(s, p, "position"));
  x = Reshape(s, x, ShapeOf(s, {-1, d}));
  x = AddV2(s, x, SelfAttention(s, o, p, LayerNorm(s, p, "norm1", x)));
  Output h = LayerNorm(s, p, "norm2", x);
  h = Dense(s, p, "ffn2", Relu(s, Dense(s, p, "ffn1", h)));
  x = AddV2(s, x, h);
  x = Reshape(s, LayerNorm(s, p, "norm_final", x), ShapeOf(s, {-1, t, d}));
  return Dense(s, p, "output", Mean(s, x, Const(s, 1)));
}

}  // namespace models_internal
}  // namespace weft
