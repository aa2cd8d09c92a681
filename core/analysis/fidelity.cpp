#include "core/analysis/fidelity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/analysis/diff.h"

namespace core::analysis {

namespace {

using Unit = FidelityMetric::Unit;

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "±%g%%", v * 100);
  return buf;
}

std::string factor(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "×%g", f);
  return buf;
}

FidelityMetric countRow(std::string key, std::string label, Unit unit, double recorded, double replayed) {
  FidelityMetric m;
  m.key = std::move(key);
  m.label = std::move(label);
  m.unit = unit;
  m.recorded = recorded;
  m.replayed = replayed;
  if (recorded != 0) m.ratio = replayed / recorded;
  return m;
}

// |replayed / recorded - 1| <= rel; a recorded 0 must be replayed as 0.
void judgeRelative(FidelityMetric& m, double rel) {
  m.bound = percent(rel);
  m.measure = m.ratio ? std::abs(*m.ratio - 1) : (*m.replayed == 0 ? 0 : INFINITY);
  m.verdict = m.measure <= rel + 1e-12 ? Verdict::Pass : Verdict::Fail;
}

// recorded / f <= replayed <= recorded * f; a recorded 0 must be replayed as 0.
void judgeFactor(FidelityMetric& m, double f) {
  m.bound = factor(f);
  const double rec = *m.recorded, rep = *m.replayed;
  if (rec == 0) {
    m.measure = rep == 0 ? 1 : INFINITY;
  } else if (rep == 0) {
    m.measure = INFINITY;
  } else {
    m.measure = std::max(rep / rec, rec / rep);
  }
  m.verdict = m.measure <= f + 1e-12 ? Verdict::Pass : Verdict::Fail;
}

void distributionRows(std::vector<FidelityMetric>& out, const std::string& key, const std::string& label,
                      const Distribution& rec, const Distribution& rep, const FidelityBounds& b) {
  const bool comparable = rec.count > 0 && rep.count > 0;
  const auto row = [&](const char* suffix, const char* what, int64_t a, int64_t c) {
    FidelityMetric m = countRow(key + "_" + suffix + "_ns", label + " " + what, Unit::Ns, static_cast<double>(a),
                                static_cast<double>(c));
    return m;
  };
  FidelityMetric p50 = row("p50", "p50", rec.p50, rep.p50);
  char bound[64];
  std::snprintf(bound, sizeof bound, "%s or ±%g µs", percent(b.p50Rel).c_str(), static_cast<double>(b.p50AbsNs) / 1000);
  p50.bound = bound;
  const double diff = std::abs(static_cast<double>(rep.p50 - rec.p50));
  const double allowed = std::max(b.p50Rel * static_cast<double>(rec.p50), static_cast<double>(b.p50AbsNs));
  p50.measure = diff;
  p50.verdict = diff <= allowed ? Verdict::Pass : Verdict::Fail;
  FidelityMetric p90 = row("p90", "p90", rec.p90, rep.p90);
  judgeFactor(p90, b.tailFactor);
  FidelityMetric p99 = row("p99", "p99", rec.p99, rep.p99);
  judgeFactor(p99, b.tailFactor);
  FidelityMetric ks;
  ks.key = key + "_ks";
  ks.label = label + " KS distance";
  ks.unit = Unit::Distance;
  ks.measure = comparable ? ksDistance(rec.sorted, rep.sorted) : (rec.count == rep.count ? 0 : 1);
  char ksBound[32];
  std::snprintf(ksBound, sizeof ksBound, "≤ %g", b.ksMax);
  ks.bound = ksBound;
  ks.verdict = ks.measure <= b.ksMax ? Verdict::Pass : Verdict::Fail;
  for (FidelityMetric* m : {&p50, &p90, &p99, &ks}) {
    if (!rec.count && !rep.count) m->verdict = Verdict::Info;  // neither run has a sample: nothing to judge
    out.push_back(std::move(*m));
  }
}

}  // namespace

std::string_view toString(Verdict v) {
  switch (v) {
    case Verdict::Pass: return "pass";
    case Verdict::Fail: return "fail";
    case Verdict::Info: return "info";
  }
  return "info";
}

size_t Fidelity::failed() const {
  size_t n = 0;
  for (const FidelityMetric& m : metrics) n += m.verdict == Verdict::Fail;
  return n;
}

const FidelityMetric* Fidelity::metric(std::string_view key) const {
  for (const FidelityMetric& m : metrics)
    if (m.key == key) return &m;
  return nullptr;
}

