// RaggedTensorToTensor: a ragged tensor (flat values plus one row
// partition per ragged dimension) to a dense tensor, each row padded with
// default_value (broadcast to one value's shape) or cropped to `shape`.
// Partitions come in the two forms TensorFlow writes: ROW_SPLITS for every
// level, or FIRST_DIM_SIZE (the row count) then VALUE_ROWIDS for every
// level. Every partition is checked before anything is read through it:
// splits must start at 0, never decrease and end within the level below;
// row ids must be sorted and name an existing row. Mixed forms are refused.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// One ragged level: its partition tensor's values, how many rows it splits
// (the level above's element count) and the longest row.
struct Level {
  std::vector<int64_t> part;  // splits (rows + 1) or one row id per element
  int64_t rows = 0;
  int64_t elements = 0;
  int64_t max_row = 0;
};

std::string PartName(int i, bool splits) {
  return absl::StrCat("row_partition_tensors[", i, "] (", splits ? "ROW_SPLITS" : "VALUE_ROWIDS",
                      ")");
}

absl::Status CheckSplits(const std::string& what, Level* l) {
  const std::vector<int64_t>& s = l->part;
  if (s.empty() || s[0] != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Invalid row split size: ", what, " must start with 0, got ",
        s.empty() ? std::string("an empty vector") : absl::StrCat(s[0])));
  }
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] < s[i - 1]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Invalid row split size: ", what, " must not decrease, got ", s[i - 1], " then ", s[i],
          " at index ", i));
    }
    l->max_row = std::max(l->max_row, s[i] - s[i - 1]);
  }
  l->rows = static_cast<int64_t>(s.size()) - 1;
  l->elements = s.back();
  return absl::OkStatus();
}

absl::Status CheckRowIds(const std::string& what, int64_t rows, Level* l) {
  const std::vector<int64_t>& ids = l->part;
  int64_t run = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Got value_rowid=", ids[i], " which is not less than ", rows, " (or is negative) in ",
          what, " at index ", i));
    }
    if (i > 0 && ids[i] < ids[i - 1]) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " must be sorted, got ", ids[i - 1], " then ", ids[i], " at index ", i));
    }
    run = i > 0 && ids[i] == ids[i - 1] ? run + 1 : 1;
    l->max_row = std::max(l->max_row, run);
  }
  l->rows = rows;
  l->elements = static_cast<int64_t>(ids.size());
  return absl::OkStatus();
}

// The output shape: [rows, longest row of each level..., values' inner
// dims], each dim replaced by `shape`'s where that is not -1.
absl::Status OutputDims(const Tensor& shape_in, const std::vector<Level>& levels,
                        const TensorShape& values, std::vector<int64_t>* out) {
  out->assign(1, levels[0].rows);
  for (const Level& l : levels) out->push_back(l.max_row);
  const size_t ragged = out->size();
  for (int d = 1; d < values.dims(); ++d) out->push_back(values.dim_size(d));
  if (shape_in.dims() == 0) return absl::OkStatus();  // -1: unknown shape
  std::vector<int64_t> shape;
  WEFT_RETURN_IF_ERROR(ReadIntVector(shape_in, "shape", &shape));
  const std::string text = absl::StrCat("[", absl::StrJoin(shape, ","), "]");
  if (shape.size() != out->size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rt_input.shape and shape=", text, " are incompatible: rt_input.rank = ", out->size(),
        " but shape.rank = ", shape.size()));
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Dimension ", shape[d], " must be >= -1 (in shape)"));
    }
    if (shape[d] == -1) continue;
    if (d >= ragged && shape[d] != (*out)[d]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rt_input.shape and shape=", text, " are incompatible: rt_input.shape[", d,
          "] = ", (*out)[d], " but shape[", d, "] = ", shape[d]));
    }
    (*out)[d] = shape[d];
  }
  int64_t n = 1;
  for (int64_t d : *out) {
    if (d != 0 && n > INT64_MAX / d) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Shape [", absl::StrJoin(*out, ","), "] would have more than 2**63 - 1 elements"));
    }
    n *= d;
  }
  return absl::OkStatus();
}

