#include "core/analysis/diff.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace core::analysis {

std::optional<double> MetricDelta::relative() const {
  if (a == 0) return std::nullopt;
  return (b - a) / std::fabs(a);
}

double ksDistance(const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
  if (x.empty() || y.empty()) return 0.0;
  size_t i = 0, j = 0;
  double d = 0;
  const auto nx = static_cast<double>(x.size()), ny = static_cast<double>(y.size());
  while (i < x.size() && j < y.size()) {
    const int64_t v = std::min(x[i], y[j]);
    while (i < x.size() && x[i] == v) ++i;
    while (j < y.size() && y[j] == v) ++j;
    d = std::max(d, std::fabs(static_cast<double>(i) / nx - static_cast<double>(j) / ny));
  }
  return d;
}

TaskStats sumTasks(const std::vector<const TaskStats*>& tasks) {
  TaskStats s;
  std::vector<const std::vector<int64_t>*> lat, delay;
  for (const TaskStats* t : tasks) {
    if (s.comm.empty()) {
      s.comm = t->comm;
      s.tid = t->tid;
      s.tgid = t->tgid;
      s.prio = t->prio;
    }
    s.runtimeNs += t->runtimeNs;
    s.waitNs += t->waitNs;
    s.sleepNs += t->sleepNs;
    s.blockedNs += t->blockedNs;
    s.cpuShare += t->cpuShare;
    s.switchesVoluntary += t->switchesVoluntary;
    s.switchesInvoluntary += t->switchesInvoluntary;
    s.migrations += t->migrations;
    s.wakeups += t->wakeups;
    s.forceidleSumNs += t->forceidleSumNs;
    lat.push_back(&t->wakeupLatency.sorted);
    delay.push_back(&t->schedDelay.sorted);
  }
  s.wakeupLatency = Distribution::ofParts(lat);
  s.schedDelay = Distribution::ofParts(delay);
  return s;
}

namespace {

std::vector<MetricDelta> taskMetrics(const TaskStats& a, const TaskStats& b) {
  auto d = [](const char* name, double x, double y) { return MetricDelta{name, x, y}; };
  return {
      d("runtime_ns", static_cast<double>(a.runtimeNs), static_cast<double>(b.runtimeNs)),
      d("wait_ns", static_cast<double>(a.waitNs), static_cast<double>(b.waitNs)),
      d("sleep_ns", static_cast<double>(a.sleepNs), static_cast<double>(b.sleepNs)),
      d("blocked_ns", static_cast<double>(a.blockedNs), static_cast<double>(b.blockedNs)),
      d("cpu_share", a.cpuShare, b.cpuShare),
      d("switches_voluntary", static_cast<double>(a.switchesVoluntary), static_cast<double>(b.switchesVoluntary)),
      d("switches_involuntary", static_cast<double>(a.switchesInvoluntary),
        static_cast<double>(b.switchesInvoluntary)),
      d("migrations", static_cast<double>(a.migrations), static_cast<double>(b.migrations)),
      d("wakeups", static_cast<double>(a.wakeups), static_cast<double>(b.wakeups)),
      d("wakeup_latency_mean_ns", a.wakeupLatency.mean, b.wakeupLatency.mean),
      d("wakeup_latency_p99_ns", static_cast<double>(a.wakeupLatency.p99), static_cast<double>(b.wakeupLatency.p99)),
      d("sched_delay_mean_ns", a.schedDelay.mean, b.schedDelay.mean),
      d("sched_delay_p99_ns", static_cast<double>(a.schedDelay.p99), static_cast<double>(b.schedDelay.p99)),
      d("forceidle_sum_ns", static_cast<double>(a.forceidleSumNs), static_cast<double>(b.forceidleSumNs)),
  };
}

// (process name, comm) of each task: the key that survives across runs.
std::map<std::pair<std::string, std::string>, std::vector<const TaskStats*>> groupTasks(const TraceModel& m,
                                                                                           const RunStats& s) {
  std::map<std::pair<std::string, std::string>, std::vector<const TaskStats*>> groups;
  for (const TaskStats& t : s.tasks) {
    std::string process = t.comm;
    if (t.upid.isValid() && t.upid.value < m.processes.size())
      process = std::string(m.strings.get(m.processes.name[t.upid.value]));
    groups[{process, t.comm}].push_back(&t);
  }
  return groups;
}

}  // namespace

