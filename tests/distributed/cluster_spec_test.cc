// ClusterSpec from the --cluster flag, TensorFlow's ClusterSpec JSON (list
// and sparse forms), TF_CONFIG as Kubeflow writes it, and ClusterDef; every
// malformed spec is an error naming what is wrong.
#include "distributed/cluster_spec.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Error(absl::string_view text) {
  absl::StatusOr<ClusterSpec> spec = ParseClusterSpec(text);
  EXPECT_FALSE(spec.ok()) << text << " parsed as " << spec->ToString();
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << spec.status();
  return std::string(spec.status().message());
}

TEST(ClusterSpecTest, FlagForm) {
  absl::StatusOr<ClusterSpec> spec =
      ParseClusterSpec("ps=localhost:2222;worker=localhost:2223, 127.0.0.2:2224");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->Jobs(), ElementsAre("ps", "worker"));
  EXPECT_THAT(spec->TaskIndices("worker"), ElementsAre(0, 1));
  EXPECT_TRUE(spec->TaskIndices("chief").empty());
  EXPECT_EQ(spec->NumTasks(), 3);
  EXPECT_EQ(*spec->Address({"worker", 1}), "127.0.0.2:2224");
  EXPECT_EQ(*spec->Address({"ps", 0}), "localhost:2222");
  EXPECT_TRUE(spec->HasTask({"worker", 0}));
  EXPECT_FALSE(spec->HasTask({"worker", 2}));
  EXPECT_EQ(spec->ToString(), "ps=localhost:2222;worker=localhost:2223,127.0.0.2:2224");
  std::vector<std::string> tasks;
  for (const TaskId& t : spec->Tasks()) tasks.push_back(t.DeviceNamePrefix());
  EXPECT_THAT(tasks, ElementsAre("/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0",
                                 "/job:worker/replica:0/task:1"));
}

TEST(ClusterSpecTest, AddressOfMissingTaskListsTheTasks) {
  ClusterSpec spec = *ParseClusterSpec("ps=localhost:2222;worker=localhost:2223");
  absl::StatusOr<std::string> address = spec.Address({"worker", 3});
  ASSERT_FALSE(address.ok());
  EXPECT_EQ(address.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(address.status().message(),
              HasSubstr("no task /job:worker/task:3; its tasks are /job:ps/task:0, "
                        "/job:worker/task:0"));
}

TEST(ClusterSpecTest, JsonListsAndSparseJobs) {
  absl::StatusOr<ClusterSpec> spec =
      ParseClusterSpec(R"( {"ps": ["[::1]:2222"], "worker": {"0": "h1:2223", "3": "h2:2224"}} )");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->TaskIndices("worker"), ElementsAre(0, 3));
  EXPECT_EQ(*spec->Address({"worker", 3}), "h2:2224");
  EXPECT_EQ(*spec->Address({"ps", 0}), "[::1]:2222");
  // Sparse jobs print as JSON, which reads back to the same spec.
  absl::StatusOr<ClusterSpec> again = ParseClusterSpec(spec->ToString());
  ASSERT_TRUE(again.ok()) << spec->ToString() << ": " << again.status();
  EXPECT_EQ(again->ToString(), spec->ToString());
  EXPECT_THAT(again->TaskIndices("worker"), ElementsAre(0, 3));
}

