// N-dimensional gathers and scatters, with TensorFlow's OpDefs: GatherNd,
// ResourceGatherNd, ScatterNd, TensorScatter{Update,Add,Sub,Min,Max},
// ScatterNdNonAliasingAdd, and the variable forms ScatterNd{Update,Add,Sub,
// Min,Max} (ref) and ResourceScatterNd{Update,Add,Sub,Min,Max}. indices is
// [..., K]: each row of K coordinates names the slice shape[K:] of the
// tensor; updates are indices.shape[:-1] + shape[K:]. The kernels are in
// ops/cpu/scatter_nd_kernels.cc.
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "ops/type_lists.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// K, the last dim of indices, when known (-1 otherwise).
int64_t IndexDepth(const PartialShape& indices) {
  if (!indices.known_rank() || indices.rank() == 0) return -1;
  return indices.dim(indices.rank() - 1);
}

// GatherNd: indices.shape[:-1] + params.shape[K:].
absl::Status GatherNdShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(1, 1));
  const PartialShape& params = c->input(0);
  const PartialShape& indices = c->input(1);
  const int64_t k = IndexDepth(indices);
  if (!params.known_rank() || !indices.known_rank() || k < 0) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  if (k > params.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "index innermost dimension length must be <= params rank; saw: ", k,
        " vs. ", params.rank()));
  }
  std::vector<int64_t> dims;
  for (int d = 0; d + 1 < indices.rank(); ++d) dims.push_back(indices.dim(d));
  for (int d = static_cast<int>(k); d < params.rank(); ++d) dims.push_back(params.dim(d));
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

// TensorScatter*, ScatterNd* on a ref: the tensor's shape.
absl::Status FirstInputShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(1, 1));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status NoOutputs(InferenceContext*) { return absl::OkStatus(); }

constexpr char kBadIndices[] = "bad_indices_policy: string = ''";

}  // namespace

void RegisterScatterNdOps(OpRegistry* r) {
  r->Register(OpDefBuilder("GatherNd")
                  .Input("params: Tparams")
                  .Input("indices: Tindices")
                  .Output("output: Tparams")
                  .Attr("Tparams: type")
                  .Attr("Tindices: {int16, int32, int64}")
                  .Attr(kBadIndices),
              GatherNdShape);
  r->Register(OpDefBuilder("ResourceGatherNd")
                  .Input("resource: resource")
                  .Input("indices: Tindices")
                  .Output("output: dtype")
                  .Attr("dtype: type")
                  .Attr("Tindices: {int32, int64}")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("ScatterNd")
                  .Input("indices: Tindices")
                  .Input("updates: T")
                  .Input("shape: Tindices")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Tindices: {int16, int32, int64}")
                  .Attr(kBadIndices),
              [](InferenceContext* c) {
                WEFT_RETURN_IF_ERROR(c->WithRank(2, 1));
                c->set_output(0, c->InputAsShape(2));
                return absl::OkStatus();
              });
  r->Register(OpDefBuilder("TensorScatterUpdate")
                  .Input("tensor: T")
                  .Input("indices: Tindices")
                  .Input("updates: T")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Tindices: {int16, int32, int64, uint16}")
                  .Attr(kBadIndices),
              FirstInputShape);
  for (const char* op : {"TensorScatterAdd", "TensorScatterSub",
                         "TensorScatterMin", "TensorScatterMax"}) {
    r->Register(OpDefBuilder(op)
                    .Input("tensor: T")
                    .Input("indices: Tindices")
                    .Input("updates: T")
                    .Output("output: T")
                    .Attr("T: type")
                    .Attr("Tindices: {int32, int64}")
                    .Attr(kBadIndices),
                FirstInputShape);
  }
  const std::string number_types = std::string(kNumberTypes);
  r->Register(OpDefBuilder("ScatterNdNonAliasingAdd")
                  .Input("input: T")
                  .Input("indices: Tindices")
                  .Input("updates: T")
                  .Output("output: T")
                  .Attr(absl::StrCat("T: ", number_types.substr(0, number_types.size() - 1),
                                     ", bool}"))
                  .Attr("Tindices: {int32, int64}")
                  .Attr(kBadIndices),
              FirstInputShape);
  for (const char* op : {"ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub",
                         "ScatterNdMin", "ScatterNdMax"}) {
    const bool update = std::string(op) == "ScatterNdUpdate";
    r->Register(OpDefBuilder(op)
                    .Input("ref: Ref(T)")
                    .Input("indices: Tindices")
                    .Input("updates: T")
                    .Output("output_ref: Ref(T)")
                    .Attr(update ? std::string("T: type") : absl::StrCat("T: ", kNumberTypes))
                    .Attr("Tindices: {int32, int64}")
                    .Attr(update ? "use_locking: bool = true" : "use_locking: bool = false")
                    .Attr(kBadIndices),
                FirstInputShape);
  }
  for (const char* op : {"ResourceScatterNdUpdate", "ResourceScatterNdAdd",
                         "ResourceScatterNdSub", "ResourceScatterNdMin",
                         "ResourceScatterNdMax"}) {
    r->Register(OpDefBuilder(op)
                    .Input("ref: resource")
                    .Input("indices: Tindices")
                    .Input("updates: T")
                    .Attr("T: type")
                    .Attr("Tindices: {int32, int64}")
                    .Attr("use_locking: bool = true")
                    .Attr(kBadIndices)
                    .SetIsStateful(),
                NoOutputs);
  }
}

}  // namespace weft
