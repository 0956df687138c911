// ParseExampleV2 and ParseSingleExample: serialized tf.train.Example protos
// (proto/example.proto) into tensors. Dense features fill a fixed shape
// per example (from the feature's values, or the default when the feature
// is missing; an empty default makes it required); a dense shape whose
// first dimension is unknown (tf.io.FixedLenSequenceFeature) takes as many
// rows as each example has, padded to the batch's longest with the default
// (a scalar; zero or "" when empty); sparse features become
// (indices, values, dense shape) triples; ragged features (ParseExampleV2)
// values and row splits. Messages use TensorFlow's wording ("Name: <unknown>,
// Key: k, Index: 0.  Data types don't match. ...").
//
// Examples are parsed once each with the generated protobuf code, then each
// output is filled in one pass over them.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "proto/example.pb.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

struct DenseSpec {
  std::string key;
  DataType dtype;
  PartialShape shape;
};
struct ListSpec {  // a sparse or ragged feature
  std::string key;
  DataType dtype;
};

// What one parse produces, in the op's output order.
struct ParseConfig {
  std::vector<ListSpec> sparse;
  std::vector<DenseSpec> dense;
  std::vector<ListSpec> ragged;
  DataTypeVector ragged_splits;
};

DataType FeatureType(const tensorflow::Feature& f) {
  switch (f.kind_case()) {
    case tensorflow::Feature::kFloatList: return DT_FLOAT;
    case tensorflow::Feature::kInt64List: return DT_INT64;
    case tensorflow::Feature::kBytesList: return DT_STRING;
    default: return DT_INVALID;
  }
}

int64_t FeatureSize(const tensorflow::Feature& f) {
  switch (f.kind_case()) {
    case tensorflow::Feature::kFloatList: return f.float_list().value_size();
    case tensorflow::Feature::kInt64List: return f.int64_list().value_size();
    case tensorflow::Feature::kBytesList: return f.bytes_list().value_size();
    default: return 0;
  }
}

// f's values into dst's flat elements from `at` (dtypes already checked).
void CopyValues(const tensorflow::Feature& f, Tensor* dst, int64_t at) {
  switch (f.kind_case()) {
    case tensorflow::Feature::kFloatList: {
      auto out = dst->flat<float>();
      for (float v : f.float_list().value()) out[at++] = v;
      break;
    }
    case tensorflow::Feature::kInt64List: {
      auto out = dst->flat<int64_t>();
      for (int64_t v : f.int64_list().value()) out[at++] = v;
      break;
    }
    case tensorflow::Feature::kBytesList: {
      auto out = dst->flat<std::string>();
      for (const std::string& v : f.bytes_list().value()) out[at++] = v;
      break;
    }
    default: break;
  }
}

// `count` copies of scalar `value` (zero, or "", when it is empty) into
// dst's flat elements from `at`.
void FillPadding(const Tensor& value, Tensor* dst, int64_t at, int64_t count) {
  const bool given = value.NumElements() > 0;
  switch (dst->dtype()) {
    case DT_FLOAT: {
      const float v = given ? value.flat<float>()[0] : 0.0f;
      std::fill_n(dst->flat<float>().data() + at, count, v);
      break;
    }
    case DT_INT64: {
      const int64_t v = given ? value.flat<int64_t>()[0] : 0;
      std::fill_n(dst->flat<int64_t>().data() + at, count, v);
      break;
    }
    default: {
      const std::string v = given ? value.flat<std::string>()[0] : std::string();
      for (int64_t i = 0; i < count; ++i) dst->flat<std::string>()[at + i] = v;
      break;
    }
  }
}

void CopyTensorValues(const Tensor& src, Tensor* dst, int64_t at) {
  const int64_t n = src.NumElements();
  switch (src.dtype()) {
    case DT_FLOAT:
      for (int64_t i = 0; i < n; ++i) dst->flat<float>()[at + i] = src.flat<float>()[i];
      break;
    case DT_INT64:
      for (int64_t i = 0; i < n; ++i) dst->flat<int64_t>()[at + i] = src.flat<int64_t>()[i];
      break;
    default:
      for (int64_t i = 0; i < n; ++i) {
        dst->flat<std::string>()[at + i] = src.flat<std::string>()[i];
      }
      break;
  }
}