Fidelity computeFidelity(const RunStats& rec, const RunStats& rep, const ReplayOutcome& o, const FidelityBounds& b) {
  Fidelity f;
  auto& out = f.metrics;
  if (o.makespanRecordedNs > 0) {
    FidelityMetric m = countRow("makespan_ns", "makespan (first burst to last completed burst)", Unit::Ns, static_cast<double>(o.makespanRecordedNs),
                                static_cast<double>(o.makespanReplayNs));
    judgeRelative(m, b.makespanRel);
    out.push_back(std::move(m));
  }
  {
    FidelityMetric m = countRow("cpu_work_ns", "CPU work", Unit::Ns, static_cast<double>(o.workRecordedNs),
                                static_cast<double>(o.workReplayNs));
    m.bound = "exact";
    m.measure = std::abs(static_cast<double>(o.workReplayNs - o.workRecordedNs));
    m.verdict = o.workConserved ? Verdict::Pass : Verdict::Fail;
    out.push_back(std::move(m));
  }
  {
    FidelityMetric m = countRow("switches_voluntary", "voluntary switches", Unit::Count,
                                static_cast<double>(rec.switchesVoluntary), static_cast<double>(rep.switchesVoluntary));
    judgeRelative(m, b.voluntaryRel);
    out.push_back(std::move(m));
  }
  {
    FidelityMetric m =
        countRow("switches_involuntary", "involuntary switches", Unit::Count,
                 static_cast<double>(rec.switchesInvoluntary), static_cast<double>(rep.switchesInvoluntary));
    judgeRelative(m, b.involuntaryRel);
    out.push_back(std::move(m));
  }
  {
    FidelityMetric m = countRow("migrations", "migrations", Unit::Count, static_cast<double>(rec.migrations),
                                static_cast<double>(rep.migrations));
    judgeFactor(m, b.migrationFactor);
    out.push_back(std::move(m));
  }
  distributionRows(out, "wakeup_latency", "wakeup latency", rec.wakeupLatency, rep.wakeupLatency, b);
  distributionRows(out, "sched_delay", "scheduling delay", rec.schedDelay, rep.schedDelay, b);

  // Tasks by tid, in order of appearance (a reused tid is several tasks).
  std::map<int32_t, std::vector<const TaskStats*>> recordedByTid;
  for (const TaskStats& t : rec.tasks) recordedByTid[t.tid].push_back(&t);
  std::map<int32_t, size_t> used;
  const auto addRow = [&](const TaskStats* a, const TaskStats* c) {
    if ((!a || a->runtimeNs == 0) && (!c || c->runtimeNs == 0)) return;
    TaskFidelity t;
    t.tid = a ? a->tid : c->tid;
    t.comm = a ? a->comm : c->comm;
    if (a) {
      t.shareRecorded = a->cpuShare, t.waitRecordedNs = a->waitNs;
      t.voluntaryRecorded = a->switchesVoluntary, t.involuntaryRecorded = a->switchesInvoluntary;
    }
    if (c) {
      t.shareReplayed = c->cpuShare, t.waitReplayedNs = c->waitNs;
      t.voluntaryReplayed = c->switchesVoluntary, t.involuntaryReplayed = c->switchesInvoluntary;
    }
    t.verdict = std::abs(t.shareDiffPp()) <= b.taskSharePp + 1e-9 ? Verdict::Pass : Verdict::Fail;
    f.tasks.push_back(std::move(t));
  };
  for (const TaskStats& c : rep.tasks) {
    auto it = recordedByTid.find(c.tid);
    size_t& k = used[c.tid];
    const TaskStats* a = it != recordedByTid.end() && k < it->second.size() ? it->second[k++] : nullptr;
    addRow(a, &c);
  }
  for (const auto& [tid, list] : recordedByTid)
    for (size_t k = used[tid]; k < list.size(); ++k) addRow(list[k], nullptr);
  std::stable_sort(f.tasks.begin(), f.tasks.end(), [](const TaskFidelity& x, const TaskFidelity& y) {
    return std::abs(x.shareDiffPp()) > std::abs(y.shareDiffPp());
  });
  {
    FidelityMetric m;
    m.key = "task_cpu_share_pp";
    size_t outside = 0;
    for (const TaskFidelity& t : f.tasks) outside += t.verdict == Verdict::Fail;
    m.label = "per-task CPU share, largest difference (" + std::to_string(outside) + " of " +
              std::to_string(f.tasks.size()) + " tasks outside)";
    m.unit = Unit::Pp;
    m.measure = f.tasks.empty() ? 0 : std::abs(f.tasks.front().shareDiffPp());
    char bound[32];
    std::snprintf(bound, sizeof bound, "≤ %g pp", b.taskSharePp);
    m.bound = bound;
    m.verdict = outside ? Verdict::Fail : Verdict::Pass;
    out.push_back(std::move(m));
  }
  return f;
}

void writeFidelityJson(JsonWriter& j, const Fidelity& f, size_t taskRows) {
  j.key("fidelity").beginObject();
  j.field("verdict", toString(f.overall()));
  j.field("failed", static_cast<uint64_t>(f.failed()));
  j.key("metrics").beginArray();
  for (const FidelityMetric& m : f.metrics) {
    j.beginObject();
    j.field("key", m.key);
    j.field("label", m.label);
    if (m.recorded) j.field("recorded", *m.recorded); else j.nullField("recorded");
    if (m.replayed) j.field("replayed", *m.replayed); else j.nullField("replayed");
    if (m.ratio) j.field("ratio", *m.ratio); else j.nullField("ratio");
    if (std::isfinite(m.measure)) j.field("measure", m.measure); else j.nullField("measure");
    j.field("bound", m.bound);
    j.field("verdict", toString(m.verdict));
    j.endObject();
  }
  j.endArray();
  j.key("tasks").beginArray();
  for (size_t i = 0; i < f.tasks.size() && i < taskRows; ++i) {
    const TaskFidelity& t = f.tasks[i];
    j.beginObject();
    j.field("tid", t.tid);
    j.field("comm", t.comm);
    j.field("cpu_share_recorded", t.shareRecorded);
    j.field("cpu_share_replayed", t.shareReplayed);
    j.field("cpu_share_diff_pp", t.shareDiffPp());
    j.field("wait_recorded_ns", t.waitRecordedNs);
    j.field("wait_replayed_ns", t.waitReplayedNs);
    j.field("switches_voluntary_recorded", t.voluntaryRecorded);
    j.field("switches_voluntary_replayed", t.voluntaryReplayed);
    j.field("switches_involuntary_recorded", t.involuntaryRecorded);
    j.field("switches_involuntary_replayed", t.involuntaryReplayed);
    j.field("verdict", toString(t.verdict));
    j.endObject();
  }
  j.endArray();
  j.endObject();
}

}  // namespace core::analysis