// default_value's index for each element of one value (shape `inner`),
// broadcasting it from the right as NumPy does.
absl::Status DefaultIndex(const TensorShape& def, const TensorShape& values,
                          std::vector<int64_t>* index) {
  const int inner_rank = values.dims() - 1;
  auto incompatible = [&](int k) {
    return absl::InvalidArgumentError(absl::StrCat(
        "default_value.shape=", def.DebugString(), " and rt_input.flat_values.shape=",
        values.DebugString(), " are incompatible: default_value.shape[", k - def.dims(),
        "] = ", def.dim_size(k), " but rt_input.flat_values.shape[", k - def.dims(), "] = ",
        values.dim_size(values.dims() - def.dims() + k)));
  };
  if (def.dims() > inner_rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "default_value.shape=", def.DebugString(), " and rt_input.flat_values.shape=",
        values.DebugString(), " are incompatible: default_value.rank = ", def.dims(),
        " must be less than rt_input.flat_values.rank = ", values.dims()));
  }
  for (int k = 0; k < def.dims(); ++k) {
    const int64_t v = values.dim_size(values.dims() - def.dims() + k);
    if (def.dim_size(k) != 1 && def.dim_size(k) != v) return incompatible(k);
  }
  int64_t inner = 1;
  for (int d = 1; d < values.dims(); ++d) inner *= values.dim_size(d);
  index->assign(inner, 0);
  for (int64_t e = 0; e < inner; ++e) {
    int64_t rest = e, src = 0, stride = 1;
    for (int k = def.dims() - 1; k >= 0; --k) {
      const int64_t v = values.dim_size(values.dims() - def.dims() + k);
      const int64_t at = rest % v;
      rest /= v;
      if (def.dim_size(k) != 1) src += at * stride;
      stride *= def.dim_size(k);
    }
    (*index)[e] = src;
  }
  return absl::OkStatus();
}