// Parses examples and fills a parse op's outputs.
class ExampleParser {
 public:
  ExampleParser(OpKernelContext* c, const ParseConfig& config, const Tensor& serialized,
                const Tensor* names)
      : c_(c), config_(config), serialized_(serialized), names_(names) {}

  absl::Status Run(int first_default) {
    const int64_t n = serialized_.NumElements();
    examples_.resize(n);
    for (int64_t b = 0; b < n; ++b) {
      const std::string& bytes = serialized_.flat<std::string>()[b];
      if (!examples_[b].ParseFromString(bytes)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Could not parse example input, value: '", bytes.substr(0, 64), "'"));
      }
    }
    const int ns = static_cast<int>(config_.sparse.size());
    for (int s = 0; s < ns; ++s) WEFT_RETURN_IF_ERROR(Sparse(s, ns));
    for (size_t d = 0; d < config_.dense.size(); ++d) {
      WEFT_RETURN_IF_ERROR(Dense(d, 3 * ns + static_cast<int>(d),
                                 c_->input(first_default + static_cast<int>(d))));
    }
    const int first_ragged = 3 * ns + static_cast<int>(config_.dense.size());
    const int nr = static_cast<int>(config_.ragged.size());
    for (int r = 0; r < nr; ++r) {
      WEFT_RETURN_IF_ERROR(Ragged(r, first_ragged + r, first_ragged + nr + r));
    }
    return absl::OkStatus();
  }

 private:
  std::string Name(int64_t b) const {
    if (names_ != nullptr && names_->NumElements() > b) {
      return names_->flat<std::string>()[b];
    }
    return "<unknown>";
  }

