#include "app/sweep/sweep_plan.h"

#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/json_writer.h"
#include "core/topology.h"
#include "replay/policies/registry.h"
#include "replay/replay.h"
#include "replay/workload/json_reader.h"

namespace app::sweep {

namespace fs = std::filesystem;
namespace json = replay::json;

namespace {

constexpr size_t kMaxAxisValues = 10000;

std::string at(const json::Value& v, const std::string& name) {
  return name + ": line " + std::to_string(v.line) + ", column " + std::to_string(v.column) + ": ";
}

// Numbers as a person would type them: integers exactly, others with 12
// significant digits, so a range's 0.5 + 2 * 0.1 reads 0.7 and not 0.7000000000000001.
std::string numberText(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

core::Result<std::string> scalarText(const json::Value& v, const std::string& name) {
  switch (v.type) {
    case json::Type::Number: return v.integral ? std::to_string(v.integer) : numberText(v.number);
    case json::Type::String: return v.string;
    case json::Type::Bool: return std::string(v.boolean ? "true" : "false");
    case json::Type::Array: {
      // A list of rules is one value: cookie or uclamp rules, later ones winning (--cookie A --cookie B).
      std::string joined;
      for (const auto& item : v.items) {
        if (item.type != json::Type::String)
          return core::Error(at(item, name) + "a list of rules holds strings, not " + std::string(json::toString(item.type)));
        joined += (joined.empty() ? "" : ";") + item.string;
      }
      if (joined.empty()) return core::Error(at(v, name) + "an empty list of rules");
      return joined;
    }
    default: return core::Error(at(v, name) + "a parameter value is a number, string, boolean or list of rules, not " +
                                std::string(json::toString(v.type)));
  }
}

core::Result<std::vector<std::string>> rangeValues(const json::Value& v, const std::string& name) {
  const json::Value* from = v.find("from");
  const json::Value* to = v.find("to");
  const json::Value* step = v.find("step");
  for (const auto& m : v.members)
    if (m.key != "from" && m.key != "to" && m.key != "step")
      return core::Error(at(m.value, name) + "a range has \"from\", \"to\" and \"step\", not \"" + m.key + "\"");
  for (const json::Value* p : {from, to, step})
    if (!p || p->type != json::Type::Number)
      return core::Error(at(v, name) + "a range needs numbers \"from\", \"to\" and \"step\"");
  if (!(step->number > 0) || to->number < from->number)
    return core::Error(at(v, name) + "a range needs step > 0 and to >= from");
  const double n = std::floor((to->number - from->number) / step->number + 1e-9) + 1;
  if (n > static_cast<double>(kMaxAxisValues))
    return core::Error(at(v, name) + "a range of more than " + std::to_string(kMaxAxisValues) + " values");
  const bool integral = from->integral && step->integral;
  std::vector<std::string> out;
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k)
    out.push_back(integral ? std::to_string(from->integer + k * step->integer)
                           : numberText(from->number + static_cast<double>(k) * step->number));
  return out;
}

core::Result<std::vector<Axis>> axesOf(const json::Value& params, const std::string& name) {
  if (params.type != json::Type::Object)
    return core::Error(at(params, name) + "\"params\" is an object of KEY: values, not " +
                       std::string(json::toString(params.type)));
  std::vector<Axis> axes;
  for (const auto& [key, v] : params.members) {
    Axis axis{key, {}};
    if (v.type == json::Type::Object) {
      auto values = rangeValues(v, name);
      if (!values) return values.error();
      axis.values = std::move(*values);
    } else if (v.type == json::Type::Array) {
      for (const auto& item : v.items) {
        auto text = scalarText(item, name);
        if (!text) return text.error();
        axis.values.push_back(std::move(*text));
      }
    } else {
      auto text = scalarText(v, name);
      if (!text) return text.error();
      axis.values.push_back(std::move(*text));
    }
    if (axis.values.empty()) return core::Error(at(v, name) + "parameter '" + key + "' has no values");
    axes.push_back(std::move(axis));
  }
  return axes;
}

// The concrete models a name can stand for: "baseline" is cfs or eevdf,
// depending on the kernel of each recording.
std::vector<std::string> concreteModels(const std::string& model) {
  if (model.rfind("baseline", 0) == 0)
    return {replay::resolveBaseline(model, "6.5.0"), replay::resolveBaseline(model, "6.6.0")};
  return {model};
}

core::Status checkAxes(const std::string& model, const std::vector<Axis>& axes) {
  std::vector<replay::Params> candidates;
  for (const std::string& concrete : concreteModels(model)) {
    auto params = replay::defaultParams(concrete);
    if (!params) return params.error();
    candidates.push_back(std::move(*params));
  }
  for (const Axis& axis : axes) {
    bool known = false;
    for (const replay::Params& defaults : candidates) {
      if (!defaults.has(axis.key)) continue;
      known = true;
      for (const std::string& value : axis.values) {
        replay::Params p = defaults;
        if (auto st = p.set(axis.key, value); !st) return core::Error("model " + model + ": " + st.message());
      }
    }
    if (!known) return core::Error("model " + model + " has no parameter '" + axis.key + "' (see `schedlab-cli replay --help --model " + model + "`)");
  }
  return {};
}

core::Result<std::vector<std::string>> expandPattern(const std::string& pattern, const std::string& baseDir) {
  fs::path p = pattern;
  if (p.is_relative() && !baseDir.empty()) p = fs::path(baseDir) / p;
  glob_t g{};
  const int rc = ::glob(p.c_str(), GLOB_TILDE | GLOB_BRACE, nullptr, &g);
  std::vector<std::string> out;
  if (rc == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(fs::absolute(g.gl_pathv[i]).lexically_normal().string());
  globfree(&g);
  if (out.empty()) return core::Error("no trace matches '" + pattern + "'" + (p.string() != pattern ? " (" + p.string() + ")" : ""));
  return out;
}

uint64_t fnv1a(std::string_view s, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string jobId(const Job& job) {
  // Unit separators between fields, so "a" + "bc" never hashes like "ab" + "c".
  std::string canonical = "schedlab-sweep-job-1\x1f" + job.trace + "\x1f" + job.model + "\x1f" + job.topology;
  for (const Param& p : job.params) canonical += "\x1f" + p.key + "=" + p.value;
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(canonical)));
  return buf;
}

std::string systemError() { return std::strerror(errno); }

}  // namespace

std::string traceLabel(const std::string& path) {
  const fs::path p = path;
  return p.has_parent_path() ? (p.parent_path().filename() / p.filename()).string() : p.string();
}

std::vector<std::string> Job::replayArgs() const {
  std::vector<std::string> args{trace, "--model", model};
  for (const Param& p : params) {
    args.push_back("--param");
    args.push_back(p.key + "=" + p.value);
  }
  if (!topology.empty()) {
    args.push_back("--topology");
    args.push_back(topology);
  }
  args.push_back("--json");
  return args;
}

std::string Job::settingsText() const {
  std::string s;
  for (const Param& p : params) s += (s.empty() ? "" : ", ") + p.key + "=" + p.value;
  if (!topology.empty()) s += (s.empty() ? "" : ", ") + std::string("topology ") + topology;
  return s.empty() ? "defaults" : s;
}

std::string Job::settingKey() const { return model + " | " + settingsText(); }

core::Result<Plan> parsePlan(std::string_view text, const std::string& name, const std::string& baseDir) {
  auto doc = json::parse(text, name);
  if (!doc) return doc.error();
  if (doc->type != json::Type::Object) return core::Error(at(*doc, name) + "a sweep plan is a JSON object");
  Plan plan;
  plan.baseDir = baseDir;
  for (const auto& [key, v] : doc->members) {
    if (key == "traces") {
      const std::vector<json::Value> single{v};
      for (const auto& item : v.type == json::Type::Array ? v.items : single) {
        if (item.type != json::Type::String) return core::Error(at(item, name) + "\"traces\" lists paths or globs (strings)");
        plan.traces.push_back(item.string);
      }
    } else if (key == "models") {
      if (v.type != json::Type::Array) return core::Error(at(v, name) + "\"models\" is an array");
      for (const auto& item : v.items) {
        ModelEntry entry;
        if (item.type == json::Type::String) {
          entry.model = item.string;
        } else if (item.type == json::Type::Object) {
          for (const auto& m : item.members)
            if (m.key != "model" && m.key != "params")
              return core::Error(at(m.value, name) + "a model entry has \"model\" and \"params\", not \"" + m.key + "\"");
          const json::Value* model = item.find("model");
          if (!model || model->type != json::Type::String)
            return core::Error(at(item, name) + "a model entry needs \"model\": NAME");
          entry.model = model->string;
          if (const json::Value* params = item.find("params")) {
            auto axes = axesOf(*params, name);
            if (!axes) return axes.error();
            entry.axes = std::move(*axes);
          }
        } else {
          return core::Error(at(item, name) + "a model is a name or {\"model\": NAME, \"params\": {...}}");
        }
        plan.models.push_back(std::move(entry));
      }
    } else if (key == "params") {
      auto axes = axesOf(v, name);
      if (!axes) return axes.error();
      plan.axes = std::move(*axes);
    } else if (key == "topology") {
      if (v.type != json::Type::String) return core::Error(at(v, name) + "\"topology\" is a string such as \"2x2\"");
      plan.topology = v.string;
    } else if (key == "reference") {
      if (v.type != json::Type::Bool) return core::Error(at(v, name) + "\"reference\" is true or false");
      plan.reference = v.boolean;
    } else {
      return core::Error(at(v, name) + "unknown key \"" + key +
                         "\" (a plan has traces, models, params, topology and reference)");
    }
  }
  if (plan.traces.empty()) return core::Error(name + ": the plan names no \"traces\"");
  if (plan.models.empty()) return core::Error(name + ": the plan names no \"models\"");
  return plan;
}

core::Result<Plan> readPlanFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::Error("cannot read " + path + ": " + systemError());
  std::ostringstream text;
  text << in.rdbuf();
  return parsePlan(text.str(), path, fs::absolute(path).parent_path().string());
}

