#include "core/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace core::analysis {

namespace {

// kernel/sched/core.c sched_prio_to_weight, nice -20 .. 19.
constexpr int kPrioToWeight[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906,  3121,  2501,  1991,  1586,  1277,  1024,  820,   655,   526,   423,   335,  272,  215,
    172,   137,   110,   87,    70,    56,    45,    36,    29,    23,    18,    15};

bool isFairPrio(int prio) { return prio < 0 || prio >= 100; }

int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

// Each cpu_frequency sample holds until the next one (the last until the range ends).
void addFreqResidency(const TraceModel& m, CpuStats& c, TimeRange range) {
  const CounterTable& ct = m.counters;
  for (size_t k = 0; k < ct.tracks.size(); ++k) {
    if (ct.tracks[k].kind != CounterKind::CpuFrequencyKhz || ct.tracks[k].index != c.cpu) continue;
    const uint32_t end = ct.rowsBegin[k + 1];
    for (uint32_t r = ct.rowsBegin[k]; r < end; ++r) {
      const int64_t until = r + 1 < end ? ct.ts[r + 1] : std::max(range.to, ct.ts[r]);
      const int64_t o = overlap(ct.ts[r], until, range.from, range.to);
      if (o > 0) c.freqResidencyNs[std::llround(ct.value[r])] += o;
    }
  }
}

// GPS lag sweep. Fair tasks that want to run (running or runnable) share the CPUs
// not taken by running RT tasks in proportion to weight, capped at one CPU each
// (water-filling). Uncapped tasks all progress at rate weight * lambda; a global
// virtual clock V = integral of lambda dt makes their ideal service
// weight * (V(t1) - V(t0)), so an event costs O(1) unless the cap set changes.
// A task's lag is monotone between its own state changes (its actual rate is
// constant there and its ideal rate is in [0, 1]), so extremes are found by
// evaluating lag at those changes only.
class GpsSweep {
 public:
  GpsSweep(size_t threads, int cpus) : m_tasks(threads), m_cpus(cpus) {}

  struct Task {
    bool active = false;
    bool running = false;
    bool rt = false;
    bool capped = false;
    int weight = 1024;
    double lag = 0;          // ideal - actual service, ns, at lastFold
    double vAtFold = 0;      // V when last folded (uncapped mode)
    int64_t lastFold = 0;
    double maxAbsLag = 0;
  };

  // Initial state at the range start; call start() once after all init() calls.
  void init(size_t u, bool active, bool running, int prio) {
    Task& k = m_tasks[u];
    k.rt = !isFairPrio(prio);
    k.weight = weightOfPrio(prio);
    k.active = active;
    k.running = running;
    if (k.rt) m_rtRunning += running;
    else if (active) ++m_activeWeights[k.weight];
  }

  void start(int64_t t) {
    m_now = t;
    for (auto& k : m_tasks) k.lastFold = t;
    recompute(t);
  }

  void change(size_t u, bool active, bool running, int64_t t) {
    advance(t);
    fold(u, t);
    setStatus(u, active, running, t);
  }

  void finish(int64_t t) {
    advance(t);
    for (size_t u = 0; u < m_tasks.size(); ++u) fold(u, t);
  }

  double maxAbsLag(size_t u) const { return m_tasks[u].maxAbsLag; }

 private:
  void advance(int64_t t) {
    if (t > m_now) m_v += m_lambda * static_cast<double>(t - m_now);
    m_now = std::max(m_now, t);
  }

  void fold(size_t u, int64_t t) {
    Task& k = m_tasks[u];
    if (k.rt) return;
    double ideal = 0;
    if (k.active) ideal = k.capped ? static_cast<double>(t - k.lastFold) : k.weight * (m_v - k.vAtFold);
    const double actual = k.running ? static_cast<double>(t - k.lastFold) : 0.0;
    k.lag += ideal - actual;
    k.maxAbsLag = std::max(k.maxAbsLag, std::fabs(k.lag));
    k.lastFold = t;
    k.vAtFold = m_v;
  }

