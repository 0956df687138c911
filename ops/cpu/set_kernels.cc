// Set operations along the last dimension (tf.sets): DenseToDense-,
// DenseToSparse- and SparseToSparseSetOperation and SetSize, for int8/16/32/
// 64, uint8/16 and string, as TensorFlow registers them on CPU.
//
// Each op first pairs up its operands' groups, in TensorFlow's order: every
// group of a dense set1 in row-major order (with the sparse set2's next run
// when it is that group), or for two SparseTensors a merge of their runs by
// group. Each pair's result is then computed apart, pairs shared out over
// the intra-op pool: both sides sorted and deduplicated, then std::
// set_difference / set_intersection / set_union, which leaves the result
// sorted as TensorFlow's (an ordered set there). Empty results are dropped;
// the output SparseTensor is the results' values, indices [group..., j] and
// shape group_shape + [largest result].
//
// Sparse operands are checked first as TensorFlow's SparseTensor checks
// them (indices inside the shape always, strictly increasing with
// validate_indices); errors give TensorFlow's wording, then the input.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/tensor_shape.h"

namespace weft {
namespace {

// A SparseTensor set: its runs of consecutive entries that share a group
// (all but the last index), each a slice of its values. A run's group is
// a row-major key into the group shape, so groups merge and match by one
// integer compare.
struct SparseSet {
  struct Run {
    int64_t key;    // row-major index of the group in group_shape
    int64_t begin;  // [begin, end): the run's entries in values
    int64_t end;
  };
  TensorShape shape;        // the dense shape the SparseTensor describes
  TensorShape group_shape;  // shape without its last dim
  std::vector<Run> runs;    // in input order
};

absl::Status Bad(absl::string_view name, absl::string_view suffix,
                 const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " (input ", name, suffix, ")"));
}

std::string IndexString(const int64_t* ix, int rank) {
  return absl::StrCat("[", absl::StrJoin(ix, ix + rank, ","), "]");
}

// A dense set's group shape (its shape without the last dim); its rank
// must be at least 2.
absl::StatusOr<TensorShape> DenseGroupShape(const TensorShape& shape,
                                            absl::string_view name) {
  if (shape.dims() < 2) {
    return Bad(name, "", absl::StrCat("Shape ", shape.DebugString(),
                                      " has rank ", shape.dims(), " < 2"));
  }
  TensorShape group = shape;
  group.RemoveDim(shape.dims() - 1);
  return group;
}

// The two operands' group shapes must be equal.
absl::Status CheckSameGroups(const TensorShape& g1, const TensorShape& g2) {
  if (g1 != g2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Mismatched shapes ", g1.DebugString(), " vs ", g2.DebugString(),
        " (all but the last dimension of set1 and set2 must agree)"));
  }
  return absl::OkStatus();
}