class RaggedTensorToTensorOp : public OpKernel {
 public:
  explicit RaggedTensorToTensorOp(OpKernelConstruction* c) : OpKernel(c) {
    std::vector<std::string> types;
    absl::Status s = c->GetAttr("row_partition_types", &types);
    if (s.ok()) s = ParseTypes(types);
    c->SetStatus(s);
    num_types_ = static_cast<int>(types.size());
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& values = c->input(1);
    const Tensor& def = c->input(2);
    const int num_parts = c->num_inputs() - 3;
    OP_REQUIRES(c, num_parts == num_types_,
                absl::InvalidArgumentError(absl::StrCat(
                    "row_partition_types has ", num_types_, " entries but ", num_parts,
                    " row_partition_tensors were given")));
    OP_REQUIRES(c, values.dims() >= 1,
                absl::InvalidArgumentError("values must have rank at least 1"));
    std::vector<Level> levels;
    int64_t rows = 0;
    int i = 0;
    if (first_dim_size_) {
      OP_REQUIRES_OK(c, ReadIntScalar(c->input(3), "row_partition_tensors[0] (FIRST_DIM_SIZE)",
                                      &rows));
      OP_REQUIRES(c, rows >= 0, absl::InvalidArgumentError(absl::StrCat(
                                    "Dimension ", rows, " must be >= 0 (FIRST_DIM_SIZE)")));
      i = 1;
    }
    for (; i < num_parts; ++i) {
      const std::string what = PartName(i, !first_dim_size_);
      Level l;
      OP_REQUIRES_OK(c, ReadIntVector(c->input(3 + i), what, &l.part));
      if (first_dim_size_) {
        OP_REQUIRES_OK(c, CheckRowIds(what, levels.empty() ? rows : levels.back().elements, &l));
      } else {
        OP_REQUIRES_OK(c, CheckSplits(what, &l));
        OP_REQUIRES(c, levels.empty() || l.rows == levels.back().elements,
                    absl::InvalidArgumentError(absl::StrCat(
                        what, " splits ", l.rows, " rows but the level above has ",
                        levels.back().elements, " elements")));
      }
      levels.push_back(std::move(l));
    }
    OP_REQUIRES(c, levels.back().elements <= values.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    PartName(num_parts - 1, !first_dim_size_), " describes ",
                    levels.back().elements, " values but values has only ",
                    values.dim_size(0), " rows")));
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(c, OutputDims(c->input(0), levels, values.shape(), &dims));
    std::vector<int64_t> def_index;
    OP_REQUIRES_OK(c, DefaultIndex(def.shape(), values.shape(), &def_index));
    absl::StatusOr<TensorShape> shape = TensorShape::Build(dims);
    OP_REQUIRES_OK(c, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, *shape, &out));

    // Where each element of each level lands in the output's leading dims
    // (flattened), or -1 where it is cropped away.
    // The first level's rows land where they are (FIRST_DIM_SIZE may be
    // far more rows than any tensor holds, so no vector for them).
    std::vector<int64_t> pos;
    auto parent = [&](size_t k, int64_t p) {
      if (k == 0) return p < dims[0] ? p : -1;
      return pos[p];
    };
    for (size_t k = 0; k < levels.size(); ++k) {
      const Level& l = levels[k];
      const int64_t width = dims[k + 1];
      std::vector<int64_t> next(l.elements, -1);
      if (first_dim_size_) {
        for (int64_t e = 0, j = 0; e < l.elements; ++e) {
          j = e > 0 && l.part[e] == l.part[e - 1] ? j + 1 : 0;
          const int64_t p = parent(k, l.part[e]);
          if (p >= 0 && j < width) next[e] = p * width + j;
        }
      } else {
        for (int64_t r = 0; r < l.rows; ++r) {
          const int64_t p = parent(k, r);
          if (p < 0) continue;
          for (int64_t e = l.part[r]; e < l.part[r + 1] && e - l.part[r] < width; ++e) {
            next[e] = p * width + (e - l.part[r]);
          }
        }
      }
      pos = std::move(next);
    }

    const int64_t inner = static_cast<int64_t>(def_index.size());
    const int64_t blocks = inner == 0 ? 0 : out->NumElements() / inner;
    const bool ok = VisitStorage(values.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = values.data<T>();
      const T* d = def.data<T>();
      T* dst = out->data<T>();
      for (int64_t b = 0; b < blocks; ++b) {
        for (int64_t e = 0; e < inner; ++e) dst[b * inner + e] = d[def_index[e]];
      }
      for (size_t v = 0; v < pos.size(); ++v) {
        if (pos[v] < 0) continue;
        for (int64_t e = 0; e < inner; ++e) dst[pos[v] * inner + e] = src[v * inner + e];
      }
    });
    OP_REQUIRES(c, ok, UnsupportedDtype("RaggedTensorToTensor", values.dtype()));
  }

 private:
  // The two forms TensorFlow writes; sets first_dim_size_.
  absl::Status ParseTypes(const std::vector<std::string>& types) {
    if (types.empty()) return absl::InvalidArgumentError("No partition tensors");
    if (types[0] == "VALUE_ROWIDS") {
      return absl::InvalidArgumentError("Cannot handle VALUE_ROWIDS in first dimension.");
    }
    first_dim_size_ = types[0] == "FIRST_DIM_SIZE";
    if (first_dim_size_ && types.size() < 2) {
      return absl::InvalidArgumentError(
          "FIRST_DIM_SIZE must be followed by at least one VALUE_ROWIDS partition");
    }
    const std::string rest = first_dim_size_ ? "VALUE_ROWIDS" : "ROW_SPLITS";
    for (size_t i = first_dim_size_ ? 1 : 0; i < types.size(); ++i) {
      if (types[i] != rest) {
        return absl::InvalidArgumentError(absl::StrCat(
            "row_partition_types must be [ROW_SPLITS, ...] or [FIRST_DIM_SIZE, "
            "VALUE_ROWIDS, ...]; got ", types[i], " at index ", i));
      }
    }
    return absl::OkStatus();
  }

  bool first_dim_size_ = false;
  int num_types_ = 0;
};

}  // namespace

// count_sparse_kernels.cc: Dense-, Sparse- and RaggedCountSparseOutput.
void RegisterCountSparseKernels(KernelRegistry* r);

void RegisterRaggedKernels(KernelRegistry* r) {
  for (DataType t : PodAndStringTypes()) {
    for (DataType idx : {DT_INT32, DT_INT64}) {
      r->Register(KernelDef("RaggedTensorToTensor", kDeviceTypeCpu)
                      .TypeConstraint("T", t)
                      .TypeConstraint("Tindex", idx),
                  MakeKernel<RaggedTensorToTensorOp>);
    }
  }
  RegisterRaggedBincountKernels(r);
  RegisterRaggedRangeKernels(r);
  RegisterRaggedFillKernels(r);
  RegisterCountSparseKernels(r);
}

}  // namespace weft
