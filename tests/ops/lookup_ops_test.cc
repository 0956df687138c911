// Lookup tables (ops/cpu/lookup_*.cc) kernel by kernel on one device: the
// errors TensorFlow gives (uninitialized, conflicting and re-initializing
// static tables, shapes, signatures, dense tables' special keys and
// attrs, text files' bad lines), the dense table's bucket order (goldens
// from TensorFlow 2.21's exports), sharing by name and private tables.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "runtime/core/resource_mgr.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

// Kernel errors come back with the node's label in front; the text after it
// is TensorFlow's.
#define EXPECT_MESSAGE(message, text) \
  EXPECT_THAT(std::string(message), ::testing::EndsWith(text))

using testing_util::Vec;

class LookupTest : public ::testing::Test {
 protected:
  LookupTest() : devices_(DeviceMgr::NewLocal({}).value()) {}
  Device* device() { return devices_->default_device(); }

  // Runs a table-making node (kept alive: private tables die with it).
  Tensor Make(const NodeBuilder& node, const std::vector<Tensor>& inputs = {}) {
    makers_.push_back(std::make_unique<KernelRunner>(node.Build(), device()));
    auto out = makers_.back()->Run(inputs);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->at(0) : Tensor();
  }
  absl::Status MakeError(const NodeBuilder& node, const std::vector<Tensor>& inputs) {
    KernelRunner r(node.Build(), device());
    return r.Run(inputs).status();
  }
  Tensor Static(DataType k, DataType v, const std::string& shared = "") {
    return Make(NodeBuilder("t", "HashTableV2")
                    .Attr("key_dtype", k)
                    .Attr("value_dtype", v)
                    .Attr("shared_name", shared));
  }
  absl::StatusOr<std::vector<Tensor>> Run(const NodeBuilder& node,
                                          const std::vector<Tensor>& inputs) {
    KernelRunner r(node.Build(), device());
    return r.Run(inputs);
  }
  absl::Status Init(const Tensor& t, const Tensor& k, const Tensor& v) {
    return Run(NodeBuilder("init", "InitializeTableV2")
                   .Attr("Tkey", k.dtype())
                   .Attr("Tval", v.dtype()),
               {t, k, v})
        .status();
  }
  absl::StatusOr<Tensor> Find(const Tensor& t, const Tensor& k, const Tensor& d) {
    auto out = Run(NodeBuilder("find", "LookupTableFindV2")
                       .Attr("Tin", k.dtype())
                       .Attr("Tout", d.dtype()),
                   {t, k, d});
    if (!out.ok()) return out.status();
    return out->at(0);
  }
  absl::Status Insert(const Tensor& t, const Tensor& k, const Tensor& v,
                      const char* op = "LookupTableInsertV2") {
    return Run(NodeBuilder("insert", op).Attr("Tin", k.dtype()).Attr("Tout", v.dtype()),
               {t, k, v})
        .status();
  }
  int64_t Size(const Tensor& t) {
    auto out = Run(NodeBuilder("size", "LookupTableSizeV2"), {t});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->at(0).scalar<int64_t>() : -1;
  }
  absl::StatusOr<std::vector<Tensor>> Export(const Tensor& t, DataType k, DataType v) {
    return Run(NodeBuilder("export", "LookupTableExportV2")
                   .Attr("Tkeys", k)
                   .Attr("Tvalues", v),
               {t});
  }
  Tensor Dense(int64_t buckets, const Tensor& empty, const Tensor& deleted,
               DataType v = DT_INT64, std::vector<int64_t> value_shape = {}) {
    return Make(NodeBuilder("d", "MutableDenseHashTableV2")
                    .Attr("key_dtype", empty.dtype())
                    .Attr("value_dtype", v)
                    .ShapeAttr("value_shape", value_shape)
                    .Attr("initial_num_buckets", buckets),
                {empty, deleted});
  }

  std::unique_ptr<DeviceMgr> devices_;
  std::vector<std::unique_ptr<KernelRunner>> makers_;
};

Tensor I64(int64_t v) { return Tensor::Scalar<int64_t>(v); }
Tensor Str(const std::string& s) { return Tensor::Scalar<std::string>(s); }
Tensor Strs(const std::vector<std::string>& v) { return Vec<std::string>(v); }
Tensor I64s(const std::vector<int64_t>& v) { return Vec<int64_t>(v); }

