// MatrixDiagV3 (diagonals -> matrices), MatrixDiagPartV3 (matrices ->
// diagonals) and MatrixSetDiagV3 (diagonals written into matrices), with a
// band of diagonals k = [lower, upper]. The same kernels run the older
// forms: V2 (no `align` attr: every diagonal left-aligned) and V1 (no k,
// num_rows, num_cols or padding inputs: the main diagonal, square
// matrices, zero padding), told apart by their input counts. The packed diagonals tensor has a
// row per diagonal, from `upper` down to `lower`, each max_diag_len long;
// a diagonal shorter than that sits at the left or the right of its row as
// `align` says (first word: diagonals above the main one, second: below;
// the main one is left-aligned if either word says LEFT), the rest being
// padding. Elements move without arithmetic, so the kernels are written
// once per element size (VisitStorage); matrices are shared out over the
// intra-op pool.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_index_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

// The band and how each of its diagonals sits in the packed tensor.
struct Band {
  int64_t lower = 0, upper = 0;
  int64_t rows = 0, cols = 0, max_len = 0;
  bool left_super = false, left_sub = true;  // RIGHT_LEFT

  int64_t num_diags() const { return upper - lower + 1; }
  int64_t Length(int64_t d) const {
    return std::min(rows + std::min<int64_t>(0, d), cols - std::max<int64_t>(0, d));
  }
  int64_t Offset(int64_t d) const {
    const bool left = (d >= 0 && left_super) || (d <= 0 && left_sub);
    return left ? 0 : max_len - Length(d);
  }
};

absl::Status ReadBand(const Tensor& k, Band* band) {
  if (k.dims() > 1 || k.NumElements() < 1 || k.NumElements() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "diag_index must be a scalar or vector with one or two elements, "
        "received shape ", k.shape().DebugString()));
  }
  const int32_t* v = k.data<int32_t>();
  band->lower = v[0];
  band->upper = v[k.NumElements() - 1];
  if (band->lower > band->upper) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lower_diag_index must not be larger than upper_diag_index: ",
        band->lower, " > ", band->upper));
  }
  return absl::OkStatus();
}

// The band input `i` gives, or the main diagonal when the op (a V1 form)
// has no such input.
absl::Status ReadBandInput(OpKernelContext* c, int i, Band* band) {
  if (i >= c->num_inputs()) return absl::OkStatus();
  return ReadBand(c->input(i), band);
}

// V2 forms have no `align` attr and align every diagonal left.
void ReadAlign(OpKernelConstruction* c, Band* band) {
  if (!c->HasAttr("align")) {
    band->left_super = band->left_sub = true;
    return;
  }
  std::string align;
  c->SetStatus(c->GetAttr("align", &align));
  band->left_super = align.rfind("LEFT", 0) == 0;
  band->left_sub = align.size() >= 4 && align.compare(align.size() - 4, 4, "LEFT") == 0;
}

// The bounds MatrixDiagPartV3 and MatrixSetDiagV3 put on k for a rows x
// cols matrix.
absl::Status CheckBandInMatrix(const Band& b) {
  for (auto [name, d] : {std::pair<const char*, int64_t>{"lower_diag_index", b.lower},
                         std::pair<const char*, int64_t>{"upper_diag_index", b.upper}}) {
    if (!((-b.rows < d && d < b.cols) || d == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " is out of bound: ", d, ". It must be between ", -b.rows,
          " and ", b.cols));
    }
  }
  return absl::OkStatus();
}

// The band input `k` selects in the matrices of `in` (b's rows, cols and
// max_len filled in), and the shape of their packed diagonals.
absl::Status BandOfMatrices(OpKernelContext* c, const Tensor& in, int k, Band* b,
                            TensorShape* packed) {
  absl::Status s = RequireMatrices(in);
  if (s.ok()) s = ReadBandInput(c, k, b);
  if (!s.ok()) return s;
  b->rows = in.dim_size(in.dims() - 2);
  b->cols = in.dim_size(in.dims() - 1);
  s = CheckBandInMatrix(*b);
  if (!s.ok()) return s;
  b->max_len = std::min(b->rows + std::min<int64_t>(b->upper, 0),
                        b->cols - std::max<int64_t>(b->lower, 0));
  *packed = in.shape();
  packed->RemoveDim(packed->dims() - 1);
  packed->RemoveDim(packed->dims() - 1);
  if (b->num_diags() > 1) packed->AddDim(b->num_diags());
  packed->AddDim(std::max<int64_t>(b->max_len, 0));
  return absl::OkStatus();
}

// Copies the band's elements of `matrices` matrices between their packed
// diagonals and the matrices: packed into matrix elements when kToMatrix,
// else the reverse. Elements outside the band are left as they are.
template <bool kToMatrix>
void CopyBand(OpKernelContext* c, const Band& b, int64_t matrices,
              const Tensor& from, Tensor* to) {
  const int64_t per = b.num_diags() * b.max_len;
  VisitStorage(from.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = from.data<T>();
    T* dst = to->data<T>();
    ParallelRange(c, matrices, per + 1, [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) {
        for (int64_t d = b.upper; d >= b.lower; --d) {
          const int64_t row = b.upper - d, len = b.Length(d);
          const int64_t packed = m * per + row * b.max_len + b.Offset(d);
          const int64_t first = (m * b.rows + std::max<int64_t>(0, -d)) * b.cols +
                                std::max<int64_t>(0, d);
          for (int64_t i = 0; i < len; ++i) {
            const int64_t elem = first + i * (b.cols + 1);
            if constexpr (kToMatrix) {
              dst[elem] = src[packed + i];
            } else {
              dst[packed + i] = src[elem];
            }
          }
        }
      }
    });
  });
}