core::Result<Plan> planFromFlags(const std::vector<std::string>& traces, const std::vector<std::string>& models,
                                 const std::vector<std::string>& params, const std::string& topology, bool reference) {
  if (traces.empty()) return core::Error("a sweep needs at least one --trace (or a PLAN.json)");
  if (models.empty()) return core::Error("a sweep needs at least one --model");
  Plan plan;
  plan.traces = traces;
  for (const std::string& m : models) plan.models.push_back({m, {}});
  for (const std::string& assignment : params) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) return core::Error("--param " + assignment + ": expected KEY=V1,V2,...");
    Axis axis{assignment.substr(0, eq), {}};
    std::stringstream values(assignment.substr(eq + 1));
    for (std::string v; std::getline(values, v, ',');) {
      if (v.empty()) return core::Error("--param " + assignment + ": an empty value");
      axis.values.push_back(v);
    }
    if (axis.values.empty()) return core::Error("--param " + assignment + ": no values");
    plan.axes.push_back(std::move(axis));
  }
  plan.topology = topology;
  plan.reference = reference;
  plan.baseDir = fs::current_path().string();
  return plan;
}

core::Result<std::vector<Job>> expandPlan(const Plan& plan) {
  if (!plan.topology.empty())
    if (auto t = core::Topology::parseSpec(plan.topology); !t) return t.error();
  std::vector<std::string> traces;
  std::set<std::string> seen;
  for (const std::string& pattern : plan.traces) {
    auto matches = expandPattern(pattern, plan.baseDir);
    if (!matches) return matches.error();
    for (std::string& m : *matches)
      if (seen.insert(m).second) traces.push_back(std::move(m));
  }
  for (const ModelEntry& entry : plan.models) {
    std::vector<Axis> axes = plan.axes;
    for (const Axis& a : entry.axes) {
      for (const Axis& b : axes)
        if (b.key == a.key) return core::Error("parameter '" + a.key + "' is given for every model and again for " + entry.model);
      axes.push_back(a);
    }
    if (auto st = checkAxes(entry.model, axes); !st) return core::Error(st.message());
  }

  std::vector<Job> jobs;
  std::set<std::string> ids;
  auto add = [&](Job job) {
    job.id = jobId(job);
    if (ids.insert(job.id).second) jobs.push_back(std::move(job));
  };
  for (const std::string& trace : traces) {
    if (plan.reference) add(Job{{}, trace, "baseline", {}, {}, true});
    for (const ModelEntry& entry : plan.models) {
      std::vector<Axis> axes = plan.axes;
      axes.insert(axes.end(), entry.axes.begin(), entry.axes.end());
      // An odometer over the axes: the last one turns fastest.
      std::vector<size_t> digit(axes.size(), 0);
      while (true) {
        Job job{{}, trace, entry.model, {}, plan.topology, false};
        for (size_t i = 0; i < axes.size(); ++i) job.params.push_back({axes[i].key, axes[i].values[digit[i]]});
        add(std::move(job));
        size_t i = axes.size();
        while (i > 0 && ++digit[i - 1] == axes[i - 1].values.size()) digit[--i] = 0;
        if (i == 0) break;
      }
    }
  }
  return jobs;
}