RunDiff diffRuns(const TraceModel& ma, const RunStats& sa, std::string labelA, const TraceModel& mb,
                 const RunStats& sb, std::string labelB) {
  RunDiff out;
  out.a = {std::move(labelA), ma.span(), ma.topology.cpuCount(), sa};
  out.b = {std::move(labelB), mb.span(), mb.topology.cpuCount(), sb};
  const auto ga = groupTasks(ma, sa);
  const auto gb = groupTasks(mb, sb);
  std::map<std::pair<std::string, std::string>, TaskDiff> merged;
  for (const auto& [key, list] : ga) {
    TaskDiff& d = merged[key];
    d.process = key.first;
    d.comm = key.second;
    d.tasksA = list.size();
    d.a = sumTasks(list);
  }
  for (const auto& [key, list] : gb) {
    TaskDiff& d = merged[key];
    d.process = key.first;
    d.comm = key.second;
    d.tasksB = list.size();
    d.b = sumTasks(list);
  }
  const TaskStats empty;
  for (auto& [key, d] : merged) {
    d.metrics = taskMetrics(d.a ? *d.a : empty, d.b ? *d.b : empty);
    if (d.a && d.b) {
      d.wakeupLatencyKs = ksDistance(d.a->wakeupLatency.sorted, d.b->wakeupLatency.sorted);
      d.schedDelayKs = ksDistance(d.a->schedDelay.sorted, d.b->schedDelay.sorted);
    }
    out.tasks.push_back(std::move(d));
  }
  std::stable_sort(out.tasks.begin(), out.tasks.end(), [](const TaskDiff& x, const TaskDiff& y) {
    return std::fabs(x.metrics[0].delta()) > std::fabs(y.metrics[0].delta());
  });

  auto m = [](const char* name, double x, double y) { return MetricDelta{name, x, y}; };
  const auto cnt = [](uint64_t v) { return static_cast<double>(v); };
  out.summary = {
      m("span_ns", static_cast<double>(ma.span()), static_cast<double>(mb.span())),
      m("tasks", static_cast<double>(sa.tasks.size()), static_cast<double>(sb.tasks.size())),
      m("busy_ns", static_cast<double>(sa.busyNs), static_cast<double>(sb.busyNs)),
      m("switches_voluntary", cnt(sa.switchesVoluntary), cnt(sb.switchesVoluntary)),
      m("switches_involuntary", cnt(sa.switchesInvoluntary), cnt(sb.switchesInvoluntary)),
      m("involuntary_fraction",
        sa.switchesVoluntary + sa.switchesInvoluntary
            ? cnt(sa.switchesInvoluntary) / cnt(sa.switchesVoluntary + sa.switchesInvoluntary)
            : 0.0,
        sb.switchesVoluntary + sb.switchesInvoluntary
            ? cnt(sb.switchesInvoluntary) / cnt(sb.switchesVoluntary + sb.switchesInvoluntary)
            : 0.0),
      m("migrations", cnt(sa.migrations), cnt(sb.migrations)),
      m("wakeup_latency_mean_ns", sa.wakeupLatency.mean, sb.wakeupLatency.mean),
      m("wakeup_latency_p50_ns", static_cast<double>(sa.wakeupLatency.p50), static_cast<double>(sb.wakeupLatency.p50)),
      m("wakeup_latency_p99_ns", static_cast<double>(sa.wakeupLatency.p99), static_cast<double>(sb.wakeupLatency.p99)),
      m("sched_delay_mean_ns", sa.schedDelay.mean, sb.schedDelay.mean),
      m("sched_delay_p99_ns", static_cast<double>(sa.schedDelay.p99), static_cast<double>(sb.schedDelay.p99)),
      m("jain", sa.fairness.jain, sb.fairness.jain),
      m("gps_lag_max_ns", static_cast<double>(sa.fairness.gpsLagMaxNs), static_cast<double>(sb.fairness.gpsLagMaxNs)),
      m("forced_idle_ns", static_cast<double>(sa.forcedIdleNs), static_cast<double>(sb.forcedIdleNs)),
  };
  const size_t cpus = std::max(sa.cpus.size(), sb.cpus.size());
  for (size_t c = 0; c < cpus; ++c) {
    const double ua = c < sa.cpus.size() ? sa.cpus[c].utilisation : 0.0;
    const double ub = c < sb.cpus.size() ? sb.cpus[c].utilisation : 0.0;
    out.cpus.push_back({"cpu" + std::to_string(c) + " utilisation", ua, ub});
    const bool knownA = c < sa.cpus.size() && !sa.cpus[c].freqResidencyNs.empty();
    const bool knownB = c < sb.cpus.size() && !sb.cpus[c].freqResidencyNs.empty();
    if (knownA || knownB)
      out.frequencies.push_back({"cpu" + std::to_string(c) + " mean_freq_mhz", knownA ? sa.cpus[c].meanFreqKhz / 1000 : 0.0,
                                 knownB ? sb.cpus[c].meanFreqKhz / 1000 : 0.0});
  }
  out.wakeupLatencyKs = ksDistance(sa.wakeupLatency.sorted, sb.wakeupLatency.sorted);
  out.schedDelayKs = ksDistance(sa.schedDelay.sorted, sb.schedDelay.sorted);
  return out;
}