// Fills `out` with the scalar padding input `i` (of out's dtype), or with
// zeros when the op (a V1 form) has no such input.
void FillWith(OpKernelContext* c, int i, Tensor* out) {
  VisitStorage(out->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T value = i < c->num_inputs() ? c->input(i).data<T>()[0] : T{};
    std::fill(out->data<T>(), out->data<T>() + out->NumElements(), value);
  });
}

absl::Status ScalarPadding(OpKernelContext* c, int i) {
  if (i >= c->num_inputs() || c->input(i).NumElements() == 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "padding_value must be a scalar, received shape ",
      c->input(i).shape().DebugString()));
}

class MatrixDiagPartOp : public OpKernel {
 public:
  explicit MatrixDiagPartOp(OpKernelConstruction* c) : OpKernel(c) { ReadAlign(c, &band_); }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES_OK(c, ScalarPadding(c, 2));
    Band b = band_;
    TensorShape shape;
    OP_REQUIRES_OK(c, BandOfMatrices(c, in, 1, &b, &shape));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    FillWith(c, 2, out);
    CopyBand<false>(c, b, in.NumElements() / (b.rows * b.cols), in, out);
  }

 private:
  Band band_;
};

class MatrixDiagOp : public OpKernel {
 public:
  explicit MatrixDiagOp(OpKernelConstruction* c) : OpKernel(c) { ReadAlign(c, &band_); }

  void Compute(OpKernelContext* c) override {
    const Tensor& diag = c->input(0);
    Band b = band_;
    OP_REQUIRES_OK(c, ReadBandInput(c, 1, &b));
    int64_t rows = -1, cols = -1;
    if (c->num_inputs() > 1) {
      OP_REQUIRES_OK(c, ReadIntScalar(c->input(2), "num_rows", &rows));
      OP_REQUIRES_OK(c, ReadIntScalar(c->input(3), "num_cols", &cols));
    }
    OP_REQUIRES_OK(c, ScalarPadding(c, 4));
    const int min_rank = b.num_diags() > 1 ? 2 : 1;
    OP_REQUIRES(c, diag.dims() >= min_rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "diagonal must be at least ", min_rank, "-dim, received shape: ",
                    diag.shape().DebugString())));
    OP_REQUIRES(c, b.num_diags() == 1 || diag.dim_size(diag.dims() - 2) == b.num_diags(),
                absl::InvalidArgumentError(
                    "The number of diagonals provided in the input does not "
                    "match the lower_diag_index and upper_diag_index range."));
    b.max_len = diag.dim_size(diag.dims() - 1);
    const int64_t min_rows = b.max_len - std::min<int64_t>(b.upper, 0);
    const int64_t min_cols = b.max_len + std::max<int64_t>(b.lower, 0);
    if (rows == -1 && cols == -1) rows = cols = std::max(min_rows, min_cols);
    if (rows == -1) rows = min_rows;
    if (cols == -1) cols = min_cols;
    OP_REQUIRES(c, rows >= min_rows,
                absl::InvalidArgumentError(absl::StrCat(
                    "The number of rows is too small: ", rows, " < ", min_rows)));
    OP_REQUIRES(c, cols >= min_cols,
                absl::InvalidArgumentError(absl::StrCat(
                    "The number of columns is too small: ", cols, " < ", min_cols)));
    OP_REQUIRES(c, rows == min_rows || cols == min_cols,
                absl::InvalidArgumentError(
                    "The number of rows or columns is not consistent with the "
                    "specified d_lower, d_upper, and diagonal."));
    b.rows = rows;
    b.cols = cols;
    TensorShape shape = diag.shape();
    shape.RemoveDim(shape.dims() - 1);
    if (b.num_diags() > 1) shape.RemoveDim(shape.dims() - 1);
    shape.AddDim(rows);
    shape.AddDim(cols);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    FillWith(c, 4, out);
    CopyBand<true>(c, b, out->NumElements() / (rows * cols), diag, out);
  }

 private:
  Band band_;
};

class MatrixSetDiagOp : public OpKernel {
 public:
  explicit MatrixSetDiagOp(OpKernelConstruction* c) : OpKernel(c) { ReadAlign(c, &band_); }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const Tensor& diag = c->input(1);
    Band b = band_;
    TensorShape expected;
    OP_REQUIRES_OK(c, BandOfMatrices(c, in, 2, &b, &expected));
    OP_REQUIRES(c, diag.shape() == expected,
                absl::InvalidArgumentError(absl::StrCat(
                    "diagonal must have shape ", expected.DebugString(),
                    " for input of shape ", in.shape().DebugString(), " and k [",
                    b.lower, ", ", b.upper, "], received shape: ",
                    diag.shape().DebugString())));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    if (out->NumElements() == 0) return;
    CopyElements(in, 0, *out, 0, in.NumElements());
    CopyBand<true>(c, b, in.NumElements() / (b.rows * b.cols), diag, out);
  }

 private:
  Band band_;
};

}  // namespace

void RegisterMatrixDiagKernels(KernelRegistry* r) {
  auto def = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", PodTypes());
  };
  for (const char* v : {"", "V2", "V3"}) {
    r->Register(def(absl::StrCat("MatrixDiag", v).c_str()), MakeKernel<MatrixDiagOp>);
    r->Register(def(absl::StrCat("MatrixDiagPart", v).c_str()),
                MakeKernel<MatrixDiagPartOp>);
    r->Register(def(absl::StrCat("MatrixSetDiag", v).c_str()),
                MakeKernel<MatrixSetDiagOp>);
  }
}

}  // namespace weft