std::string manifestPath(const std::string& dir) { return (fs::path(dir) / "sweep.json").string(); }
std::string resultPath(const std::string& dir, const std::string& id) {
  return (fs::path(dir) / "jobs" / (id + ".json")).string();
}
std::string errorPath(const std::string& dir, const std::string& id) {
  return (fs::path(dir) / "jobs" / (id + ".error.json")).string();
}

core::Status writeManifest(const std::string& dir, const std::vector<Job>& jobs) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "jobs", ec);
  if (ec) return core::Error("cannot create " + (fs::path(dir) / "jobs").string() + ": " + ec.message());
  core::JsonWriter j;
  j.beginObject();
  j.field("schedlab_sweep", 1);
  j.key("jobs").beginArray();
  for (const Job& job : jobs) {
    j.beginObject();
    j.field("id", job.id);
    j.field("trace", job.trace);
    j.field("model", job.model);
    j.key("params").beginObject();
    for (const Param& p : job.params) j.field(p.key, p.value);
    j.endObject();
    j.field("topology", job.topology);
    j.field("reference", job.reference);
    j.endObject();
  }
  j.endArray();
  j.endObject();
  return writeFileAtomically(manifestPath(dir), j.str() + "\n");
}

core::Result<std::vector<Job>> readManifest(const std::string& dir) {
  const std::string path = manifestPath(dir);
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::Error(dir + ": not the results of a sweep (cannot read " + path + ": " + systemError() + ")");
  std::ostringstream text;
  text << in.rdbuf();
  auto doc = json::parse(text.str(), path);
  if (!doc) return doc.error();
  const json::Value* list = doc->type == json::Type::Object ? doc->find("jobs") : nullptr;
  if (!list || list->type != json::Type::Array) return core::Error(path + ": no \"jobs\" array");
  std::vector<Job> jobs;
  for (const json::Value& item : list->items) {
    auto str = [&](const char* key) -> const std::string* {
      const json::Value* v = item.find(key);
      return v && v->type == json::Type::String ? &v->string : nullptr;
    };
    const json::Value* params = item.find("params");
    const json::Value* reference = item.find("reference");
    if (!str("id") || !str("trace") || !str("model") || !str("topology") || !params ||
        params->type != json::Type::Object || !reference || reference->type != json::Type::Bool)
      return core::Error(at(item, path) + "a job needs id, trace, model, params, topology and reference");
    Job job{*str("id"), *str("trace"), *str("model"), {}, *str("topology"), reference->boolean};
    for (const auto& [k, v] : params->members) {
      if (v.type != json::Type::String) return core::Error(at(v, path) + "parameter values are strings");
      job.params.push_back({k, v.string});
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

JobState jobState(const std::string& dir, const std::string& id) {
  std::error_code ec;
  if (fs::exists(resultPath(dir, id), ec)) return JobState::Done;
  if (fs::exists(errorPath(dir, id), ec)) return JobState::Failed;
  return JobState::Pending;
}

core::Status writeFileAtomically(const std::string& path, std::string_view text) {
  const fs::path target = path;
  // Hidden, and unique per writer: two runners finishing the same job never share a temporary.
  const fs::path tmp = target.parent_path() / ("." + target.filename().string() + "." + std::to_string(::getpid()) + ".tmp");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return core::Error("cannot write " + tmp.string() + ": " + systemError());
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = systemError();
      ::close(fd);
      ::unlink(tmp.c_str());
      return core::Error("cannot write " + tmp.string() + ": " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || std::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = systemError();
    ::unlink(tmp.c_str());
    return core::Error("cannot write " + path + ": " + why);
  }
  return {};
}

}  // namespace app::sweep