  void setStatus(size_t u, bool active, bool running, int64_t t) {
    Task& k = m_tasks[u];
    if (k.rt) {
      if (k.running != running) m_rtRunning += running ? 1 : -1;
    } else if (k.active != active) {
      if (active) ++m_activeWeights[k.weight];
      else if (--m_activeWeights[k.weight] == 0) m_activeWeights.erase(k.weight);
    }
    k.active = active;
    k.running = running;
    k.vAtFold = m_v;
    recompute(t);
    k.capped = k.active && !k.rt && k.weight >= m_threshold;
  }

  // Water-filling: the heaviest tasks are capped at one CPU while their
  // proportional share would exceed it; all tasks of a capped weight are capped.
  void recompute(int64_t t) {
    double cpus = std::max(0, m_cpus - m_rtRunning);
    double weight = 0;
    for (const auto& [w, n] : m_activeWeights) weight += static_cast<double>(w) * n;
    int threshold = INT32_MAX;
    for (auto it = m_activeWeights.rbegin(); it != m_activeWeights.rend() && weight > 0; ++it) {
      if (static_cast<double>(it->first) * cpus / weight <= 1.0) break;
      threshold = it->first;
      cpus -= it->second;
      weight -= static_cast<double>(it->first) * it->second;
      if (cpus <= 0) break;
    }
    const double lambda = weight > 0 && cpus > 0 ? cpus / weight : 0.0;
    if (threshold != m_threshold) {
      // The cap set changed (rare once many tasks compete): fold every active
      // task under the old regime, then switch regimes.
      for (size_t u = 0; u < m_tasks.size(); ++u)
        if (m_tasks[u].active && !m_tasks[u].rt) fold(u, t);
      m_threshold = threshold;
      for (auto& k : m_tasks) k.capped = k.active && !k.rt && k.weight >= threshold;
    }
    m_lambda = lambda;
  }

  std::vector<Task> m_tasks;
  std::map<int, int> m_activeWeights;  // weight -> number of active fair tasks
  int m_cpus;
  int m_rtRunning = 0;
  int m_threshold = INT32_MAX;
  double m_lambda = 0;
  double m_v = 0;
  int64_t m_now = INT64_MIN;
};

bool wantsCpu(TaskState s) { return s == TaskState::Running || isRunnable(s); }

}  // namespace

int weightOfPrio(int prio) {
  if (prio < 100 || prio > 139) return 1024;
  return kPrioToWeight[prio - 100];
}

// One past the last timestamp, so that events at the very end (a final switch)
// fall inside the half-open range.
TimeRange wholeTrace(const TraceModel& model) { return {model.firstTs, model.lastTs + 1}; }

Distribution Distribution::of(std::vector<int64_t> values) {
  Distribution d;
  std::sort(values.begin(), values.end());
  d.count = values.size();
  if (!values.empty()) {
    d.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    d.sorted = std::move(values);
    d.p50 = d.percentile(50);
    d.p90 = d.percentile(90);
    d.p99 = d.percentile(99);
    d.max = d.sorted.back();
  }
  return d;
}

