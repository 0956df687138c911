// Runs the cases tf_training_graphs.py wrote (GraphDefs from TensorFlow
// 2.21, with TF's own results) in Weft's LocalSession and compares.
//
// usage: tf_conformance_runner CASES_DIR [gtest flags]
//
// Each case in CASES_DIR/manifest.txt becomes one GoogleTest case. A case
// is one session: an optional Create of a broken graph that must fail (and
// leave the session usable), Create of the good graph, then its runs in
// order, so variables carry over from init through the training steps.
// Float results must match TF's within |weft - tf| <= 1e-4 |tf| + 1e-5 s,
// where s = max(1, largest |tf| in that tensor): relative for the larger
// elements, and an absolute floor scaled to the tensor for those near zero
// (which summation order alone can move by more than 1e-4 relative).
// Integer and bool results must match exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "proto/graph.pb.h"
#include "proto/tensor.pb.h"
#include "runtime/session.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

constexpr double kRtol = 1e-4;
constexpr double kAtolScale = 1e-5;

struct RunSpec {
  std::vector<std::pair<std::string, std::string>> feeds;    // tensor, file
  std::vector<std::pair<std::string, std::string>> fetches;  // tensor, file
  std::vector<std::string> targets;
  std::string error_code;  // empty: the run must succeed
  std::string error_text;
};

struct CaseSpec {
  std::string name;
  std::string graph_file;
  std::string bad_graph_file;  // empty: none
  std::string bad_code, bad_text;
  std::vector<RunSpec> runs;
};

std::string g_dir;

std::string ReadFile(const std::string& name) {
  std::ifstream f(g_dir + "/" + name, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

absl::StatusOr<Tensor> LoadTensor(const std::string& file) {
  tensorflow::TensorProto proto;
  if (!proto.ParseFromString(ReadFile(file))) {
    return absl::DataLossError(absl::StrCat("cannot parse tensor file ", file));
  }
  return TensorFromProto(proto);
}

absl::StatusOr<tensorflow::GraphDef> LoadGraph(const std::string& file) {
  tensorflow::GraphDef g;
  if (!g.ParseFromString(ReadFile(file))) {
    return absl::DataLossError(absl::StrCat("cannot parse GraphDef ", file));
  }
  return g;
}

// The rest of the line after `n` words.
std::string Rest(const std::string& line, int n) {
  size_t pos = 0;
  for (int i = 0; i < n && pos != std::string::npos; ++i) {
    pos = line.find(' ', pos);
    if (pos != std::string::npos) ++pos;
  }
  return pos == std::string::npos ? "" : line.substr(pos);
}

std::vector<CaseSpec> ReadManifest() {
  std::vector<CaseSpec> cases;
  std::ifstream f(g_dir + "/manifest.txt");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string word, a, b;
    in >> word >> a >> b;
    if (word == "case") {
      cases.push_back(CaseSpec{a, b});
    } else if (word == "create_bad") {
      cases.back().bad_graph_file = a;
      cases.back().bad_code = b;
      cases.back().bad_text = Rest(line, 3);
    } else if (word == "run") {
      cases.back().runs.emplace_back();
    } else if (word == "feed") {
      cases.back().runs.back().feeds.emplace_back(a, b);
    } else if (word == "fetch") {
      cases.back().runs.back().fetches.emplace_back(a, b);
    } else if (word == "target") {
      cases.back().runs.back().targets.push_back(a);
    } else if (word == "error") {
      cases.back().runs.back().error_code = a;
      cases.back().runs.back().error_text = Rest(line, 2);
    }
  }
  return cases;
}

template <typename T>
std::vector<double> AsDoubles(const Tensor& t) {
  return std::vector<double>(t.data<T>(), t.data<T>() + t.NumElements());
}

absl::StatusOr<std::vector<double>> Values(const Tensor& t) {
  switch (t.dtype()) {
    case DT_FLOAT: return AsDoubles<float>(t);
    case DT_DOUBLE: return AsDoubles<double>(t);
    case DT_INT32: return AsDoubles<int32_t>(t);
    case DT_INT64: return AsDoubles<int64_t>(t);
    case DT_BOOL: return AsDoubles<bool>(t);
    default:
      return absl::UnimplementedError(
          absl::StrCat("cannot compare dtype ", DataTypeString(t.dtype())));
  }
}

// Empty when `got` matches `want`, else what differs.
std::string Compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) {
    return absl::StrCat("dtype ", DataTypeString(got.dtype()), " != TF's ",
                        DataTypeString(want.dtype()));
  }
  if (got.shape() != want.shape()) {
    return absl::StrCat("shape ", got.shape().DebugString(), " != TF's ",
                        want.shape().DebugString());
  }
  absl::StatusOr<std::vector<double>> g = Values(got);
  absl::StatusOr<std::vector<double>> w = Values(want);
  if (!g.ok()) return std::string(g.status().message());
  const bool exact = want.dtype() != DT_FLOAT && want.dtype() != DT_DOUBLE;
  double scale = 1;
  for (double v : *w) scale = std::max(scale, std::abs(v));
  std::string diffs;
  int bad = 0;
  for (size_t i = 0; i < w->size(); ++i) {
    const double a = (*g)[i], b = (*w)[i];
    const bool same = exact ? a == b
                            : (std::isnan(a) && std::isnan(b)) ||
                                  std::abs(a - b) <= kRtol * std::abs(b) + kAtolScale * scale;
    if (!same && ++bad <= 5) {
      absl::StrAppend(&diffs, " [", i, "] weft ", a, " tf ", b, ";");
    }
  }
  if (bad == 0) return "";
  return absl::StrCat(bad, " of ", w->size(), " elements differ:", diffs);
}

