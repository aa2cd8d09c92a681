#include "app/sweep/sweep_results.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "replay/workload/json_reader.h"

namespace app::sweep {

namespace fs = std::filesystem;
namespace json = replay::json;

namespace {

std::optional<std::string> readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const json::Value* walk(const json::Value& v, std::initializer_list<const char*> path) {
  const json::Value* at = &v;
  for (const char* key : path) {
    if (at->type != json::Type::Object) return nullptr;
    at = at->find(key);
    if (!at) return nullptr;
  }
  return at;
}

std::optional<double> number(const json::Value& doc, std::initializer_list<const char*> path) {
  const json::Value* v = walk(doc, path);
  if (!v || v->type != json::Type::Number) return std::nullopt;
  return v->integral ? static_cast<double>(v->integer) : v->number;
}

// What a failed job's error file says, or why it cannot be read.
std::string errorText(const std::string& path) {
  const auto text = readText(path);
  if (!text) return "cannot read " + path;
  auto doc = json::parse(*text, path);
  if (!doc) return doc.error().message();
  const json::Value* e = walk(*doc, {"error"});
  return e && e->type == json::Type::String ? e->string : path + ": no \"error\"";
}

void readDocument(const std::string& path, JobResult& r) {
  const auto text = readText(path);
  auto doc = text ? json::parse(*text, path) : core::Result<json::Value>(core::Error("cannot read " + path));
  if (!doc || doc->type != json::Type::Object) {
    r.state = JobState::Failed;
    r.error = doc ? path + ": not a replay document" : doc.error().message();
    return;
  }
  if (const json::Value* m = walk(*doc, {"model"}); m && m->type == json::Type::String) r.resolvedModel = m->string;
  if (const json::Value* v = walk(*doc, {"validation", "fidelity", "verdict"}); v && v->type == json::Type::String)
    r.verdict = v->string;
  auto set = [&](Metric m, std::optional<double> v) { r.values[static_cast<size_t>(m)] = v; };
  set(Metric::Makespan, number(*doc, {"validation", "makespan_replay_ns"}));
  set(Metric::LatencyP50, number(*doc, {"totals", "wakeup_latency_ns", "p50"}));
  set(Metric::LatencyP99, number(*doc, {"totals", "wakeup_latency_ns", "p99"}));
  set(Metric::Jain, number(*doc, {"fairness", "jain"}));
  set(Metric::ForcedIdle, number(*doc, {"totals", "forced_idle_ns"}));
  set(Metric::Energy, number(*doc, {"energy_j"}));
}

bool better(const MetricInfo& m, double a, double b) { return m.higherIsBetter ? a > b : a < b; }

}  // namespace

const std::array<MetricInfo, kMetricCount>& metricInfos() {
  static const std::array<MetricInfo, kMetricCount> infos = {{
      {Metric::Makespan, "makespan_ns", "makespan", false, true},
      {Metric::LatencyP50, "wakeup_latency_p50_ns", "wakeup latency p50", false, true},
      {Metric::LatencyP99, "wakeup_latency_p99_ns", "wakeup latency p99", false, true},
      {Metric::Jain, "jain", "Jain's index", true, false},
      {Metric::ForcedIdle, "forced_idle_ns", "forced idle", false, true},
      {Metric::Energy, "energy_j", "energy (J)", false, false},
  }};
  return infos;
}

const MetricInfo& info(Metric metric) { return metricInfos()[static_cast<size_t>(metric)]; }

core::Result<SweepResults> readResults(const std::string& dir) {
  auto jobs = readManifest(dir);
  if (!jobs) return jobs.error();
  SweepResults out;
  out.dir = dir;
  for (Job& job : *jobs) {
    JobResult r;
    r.state = jobState(dir, job.id);
    if (r.state == JobState::Done) readDocument(resultPath(dir, job.id), r);
    else if (r.state == JobState::Failed) r.error = errorText(errorPath(dir, job.id));
    out.done += r.state == JobState::Done;
    out.failed += r.state == JobState::Failed;
    out.pending += r.state == JobState::Pending;
    if (std::find(out.traces.begin(), out.traces.end(), job.trace) == out.traces.end()) out.traces.push_back(job.trace);
    for (const Param& p : job.params)
      if (std::find(out.paramKeys.begin(), out.paramKeys.end(), p.key) == out.paramKeys.end())
        out.paramKeys.push_back(p.key);
    r.job = std::move(job);
    out.jobs.push_back(std::move(r));
  }
  return out;
}

const JobResult* SweepResults::reference(const std::string& trace) const {
  for (const JobResult& r : jobs)
    if (r.job.reference && r.job.trace == trace) return &r;
  return nullptr;
}

std::string SweepResults::referenceVerdict(const std::string& trace) const {
  const JobResult* r = reference(trace);
  return r && r->state == JobState::Done ? r->verdict : std::string();
}

std::vector<MetricSummary> SweepResults::summaries() const {
  std::vector<MetricSummary> out;
  for (const MetricInfo& m : metricInfos()) {
    MetricSummary s{m.metric, {}, {}, false};
    bool any = false;
    for (const std::string& trace : traces) {
      Extremes e;
      size_t n = 0;
      for (size_t i = 0; i < jobs.size(); ++i) {
        const JobResult& r = jobs[i];
        const auto v = r.value(m.metric);
        if (r.job.trace != trace || r.state != JobState::Done || !v) continue;
        ++n;
        if (!e.best || better(m, *v, *jobs[*e.best].value(m.metric))) e.best = i;
        if (!e.worst || better(m, *jobs[*e.worst].value(m.metric), *v)) e.worst = i;
      }
      if (n >= 2 && *jobs[*e.best].value(m.metric) == *jobs[*e.worst].value(m.metric)) e.tied = true;
      for (size_t i = 0; e.best && !e.tied && i < jobs.size(); ++i) {
        const auto v = jobs[i].value(m.metric);
        if (jobs[i].job.trace != trace || jobs[i].state != JobState::Done || !v) continue;
        e.othersAsBest += i != *e.best && *v == *jobs[*e.best].value(m.metric);
        e.othersAsWorst += i != *e.worst && *v == *jobs[*e.worst].value(m.metric);
      }
      any |= n > 0;
      s.perTrace.emplace_back(trace, e);
    }
    if (!any) continue;

    // Per trace the reference's value, which makes traces of different lengths comparable.
    std::map<std::string, double> refValue;
    bool relative = true;
    for (const std::string& trace : traces) {
      const JobResult* ref = reference(trace);
      const auto v = ref && ref->state == JobState::Done ? ref->value(m.metric) : std::nullopt;
      if (v && *v != 0) refValue[trace] = *v;
      else relative = false;
    }
    std::vector<std::string> order;
    std::map<std::string, std::vector<const JobResult*>> bySetting;
    for (const JobResult& r : jobs) {
      if (r.state != JobState::Done || !r.value(m.metric)) continue;
      const std::string key = r.job.settingKey();
      if (!bySetting.count(key)) order.push_back(key);
      bySetting[key].push_back(&r);
    }
    for (const std::string& key : order) {
      const auto& runs = bySetting[key];
      if (runs.size() != traces.size()) continue;  // not done on every trace: not comparable
      SettingScore score{key, runs.front()->job.model, runs.front()->job.settingsText(), 0, std::nullopt, runs.size()};
      double sum = 0, rel = 0;
      for (const JobResult* r : runs) {
        sum += *r->value(m.metric);
        if (relative) rel += *r->value(m.metric) / refValue[r->job.trace];
      }
      score.mean = sum / static_cast<double>(runs.size());
      if (relative) score.relative = rel / static_cast<double>(runs.size());
      s.overall.push_back(std::move(score));
    }
    s.relative = relative;
    std::stable_sort(s.overall.begin(), s.overall.end(),
                     [&](const SettingScore& a, const SettingScore& b) { return better(m, a.score(), b.score()); });
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace app::sweep