TEST_F(LookupTest, StaticTableFindsAfterInitialization) {
  Tensor t = Static(DT_STRING, DT_INT64);
  EXPECT_EQ(Size(t), 0);
  EXPECT_EQ(Find(t, Strs({"a"}), I64(-1)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Export(t, DT_STRING, DT_INT64).status().code(), absl::StatusCode::kAborted);
  ASSERT_TRUE(Init(t, Strs({"a", "b"}), I64s({1, 2})).ok());
  EXPECT_EQ(Size(t), 2);
  auto f = Find(t, MakeTensor<std::string>({2, 2}, {"a", "z", "q", "b"}), I64(-1));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->shape(), TensorShape({2, 2}));
  EXPECT_EQ(std::vector<int64_t>(f->flat<int64_t>().begin(), f->flat<int64_t>().end()),
            (std::vector<int64_t>{1, -1, -1, 2}));
  // A default per key is accepted, but a static table, as TensorFlow's,
  // uses its first value for every missing key.
  f = Find(t, Strs({"a", "z"}), I64s({7, 8}));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->flat<int64_t>()[1], 7);
  absl::Status s = Find(t, Strs({"a", "z", "y"}), I64s({7, 8})).status();
  EXPECT_MESSAGE(s.message(), "Expected shape [] or [3] for default value, got [2]");
  s = Find(t, I64s({1}), I64(0)).status();
  EXPECT_MESSAGE(s.message(),
            "Signature mismatch, have: resource, int64, int64->int64 expected: "
            "resource, string, int64->int64");
}

TEST_F(LookupTest, StaticTableInitializesOnce) {
  Tensor t = Static(DT_STRING, DT_INT64);
  absl::Status s = Init(t, Strs({"a", "a"}), I64s({1, 2}));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_MESSAGE(s.message(),
            "HashTable has different value for same key. Key a has 1 and trying "
            "to add value 2");
  EXPECT_EQ(Size(t), 0);
  Tensor u = Static(DT_STRING, DT_INT64);
  ASSERT_TRUE(Init(u, Strs({"a", "a", "b"}), I64s({1, 1, 2})).ok());
  // As TensorFlow: the same size passes, another size fails.
  EXPECT_TRUE(Init(u, Strs({"x", "y"}), I64s({5, 6})).ok());
  s = Init(u, Strs({"x"}), I64s({5}));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_MESSAGE(s.message(), "Table was already initialized with different data.");
  EXPECT_EQ(Insert(u, Strs({"q"}), I64s({1})).code(), absl::StatusCode::kUnimplemented);
  s = Init(u, Strs({"x", "y"}), I64s({5}));
  EXPECT_MESSAGE(s.message(), "Keys and values must have the same size 2 vs 1");
}