void RunCase(const CaseSpec& spec) {
  std::unique_ptr<Session> session = NewLocalSession(SessionOptions());
  if (!spec.bad_graph_file.empty()) {
    absl::StatusOr<tensorflow::GraphDef> bad = LoadGraph(spec.bad_graph_file);
    ASSERT_TRUE(bad.ok()) << bad.status();
    absl::Status s = session->Create(*bad);
    EXPECT_EQ(absl::StatusCodeToString(s.code()), spec.bad_code) << s;
    EXPECT_NE(s.ToString().find(spec.bad_text), std::string::npos)
        << "error should mention " << spec.bad_text << ": " << s;
  }
  absl::StatusOr<tensorflow::GraphDef> graph = LoadGraph(spec.graph_file);
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::Status created = session->Create(*graph);
  ASSERT_TRUE(created.ok()) << created;
  for (size_t r = 0; r < spec.runs.size(); ++r) {
    const RunSpec& run = spec.runs[r];
    SCOPED_TRACE(absl::StrCat("run ", r));
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const auto& [name, file] : run.feeds) {
      absl::StatusOr<Tensor> t = LoadTensor(file);
      ASSERT_TRUE(t.ok()) << t.status();
      feeds.emplace_back(name, *t);
    }
    std::vector<std::string> fetches;
    for (const auto& f : run.fetches) fetches.push_back(f.first);
    std::vector<Tensor> outputs;
    absl::Status s = session->Run(feeds, fetches, run.targets, &outputs);
    if (!run.error_code.empty()) {
      EXPECT_EQ(absl::StatusCodeToString(s.code()), run.error_code) << s;
      EXPECT_NE(s.ToString().find(run.error_text), std::string::npos)
          << "error should mention " << run.error_text << ": " << s;
      continue;
    }
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(outputs.size(), fetches.size());
    for (size_t i = 0; i < fetches.size(); ++i) {
      absl::StatusOr<Tensor> want = LoadTensor(run.fetches[i].second);
      ASSERT_TRUE(want.ok()) << want.status();
      const std::string diff = Compare(outputs[i], *want);
      EXPECT_TRUE(diff.empty()) << "fetch " << fetches[i] << ": " << diff;
    }
  }
}

// The comparison itself must catch what it is there to catch.
TEST(TfConformanceCompare, DetectsDifferences) {
  Tensor want(DT_FLOAT, TensorShape({3}));
  for (int i = 0; i < 3; ++i) want.data<float>()[i] = 0.5f * (i + 1);
  Tensor same(DT_FLOAT, TensorShape({3}));
  for (int i = 0; i < 3; ++i) same.data<float>()[i] = want.data<float>()[i] * (1 + 5e-5f);
  EXPECT_EQ(Compare(same, want), "");
  Tensor off(DT_FLOAT, TensorShape({3}));
  for (int i = 0; i < 3; ++i) off.data<float>()[i] = want.data<float>()[i];
  off.data<float>()[1] *= 1.001f;
  EXPECT_NE(Compare(off, want), "");
  EXPECT_NE(Compare(Tensor(DT_FLOAT, TensorShape({1, 3})), want), "");
  Tensor ints(DT_INT32, TensorShape({2}));
  ints.data<int32_t>()[0] = 1;
  ints.data<int32_t>()[1] = 2;
  Tensor ints2(DT_INT32, TensorShape({2}));
  ints2.data<int32_t>()[0] = 1;
  ints2.data<int32_t>()[1] = 3;
  EXPECT_EQ(Compare(ints, ints), "");
  EXPECT_NE(Compare(ints2, ints), "");
  EXPECT_NE(Compare(want, ints), "");
}

}  // namespace
}  // namespace weft

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CASES_DIR [gtest flags]\n", argv[0]);
    return 2;
  }
  weft::g_dir = argv[1];
  std::vector<weft::CaseSpec> cases = weft::ReadManifest();
  if (cases.empty()) {
    std::fprintf(stderr, "no cases in %s/manifest.txt\n", argv[1]);
    return 1;
  }
  for (const weft::CaseSpec& spec : cases) {
    testing::RegisterTest("TfConformance", spec.name.c_str(), nullptr, nullptr,
                          __FILE__, __LINE__,
                          [spec]() -> testing::Test* {
                            struct CaseTest : testing::Test {
                              explicit CaseTest(weft::CaseSpec s) : spec(std::move(s)) {}
                              void TestBody() override { weft::RunCase(spec); }
                              weft::CaseSpec spec;
                            };
                            return new CaseTest(spec);
                          });
  }
  return RUN_ALL_TESTS();
}