namespace {
constexpr double kRelativeFloor = 0.20;
constexpr int64_t kTimeFloorNs = 1'000'000;
constexpr double kTimeFloorOfRange = 0.01;
constexpr double kLatencyFloorNs = 20'000;
constexpr uint64_t kMinSamples = 20;
constexpr double kShareFloor = 0.03;
constexpr double kCountFloor = 10;
constexpr double kIndexFloor = 0.05;
constexpr double kKsFloor = 0.1;
constexpr double kKsAlpha01 = 1.63;  // c(alpha) of the two-sample KS test at alpha = 0.01

const MetricDelta* findMetric(const std::vector<MetricDelta>& list, std::string_view key) {
  for (const auto& m : list)
    if (m.name == key) return &m;
  return nullptr;
}
}  // namespace

bool isSignificant(MetricKind kind, double a, double b, int64_t rangeNs, uint64_t samplesA, uint64_t samplesB) {
  const double d = std::fabs(b - a);
  if (d == 0) return false;
  if (a != 0 && d < kRelativeFloor * std::fabs(a)) return false;
  switch (kind) {
    case MetricKind::Time:
      return d >= std::max(static_cast<double>(kTimeFloorNs), kTimeFloorOfRange * static_cast<double>(rangeNs));
    case MetricKind::Latency: return d >= kLatencyFloorNs && samplesA >= kMinSamples && samplesB >= kMinSamples;
    case MetricKind::Share: return d >= kShareFloor;
    case MetricKind::Count: return d >= kCountFloor;
    case MetricKind::Index: return d >= kIndexFloor;
  }
  return false;
}

bool ksSignificant(double distance, uint64_t n, uint64_t m) {
  if (n < kMinSamples || m < kMinSamples) return false;
  const auto nd = static_cast<double>(n), md = static_cast<double>(m);
  return distance >= kKsFloor && distance > kKsAlpha01 * std::sqrt((nd + md) / (nd * md));
}

const std::vector<TaskMetricSpec>& diffTaskMetrics() {
  static const std::vector<TaskMetricSpec> k = {
      {"runtime_ns", "Runtime", MetricKind::Time},
      {"wait_ns", "Wait", MetricKind::Time},
      {"cpu_share", "CPU share", MetricKind::Share},
      {"switches_voluntary", "Vol. switches", MetricKind::Count},
      {"switches_involuntary", "Invol. switches", MetricKind::Count},
      {"migrations", "Migrations", MetricKind::Count},
      {"wakeup_latency_mean_ns", "Wakeup mean", MetricKind::Latency},
      {"wakeup_latency_p99_ns", "Wakeup p99", MetricKind::Latency},
  };
  return k;
}

int64_t diffRangeNs(const RunDiff& d) { return std::max(d.a.stats.coveredNs, d.b.stats.coveredNs); }

bool taskMetricSignificant(const TaskDiff& t, const TaskMetricSpec& spec, int64_t rangeNs) {
  const MetricDelta* m = findMetric(t.metrics, spec.key);
  if (!m) return false;
  if (!t.a || !t.b)  // a task of one run only: its runtime decides, the rest follows from it
    return std::string_view(spec.key) == "runtime_ns" && isSignificant(MetricKind::Time, m->a, m->b, rangeNs);
  const auto samples = [&](const TaskStats& s) {
    return spec.kind == MetricKind::Latency ? s.wakeupLatency.count : UINT64_MAX;
  };
  return isSignificant(spec.kind, m->a, m->b, rangeNs, samples(*t.a), samples(*t.b));
}

bool taskLatencyShapeSignificant(const TaskDiff& t) {
  return t.a && t.b && ksSignificant(t.wakeupLatencyKs, t.a->wakeupLatency.count, t.b->wakeupLatency.count);
}

bool taskSignificant(const TaskDiff& t, int64_t rangeNs) {
  if (taskLatencyShapeSignificant(t)) return true;
  for (const TaskMetricSpec& spec : diffTaskMetrics())
    if (taskMetricSignificant(t, spec, rangeNs)) return true;
  return false;
}

}  // namespace core::analysis
