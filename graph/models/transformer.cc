// A one-block transformer classifier: each image row is a token (rows =
// sequence length, cols = features), embedded to `hidden` with a learned
// position embedding; a pre-norm block of multi-head self-attention and a
// ReLU feed-forward layer, both residual; then a final layer norm, the mean
// over tokens, and a dense layer to the logits.
//
// Without a batched matmul op, attention is unrolled: the [batch * heads]
// query/key/value slices are unpacked and each uses two MatMuls, so the
// graph is built for a fixed batch size.
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

// [batch * seq, d] -> batch * heads slices of [seq, d / heads].
std::vector<Output> SplitHeads(const Scope& s, const ModelOptions& o,
                               const Output& x) {
  const int64_t b = o.batch, t = o.image_rows, h = o.heads,
                dh = o.hidden / o.heads;
  Output y = Reshape(s, x, ShapeOf(s, {b, t, h, dh}));
  y = Transpose(s, y, Const(s, {0, 2, 1, 3}));
  y = Reshape(s, y, ShapeOf(s, {b * h, t, dh}));
  return Unpack(s, y, b * h, 0);
}

// The inverse of SplitHeads.
Output MergeHeads(const Scope& s, const ModelOptions& o,
                  const std::vector<Output>& parts) {
  const int64_t b = o.batch, t = o.image_rows, h = o.heads,
                dh = o.hidden / o.heads;
  Output y = Reshape(s, Pack(s, parts, 0), ShapeOf(s, {b, h, t, dh}));
  y = Transpose(s, y, Const(s, {0, 2, 1, 3}));
  return Reshape(s, y, ShapeOf(s, {b * t, o.hidden}));
}

Output SelfAttention(const Scope& scope, const ModelOptions& o,
                     const ModelParams& p, const Output& x) {
  Scope s = scope.NewSubScope("attention");
  std::vector<Output> q = SplitHeads(s, o, Dense(s, p, "attention/q", x));
  std::vector<Output> k = SplitHeads(s, o, Dense(s, p, "attention/k", x));
  std::vector<Output> v = SplitHeads(s, o, Dense(s, p, "attention/v", x));
  if (q.size() != k.size() || q.size() != v.size() ||
      static_cast<int64_t>(q.size()) != o.batch * o.heads) {
    return Output();  // the error is recorded in the scope
  }
  const float scale =
      1.f / std::sqrt(static_cast<float>(o.hidden / o.heads));
  Output scale_c = Const(s.WithOpName("scale"), scale);
  std::vector<Output> out;
  for (size_t i = 0; i < q.size(); ++i) {
    Output scores = Mul(s, MatMul(s, q[i], k[i], false, true), scale_c);
    out.push_back(MatMul(s, Softmax(s, scores), v[i]));
  }
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
  const int64_t b = o.batch, t = o.image_rows, d = o.hidden;
  Output tokens = Reshape(s, images, ShapeOf(s, {b * t, o.image_cols}));
  Output x = Reshape(s, Dense(s, p, "embed", tokens), ShapeOf(s, {b, t, d}));
  x = AddV2(s, x, Param(s, p, "position"));
  x = Reshape(s, x, ShapeOf(s, {b * t, d}));
  x = AddV2(s, x, SelfAttention(s, o, p, LayerNorm(s, p, "norm1", x)));
  Output h = LayerNorm(s, p, "norm2", x);
  h = Dense(s, p, "ffn2", Relu(s, Dense(s, p, "ffn1", h)));
  x = AddV2(s, x, h);
  x = Reshape(s, LayerNorm(s, p, "norm_final", x), ShapeOf(s, {b, t, d}));
  return Dense(s, p, "output", Mean(s, x, Const(s, 1)));
}

}  // namespace models_internal
}  // namespace weft