// Reads the SparseTensor of inputs [first, first + 3) (indices, values,
// shape), named `name`_indices etc. in errors. Indices must lie inside the
// shape always; with validate_indices they must also be strictly
// increasing in row-major order, as TensorFlow's IndicesValid demands.
absl::Status ReadSparseSet(OpKernelContext* c, int first,
                           absl::string_view name, bool validate_indices,
                           SparseSet* out) {
  const Tensor& indices = c->input(first);
  const Tensor& values = c->input(first + 1);
  const Tensor& shape_t = c->input(first + 2);
  if (shape_t.dims() != 1) {
    return Bad(name, "_shape", absl::StrCat("Shape must be a 1D tensor, got ",
                                            shape_t.shape().DebugString()));
  }
  const int64_t* dims = shape_t.data<int64_t>();
  absl::StatusOr<TensorShape> shape =
      TensorShape::Build(absl::MakeConstSpan(dims, shape_t.dim_size(0)));
  if (!shape.ok()) return Bad(name, "_shape", std::string(shape.status().message()));
  const int rank = shape->dims();
  if (rank < 2) return Bad(name, "_shape", absl::StrCat("Invalid rank ", rank, "."));
  if (indices.dims() != 2) {
    return Bad(name, "_indices",
               absl::StrCat("indices must be a matrix, got ",
                            indices.shape().DebugString()));
  }
  if (values.dims() != 1) {
    return Bad(name, "_values", absl::StrCat("vals must be a vec, but got: ",
                                             values.shape().DebugString()));
  }
  const int64_t n = indices.dim_size(0);
  if (values.dim_size(0) != n) {
    return Bad(name, "_values",
               absl::StrCat("indices and values rows (indexing dimension) "
                            "must match. (indices = ",
                            n, ", values = ", values.dim_size(0), ")"));
  }
  if (indices.dim_size(1) != rank) {
    return Bad(name, "_indices",
               absl::StrCat("Index rank must be SparseTensor rank: indices "
                            "have ", indices.dim_size(1), " columns, shape ",
                            shape->DebugString()));
  }
  out->shape = *shape;
  out->group_shape = *shape;
  out->group_shape.RemoveDim(rank - 1);
  out->runs.clear();
  const int64_t* ix = indices.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t* row = ix + i * rank;
    int64_t key = 0;
    for (int d = 0; d < rank; ++d) {
      if (row[d] < 0 || row[d] >= out->shape.dim_size(d)) {
        return Bad(name, "_indices",
                   absl::StrCat("indices[", i, "] = ", IndexString(row, rank),
                                " is out of bounds: need 0 <= index < ",
                                out->shape.DebugString()));
      }
      if (d + 1 < rank) key = key * out->shape.dim_size(d) + row[d];
    }
    if (validate_indices && i > 0) {
      const int64_t* prev = row - rank;
      int d = 0;
      while (d < rank && prev[d] == row[d]) ++d;
      const int cmp = d == rank ? 0 : (prev[d] < row[d] ? -1 : 1);
      if (cmp > 0) {
        return Bad(name, "_indices",
                   absl::StrCat("indices[", i, "] = ", IndexString(row, rank),
                                " is out of order. Many sparse ops require "
                                "sorted indices. Use `tf.sparse.reorder` to "
                                "create a correctly ordered copy."));
      }
      if (cmp == 0) {
        return Bad(name, "_indices",
                   absl::StrCat("indices[", i, "] = ", IndexString(row, rank),
                                " is repeated"));
      }
    }
    if (out->runs.empty() || out->runs.back().key != key) {
      out->runs.push_back({key, i, i + 1});
    } else {
      out->runs.back().end = i + 1;
    }
  }
  return absl::OkStatus();
}

enum class SetOp { kAMinusB, kBMinusA, kIntersection, kUnion };
enum class Operands { kDenseDense, kDenseSparse, kSparseSparse };

// One group's two operands: slices of set1's and set2's values.
struct GroupPair {
  int64_t key;  // row-major index of the group
  int64_t a_begin, a_end, b_begin, b_end;
};

template <typename T>
std::vector<T> SortedUnique(const T* begin, const T* end) {
  std::vector<T> v(begin, end);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

template <typename T>
std::vector<T> Apply(SetOp op, const T* a, int64_t na, const T* b,
                     int64_t nb) {
  const std::vector<T> sa = SortedUnique(a, a + na);
  const std::vector<T> sb = SortedUnique(b, b + nb);
  std::vector<T> out;
  auto to = std::back_inserter(out);
  switch (op) {
    case SetOp::kAMinusB:
      std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), to);
      break;
    case SetOp::kBMinusA:
      std::set_difference(sb.begin(), sb.end(), sa.begin(), sa.end(), to);
      break;
    case SetOp::kIntersection:
      std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), to);
      break;
    case SetOp::kUnion:
      std::set_union(sa.begin(), sa.end(), sb.begin(), sb.end(), to);
      break;
  }
  return out;
}

// Dense set1's groups, each with set2's matching run if any. Like
// TensorFlow, set2's runs are taken in order and only while they match:
// with validate_indices off, a run out of order holds up the rest.
std::vector<GroupPair> PairDenseSparse(int64_t groups, int64_t row,
                                       const SparseSet& s2) {
  std::vector<GroupPair> pairs;
  pairs.reserve(groups);
  size_t next = 0;
  for (int64_t g = 0; g < groups; ++g) {
    GroupPair p{g, g * row, (g + 1) * row, 0, 0};
    if (next < s2.runs.size() && s2.runs[next].key == g) {
      p.b_begin = s2.runs[next].begin;
      p.b_end = s2.runs[next].end;
      ++next;
    }
    pairs.push_back(p);
  }
  return pairs;
}