TEST(ClusterSpecTest, ClusterDefRoundTrip) {
  ClusterSpec spec = *ParseClusterSpec(R"({"ps": ["a:1"], "worker": {"2": "b:2"}})");
  tensorflow::ClusterDef def = spec.ToClusterDef();
  ASSERT_EQ(def.job_size(), 2);
  EXPECT_EQ(def.job(1).name(), "worker");
  EXPECT_EQ(def.job(1).tasks().at(2), "b:2");
  absl::StatusOr<ClusterSpec> back = ClusterSpec::FromClusterDef(def);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToString(), spec.ToString());

  tensorflow::ClusterDef bad = def;
  (*bad.mutable_job(0)->mutable_tasks())[0] = "b:2";
  absl::StatusOr<ClusterSpec> clash = ClusterSpec::FromClusterDef(bad);
  ASSERT_FALSE(clash.ok());
  EXPECT_THAT(clash.status().message(), HasSubstr("both have address 'b:2'"));
  // A job without tasks adds nothing, as in TensorFlow; no tasks at all is
  // an error.
  tensorflow::ClusterDef empty_job;
  empty_job.add_job()->set_name("ps");
  EXPECT_THAT(ClusterSpec::FromClusterDef(empty_job).status().message(),
              HasSubstr("has no tasks in any job"));
  (*empty_job.add_job()->mutable_tasks())[0] = "w:1";
  empty_job.mutable_job(1)->set_name("worker");
  absl::StatusOr<ClusterSpec> worker_only = ClusterSpec::FromClusterDef(empty_job);
  ASSERT_TRUE(worker_only.ok()) << worker_only.status();
  EXPECT_EQ(worker_only->NumTasks(), 1);
  EXPECT_TRUE(worker_only->TaskIndices("ps").empty());
}

TEST(ClusterSpecTest, MalformedFlagsNameWhatIsWrong) {
  EXPECT_THAT(Error(""), HasSubstr("--cluster: names no jobs"));
  EXPECT_THAT(Error(" ; "), HasSubstr("names no jobs"));
  EXPECT_THAT(Error("ps"), HasSubstr("'ps' is not JOB=HOST:PORT"));
  EXPECT_THAT(Error("ps="), HasSubstr("job 'ps' has no tasks"));
  EXPECT_THAT(Error("ps=a:1;ps=b:2"), HasSubstr("job 'ps' is given twice"));
  EXPECT_THAT(Error("1ps=a:1"), HasSubstr("job name '1ps' is not a letter"));
  EXPECT_THAT(Error("p-s=a:1"), HasSubstr("job name 'p-s'"));
  EXPECT_THAT(Error("ps=a"), HasSubstr("/job:ps/task:0 address 'a' has no port (write host:port)"));
  EXPECT_THAT(Error("ps=:22"), HasSubstr("has no host"));
  EXPECT_THAT(Error("ps=a:0"), HasSubstr("port that is not a number in 1-65535"));
  EXPECT_THAT(Error("ps=a:65536"), HasSubstr("1-65535"));
  EXPECT_THAT(Error("ps=a:-1"), HasSubstr("1-65535"));
  EXPECT_THAT(Error("ps=a:22x"), HasSubstr("1-65535"));
  EXPECT_THAT(Error("ps=::1:22"), HasSubstr("IPv6 host not in brackets"));
  EXPECT_THAT(Error("ps=[::1:22"), HasSubstr("unclosed '['"));
  EXPECT_THAT(Error("worker=a:1,,b:2"), HasSubstr("/job:worker/task:1 address ''"));
  EXPECT_THAT(Error(std::string("ps=a\0b:1", 8)), HasSubstr("'a\\000b:1'"));
  EXPECT_THAT(Error("ps=a:1;worker=a:1"),
              HasSubstr("/job:worker/task:0 and /job:ps/task:0 both have address 'a:1'"));
}

