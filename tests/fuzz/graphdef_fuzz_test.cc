// Feeds truncated, bit-flipped and structurally mutated GraphDefs through the
// whole path a user's file takes (parse, Session::Create, Session::Run) and
// checks that each one ends in a clean error or a result — never a crash, an
// abort, a hang or an INTERNAL/UNKNOWN error. Deterministic (fixed seeds).
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/graph.pb.h"
#include "runtime/session.h"
#include "tools/graph_file.h"

namespace weft {
namespace {

tensorflow::GraphDef LoadExample(const std::string& name) {
  absl::StatusOr<tensorflow::GraphDef> g =
      ReadGraphDefFile("tools/examples/" + name);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : tensorflow::GraphDef();
}

// Runs one candidate; returns its status (OK if it ran).
absl::Status Exercise(const tensorflow::GraphDef& graph,
                      const std::vector<std::string>& fetches,
                      const std::vector<std::string>& targets) {
  std::unique_ptr<Session> session = NewLocalSession(SessionOptions());
  absl::Status s = session->Create(graph);
  if (s.ok()) {
    std::vector<Tensor> out;
    s = session->Run({}, fetches, targets, &out);
  }
  session->Close().IgnoreError();
  return s;
}

void ExpectClean(const absl::Status& s, const std::string& what) {
  EXPECT_NE(s.code(), absl::StatusCode::kInternal) << what << ": " << s;
  EXPECT_NE(s.code(), absl::StatusCode::kUnknown) << what << ": " << s;
  if (!s.ok()) EXPECT_FALSE(s.message().empty()) << what;
}

struct Example {
  const char* file;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};

const Example kExamples[] = {
    {"mlp_classifier.pbtxt", {"probs", "class"}, {}},
    {"linear_regression.pbtxt", {"loss"}, {"init"}},
};

TEST(GraphDefFuzz, TruncatedBytes) {
  for (const Example& ex : kExamples) {
    std::string bytes;
    LoadExample(ex.file).SerializeToString(&bytes);
    for (size_t len = 0; len < bytes.size(); len += 1 + bytes.size() / 97) {
      absl::StatusOr<tensorflow::GraphDef> g =
          ParseGraphDef(bytes.substr(0, len), "truncated.pb");
      if (!g.ok()) {
        ExpectClean(g.status(), "parse");
        continue;
      }
      ExpectClean(Exercise(*g, ex.fetches, ex.targets),
                  std::string(ex.file) + " truncated");
    }
  }
}

TEST(GraphDefFuzz, FlippedBytes) {
  std::mt19937 rng(1234);
  for (const Example& ex : kExamples) {
    std::string bytes;
    LoadExample(ex.file).SerializeToString(&bytes);
    for (int trial = 0; trial < 150; ++trial) {
      std::string mutated = bytes;
      const int flips = 1 + trial % 4;
      for (int f = 0; f < flips; ++f) {
        mutated[rng() % mutated.size()] ^= static_cast<char>(1 + rng() % 255);
      }
      absl::StatusOr<tensorflow::GraphDef> g = ParseGraphDef(mutated, "flip.pb");
      if (!g.ok()) continue;
      ExpectClean(Exercise(*g, ex.fetches, ex.targets),
                  std::string(ex.file) + " flipped");
    }
  }
}

// Mutations at the proto level reach deeper than random bytes: each keeps
// the file parseable and breaks one thing the loader must notice.
TEST(GraphDefFuzz, StructuralMutations) {
  std::mt19937 rng(99);
  const std::vector<DataType> types = {DT_FLOAT, DT_INT32, DT_STRING, DT_BOOL,
                                       DT_INT64, DT_RESOURCE, DT_VARIANT};
  for (const Example& ex : kExamples) {
    const tensorflow::GraphDef base = LoadExample(ex.file);
    for (int trial = 0; trial < 300; ++trial) {
      tensorflow::GraphDef g = base;
      auto* node = g.mutable_node(rng() % g.node_size());
      switch (trial % 10) {
        case 0:  // unknown op
          node->set_op("NoSuchOp");
          break;
        case 1:  // drop an attr
          if (!node->attr().empty()) {
            node->mutable_attr()->erase(node->attr().begin()->first);
          }
          break;
        case 2:  // retype a type attr
          for (auto& entry : *node->mutable_attr()) {
            tensorflow::AttrValue& v = entry.second;
            if (v.value_case() == tensorflow::AttrValue::kType) {
              v.set_type(types[rng() % types.size()]);
            }
          }
          break;
        case 3:  // wrong attr kind
          for (auto& entry : *node->mutable_attr()) entry.second.set_s("surprise");
          break;
        case 4:  // dangling or malformed input
          node->add_input(trial % 20 < 10 ? "ghost" : "ghost:-3");
          break;
        case 5:  // duplicate a node
          *g.add_node() = *node;
          break;
        case 6:  // self loop
          node->add_input(node->name());
          break;
        case 7:  // bad output index
          node->add_input(g.node(0).name() + ":9");
          break;
        case 8:  // drop inputs
          node->clear_input();
          break;
        case 9:  // corrupt a tensor attr's shape
          for (auto& entry : *node->mutable_attr()) {
            tensorflow::AttrValue& v = entry.second;
            if (v.value_case() == tensorflow::AttrValue::kTensor) {
              v.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(
                  trial % 20 < 10 ? -5 : (int64_t{1} << 40));
            }
          }
          break;
      }
      ExpectClean(Exercise(g, ex.fetches, ex.targets),
                  std::string(ex.file) + " mutation " + std::to_string(trial % 10));
    }
  }
}

TEST(GraphDefFuzz, SessionStaysUsableAfterErrors) {
  const tensorflow::GraphDef g = LoadExample("mlp_classifier.pbtxt");
  std::unique_ptr<Session> session = NewLocalSession(SessionOptions());
  ASSERT_TRUE(session->Create(g).ok());
  std::vector<Tensor> out;
  EXPECT_FALSE(session->Run({}, {"nope:0"}, {}, &out).ok());
  Tensor wrong(DT_INT32, TensorShape({1, 4}));
  for (int i = 0; i < 4; ++i) wrong.data<int32_t>()[i] = i;
  EXPECT_FALSE(session->Run({{"x", wrong}}, {"probs"}, {}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"probs"}, {}, &out).ok());
  EXPECT_EQ(out[0].shape(), TensorShape({2, 3}));
}

}  // namespace
}  // namespace weft