int64_t Distribution::percentile(double p) const {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

RunStats computeStats(const TraceModel& m, TimeRange range) {
  RunStats out;
  out.range = range;
  const size_t threadCount = m.threads.size();
  std::vector<int32_t> taskIndex(threadCount, -1);
  std::vector<std::vector<int64_t>> wakeLat(threadCount), delay(threadCount);

  // Tasks that existed in the range.
  for (size_t u = 1; u < threadCount; ++u) {
    if (m.threads.startTs[u] >= range.to || m.threads.endTs[u] < range.from) continue;
    taskIndex[u] = static_cast<int32_t>(out.tasks.size());
    TaskStats t;
    t.utid = Utid(static_cast<uint32_t>(u));
    t.tid = m.threads.tid[u];
    t.tgid = m.threads.tgid[u];
    t.upid = m.threads.upid[u];
    t.comm = std::string(m.comm(t.utid));
    t.prio = m.threads.prio[u];
    out.tasks.push_back(std::move(t));
  }

  // Runtime, switches and CPU time come from the run slices.
  for (size_t cpu = 0; cpu < m.cpuSlices.size(); ++cpu) {
    const auto& s = m.cpuSlices[cpu];
    CpuStats c;
    c.cpu = static_cast<int>(cpu);
    auto first = std::lower_bound(s.ts.begin(), s.ts.end(), range.from) - s.ts.begin();
    if (first > 0) --first;  // a slice starting before the range may reach into it
    for (size_t i = static_cast<size_t>(first); i < s.size() && s.ts[i] < range.to; ++i) {
      const int64_t o = overlap(s.ts[i], s.end(i), range.from, range.to);
      const int64_t end = s.end(i);
      switch (s.kind[i]) {
        case SliceKind::Task: {
          c.busyNs += o;
          if (s.ts[i] > range.from && s.ts[i] < range.to) ++c.switches;
          const int32_t ti = taskIndex[s.utid[i].value];
          if (ti < 0) break;
          TaskStats& t = out.tasks[static_cast<size_t>(ti)];
          t.runtimeNs += o;
          if (end >= range.from && end < range.to) {
            if (s.endReason[i] == SliceEnd::Preempted) ++t.switchesInvoluntary;
            else if (s.endReason[i] == SliceEnd::Blocked || s.endReason[i] == SliceEnd::Exited) ++t.switchesVoluntary;
          }
          break;
        }
        case SliceKind::Idle:
          c.idleNs += o;
          if (s.ts[i] > range.from && s.ts[i] < range.to) ++c.switches;
          break;
        case SliceKind::ForcedIdle:
          c.forcedIdleNs += o;
          if (s.ts[i] > range.from && s.ts[i] < range.to) ++c.switches;
          break;
        case SliceKind::Lost: c.lostNs += o; break;
      }
    }
    c.utilisation = range.length() > 0 ? static_cast<double>(c.busyNs) / static_cast<double>(range.length()) : 0.0;
    out.busyNs += c.busyNs;
    out.forcedIdleNs += c.forcedIdleNs;
    addFreqResidency(m, c, range);
    out.cpus.push_back(c);
  }

  // Wait, sleep, blocked time and latencies come from the thread states.
  const auto& st = m.threadStates;
  const int cpuCount = std::max(1, m.topology.cpuCount());
  GpsSweep gps(threadCount, cpuCount);
  struct Change {
    int64_t ts;
    uint32_t row;
    uint32_t utid;
  };
  std::vector<Change> changes;
  for (size_t u = 1; u < threadCount; ++u) {
    const int32_t ti = taskIndex[u];
    if (ti < 0) continue;
    TaskStats& t = out.tasks[static_cast<size_t>(ti)];
    const auto [b, e] = m.stateRowsOf(Utid(static_cast<uint32_t>(u)));
    TaskState atStart = TaskState::Unknown;
    for (uint32_t r = b; r < e; ++r) {
      const int64_t rowEnd = r + 1 < e ? st.ts[r + 1] : std::max(st.ts[r], m.threads.endTs[u]);
      if (st.ts[r] <= range.from) atStart = st.state[r];
      if (st.ts[r] >= range.to) break;
      if (st.ts[r] > range.from) changes.push_back({st.ts[r], r, static_cast<uint32_t>(u)});
      const int64_t o = overlap(st.ts[r], rowEnd, range.from, range.to);
      switch (classify(st.state[r])) {
        case StateClass::Runnable: t.waitNs += o; break;
        case StateClass::Sleep: t.sleepNs += o; break;
        case StateClass::Blocked: t.blockedNs += o; break;
        default: break;
      }
      if (isRunnable(st.state[r]) && st.ts[r] >= range.from && r + 1 < e && st.state[r + 1] == TaskState::Running) {
        const int64_t d = st.ts[r + 1] - st.ts[r];
        delay[u].push_back(d);
        if (st.state[r] == TaskState::Runnable) wakeLat[u].push_back(d);
      }
      if (st.state[r] == TaskState::Runnable && st.ts[r] >= range.from) ++t.wakeups;
    }
    gps.init(u, wantsCpu(atStart), atStart == TaskState::Running, m.threads.prio[u]);
  }
  gps.start(range.from);
  std::sort(changes.begin(), changes.end(),
            [](const Change& a, const Change& b) { return a.ts != b.ts ? a.ts < b.ts : a.row < b.row; });
  for (const Change& c : changes) gps.change(c.utid, wantsCpu(st.state[c.row]), st.state[c.row] == TaskState::Running, c.ts);
  gps.finish(range.to);

  // Migrations.
  {
    const auto& mg = m.migrations;
    for (auto i = static_cast<size_t>(std::lower_bound(mg.ts.begin(), mg.ts.end(), range.from) - mg.ts.begin());
         i < mg.size() && mg.ts[i] < range.to; ++i) {
      const int32_t ti = taskIndex[mg.utid[i].value];
      if (ti >= 0) ++out.tasks[static_cast<size_t>(ti)].migrations;
      ++out.migrations;
    }
  }

  // Per SMT core, one sweep over its siblings' slices: forced idle of the core,
  // and core_forceidle_sum as mainline's __sched_core_account_forceidle()
  // charges it: while some sibling is forced idle, every running task gets the
  // time scaled by forceidle_count / occupation (1 with two threads per core).
  if (m.topology.hasSmt()) {
    for (size_t coreIndex = 0; coreIndex < m.topology.cores().size(); ++coreIndex) {
      const auto& cpus = m.topology.cores()[coreIndex];
      CoreStats cs;
      cs.core = static_cast<int>(coreIndex);
      cs.cpus = cpus;
      std::vector<const CpuSliceTable*> tables;
      for (int cpu : cpus)
        if (cpu >= 0 && static_cast<size_t>(cpu) < m.cpuSlices.size()) {
          tables.push_back(&m.cpuSlices[static_cast<size_t>(cpu)]);
          cs.forcedIdleNs += out.cpus[static_cast<size_t>(cpu)].forcedIdleNs;
        }
      if (cs.forcedIdleNs > 0) {
        std::vector<size_t> at(tables.size(), 0);
        for (size_t k = 0; k < tables.size(); ++k)
          at[k] = static_cast<size_t>(std::lower_bound(tables[k]->ts.begin(), tables[k]->ts.end(), range.from) -
                                      tables[k]->ts.begin());
        for (size_t k = 0; k < tables.size(); ++k)
          if (at[k] > 0) --at[k];
        int64_t t = range.from;
        std::vector<int32_t> running;
        while (t < range.to) {
          // What each sibling does at t, and when the first of them changes.
          int64_t next = range.to;
          int forced = 0;
          running.clear();
          for (size_t k = 0; k < tables.size(); ++k) {
            const CpuSliceTable& s = *tables[k];
            while (at[k] < s.size() && s.end(at[k]) <= t) ++at[k];
            if (at[k] >= s.size()) continue;
            if (s.ts[at[k]] > t) {  // a gap before its next slice
              next = std::min(next, s.ts[at[k]]);
              continue;
            }
            next = std::min(next, s.end(at[k]));
            if (s.kind[at[k]] == SliceKind::ForcedIdle) ++forced;
            if (s.kind[at[k]] == SliceKind::Task) running.push_back(taskIndex[s.utid[at[k]].value]);
          }
          if (next <= t) break;  // malformed (overlapping) slices: stop rather than loop
          const int64_t dt = next - t;
          if (forced > 0) {
            cs.anyForcedIdleNs += dt;
            if (!running.empty()) {
              const int64_t charged = dt * forced / static_cast<int64_t>(running.size());
              for (int32_t ti : running)
                if (ti >= 0) out.tasks[static_cast<size_t>(ti)].forceidleSumNs += charged;
            }
          }
          t = next;
        }
      }
      out.cores.push_back(std::move(cs));
    }
  }

  // Per-task summaries, run totals, fairness.
  std::vector<int64_t> allLat, allDelay;
  double sumX = 0, sumX2 = 0, lagSum = 0, lagMax = 0;
  size_t competing = 0;
  for (TaskStats& t : out.tasks) {
    const size_t u = t.utid.value;
    t.cpuShare = range.length() > 0 ? static_cast<double>(t.runtimeNs) / static_cast<double>(range.length()) : 0.0;
    allLat.insert(allLat.end(), wakeLat[u].begin(), wakeLat[u].end());
    allDelay.insert(allDelay.end(), delay[u].begin(), delay[u].end());
    t.wakeupLatency = Distribution::of(std::move(wakeLat[u]));
    t.schedDelay = Distribution::of(std::move(delay[u]));
    out.switchesVoluntary += t.switchesVoluntary;
    out.switchesInvoluntary += t.switchesInvoluntary;
    if (isFairPrio(t.prio) && t.waitNs > 0 && t.runtimeNs + t.waitNs > 0) {
      const double x = static_cast<double>(t.runtimeNs) /
                       (weightOfPrio(t.prio) * static_cast<double>(t.runtimeNs + t.waitNs));
      sumX += x;
      sumX2 += x * x;
      ++competing;
      lagSum += gps.maxAbsLag(u);
      lagMax = std::max(lagMax, gps.maxAbsLag(u));
    }
  }
  out.wakeupLatency = Distribution::of(std::move(allLat));
  out.schedDelay = Distribution::of(std::move(allDelay));
  out.fairness.competingTasks = competing;
  out.fairness.jain = competing && sumX2 > 0 ? sumX * sumX / (static_cast<double>(competing) * sumX2) : 1.0;
  out.fairness.gpsLagMaxNs = static_cast<int64_t>(std::llround(lagMax));
  out.fairness.gpsLagMeanNs = competing ? static_cast<int64_t>(std::llround(lagSum / static_cast<double>(competing))) : 0;

  // Per core-scheduling cookie, when any task has one.
  if (std::any_of(m.threads.cookie.begin(), m.threads.cookie.end(), [](uint32_t c) { return c != 0; })) {
    std::map<uint32_t, CookieStats> byCookie;
    for (const TaskStats& t : out.tasks) {
      const uint32_t cookie = m.threads.cookie[t.utid.value];
      CookieStats& c = byCookie[cookie];
      c.cookie = cookie;
      ++c.tasks;
      c.runtimeNs += t.runtimeNs;
      c.forcedIdleCausedNs += t.forceidleSumNs;
    }
    double sum = 0, sum2 = 0;
    for (auto& [cookie, c] : byCookie) {
      if (m.replay && cookie < m.replay->cookieNames.size()) c.name = m.replay->cookieNames[cookie];
      const auto x = static_cast<double>(c.runtimeNs);
      sum += x, sum2 += x * x;
      out.cookies.push_back(std::move(c));
    }
    out.fairness.jainCookies = sum2 > 0 ? sum * sum / (static_cast<double>(out.cookies.size()) * sum2) : 1.0;
  }
  return out;
}

std::vector<ProcessStats> aggregateByProcess(const RunStats& stats) {
  std::vector<ProcessStats> out;
  std::map<uint32_t, size_t> byUpid;
  std::vector<std::vector<int64_t>> lat, delay;
  for (const TaskStats& t : stats.tasks) {
    size_t idx;
    if (!t.upid.isValid()) {
      idx = out.size();
      out.push_back({});
      out.back().name = t.comm;
      lat.emplace_back();
      delay.emplace_back();
    } else if (auto it = byUpid.find(t.upid.value); it != byUpid.end()) {
      idx = it->second;
    } else {
      idx = out.size();
      byUpid.emplace(t.upid.value, idx);
      out.push_back({});
      out.back().tgid = t.tgid;
      out.back().name = t.comm;
      lat.emplace_back();
      delay.emplace_back();
    }
    ProcessStats& p = out[idx];
    if (t.tid == t.tgid) p.name = t.comm;
    ++p.threads;
    TaskStats& s = p.total;
    if (p.threads == 1) {
      s.tid = t.tid;
      s.tgid = t.tgid;
      s.upid = t.upid;
      s.prio = t.prio;
    }
    s.runtimeNs += t.runtimeNs;
    s.waitNs += t.waitNs;
    s.sleepNs += t.sleepNs;
    s.blockedNs += t.blockedNs;
    s.cpuShare += t.cpuShare;
    s.switchesVoluntary += t.switchesVoluntary;
    s.switchesInvoluntary += t.switchesInvoluntary;
    s.migrations += t.migrations;
    s.wakeups += t.wakeups;
    s.forceidleSumNs += t.forceidleSumNs;
    lat[idx].insert(lat[idx].end(), t.wakeupLatency.sorted.begin(), t.wakeupLatency.sorted.end());
    delay[idx].insert(delay[idx].end(), t.schedDelay.sorted.begin(), t.schedDelay.sorted.end());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].total.comm = out[i].name;
    out[i].total.wakeupLatency = Distribution::of(std::move(lat[i]));
    out[i].total.schedDelay = Distribution::of(std::move(delay[i]));
  }
  return out;
}

}  // namespace core::analysis