// The runs of two SparseTensors merged by group; a group in only one of
// them pairs with nothing.
std::vector<GroupPair> PairSparseSparse(const SparseSet& s1,
                                        const SparseSet& s2) {
  std::vector<GroupPair> pairs;
  size_t i = 0, j = 0;
  while (i < s1.runs.size() || j < s2.runs.size()) {
    const bool take1 =
        j == s2.runs.size() ||
        (i < s1.runs.size() && s1.runs[i].key <= s2.runs[j].key);
    const bool take2 =
        i == s1.runs.size() ||
        (j < s2.runs.size() && s2.runs[j].key <= s1.runs[i].key);
    GroupPair p{take1 ? s1.runs[i].key : s2.runs[j].key, 0, 0, 0, 0};
    if (take1) {
      p.a_begin = s1.runs[i].begin;
      p.a_end = s1.runs[i++].end;
    }
    if (take2) {
      p.b_begin = s2.runs[j].begin;
      p.b_end = s2.runs[j++].end;
    }
    pairs.push_back(p);
  }
  return pairs;
}

absl::Status ParseSetOperation(std::string s, SetOp* op) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(ch));
  if (s == "a-b") {
    *op = SetOp::kAMinusB;
  } else if (s == "b-a") {
    *op = SetOp::kBMinusA;
  } else if (s == "intersection") {
    *op = SetOp::kIntersection;
  } else if (s == "union") {
    *op = SetOp::kUnion;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid set_operation ", s, "."));
  }
  return absl::OkStatus();
}

template <typename T>
class SetOperationOp : public OpKernel {
 public:
  SetOperationOp(OpKernelConstruction* c, Operands operands)
      : OpKernel(c), operands_(operands) {
    std::string op;
    c->SetStatus(c->GetAttr("set_operation", &op));
    if (c->status().ok()) c->SetStatus(ParseSetOperation(op, &op_));
    if (c->status().ok()) {
      c->SetStatus(c->GetAttr("validate_indices", &validate_indices_));
    }
  }

  void Compute(OpKernelContext* c) override {
    SparseSet s1, s2;
    TensorShape groups1, groups2;
    const T* a = nullptr;
    const T* b = nullptr;
    std::vector<GroupPair> pairs;
    if (operands_ == Operands::kSparseSparse) {
      OP_REQUIRES_OK(c, ReadSparseSet(c, 0, "set1", validate_indices_, &s1));
      OP_REQUIRES_OK(c, ReadSparseSet(c, 3, "set2", validate_indices_, &s2));
      OP_REQUIRES_OK(c, CheckSameGroups(s1.group_shape, s2.group_shape));
      a = c->input(1).data<T>();
      b = c->input(4).data<T>();
      pairs = PairSparseSparse(s1, s2);
      groups1 = s1.group_shape;
    } else {
      const Tensor& set1 = c->input(0);
      absl::StatusOr<TensorShape> g1 = DenseGroupShape(set1.shape(), "set1");
      OP_REQUIRES_OK(c, g1.status());
      groups1 = *g1;
      a = set1.data<T>();
      const int64_t groups = groups1.num_elements();
      const int64_t row1 = set1.dim_size(set1.dims() - 1);
      if (operands_ == Operands::kDenseSparse) {
        OP_REQUIRES_OK(c, ReadSparseSet(c, 1, "set2", validate_indices_, &s2));
        OP_REQUIRES_OK(c, CheckSameGroups(groups1, s2.group_shape));
        b = c->input(2).data<T>();
        pairs = PairDenseSparse(groups, row1, s2);
      } else {
        const Tensor& set2 = c->input(1);
        absl::StatusOr<TensorShape> g2 = DenseGroupShape(set2.shape(), "set2");
        OP_REQUIRES_OK(c, g2.status());
        OP_REQUIRES_OK(c, CheckSameGroups(groups1, *g2));
        b = set2.data<T>();
        const int64_t row2 = set2.dim_size(set2.dims() - 1);
        pairs.reserve(groups);
        for (int64_t g = 0; g < groups; ++g) {
          pairs.push_back({g, g * row1, (g + 1) * row1, g * row2,
                           (g + 1) * row2});
        }
      }
    }
    std::vector<std::vector<T>> results(pairs.size());
    const int64_t per_pair =
        pairs.empty() ? 1
                      : 64 * (c->input(0).NumElements() / pairs.size() + 1);
    ParallelRange(c, pairs.size(), per_pair, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const GroupPair& p = pairs[i];
        results[i] = Apply(op_, a + p.a_begin, p.a_end - p.a_begin,
                           b + p.b_begin, p.b_end - p.b_begin);
      }
    });
    Output(c, groups1, pairs, results);
  }

 private:
  static void Output(OpKernelContext* c, const TensorShape& group_shape,
                     const std::vector<GroupPair>& pairs,
                     std::vector<std::vector<T>>& results) {
    int64_t total = 0, longest = 0;
    for (const auto& r : results) {
      total += r.size();
      longest = std::max<int64_t>(longest, r.size());
    }
    const int rank = group_shape.dims() + 1;
    Tensor *indices = nullptr, *values = nullptr, *shape = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({total, rank}),
                                         &indices));
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({total}), &values));
    OP_REQUIRES_OK(c, c->allocate_output(2, TensorShape({rank}), &shape));
    int64_t* ix = indices->data<int64_t>();
    T* v = values->data<T>();
    for (size_t i = 0; i < pairs.size(); ++i) {
      for (size_t j = 0; j < results[i].size(); ++j) {
        int64_t key = pairs[i].key;  // unflattened into the group dims
        for (int d = rank - 2; d >= 0; --d) {
          ix[d] = key % group_shape.dim_size(d);
          key /= group_shape.dim_size(d);
        }
        ix[rank - 1] = static_cast<int64_t>(j);
        ix += rank;
        *v++ = std::move(results[i][j]);
      }
    }
    int64_t* s = shape->data<int64_t>();
    for (int d = 0; d + 1 < rank; ++d) s[d] = group_shape.dim_size(d);
    s[rank - 1] = longest;
  }

  const Operands operands_;
  SetOp op_ = SetOp::kUnion;
  bool validate_indices_ = true;
};

