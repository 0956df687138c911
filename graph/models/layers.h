// Building blocks shared by the models (internal to graph/models).
#ifndef WEFT_GRAPH_MODELS_LAYERS_H_
#define WEFT_GRAPH_MODELS_LAYERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/builder/scope.h"
#include "graph/models/models.h"

namespace weft {
namespace models_internal {

// Makes a model's variables with seeded initializers: each gets
// seed = options.seed and its own seed2, so the graph is deterministic.
class ParamMaker {
 public:
  ParamMaker(const Scope& scope, const ModelOptions& options,
             ModelParams* params)
      : scope_(scope), options_(options), params_(params) {}

  // Truncated normal with stddev 1/sqrt(fan_in).
  void Weight(const std::string& name, const std::vector<int64_t>& shape,
              int64_t fan_in);
  // "<name>/w" [in, out] (Weight) and "<name>/b" [out] (zeros).
  void DenseParams(const std::string& name, int64_t in, int64_t out) {
    Weight(name + "/w", {in, out}, in);
    Constant(name + "/b", {out}, 0.f);
  }
  // Constant `value` (0 for biases, 1 for layer-norm scales).
  void Constant(const std::string& name, const std::vector<int64_t>& shape,
                float value);
  // Later variables belong to layer `layer` of `num_layers` (ModelLayers)
  // and go to its device (LayerScope).
  void StartLayer(int layer, int num_layers) {
    layer_ = layer;
    num_layers_ = num_layers;
  }

 private:
  Scope scope() const;

  void Add(const std::string& name, const std::vector<int64_t>& shape,
           const Output& initial);

  Scope scope_;
  ModelOptions options_;
  ModelParams* params_;
  int64_t seed2_ = 0;
  int layer_ = 0, num_layers_ = 0;
};

// `scope` on the device of layer `layer` of `num_layers` under
// options.layer_devices (unchanged when there are none).
Scope LayerScope(const Scope& scope, const ModelOptions& options, int layer,
                 int num_layers);

// The variable's value, or an invalid Output (recording an error) if the
// params lack it.
Output Param(const Scope& scope, const ModelParams& params,
             const std::string& name);

// x [n, in] @ w + b, from params "<name>/w" and "<name>/b".
Output Dense(const Scope& scope, const ModelParams& params,
             const std::string& name, const Output& x);

// Layer normalization over the last dimension with params "<name>/gamma"
// and "<name>/beta": (x - mean) * rsqrt(var + 1e-5) * gamma + beta.
Output LayerNorm(const Scope& scope, const ModelParams& params,
                 const std::string& name, const Output& x);

// An int32 shape Const.
Output ShapeOf(const Scope& scope, const std::vector<int64_t>& dims);

absl::Status CreateMlpParams(ParamMaker* maker, const ModelOptions& o);
Output MlpLogits(const Scope& s, const ModelOptions& o, const ModelParams& p,
                 const Output& images);
absl::Status CreateCnnParams(ParamMaker* maker, const ModelOptions& o);
Output CnnLogits(const Scope& s, const ModelOptions& o, const ModelParams& p,
                 const Output& images);
absl::Status CreateTransformerParams(ParamMaker* maker, const ModelOptions& o);
Output TransformerLogits(const Scope& s, const ModelOptions& o,
                         const ModelParams& p, const Output& images);

}  // namespace models_internal
}  // namespace weft

#endif  // WEFT_GRAPH_MODELS_LAYERS_H_
