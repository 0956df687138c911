// The MLP (two hidden ReLU layers) and the small CNN (two 3x3 conv + 2x2
// max-pool stages, then a dense ReLU layer), both ending in a dense layer
// to the class logits.
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "graph/models/layers.h"

namespace weft {
namespace models_internal {

namespace {
constexpr int64_t kConv1 = 16, kConv2 = 32;
// SAME 2x2 pooling twice: ceil(ceil(n / 2) / 2).
int64_t Pooled(int64_t n) { return ((n + 1) / 2 + 1) / 2; }
}  // namespace

// Layer indices into ModelLayers, which places them.
constexpr int kMlpLayers = 3, kCnnLayers = 4;

absl::Status CreateMlpParams(ParamMaker* m, const ModelOptions& o) {
  m->StartLayer(0, kMlpLayers);
  m->DenseParams("hidden1", o.image_rows * o.image_cols, o.hidden);
  m->StartLayer(1, kMlpLayers);
  m->DenseParams("hidden2", o.hidden, o.hidden);
  m->StartLayer(2, kMlpLayers);
  m->DenseParams("output", o.hidden, o.num_classes);
  return absl::OkStatus();
}

Output MlpLogits(const Scope& s, const ModelOptions& o, const ModelParams& p,
                 const Output& images) {
  auto layer = [&](int i) { return LayerScope(s, o, i, kMlpLayers); };
  Output h = Relu(layer(0), Dense(layer(0), p, "hidden1", images));
  h = Relu(layer(1), Dense(layer(1), p, "hidden2", h));
  return Dense(layer(2), p, "output", h);
}

absl::Status CreateCnnParams(ParamMaker* m, const ModelOptions& o) {
  m->StartLayer(0, kCnnLayers);
  m->Weight("conv1/w", {3, 3, 1, kConv1}, 9);
  m->Constant("conv1/b", {kConv1}, 0.f);
  m->StartLayer(1, kCnnLayers);
  m->Weight("conv2/w", {3, 3, kConv1, kConv2}, 9 * kConv1);
  m->Constant("conv2/b", {kConv2}, 0.f);
  const int64_t flat = Pooled(o.image_rows) * Pooled(o.image_cols) * kConv2;
  m->StartLayer(2, kCnnLayers);
  m->DenseParams("dense", flat, o.hidden);
  m->StartLayer(3, kCnnLayers);
  m->DenseParams("output", o.hidden, o.num_classes);
  return absl::OkStatus();
}

Output CnnLogits(const Scope& scope, const ModelOptions& o,
                 const ModelParams& p, const Output& images) {
  auto layer = [&](int i) { return LayerScope(scope, o, i, kCnnLayers); };
  Scope s = layer(0);
  Output x = Reshape(s, images, ShapeOf(s, {-1, o.image_rows, o.image_cols, 1}));
  int index = 0;
  for (const char* name : {"conv1", "conv2"}) {
    Scope c = layer(index++).NewSubScope(name);
    const std::string n = name;
    x = Conv2D(c, x, Param(c, p, n + "/w"), {1, 1, 1, 1}, "SAME");
    x = Relu(c, BiasAdd(c, x, Param(c, p, n + "/b")));
    x = MaxPool(c, x, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME");
  }
  const int64_t flat = Pooled(o.image_rows) * Pooled(o.image_cols) * kConv2;
  s = layer(2);
  x = Reshape(s, x, ShapeOf(s, {-1, flat}));
  x = Relu(s, Dense(s, p, "dense", x));
  return Dense(layer(3), p, "output", x);
}

}  // namespace models_internal
}  // namespace weft