template <typename T, Operands kOperands>
class SetOperationKernel : public SetOperationOp<T> {
 public:
  explicit SetOperationKernel(OpKernelConstruction* c)
      : SetOperationOp<T>(c, kOperands) {}
};

// SetSize: the number of distinct values of each group, 0 for a group with
// none. A later run of the same group (unsorted input, validate_indices
// off) overwrites an earlier one, as in TensorFlow.
template <typename T>
class SetSizeOp : public OpKernel {
 public:
  explicit SetSizeOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("validate_indices", &validate_indices_));
  }

  void Compute(OpKernelContext* c) override {
    SparseSet set;
    OP_REQUIRES_OK(c, ReadSparseSet(c, 0, "set", validate_indices_, &set));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, set.group_shape, &out));
    int32_t* size = out->data<int32_t>();
    std::fill(size, size + out->NumElements(), 0);
    const T* values = c->input(1).data<T>();
    std::vector<int32_t> counts(set.runs.size());
    ParallelRange(c, set.runs.size(), 256, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const SparseSet::Run& r = set.runs[i];
        counts[i] = static_cast<int32_t>(
            SortedUnique(values + r.begin, values + r.end).size());
      }
    });
    for (size_t i = 0; i < set.runs.size(); ++i) {
      size[set.runs[i].key] = counts[i];
    }
  }

 private:
  bool validate_indices_ = true;
};

template <typename T>
void RegisterSetType(KernelRegistry* r, DataType dtype) {
  r->Register(
      KernelDef("DenseToDenseSetOperation", kDeviceTypeCpu)
          .TypeConstraint("T", dtype),
      MakeKernel<SetOperationKernel<T, Operands::kDenseDense>>);
  r->Register(
      KernelDef("DenseToSparseSetOperation", kDeviceTypeCpu)
          .TypeConstraint("T", dtype),
      MakeKernel<SetOperationKernel<T, Operands::kDenseSparse>>);
  r->Register(
      KernelDef("SparseToSparseSetOperation", kDeviceTypeCpu)
          .TypeConstraint("T", dtype),
      MakeKernel<SetOperationKernel<T, Operands::kSparseSparse>>);
  r->Register(KernelDef("SetSize", kDeviceTypeCpu).TypeConstraint("T", dtype),
              MakeKernel<SetSizeOp<T>>);
}

}  // namespace

void RegisterSetKernels(KernelRegistry* r) {
  RegisterSetType<int8_t>(r, DT_INT8);
  RegisterSetType<int16_t>(r, DT_INT16);
  RegisterSetType<int32_t>(r, DT_INT32);
  RegisterSetType<int64_t>(r, DT_INT64);
  RegisterSetType<uint8_t>(r, DT_UINT8);
  RegisterSetType<uint16_t>(r, DT_UINT16);
  RegisterSetType<std::string>(r, DT_STRING);
}

}  // namespace weft