  // Example b's feature `key` when it has values of any type; an error
  // when they are not `dtype`.
  absl::StatusOr<const tensorflow::Feature*> Find(int64_t b, const std::string& key,
                                                  DataType dtype) const {
    const auto& map = examples_[b].features().feature();
    auto it = map.find(key);
    if (it == map.end() || FeatureType(it->second) == DT_INVALID) return nullptr;
    if (FeatureType(it->second) != dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(b, key), "Data types don't match. Data type: ",
          DataTypeString(FeatureType(it->second)), " but expected type: ",
          DataTypeString(dtype)));
    }
    return &it->second;
  }

  // TensorFlow's framing of a feature's error: a batch names the example
  // and its index, a single example only the key.
  std::string Where(int64_t b, const std::string& key) const {
    if (serialized_.dims() == 0) return absl::StrCat("Key: ", key, ".  ");
    return absl::StrCat("Name: ", Name(b), ", Key: ", key, ", Index: ", b, ".  ");
  }

  TensorShape Batch() const { return serialized_.shape(); }

  absl::Status Dense(size_t d, int out_index, const Tensor& def) {
    const DenseSpec& spec = config_.dense[d];
    if (IsVariableLength(spec.shape)) return VariableLengthDense(d, out_index, def);
    if (!spec.shape.IsFullyDefined()) {
      return absl::UnimplementedError(absl::StrCat(
          "dense feature '", spec.key, "' has shape ", spec.shape.DebugString(),
          "; only fully defined dense shapes are supported"));
    }
    const TensorShape shape = spec.shape.ToShape();
    const int64_t stride = shape.num_elements();
    if (def.dtype() != spec.dtype ||
        (def.NumElements() != 0 && def.NumElements() != stride)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dense_defaults[", d, "] (", DataTypeString(def.dtype()), " ",
          def.shape().DebugString(), ") must be empty or hold ", stride, " ",
          DataTypeString(spec.dtype), " values, the shape ", shape.DebugString()));
    }
    TensorShape out_shape = Batch();
    for (int64_t dim : shape.dim_sizes()) out_shape.AddDim(dim);
    Tensor* out = nullptr;
    WEFT_RETURN_IF_ERROR(c_->allocate_output(out_index, out_shape, &out));
    for (int64_t b = 0; b < static_cast<int64_t>(examples_.size()); ++b) {
      WEFT_ASSIGN_OR_RETURN(const tensorflow::Feature* f, Find(b, spec.key, spec.dtype));
      if (f == nullptr) {
        if (def.NumElements() == 0 && stride != 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              serialized_.dims() == 0 ? "" : absl::StrCat("Name: ", Name(b), ", "),
              "Feature: ", spec.key, " (data type: ",
              DataTypeString(spec.dtype), ") is required but could not be found."));
        }
        CopyTensorValues(def, out, b * stride);
        continue;
      }
      if (FeatureSize(*f) != stride) {
        return absl::InvalidArgumentError(absl::StrCat(
            Where(b, spec.key),
            serialized_.dims() == 0 ? "Can't parse serialized Example: " : "",
            "Number of ",
            DataTypeString(spec.dtype), " values != expected.  Values size: ",
            FeatureSize(*f), " but output shape: ", shape.DebugString()));
      }
      CopyValues(*f, out, b * stride);
    }
    return absl::OkStatus();
  }

  // [-1, d1, d2, ...] with every d known: rows of d1 x d2 x ... values.
  static bool IsVariableLength(const PartialShape& shape) {
    if (!shape.known_rank() || shape.rank() < 1 || shape.dim(0) >= 0) return false;
    for (int i = 1; i < shape.rank(); ++i) {
      if (shape.dim(i) < 0) return false;
    }
    return true;
  }

  // A FixedLenSequenceFeature: each example's rows, padded to the longest.
  absl::Status VariableLengthDense(size_t d, int out_index, const Tensor& def) {
    const DenseSpec& spec = config_.dense[d];
    TensorShape row;
    std::string shown = "[?";  // TensorFlow's "[?,2]"
    for (int i = 1; i < spec.shape.rank(); ++i) {
      row.AddDim(spec.shape.dim(i));
      absl::StrAppend(&shown, ",", spec.shape.dim(i));
    }
    shown += "]";
    const int64_t stride = row.num_elements();
    if (def.dtype() != spec.dtype || def.NumElements() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dense_defaults[", d, "] (", DataTypeString(def.dtype()), " ",
          def.shape().DebugString(), ") of the variable-length feature '", spec.key,
          "' must be empty or one ", DataTypeString(spec.dtype), " value (the padding)"));
    }
    std::vector<const tensorflow::Feature*> found;
    int64_t rows = 0;
    for (int64_t b = 0; b < static_cast<int64_t>(examples_.size()); ++b) {
      WEFT_ASSIGN_OR_RETURN(const tensorflow::Feature* f, Find(b, spec.key, spec.dtype));
      found.push_back(f);
      const int64_t size = f == nullptr ? 0 : FeatureSize(*f);
      if (stride == 0 ? size != 0 : size % stride != 0) {
        if (serialized_.dims() == 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Error while parsing feature with key ", spec.key,
              ": number of elements should be divisible by ", stride, ", found ",
              size, " instead"));
        }
        return absl::InvalidArgumentError(absl::StrCat(
            Where(b, spec.key), "Number of ", DataTypeString(spec.dtype),
            " values is not a multiple of stride length. Saw ", size,
            " values but output shape is: ", shown));
      }
      if (stride > 0) rows = std::max(rows, size / stride);
    }
    TensorShape out_shape = Batch();
    out_shape.AddDim(rows);
    for (int64_t dim : row.dim_sizes()) out_shape.AddDim(dim);
    Tensor* out = nullptr;
    WEFT_RETURN_IF_ERROR(c_->allocate_output(out_index, out_shape, &out));
    const int64_t per_example = rows * stride;
    for (size_t b = 0; b < found.size(); ++b) {
      const int64_t at = static_cast<int64_t>(b) * per_example;
      const int64_t size = found[b] == nullptr ? 0 : FeatureSize(*found[b]);
      if (size > 0) CopyValues(*found[b], out, at);
      FillPadding(def, out, at + size, per_example - size);
    }
    return absl::OkStatus();
  }

  // Every example's feature for `spec`, null where missing; *total values.
  absl::StatusOr<std::vector<const tensorflow::Feature*>> Lists(const ListSpec& spec,
                                                                int64_t* total,
                                                                int64_t* longest) {
    std::vector<const tensorflow::Feature*> found;
    *total = *longest = 0;
    for (int64_t b = 0; b < static_cast<int64_t>(examples_.size()); ++b) {
      WEFT_ASSIGN_OR_RETURN(const tensorflow::Feature* f, Find(b, spec.key, spec.dtype));
      found.push_back(f);
      const int64_t size = f == nullptr ? 0 : FeatureSize(*f);
      *total += size;
      *longest = std::max(*longest, size);
    }
    return found;
  }

  absl::Status Sparse(int s, int ns) {
    int64_t total = 0, longest = 0;
    WEFT_ASSIGN_OR_RETURN(auto found, Lists(config_.sparse[s], &total, &longest));
    const TensorShape batch = Batch();
    const int64_t rank = batch.dims() + 1;
    Tensor *indices = nullptr, *values = nullptr, *shape = nullptr;
    WEFT_RETURN_IF_ERROR(c_->allocate_output(s, TensorShape({total, rank}), &indices));
    WEFT_RETURN_IF_ERROR(c_->allocate_output(ns + s, TensorShape({total}), &values));
    WEFT_RETURN_IF_ERROR(c_->allocate_output(2 * ns + s, TensorShape({rank}), &shape));
    auto idx = indices->flat<int64_t>();
    int64_t at = 0;
    for (size_t b = 0; b < found.size(); ++b) {
      if (found[b] == nullptr) continue;
      CopyValues(*found[b], values, at);
      for (int64_t j = 0; j < FeatureSize(*found[b]); ++j, ++at) {
        if (rank == 2) idx[at * 2] = static_cast<int64_t>(b);
        idx[at * rank + rank - 1] = j;
      }
    }
    auto dims = shape->flat<int64_t>();
    for (int i = 0; i < batch.dims(); ++i) dims[i] = batch.dim_size(i);
    dims[rank - 1] = longest;
    return absl::OkStatus();
  }

  absl::Status Ragged(int r, int values_index, int splits_index) {
    int64_t total = 0, longest = 0;
    WEFT_ASSIGN_OR_RETURN(auto found, Lists(config_.ragged[r], &total, &longest));
    Tensor *values = nullptr, *splits = nullptr;
    WEFT_RETURN_IF_ERROR(c_->allocate_output(values_index, TensorShape({total}), &values));
    const int64_t rows = static_cast<int64_t>(found.size());
    const bool batched = serialized_.dims() > 0;
    WEFT_RETURN_IF_ERROR(c_->allocate_output(
        splits_index, TensorShape({batched ? rows + 1 : 0}), &splits));
    int64_t at = 0;
    for (int64_t b = 0; b < rows; ++b) {
      if (batched) SetSplit(splits, b, at);
      if (found[b] == nullptr) continue;
      CopyValues(*found[b], values, at);
      at += FeatureSize(*found[b]);
    }
    if (batched) SetSplit(splits, rows, at);
    return absl::OkStatus();
  }

  static void SetSplit(Tensor* splits, int64_t i, int64_t v) {
    if (splits->dtype() == DT_INT32) {
      splits->flat<int32_t>()[i] = static_cast<int32_t>(v);
    } else {
      splits->flat<int64_t>()[i] = v;
    }
  }

  OpKernelContext* const c_;
  const ParseConfig& config_;
  const Tensor& serialized_;
  const Tensor* const names_;
  std::vector<tensorflow::Example> examples_;
};