TEST_F(LookupTest, MutableTableInsertRemoveImport) {
  Tensor t = Make(NodeBuilder("m", "MutableHashTableV2")
                      .Attr("key_dtype", DT_INT64)
                      .Attr("value_dtype", DT_FLOAT));
  ASSERT_TRUE(Insert(t, I64s({1, 1, 2}), Vec<float>({1, 2, 3})).ok());
  EXPECT_EQ(Size(t), 2);
  auto f = Find(t, I64s({1, 3}), Tensor::Scalar<float>(-1));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->flat<float>()[0], 2.0f);
  EXPECT_EQ(f->flat<float>()[1], -1.0f);
  absl::Status s = Insert(t, I64s({6}), Vec<float>({1, 2}));
  EXPECT_MESSAGE(s.message(), "Expected shape [1] for value, got [2]");
  ASSERT_TRUE(Run(NodeBuilder("rm", "LookupTableRemoveV2").Attr("Tin", DT_INT64),
                  {t, I64s({1, 9})})
                  .ok());
  EXPECT_EQ(Size(t), 1);
  ASSERT_TRUE(Insert(t, I64s({7, 8}), Vec<float>({7, 8}), "LookupTableImportV2").ok());
  auto e = Export(t, DT_INT64, DT_FLOAT);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->at(0).NumElements(), 2);
  s = Init(t, I64s({1}), Vec<float>({1}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(LookupTest, TableOfTensorsNeedsAVectorShape) {
  absl::Status s = MakeError(NodeBuilder("m", "MutableHashTableOfTensorsV2")
                                 .Attr("key_dtype", DT_STRING)
                                 .Attr("value_dtype", DT_INT64)
                                 .ShapeAttr("value_shape", {2, 2}),
                             {});
  EXPECT_MESSAGE(s.message(), "Default value must be a vector, got shape [2,2]");
  Tensor t = Make(NodeBuilder("m", "MutableHashTableOfTensorsV2")
                      .Attr("key_dtype", DT_STRING)
                      .Attr("value_dtype", DT_INT64)
                      .ShapeAttr("value_shape", {2}));
  ASSERT_TRUE(Insert(t, Strs({"a"}), MakeTensor<int64_t>({1, 2}, {1, 2})).ok());
  auto f = Find(t, Strs({"a", "b"}), I64s({0, 9}));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->shape(), TensorShape({2, 2}));
  EXPECT_EQ(f->flat<int64_t>()[3], 9);
}

TEST_F(LookupTest, DenseTableBucketsAsTensorFlow) {
  Tensor t = Dense(4, I64(-1), I64(-2));
  ASSERT_TRUE(Insert(t, I64s({5, 1, 9}), I64s({50, 10, 90})).ok());
  auto e = Export(t, DT_INT64, DT_INT64);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->at(0).shape(), TensorShape({4, 1}));
  // TensorFlow 2.21 exports [[9], [5], [1], [-1]].
  std::vector<int64_t> keys(e->at(0).flat<int64_t>().begin(), e->at(0).flat<int64_t>().end());
  EXPECT_EQ(keys, (std::vector<int64_t>{9, 5, 1, -1}));
  // One more key grows it to 8 buckets even though the key is refused.
  EXPECT_MESSAGE(Insert(t, I64s({-2}), I64s({1})).message(),
            "Using the deleted_key as a table key is not allowed");
  EXPECT_MESSAGE(Find(t, I64s({-1}), I64(0)).status().message(),
            "Using the empty_key as a table key is not allowed");
  ASSERT_TRUE(Run(NodeBuilder("rm", "LookupTableRemoveV2").Attr("Tin", DT_INT64),
                  {t, I64s({1, 33})})
                  .ok());
  e = Export(t, DT_INT64, DT_INT64);
  ASSERT_TRUE(e.ok());
  keys.assign(e->at(0).flat<int64_t>().begin(), e->at(0).flat<int64_t>().end());
  EXPECT_EQ(keys, (std::vector<int64_t>{-1, 9, -2, -1, -1, 5, -1, -1}));
  EXPECT_EQ(Size(t), 2);
}

TEST_F(LookupTest, DenseStringHashAsTensorFlow) {
  Tensor t = Dense(8, Str(""), Str("$"), DT_FLOAT, {2});
  ASSERT_TRUE(Insert(t, Strs({"ab", "hello world!", "x"}),
                     MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}))
                  .ok());
  auto e = Export(t, DT_STRING, DT_FLOAT);
  ASSERT_TRUE(e.ok()) << e.status();
  std::vector<std::string> keys(e->at(0).flat<std::string>().begin(),
                                e->at(0).flat<std::string>().end());
  // TensorFlow 2.21's export.
  EXPECT_EQ(keys, (std::vector<std::string>{"x", "", "", "ab", "", "", "", "hello world!"}));
  EXPECT_EQ(e->at(1).shape(), TensorShape({8, 2}));
}

TEST_F(LookupTest, DenseTableAttrsChecked) {
  auto dense = [&](int64_t buckets, float load, const Tensor& empty, const Tensor& del) {
    return MakeError(NodeBuilder("d", "MutableDenseHashTableV2")
                         .Attr("key_dtype", DT_INT64)
                         .Attr("value_dtype", DT_INT64)
                         .Attr("initial_num_buckets", buckets)
                         .Attr("max_load_factor", load),
                     {empty, del});
  };
  EXPECT_MESSAGE(dense(3, 0.8f, I64(-1), I64(-2)).message(),
            "Number of buckets must be at least 4 and a power of 2, got: 3");
  EXPECT_MESSAGE(dense(4, 1.5f, I64(-1), I64(-2)).message(),
            "max_load_factor must be between 0 and 1, got: 1.5");
  EXPECT_MESSAGE(dense(4, 0.8f, I64(-1), I64(-1)).message(),
            "Empty and deleted keys cannot be equal");
  EXPECT_MESSAGE(dense(4, 0.8f, I64(-1), I64s({-1, 2})).message(),
            "Empty and deleted keys must have same shape, got shapes: [] and [2]");
}

