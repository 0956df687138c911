#include "graph/models/layers.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "graph/builder/state_ops.h"

namespace weft {
namespace models_internal {

Scope LayerScope(const Scope& scope, const ModelOptions& options, int layer,
                 int num_layers) {
  const size_t d = options.layer_devices.size();
  if (d == 0 || num_layers < 1) return scope;
  return scope.WithDevice(options.layer_devices[layer * d / num_layers]);
}

Scope ParamMaker::scope() const {
  return LayerScope(scope_, options_, layer_, num_layers_);
}

void ParamMaker::Add(const std::string& name,
                     const std::vector<int64_t>& shape,
                     const Output& initial) {
  TrainableVariable v = NewTrainableVariable(
      scope().WithOpName(name), shape, DT_FLOAT, initial, options_.variable_kind);
  params_->list.push_back(v);
  params_->by_name[name] = v;
}

void ParamMaker::Weight(const std::string& name,
                        const std::vector<int64_t>& shape, int64_t fan_in) {
  Scope init = scope().NewSubScope(absl::StrCat(name, "/Initializer"));
  const float stddev = 1.f / std::sqrt(static_cast<float>(fan_in));
  Add(name, shape,
      TruncatedNormal(init, shape, DT_FLOAT, 0.f, stddev, options_.seed,
                      ++seed2_));
}

void ParamMaker::Constant(const std::string& name,
                          const std::vector<int64_t>& shape, float value) {
  Scope init = scope().NewSubScope(absl::StrCat(name, "/Initializer"));
  Add(name, shape, Fill(init, ShapeOf(init, shape), Const(init, value)));
}

Output Param(const Scope& scope, const ModelParams& params,
             const std::string& name) {
  auto it = params.by_name.find(name);
  if (it == params.by_name.end()) {
    scope.UpdateStatus(absl::NotFoundError(
        absl::StrCat("model parameter '", name, "' was not created")));
    return Output();
  }
  return it->second.value;
}

Output Dense(const Scope& scope, const ModelParams& params,
             const std::string& name, const Output& x) {
  Scope s = scope.NewSubScope(name);
  return BiasAdd(s, MatMul(s, x, Param(s, params, name + "/w")),
                 Param(s, params, name + "/b"));
}

Output LayerNorm(const Scope& scope, const ModelParams& params,
                 const std::string& name, const Output& x) {
  Scope s = scope.NewSubScope(name);
  Output axis = Const(s, {-1});
  Output mean = Mean(s, x, axis, /*keep_dims=*/true);
  Output var = Mean(s, SquaredDifference(s, x, mean), axis, true);
  Output norm = Mul(s, Sub(s, x, mean), Rsqrt(s, AddV2(s, var, Const(s, 1e-5f))));
  return AddV2(s, Mul(s, norm, Param(s, params, name + "/gamma")),
               Param(s, params, name + "/beta"));
}

Output ShapeOf(const Scope& scope, const std::vector<int64_t>& dims) {
  std::vector<int32_t> d(dims.begin(), dims.end());
  return Const(scope, d, TensorShape({static_cast<int64_t>(d.size())}));
}

}  // namespace models_internal
}  // namespace weft