// The attrs both ops share: types and dense shapes.
absl::Status ReadTypes(OpKernelConstruction* c, ParseConfig* config,
                       std::vector<std::string> sparse_keys,
                       std::vector<std::string> dense_keys) {
  DataTypeVector sparse_types, dense_types;
  std::vector<PartialShape> dense_shapes;
  WEFT_RETURN_IF_ERROR(c->GetAttr("sparse_types", &sparse_types));
  WEFT_RETURN_IF_ERROR(c->GetAttr("Tdense", &dense_types));
  WEFT_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
  if (dense_shapes.size() != dense_types.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "len(dense_shapes) != len(Tdense): ", dense_shapes.size(), " vs. ",
        dense_types.size()));
  }
  if (!sparse_keys.empty() && sparse_keys.size() != sparse_types.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "len(sparse_keys) != len(sparse_types): ", sparse_keys.size(), " vs. ",
        sparse_types.size()));
  }
  if (!dense_keys.empty() && dense_keys.size() != dense_types.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "len(dense_keys) != len(Tdense): ", dense_keys.size(), " vs. ",
        dense_types.size()));
  }
  for (size_t i = 0; i < sparse_types.size(); ++i) {
    config->sparse.push_back(
        {i < sparse_keys.size() ? sparse_keys[i] : "", sparse_types[i]});
  }
  for (size_t i = 0; i < dense_types.size(); ++i) {
    config->dense.push_back(
        {i < dense_keys.size() ? dense_keys[i] : "", dense_types[i], dense_shapes[i]});
  }
  return absl::OkStatus();
}