class LookupTextFileTest : public LookupTest {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = ::testing::TempDir() + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    return path;
  }
  absl::Status InitFromFile(const Tensor& t, const std::string& path, int64_t key_index,
                            int64_t value_index, int64_t vocab_size = -1) {
    return Run(NodeBuilder("init", "InitializeTableFromTextFileV2")
                   .Attr("key_index", key_index)
                   .Attr("value_index", value_index)
                   .Attr("vocab_size", vocab_size),
               {t, Str(path)})
        .status();
  }
};

TEST_F(LookupTextFileTest, ReadsLinesAsTensorFlow) {
  const std::string words = Write("words.txt", "apple\nbanana\r\ncherry");
  Tensor t = Static(DT_STRING, DT_INT64);
  ASSERT_TRUE(InitFromFile(t, words, -2, -1).ok());
  auto f = Find(t, Strs({"cherry", "banana", "fig"}), I64(-1));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(std::vector<int64_t>(f->flat<int64_t>().begin(), f->flat<int64_t>().end()),
            (std::vector<int64_t>{2, 1, -1}));
  // Initialized already: a second run is a no-op.
  EXPECT_TRUE(InitFromFile(t, words, -2, -1).ok());
  Tensor u = Static(DT_STRING, DT_INT64);
  absl::Status s = InitFromFile(u, words, -2, -1, 5);
  EXPECT_MESSAGE(s.message(), "Invalid vocab_size in " + words + ": expected 5 but got 3");
  Tensor v = Static(DT_STRING, DT_STRING);
  s = InitFromFile(v, words, -1, -2);
  EXPECT_MESSAGE(s.message(),
            "Key index for line number requires table key dtype of int64, got string");
}

TEST_F(LookupTextFileTest, BadLinesNameFileAndLine) {
  const std::string gap = Write("gap.txt", "x\n\ny\n");
  Tensor t = Static(DT_STRING, DT_INT64);
  EXPECT_MESSAGE(InitFromFile(t, gap, -2, -1).message(),
            "Invalid content in " + gap + ": empty line found at position 3.");
  const std::string cols = Write("cols.tsv", "a\t1\nb\tnope\nc\n");
  Tensor u = Static(DT_STRING, DT_INT64);
  EXPECT_MESSAGE(InitFromFile(u, cols, 0, 1).message(),
            "Field nope in line 1 is not a valid int64.");
  EXPECT_EQ(Size(u), 0);
  Tensor v = Static(DT_STRING, DT_INT64);
  EXPECT_MESSAGE(InitFromFile(v, cols, 0, 2).message(),
            "Invalid number of columns in " + cols +
                " line 0 (a\t1) : expected at least 3 got 2");
  Tensor w = Static(DT_STRING, DT_INT64);
  EXPECT_EQ(InitFromFile(w, ::testing::TempDir() + "/missing", -2, -1).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(LookupTest, SharedByNamePrivateOtherwise) {
  Tensor a = Static(DT_STRING, DT_INT64, "vocab");
  Tensor b = Static(DT_STRING, DT_INT64, "vocab");
  ASSERT_TRUE(Init(a, Strs({"a"}), I64s({1})).ok());
  EXPECT_EQ(Size(b), 1);
  Tensor p = Static(DT_STRING, DT_INT64);
  Tensor q = Static(DT_STRING, DT_INT64);
  ASSERT_TRUE(Init(p, Strs({"a"}), I64s({1})).ok());
  EXPECT_EQ(Size(q), 0);
  // A private table goes with its kernel.
  const size_t before = device()->resource_manager()->List().size();
  makers_.pop_back();
  EXPECT_EQ(device()->resource_manager()->List().size(), before - 1);
  // Conflicting dtypes under one name.
  absl::Status s = MakeError(NodeBuilder("t", "HashTableV2")
                                 .Attr("key_dtype", DT_STRING)
                                 .Attr("value_dtype", DT_FLOAT)
                                 .Attr("shared_name", "vocab"),
                             {});
  EXPECT_MESSAGE(s.message(),
            "Conflicting key/value dtypes string->float with string-int64 for table vocab");
}

TEST_F(LookupTest, UnsupportedDtypesHaveNoKernel) {
  EXPECT_FALSE(MakeError(NodeBuilder("t", "HashTableV2")
                             .Attr("key_dtype", DT_FLOAT)
                             .Attr("value_dtype", DT_INT64),
                         {})
                   .ok());
}

}  // namespace
}  // namespace weft
