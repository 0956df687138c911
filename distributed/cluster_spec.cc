#include "distributed/cluster_spec.h"

#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "distributed/task_name.h"
#include "nlohmann/json.hpp"
#include "runtime/core/status.h"

namespace weft {
namespace {

using Json = nlohmann::json;

absl::Status Invalid(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

bool ValidJobName(absl::string_view name) {
  if (name.empty() || !absl::ascii_isalpha(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// Why `address` is not host:port, or "" when it is.
std::string AddressProblem(absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return "has no port (write host:port)";
  absl::string_view host = address.substr(0, colon);
  absl::string_view port = address.substr(colon + 1);
  if (host.empty()) return "has no host before ':'";
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return "has an unclosed '[' in its IPv6 host";
  } else if (host.find(':') != absl::string_view::npos) {
    return "has an IPv6 host not in brackets (write [::1]:2222)";
  }
  for (char c : host) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f || c == '/' || c == ',' || c == ';' ||
        c == '=') {
      return "has a space, control byte or one of / , ; = in its host";
    }
  }
  int value = 0;
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != absl::string_view::npos ||
      !absl::SimpleAtoi(port, &value) || value < 1 || value > 65535) {
    return "has a port that is not a number in 1-65535";
  }
  return "";
}

// nlohmann's DOM builder, keeping the parse error's text instead of
// throwing it.
class JsonDom : public nlohmann::detail::json_sax_dom_parser<Json> {
 public:
  explicit JsonDom(Json& root) : json_sax_dom_parser(root, /*allow_exceptions=*/false) {}
  template <class Exception>
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const Exception& e) {
    error_ = e.what();
    // "[json.exception.parse_error.101] parse error at ...": keep the rest.
    if (const size_t close = error_.find("] "); close != std::string::npos) {
      error_ = error_.substr(close + 2);
    }
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

absl::StatusOr<Json> ParseJson(absl::string_view text, absl::string_view where) {
  Json root;
  JsonDom dom(root);
  if (!Json::sax_parse(text.begin(), text.end(), &dom) || !dom.error().empty()) {
    return Invalid(where, absl::StrCat("not valid JSON: ",
                                       dom.error().empty() ? "parse failed" : dom.error()));
  }
  return root;
}

std::string Quote(absl::string_view s) { return absl::StrCat("'", absl::CEscape(s), "'"); }

// One job's tasks in JSON: a list of addresses (indices 0..n-1) or an
// object of index -> address.
absl::Status AddJsonJob(const std::string& job, const Json& tasks, absl::string_view where,
                        ClusterSpec* spec) {
  const std::string field = absl::StrCat("job ", Quote(job));
  auto fail = [&](absl::string_view what) {
    return Invalid(where, absl::StrCat(field, " ", what));
  };
  auto add = [&](int index, const Json& address) -> absl::Status {
    if (!address.is_string()) {
      return fail(absl::StrCat("task ", index, "'s address is ", address.type_name(),
                               ", not a \"host:port\" string"));
    }
    return spec->AddTask({job, index}, address.get_ref<const std::string&>(), where);
  };
  // A job with no tasks is allowed and adds nothing, as in TensorFlow's
  // ClusterSpec ({"worker": [...], "ps": []} from a cluster of 0 ps).
  if (tasks.is_array()) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (i > static_cast<size_t>(INT32_MAX)) return fail("has too many tasks");
      WEFT_RETURN_IF_ERROR(add(static_cast<int>(i), tasks[i]));
    }
    return absl::OkStatus();
  }
  if (tasks.is_object()) {
    for (const auto& [key, address] : tasks.items()) {
      int index = -1;
      if (key.empty() || key.find_first_not_of("0123456789") != std::string::npos ||
          !absl::SimpleAtoi(key, &index)) {
        return fail(absl::StrCat("has task index ", Quote(key), ", not a number in 0-2147483647"));
      }
      WEFT_RETURN_IF_ERROR(add(index, address));
    }
    return absl::OkStatus();
  }
  return fail(absl::StrCat("is ", tasks.type_name(),
                           "; a job is a list of \"host:port\" strings or an "
                           "object of task index -> \"host:port\""));
}

absl::StatusOr<ClusterSpec> FromJson(const Json& cluster, absl::string_view where) {
  if (!cluster.is_object()) {
    return Invalid(
        where, absl::StrCat("is ", cluster.type_name(), ", not an object of job name -> tasks"));
  }
  if (cluster.empty()) return Invalid(where, "has no jobs");
  ClusterSpec spec;
  for (const auto& [job, tasks] : cluster.items()) {
    WEFT_RETURN_IF_ERROR(AddJsonJob(job, tasks, where, &spec));
  }
  if (spec.NumTasks() == 0) return Invalid(where, "has no tasks in any job");
  return spec;
}

absl::StatusOr<ClusterSpec> FromFlag(absl::string_view text, absl::string_view where) {
  ClusterSpec spec;
  for (absl::string_view part : absl::StrSplit(text, ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;  // "ps=a;worker=b;" and blank parts
    const size_t eq = part.find('=');
    if (eq == absl::string_view::npos) {
      return Invalid(where, absl::StrCat(Quote(part), " is not JOB=HOST:PORT[,HOST:PORT...]"));
    }
    const std::string job(absl::StripAsciiWhitespace(part.substr(0, eq)));
    if (!spec.TaskIndices(job).empty()) {
      return Invalid(where, absl::StrCat("job ", Quote(job),
                                         " is given twice; list all its tasks once, "
                                         "separated by ','"));
    }
    absl::string_view list = absl::StripAsciiWhitespace(part.substr(eq + 1));
    if (list.empty()) return Invalid(where, absl::StrCat("job ", Quote(job), " has no tasks"));
    int index = 0;
    for (absl::string_view address : absl::StrSplit(list, ',')) {
      WEFT_RETURN_IF_ERROR(spec.AddTask({job, index}, absl::StripAsciiWhitespace(address), where));
      ++index;
    }
  }
  if (spec.NumTasks() == 0) {
    return Invalid(where, "names no jobs (write ps=HOST:PORT;worker=HOST:PORT,...)");
  }
  return spec;
}

}  // namespace

std::string TaskId::DeviceNamePrefix() const {
  return TaskName(job, /*replica=*/0, index);
}

std::string TaskId::ToString() const { return absl::StrCat("/job:", job, "/task:", index); }

absl::Status ClusterSpec::AddTask(const TaskId& task, absl::string_view address,
                                  absl::string_view where) {
  if (!ValidJobName(task.job)) {
    return Invalid(where, absl::StrCat("job name ", Quote(task.job),
                                       " is not a letter followed by letters, digits "
                                       "or '_'"));
  }
  if (task.index < 0) {
    return Invalid(where, absl::StrCat(task.ToString(), " has a negative index"));
  }
  if (const std::string problem = AddressProblem(address); !problem.empty()) {
    return Invalid(where, absl::StrCat(task.ToString(), " address ", Quote(address), " ", problem));
  }
  auto job = jobs_.find(task.job);
  if (job != jobs_.end() && job->second.count(task.index) > 0) {
    return Invalid(where, absl::StrCat(task.ToString(), " is given twice"));
  }
  if (auto other = by_address_.find(address); other != by_address_.end()) {
    return Invalid(where, absl::StrCat(task.ToString(), " and ", other->second.ToString(),
                                       " both have address ", Quote(address),
                                       "; every task needs its own port"));
  }
  jobs_[task.job].emplace(task.index, std::string(address));
  by_address_.emplace(std::string(address), task);
  return absl::OkStatus();
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromClusterDef(const tensorflow::ClusterDef& def) {
  ClusterSpec spec;
  const std::string where = "ClusterDef";
  for (const tensorflow::JobDef& job : def.job()) {
    if (!spec.TaskIndices(job.name()).empty()) {
      return Invalid(where, absl::StrCat("job ", Quote(job.name()), " is given twice"));
    }
    // A job without tasks adds nothing (TensorFlow allows it).
    for (const auto& [index, address] : job.tasks()) {
      WEFT_RETURN_IF_ERROR(spec.AddTask({job.name(), index}, address, where));
    }
  }
  if (spec.NumTasks() == 0) return Invalid(where, "has no tasks in any job");
  return spec;
}

tensorflow::ClusterDef ClusterSpec::ToClusterDef() const {
  tensorflow::ClusterDef def;
  for (const auto& [name, tasks] : jobs_) {
    tensorflow::JobDef* job = def.add_job();
    job->set_name(name);
    for (const auto& [index, address] : tasks) (*job->mutable_tasks())[index] = address;
  }
  return def;
}

std::vector<std::string> ClusterSpec::Jobs() const {
  std::vector<std::string> names;
  for (const auto& entry : jobs_) names.push_back(entry.first);
  return names;
}

std::vector<int> ClusterSpec::TaskIndices(absl::string_view job) const {
  std::vector<int> indices;
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return indices;
  for (const auto& entry : it->second) indices.push_back(entry.first);
  return indices;
}

std::vector<TaskId> ClusterSpec::Tasks() const {
  std::vector<TaskId> tasks;
  for (const auto& [name, by_index] : jobs_) {
    for (const auto& entry : by_index) tasks.push_back({name, entry.first});
  }
  return tasks;
}

int ClusterSpec::NumTasks() const {
  int n = 0;
  for (const auto& entry : jobs_) n += static_cast<int>(entry.second.size());
  return n;
}

bool ClusterSpec::HasTask(const TaskId& task) const {
  auto it = jobs_.find(task.job);
  return it != jobs_.end() && it->second.count(task.index) > 0;
}

absl::StatusOr<std::string> ClusterSpec::Address(const TaskId& task) const {
  auto it = jobs_.find(task.job);
  if (it != jobs_.end()) {
    auto t = it->second.find(task.index);
    if (t != it->second.end()) return t->second;
  }
  std::vector<std::string> names;
  for (const TaskId& t : Tasks()) names.push_back(t.ToString());
  return absl::NotFoundError(absl::StrCat("the cluster has no task ", task.ToString(),
                                          "; its tasks are ", absl::StrJoin(names, ", ")));
}

std::string ClusterSpec::ToString() const {
  bool dense = true;
  for (const auto& [name, tasks] : jobs_) {
    dense = dense && tasks.rbegin()->first + 1 == static_cast<int>(tasks.size());
  }
  if (dense) {
    std::vector<std::string> parts;
    for (const auto& [name, tasks] : jobs_) {
      std::vector<std::string> addresses;
      for (const auto& entry : tasks) addresses.push_back(entry.second);
      parts.push_back(absl::StrCat(name, "=", absl::StrJoin(addresses, ",")));
    }
    return absl::StrJoin(parts, ";");
  }
  Json j = Json::object();
  for (const auto& [name, tasks] : jobs_) {
    Json by_index = Json::object();
    for (const auto& [index, address] : tasks) by_index[std::to_string(index)] = address;
    j[name] = std::move(by_index);
  }
  return j.dump();
}

absl::StatusOr<ClusterSpec> ParseClusterSpec(absl::string_view text, absl::string_view where) {
  absl::string_view body = absl::StripLeadingAsciiWhitespace(text);
  if (!body.empty() && body.front() == '{') {
    WEFT_ASSIGN_OR_RETURN(Json j, ParseJson(body, where));
    return FromJson(j, where);
  }
  return FromFlag(text, where);
}

absl::StatusOr<TfConfig> ParseTfConfig(absl::string_view json) {
  const absl::string_view where = "TF_CONFIG";
  WEFT_ASSIGN_OR_RETURN(Json j, ParseJson(json, where));
  if (!j.is_object()) {
    return Invalid(where, absl::StrCat("is ", j.type_name(),
                                       ", not an object {\"cluster\": ..., \"task\": ...}"));
  }
  auto cluster = j.find("cluster");
  if (cluster == j.end()) return Invalid(where, "has no \"cluster\" field");
  TfConfig config;
  WEFT_ASSIGN_OR_RETURN(config.cluster, FromJson(*cluster, "TF_CONFIG \"cluster\""));
  auto task = j.find("task");
  if (task == j.end() || !task->is_object()) {
    return Invalid(where,
                   "has no \"task\" object ({\"type\": JOB, \"index\": I}) saying "
                   "which task this process is");
  }
  auto type = task->find("type");
  if (type == task->end() || !type->is_string()) {
    return Invalid(where, "\"task\" has no \"type\" string (the job name)");
  }
  config.task.job = type->get<std::string>();
  auto index = task->find("index");
  if (index != task->end()) {  // absent: task 0, as TensorFlow reads it
    // JSON's non-negative integers parse as unsigned.
    if (!index->is_number_unsigned() || index->get<uint64_t>() > INT32_MAX) {
      return Invalid(where, "\"task\" \"index\" is not an integer in 0-2147483647");
    }
    config.task.index = static_cast<int>(index->get<uint64_t>());
  }
  if (!config.cluster.HasTask(config.task)) {
    std::vector<std::string> names;
    for (const TaskId& t : config.cluster.Tasks()) names.push_back(t.ToString());
    return Invalid(where, absl::StrCat("\"task\" is ", config.task.ToString(),
                                       ", which is not in its \"cluster\" (",
                                       absl::StrJoin(names, ", "), ")"));
  }
  return config;
}

}  // namespace weft