class ParseSingleExampleOp : public OpKernel {
 public:
  explicit ParseSingleExampleOp(OpKernelConstruction* c) : OpKernel(c) {
    std::vector<std::string> sparse_keys, dense_keys;
    absl::Status s = c->GetAttr("sparse_keys", &sparse_keys);
    if (s.ok()) s = c->GetAttr("dense_keys", &dense_keys);
    if (s.ok()) s = ReadTypes(c, &config_, sparse_keys, dense_keys);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& serialized = c->input(0);
    OP_REQUIRES(c, serialized.dtype() == DT_STRING && serialized.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected serialized to be a scalar, got shape: ",
                    serialized.shape().DebugString())));
    ExampleParser parser(c, config_, serialized, nullptr);
    OP_REQUIRES_OK(c, parser.Run(1));
  }

 private:
  ParseConfig config_;
};

class ParseExampleV2Op : public OpKernel {
 public:
  explicit ParseExampleV2Op(OpKernelConstruction* c) : OpKernel(c) {
    DataTypeVector ragged_values;
    absl::Status s = ReadTypes(c, &config_, {}, {});
    if (s.ok()) s = c->GetAttr("ragged_value_types", &ragged_values);
    if (s.ok()) s = c->GetAttr("ragged_split_types", &config_.ragged_splits);
    if (s.ok() && ragged_values.size() != config_.ragged_splits.size()) {
      s = absl::InvalidArgumentError(
          "len(ragged_value_types) != len(ragged_split_types)");
    }
    for (DataType t : ragged_values) config_.ragged.push_back({"", t});
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& serialized = c->input(0);
    const Tensor& names = c->input(1);
    OP_REQUIRES(c, serialized.dims() <= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected serialized to be a scalar or vector, got shape: ",
                    serialized.shape().DebugString())));
    OP_REQUIRES(c, names.NumElements() == 0 || names.shape() == serialized.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected names have the same shape as serialized: name.shape=",
                    names.shape().DebugString(), ", serialized.shape=",
                    serialized.shape().DebugString())));
    ParseConfig config = config_;
    OP_REQUIRES_OK(c, Keys(c, 2, "sparse_keys", &config.sparse));
    OP_REQUIRES_OK(c, Keys(c, 3, "dense_keys", &config.dense));
    OP_REQUIRES_OK(c, Keys(c, 4, "ragged_keys", &config.ragged));
    ExampleParser parser(c, config, serialized, &names);
    OP_REQUIRES_OK(c, parser.Run(5));
  }

 private:
  template <typename Spec>
  static absl::Status Keys(OpKernelContext* c, int i, const char* what,
                           std::vector<Spec>* specs) {
    const Tensor& t = c->input(i);
    if (t.dtype() != DT_STRING || t.dims() > 1 ||
        t.NumElements() != static_cast<int64_t>(specs->size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected len(", what, ") to match the number of its types: ",
          t.NumElements(), " vs. ", specs->size()));
    }
    for (size_t k = 0; k < specs->size(); ++k) {
      (*specs)[k].key = t.flat<std::string>()[k];
    }
    return absl::OkStatus();
  }

  ParseConfig config_;
};

}  // namespace

void RegisterParseKernels(KernelRegistry* r) {
  r->Register(KernelDef("ParseSingleExample", kDeviceTypeCpu),
              MakeKernel<ParseSingleExampleOp>);
  r->Register(KernelDef("ParseExampleV2", kDeviceTypeCpu),
              MakeKernel<ParseExampleV2Op>);
  RegisterDecodeRawKernel(r);
}

}  // namespace weft