TEST(ClusterSpecTest, MalformedJsonNamesTheField) {
  EXPECT_THAT(Error("{"), HasSubstr("--cluster: not valid JSON: parse error at line 1"));
  EXPECT_THAT(Error("{}"), HasSubstr("has no jobs"));
  EXPECT_THAT(Error(R"({"ps": "a:1"})"), HasSubstr("job 'ps' is string; a job is a list"));
  EXPECT_THAT(Error(R"({"ps": []})"), HasSubstr("has no tasks in any job"));
  EXPECT_THAT(Error(R"({"ps": {}})"), HasSubstr("has no tasks in any job"));
  absl::StatusOr<ClusterSpec> no_ps = ParseClusterSpec(R"({"worker": ["a:1"], "ps": []})");
  ASSERT_TRUE(no_ps.ok()) << no_ps.status();
  EXPECT_THAT(no_ps->Jobs(), ElementsAre("worker"));
  EXPECT_THAT(Error(R"({"ps": [1]})"), HasSubstr("task 0's address is number"));
  EXPECT_THAT(Error(R"({"ps": {"x": "a:1"}})"), HasSubstr("task index 'x'"));
  EXPECT_THAT(Error(R"({"ps": {"-1": "a:1"}})"), HasSubstr("task index '-1'"));
  EXPECT_THAT(Error(R"({"ps": {"99999999999": "a:1"}})"), HasSubstr("task index"));
  EXPECT_THAT(Error(R"({"ps": ["a:1", "a:1"]})"), HasSubstr("both have address"));
  // Deep nesting is an error, not a crash.
  EXPECT_THAT(Error(R"({"ps": )" + std::string(100000, '[')), HasSubstr("not valid JSON"));
  EXPECT_THAT(Error(R"({"ps": [[[[[[["a:1"]]]]]]]})"), HasSubstr("address is array"));
}

TEST(TfConfigTest, KubeflowForm) {
  absl::StatusOr<TfConfig> config = ParseTfConfig(R"({
    "cluster": {"chief": ["c:2220"], "ps": ["p:2222"], "worker": ["w0:2223", "w1:2224"]},
    "task": {"type": "worker", "index": 1},
    "environment": "cloud"})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->task.job, "worker");
  EXPECT_EQ(config->task.index, 1);
  EXPECT_EQ(config->task.ToString(), "/job:worker/task:1");
  EXPECT_THAT(config->cluster.Jobs(), ElementsAre("chief", "ps", "worker"));
  EXPECT_EQ(*config->cluster.Address(config->task), "w1:2224");
}

TEST(TfConfigTest, IndexDefaultsToZero) {
  absl::StatusOr<TfConfig> config =
      ParseTfConfig(R"({"cluster": {"chief": ["c:1"]}, "task": {"type": "chief"}})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->task.index, 0);
}

TEST(TfConfigTest, ErrorsNameTheField) {
  auto error = [](absl::string_view text) {
    absl::StatusOr<TfConfig> config = ParseTfConfig(text);
    EXPECT_FALSE(config.ok()) << text;
    return config.ok() ? std::string() : std::string(config.status().message());
  };
  EXPECT_THAT(error(""), HasSubstr("TF_CONFIG: not valid JSON"));
  EXPECT_THAT(error("[]"), HasSubstr("TF_CONFIG: is array, not an object"));
  EXPECT_THAT(error(R"({"task": {"type": "ps"}})"), HasSubstr("no \"cluster\" field"));
  EXPECT_THAT(error(R"({"cluster": {"ps": ["a:1"]}})"), HasSubstr("no \"task\" object"));
  EXPECT_THAT(error(R"({"cluster": {"ps": ["a:1"]}, "task": {"index": 0}})"),
              HasSubstr("no \"type\" string"));
  EXPECT_THAT(error(R"({"cluster": {"ps": ["a:1"]}, "task": {"type": "ps", "index": -1}})"),
              HasSubstr("\"index\" is not an integer in 0-2147483647"));
  EXPECT_THAT(error(R"({"cluster": {"ps": ["a:1"]}, "task": {"type": "ps", "index": "0"}})"),
              HasSubstr("\"index\" is not an integer"));
  EXPECT_THAT(error(R"({"cluster": {"ps": ["a:1"]}, "task": {"type": "worker", "index": 0}})"),
              HasSubstr("\"task\" is /job:worker/task:0, which is not in its \"cluster\" "
                        "(/job:ps/task:0)"));
  EXPECT_THAT(error(R"({"cluster": {"ps": "a:1"}, "task": {"type": "ps"}})"),
              HasSubstr("TF_CONFIG \"cluster\": job 'ps' is string"));
}

}  // namespace
}  // namespace weft
