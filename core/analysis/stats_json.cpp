#include "core/analysis/stats_json.h"

#include <cstdio>

namespace core::analysis {

void writeDistributionJson(JsonWriter& j, const Distribution& d) {
  j.beginObject();
  j.field("count", d.count);
  j.field("mean", d.mean);
  j.field("p50", d.p50);
  j.field("p90", d.p90);
  j.field("p99", d.p99);
  j.field("max", d.max);
  j.endObject();
}

void writeUserSlicesJson(JsonWriter& j, const std::vector<UserSliceStats>& slices) {
  j.beginArray();
  for (const UserSliceStats& u : slices) {
    j.beginObject();
    j.field("name", u.name);
    j.field("count", u.count);
    j.field("total_ns", u.totalNs);
    j.field("p50_ns", u.p50Ns);
    j.field("p99_ns", u.p99Ns);
    j.field("max_ns", u.maxNs);
    j.field("open", u.open);
    j.endObject();
  }
  j.endArray();
}

void writeTaskFieldsJson(JsonWriter& j, const TaskStats& t) {
  j.field("runtime_ns", t.runtimeNs);
  j.field("wait_ns", t.waitNs);
  j.field("sleep_ns", t.sleepNs);
  j.field("blocked_ns", t.blockedNs);
  j.field("cpu_share", t.cpuShare);
  j.field("switches_voluntary", t.switchesVoluntary);
  j.field("switches_involuntary", t.switchesInvoluntary);
  j.field("migrations", t.migrations);
  j.field("migrations_inferred", t.migrationsInferred);
  j.field("wakeups", t.wakeups);
  j.key("wakeup_latency_ns");
  writeDistributionJson(j, t.wakeupLatency);
  j.key("sched_delay_ns");
  writeDistributionJson(j, t.schedDelay);
  j.field("forceidle_sum_ns", t.forceidleSumNs);
}

namespace {
void writeTgid(JsonWriter& j, int32_t tgid) {
  if (tgid > 0) j.field("tgid", static_cast<int64_t>(tgid));
  else j.nullField("tgid");
}
}  // namespace

void writeRunStatsJson(JsonWriter& j, const RunStats& stats, StatsGrouping grouping) {
  j.key("range").beginObject();
  j.field("from_ns", stats.range.from);
  j.field("to_ns", stats.range.to);
  j.field("covered_ns", stats.coveredNs);
  j.endObject();
  if (grouping == StatsGrouping::Task) {
    j.key("tasks").beginArray();
    for (const TaskStats& t : stats.tasks) {
      j.beginObject();
      j.field("tid", static_cast<int64_t>(t.tid));
      writeTgid(j, t.tgid);
      j.field("comm", t.comm);
      if (t.prio == kPrioUnknown) j.nullField("prio");
      else j.field("prio", static_cast<int64_t>(t.prio));
      j.field("sched_class", toString(t.schedClass));
      writeTaskFieldsJson(j, t);
      j.field("competing", t.competing);
      j.field("ideal_ns", t.idealNs);
      j.field("gps_lag_max_ns", t.gpsLagMaxNs);
      if (!t.userSlices.empty()) {
        j.key("user_slices");
        writeUserSlicesJson(j, t.userSlices);
      }
      j.endObject();
    }
    j.endArray();
  } else if (grouping == StatsGrouping::Process) {
    j.key("processes").beginArray();
    for (const ProcessStats& p : aggregateByProcess(stats)) {
      j.beginObject();
      writeTgid(j, p.tgid);
      j.field("name", p.name);
      j.field("threads", static_cast<uint64_t>(p.threads));
      writeTaskFieldsJson(j, p.total);
      j.endObject();
    }
    j.endArray();
  }
  j.key("cpus").beginArray();
  for (const CpuStats& c : stats.cpus) {
    j.beginObject();
    j.field("cpu", c.cpu);
    j.field("busy_ns", c.busyNs);
    j.field("idle_ns", c.idleNs);
    j.field("forced_idle_ns", c.forcedIdleNs);
    j.field("lost_ns", c.lostNs);
    j.field("utilisation", c.utilisation);
    j.field("switches", c.switches);
    if (!c.freqResidencyNs.empty()) {
      j.key("freq_residency").beginObject();
      for (const auto& [khz, ns] : c.freqResidencyNs) j.field(std::to_string(khz), ns);
      j.endObject();
      j.field("freq_unknown_ns", c.freqUnknownNs);
      j.field("mean_freq_khz", c.meanFreqKhz);
      j.field("mean_busy_freq_khz", c.meanBusyFreqKhz);
    }
    if (!c.idleResidencyNs.empty()) {
      j.key("idle_residency").beginObject();
      for (const auto& [state, ns] : c.idleResidencyNs) j.field(std::to_string(state), ns);
      j.endObject();
      j.field("idle_unknown_ns", c.idleUnknownNs);
    }
    j.endObject();
  }
  j.endArray();
  if (!stats.cores.empty()) {
    j.key("cores").beginArray();
    for (const CoreStats& c : stats.cores) {
      j.beginObject();
      j.field("core", c.core);
      j.key("cpus").beginArray();
      for (int cpu : c.cpus) j.value(cpu);
      j.endArray();
      j.field("forced_idle_ns", c.forcedIdleNs);
      j.field("any_sibling_forced_idle_ns", c.anyForcedIdleNs);
      j.endObject();
    }
    j.endArray();
  }
  if (!stats.cookies.empty()) {
    j.key("cookies").beginArray();
    for (const CookieStats& c : stats.cookies) {
      j.beginObject();
      j.field("cookie", static_cast<uint64_t>(c.cookie));
      j.field("name", c.name);
      j.field("tasks", static_cast<uint64_t>(c.tasks));
      j.field("runtime_ns", c.runtimeNs);
      j.field("forced_idle_caused_ns", c.forcedIdleCausedNs);
      if (c.serviceRatio) j.field("service_ratio", *c.serviceRatio);
      else j.nullField("service_ratio");
      j.endObject();
    }
    j.endArray();
  }
  j.key("fairness").beginObject();
  j.field("jain", stats.fairness.jain);
  if (!stats.cookies.empty()) j.field("jain_cookies", stats.fairness.jainCookies);
  j.field("gps_lag_max_ns", stats.fairness.gpsLagMaxNs);
  j.field("gps_lag_mean_ns", stats.fairness.gpsLagMeanNs);
  j.field("competing_tasks", static_cast<uint64_t>(stats.fairness.competingTasks));
  j.endObject();
  j.key("totals").beginObject();
  j.field("busy_ns", stats.busyNs);
  j.field("forced_idle_ns", stats.forcedIdleNs);
  j.field("switches_voluntary", stats.switchesVoluntary);
  j.field("switches_involuntary", stats.switchesInvoluntary);
  j.field("migrations", stats.migrations);
  j.field("migrations_inferred", stats.migrationsInferred);
  j.field("idle_while_runnable_ns", stats.idleWhileRunnableNs);
  j.key("wakeup_latency_ns");
  writeDistributionJson(j, stats.wakeupLatency);
  j.key("sched_delay_ns");
  writeDistributionJson(j, stats.schedDelay);
  j.endObject();
  if (!stats.userSlices.empty()) {
    j.key("user_slices");
    writeUserSlicesJson(j, stats.userSlices);
  }
}

void writeMetricDeltaJson(JsonWriter& j, const MetricDelta& m) {
  j.key(m.name).beginObject();
  j.field("a", m.a);
  j.field("b", m.b);
  j.field("abs", m.delta());
  if (auto r = m.relative()) j.field("rel", *r);
  else j.nullField("rel");
  j.endObject();
}

namespace {
void writeRunSummaryJson(JsonWriter& j, const RunSummary& r) {
  j.beginObject();
  j.field("label", r.label);
  j.field("span_ns", r.spanNs);
  j.field("cpus", r.cpus);
  j.field("tasks", static_cast<uint64_t>(r.stats.tasks.size()));
  writeRunStatsJson(j, r.stats, StatsGrouping::Cpu);
  j.endObject();
}

void writeTaskOrNull(JsonWriter& j, const char* key, const std::optional<TaskStats>& t) {
  j.key(key);
  if (!t) {
    j.null();
    return;
  }
  j.beginObject();
  writeTaskFieldsJson(j, *t);
  j.endObject();
}
}  // namespace

void writeRunDiffJson(JsonWriter& j, const RunDiff& diff) {
  j.key("a");
  writeRunSummaryJson(j, diff.a);
  j.key("b");
  writeRunSummaryJson(j, diff.b);
  j.key("tasks").beginArray();
  for (const TaskDiff& t : diff.tasks) {
    j.beginObject();
    j.field("comm", t.comm);
    j.field("process", t.process);
    j.field("tasks_a", static_cast<uint64_t>(t.tasksA));
    j.field("tasks_b", static_cast<uint64_t>(t.tasksB));
    writeTaskOrNull(j, "a", t.a);
    writeTaskOrNull(j, "b", t.b);
    j.key("delta").beginObject();
    for (const MetricDelta& m : t.metrics) writeMetricDeltaJson(j, m);
    j.endObject();
    j.field("wakeup_latency_ks", t.wakeupLatencyKs);
    j.field("sched_delay_ks", t.schedDelayKs);
    j.endObject();
  }
  j.endArray();
  j.key("summary").beginObject();
  for (const MetricDelta& m : diff.summary) writeMetricDeltaJson(j, m);
  j.field("wakeup_latency_ks", diff.wakeupLatencyKs);
  j.field("sched_delay_ks", diff.schedDelayKs);
  j.key("cpus").beginObject();
  for (const MetricDelta& m : diff.cpus) writeMetricDeltaJson(j, m);
  j.endObject();
  if (!diff.frequencies.empty()) {
    j.key("frequencies").beginObject();
    for (const MetricDelta& m : diff.frequencies) writeMetricDeltaJson(j, m);
    j.endObject();
  }
  j.endObject();
}

namespace {
std::string csvField(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void appendTaskCsv(std::string& out, const TaskStats& t) {
  char buf[512];
  std::snprintf(buf, sizeof buf, ",%lld,%lld,%lld,%lld,%.6f,%llu,%llu,%llu,%llu,%llu,%.0f,%lld,%lld,%lld,%llu,%.0f,%lld,%lld\n",
                static_cast<long long>(t.runtimeNs), static_cast<long long>(t.waitNs),
                static_cast<long long>(t.sleepNs), static_cast<long long>(t.blockedNs), t.cpuShare,
                static_cast<unsigned long long>(t.switchesVoluntary),
                static_cast<unsigned long long>(t.switchesInvoluntary), static_cast<unsigned long long>(t.migrations),
                static_cast<unsigned long long>(t.wakeups), static_cast<unsigned long long>(t.wakeupLatency.count),
                t.wakeupLatency.mean, static_cast<long long>(t.wakeupLatency.p50),
                static_cast<long long>(t.wakeupLatency.p99), static_cast<long long>(t.wakeupLatency.max),
                static_cast<unsigned long long>(t.schedDelay.count), t.schedDelay.mean,
                static_cast<long long>(t.schedDelay.p99), static_cast<long long>(t.schedDelay.max));
  out += buf;
}
constexpr const char* kTaskCsvColumns =
    "runtime_ns,wait_ns,sleep_ns,blocked_ns,cpu_share,switches_voluntary,switches_involuntary,migrations,wakeups,"
    "wakeup_latency_count,wakeup_latency_mean_ns,wakeup_latency_p50_ns,wakeup_latency_p99_ns,wakeup_latency_max_ns,"
    "sched_delay_count,sched_delay_mean_ns,sched_delay_p99_ns,sched_delay_max_ns\n";
}  // namespace

std::string runStatsCsv(const RunStats& stats, StatsGrouping grouping) {
  std::string out;
  if (grouping == StatsGrouping::Task) {
    out = std::string("tid,tgid,comm,prio,") + kTaskCsvColumns;
    for (const TaskStats& t : stats.tasks) {
      out += std::to_string(t.tid) + "," + (t.tgid > 0 ? std::to_string(t.tgid) : "") + "," + csvField(t.comm) + "," +
             (t.prio != kPrioUnknown ? std::to_string(t.prio) : "");
      appendTaskCsv(out, t);
    }
  } else if (grouping == StatsGrouping::Process) {
    out = std::string("tgid,name,threads,") + kTaskCsvColumns;
    for (const ProcessStats& p : aggregateByProcess(stats)) {
      out += (p.tgid > 0 ? std::to_string(p.tgid) : "") + "," + csvField(p.name) + "," + std::to_string(p.threads);
      appendTaskCsv(out, p.total);
    }
  } else {
    // The frequency and idle-state columns are empty for a CPU without such samples, as --json leaves them out.
    out = "cpu,busy_ns,idle_ns,forced_idle_ns,lost_ns,utilisation,switches,freq_unknown_ns,mean_freq_khz,"
          "mean_busy_freq_khz,idle_unknown_ns\n";
    char buf[256];
    for (const CpuStats& c : stats.cpus) {
      std::snprintf(buf, sizeof buf, "%d,%lld,%lld,%lld,%lld,%.6f,%llu", c.cpu, static_cast<long long>(c.busyNs),
                    static_cast<long long>(c.idleNs), static_cast<long long>(c.forcedIdleNs),
                    static_cast<long long>(c.lostNs), c.utilisation, static_cast<unsigned long long>(c.switches));
      out += buf;
      if (c.freqResidencyNs.empty())
        out += ",,,";
      else {
        std::snprintf(buf, sizeof buf, ",%lld,%.1f,%.1f", static_cast<long long>(c.freqUnknownNs), c.meanFreqKhz,
                      c.meanBusyFreqKhz);
        out += buf;
      }
      out += c.idleResidencyNs.empty() ? std::string(",") : "," + std::to_string(c.idleUnknownNs);
      out += "\n";
    }
  }
  return out;
}

namespace {
void appendUserSlicesCsv(std::string& out, std::string_view who, const std::vector<UserSliceStats>& slices) {
  char buf[160];
  for (const UserSliceStats& u : slices) {
    std::snprintf(buf, sizeof buf, ",%llu,%llu,%lld,%lld,%lld,%lld\n", static_cast<unsigned long long>(u.count),
                  static_cast<unsigned long long>(u.open), static_cast<long long>(u.totalNs),
                  static_cast<long long>(u.p50Ns), static_cast<long long>(u.p99Ns), static_cast<long long>(u.maxNs));
    out += std::string(who) + csvField(u.name) + buf;
  }
}
}  // namespace

std::string_view toString(StatsCsvTable table) {
  switch (table) {
    case StatsCsvTable::FreqResidency: return "freq_residency";
    case StatsCsvTable::IdleResidency: return "idle_residency";
    case StatsCsvTable::UserSlices: return "user_slices";
  }
  return "?";
}

std::string runStatsCsv(const RunStats& stats, StatsCsvTable table) {
  std::string out;
  if (table == StatsCsvTable::UserSlices) {
    out = "scope,tid,tgid,comm,name,count,open,total_ns,p50_ns,p99_ns,max_ns\n";
    for (const TaskStats& t : stats.tasks)
      appendUserSlicesCsv(out, "task," + std::to_string(t.tid) + "," + (t.tgid > 0 ? std::to_string(t.tgid) : "") + "," +
                                   csvField(t.comm) + ",",
                          t.userSlices);
    appendUserSlicesCsv(out, "all,,,,", stats.userSlices);
    return out;
  }
  const bool freq = table == StatsCsvTable::FreqResidency;
  out = freq ? "cpu,freq_khz,residency_ns\n" : "cpu,state,residency_ns\n";
  for (const CpuStats& c : stats.cpus)
    for (const auto& [value, ns] : freq ? c.freqResidencyNs : c.idleResidencyNs)
      out += std::to_string(c.cpu) + "," + std::to_string(value) + "," + std::to_string(ns) + "\n";
  return out;
}

}  // namespace core::analysis
