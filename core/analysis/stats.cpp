#include "core/analysis/stats.h"

#include "core/radix_sort.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <numeric>

#include "core/analysis/fair_share.h"
#include "core/analysis/why.h"

namespace core::analysis {

namespace {

// kernel/sched/core.c sched_prio_to_weight, nice -20 .. 19.
constexpr int kPrioToWeight[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906,  3121,  2501,  1991,  1586,  1277,  1024,  820,   655,   526,   423,   335,  272,  215,
    172,   137,   110,   87,    70,    56,    45,    36,    29,    23,    18,    15};

constexpr int kIdleWeight = 3;  // WEIGHT_IDLEPRIO, kernel/sched/sched.h

// Jain's index of x_i: (sum x)^2 / (n sum x^2); 1 when there is nothing to compare.
double jainIndex(const std::vector<double>& x) {
  double sum = 0, sum2 = 0;
  for (double v : x) sum += v, sum2 += v * v;
  return sum2 > 0 ? sum * sum / (static_cast<double>(x.size()) * sum2) : 1.0;
}

int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

// Each sample of a CPU's counter holds until the next one (the last until the
// covered range ends); before the first the value is unknown.
void addResidency(const TraceModel& m, CounterKind kind, int cpu, int64_t lo, int64_t hi,
                  std::map<int64_t, int64_t>& residency, int64_t& unknown) {
  const CounterTable& ct = m.counters;
  const size_t k = ct.find(kind, cpu);
  if (k == SIZE_MAX || lo >= hi) return;
  const auto [b, e] = ct.rowsOf(k);
  if (b == e) return;
  unknown = overlap(lo, std::min(hi, ct.ts[b]), lo, hi);
  for (uint32_t r = b; r < e; ++r) {
    const int64_t until = r + 1 < e ? ct.ts[r + 1] : std::max(hi, ct.ts[r]);
    const int64_t o = overlap(ct.ts[r], until, lo, hi);
    if (o > 0) residency[std::llround(ct.value[r])] += o;
  }
}

// The mean frequency over the CPU's task slices: one merge of the sorted
// slices with the frequency samples.
double meanBusyFrequency(const TraceModel& m, int cpu, int64_t lo, int64_t hi) {
  const CounterTable& ct = m.counters;
  const size_t k = ct.find(CounterKind::CpuFrequencyKhz, cpu);
  if (k == SIZE_MAX || static_cast<size_t>(cpu) >= m.cpuSlices.size()) return 0;
  const auto [b, e] = ct.rowsOf(k);
  const CpuSliceTable& s = m.cpuSlices[static_cast<size_t>(cpu)];
  double weighted = 0;
  int64_t busy = 0;
  uint32_t r = b;
  for (size_t i = 0; i < s.size() && s.ts[i] < hi; ++i) {
    if (s.kind[i] != SliceKind::Task || s.end(i) <= lo) continue;
    const int64_t s0 = std::max(lo, s.ts[i]);
    const int64_t s1 = std::min(hi, s.end(i));
    while (r + 1 < e && ct.ts[r + 1] <= s0) ++r;
    for (uint32_t q = r; q < e && ct.ts[q] < s1; ++q) {
      const int64_t until = q + 1 < e ? ct.ts[q + 1] : std::max(hi, ct.ts[q]);
      const int64_t o = overlap(ct.ts[q], until, s0, s1);
      weighted += static_cast<double>(o) * ct.value[q];
      busy += o;
    }
  }
  return busy > 0 ? weighted / static_cast<double>(busy) : 0;
}

void addPowerStats(const TraceModel& m, CpuStats& c, TimeRange range) {
  const int64_t lo = std::max(range.from, m.firstTs);
  const int64_t hi = std::min(range.to, m.lastTs);
  addResidency(m, CounterKind::CpuFrequencyKhz, c.cpu, lo, hi, c.freqResidencyNs, c.freqUnknownNs);
  addResidency(m, CounterKind::CpuIdleState, c.cpu, lo, hi, c.idleResidencyNs, c.idleUnknownNs);
  double weighted = 0;
  int64_t known = 0;
  for (const auto& [khz, ns] : c.freqResidencyNs) {
    weighted += static_cast<double>(khz) * static_cast<double>(ns);
    known += ns;
  }
  c.meanFreqKhz = known > 0 ? weighted / static_cast<double>(known) : 0;
  c.meanBusyFreqKhz = meanBusyFrequency(m, c.cpu, lo, hi);
}

// Durations of completed slices per name (and the unfinished ones' count) -> table rows.
struct SliceDurations {
  std::map<StringId, std::pair<std::vector<int64_t>, uint64_t>> byName;
  void add(const UserSliceTable& us, uint32_t r) {
    auto& [durations, open] = byName[us.name[r]];
    if (us.flags[r] & kUserSliceOpenAtEnd) ++open;
    else durations.push_back(us.dur[r]);
  }
  void merge(const SliceDurations& o) {
    for (const auto& [name, v] : o.byName) {
      auto& [durations, open] = byName[name];
      durations.insert(durations.end(), v.first.begin(), v.first.end());
      open += v.second;
    }
  }
  std::vector<UserSliceStats> table(const StringPool& strings) const {
    std::vector<UserSliceStats> out;
    for (const auto& [name, v] : byName) {
      const Distribution d = Distribution::of(v.first);
      UserSliceStats u;
      u.name = std::string(strings.get(name));
      u.count = d.count;
      u.open = v.second;
      u.totalNs = std::accumulate(v.first.begin(), v.first.end(), int64_t{0});
      u.p50Ns = d.p50, u.p99Ns = d.p99, u.maxNs = d.max;
      out.push_back(std::move(u));
    }
    std::stable_sort(out.begin(), out.end(), [](const UserSliceStats& a, const UserSliceStats& b) {
      return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.count > b.count;
    });
    return out;
  }
};

}  // namespace

int weightOfPrio(int prio) {
  if (prio < 100 || prio > 139) return 1024;
  return kPrioToWeight[prio - 100];
}

int fairWeight(int prio, TaskPolicy policy) { return policy == TaskPolicy::Idle ? kIdleWeight : weightOfPrio(prio); }

// The smallest half-open range that holds every event, the last one included;
// the nanosecond past the last event is outside what the trace covers, so it
// never counts in a length (coveredNs).
TimeRange wholeTrace(const TraceModel& model) { return {model.firstTs, model.lastTs + 1}; }

bool existedIn(const TraceModel& m, Utid u, TimeRange range) {
  const auto [b, e] = m.stateRowsOf(u);
  const int64_t start = b < e ? std::min(m.threads.startTs[u.value], m.threadStates.ts[b]) : m.threads.startTs[u.value];
  return start < range.to && m.threads.endTs[u.value] >= range.from;
}

Distribution Distribution::of(std::vector<int64_t> values) {
  Distribution d;
  radixSort(values);
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

Distribution Distribution::ofParts(const std::vector<const std::vector<int64_t>*>& parts) {
  // One copy of the samples, sorted in place: a heap merge of the parts took
  // three times as long as the in-place radix sort (hundreds of tasks whose
  // samples interleave), and the copy is the result itself.
  size_t total = 0;
  for (const auto* part : parts) total += part->size();
  std::vector<int64_t> all;
  all.reserve(total);
  for (const auto* part : parts) all.insert(all.end(), part->begin(), part->end());
  return of(std::move(all));
}

int64_t Distribution::percentile(double p) const {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

RunStats computeStats(const TraceModel& m, TimeRange range, const std::function<void(const RunStats&)>& whileFairShareRuns) {
  // The ideal fair share is the costliest part and needs nothing else here:
  // it runs beside the rest (the model is immutable).
  return computeStats(m, range, startFairShare(m, range), whileFairShareRuns);
}

std::future<std::vector<FairShare>> startFairShare(const TraceModel& m, TimeRange range) {
  return std::async(std::launch::async, [&m, range] { return computeFairShare(m, range); });
}

RunStats computeStats(const TraceModel& m, TimeRange range, std::future<std::vector<FairShare>> sharesPending,
                      const std::function<void(const RunStats&)>& whileFairShareRuns) {
  RunStats out;
  out.range = range;
  out.coveredNs = overlap(range.from, range.to, m.firstTs, m.lastTs);
  const auto share = [&](int64_t ns) {
    return out.coveredNs > 0 ? static_cast<double>(ns) / static_cast<double>(out.coveredNs) : 0.0;
  };
  const size_t threadCount = m.threads.size();
  std::vector<int32_t> taskIndex(threadCount, -1);

  // Tasks that existed in the range.
  for (size_t u = 1; u < threadCount; ++u) {
    if (!existedIn(m, Utid(static_cast<uint32_t>(u)), range)) continue;
    taskIndex[u] = static_cast<int32_t>(out.tasks.size());
    TaskStats t;
    t.utid = Utid(static_cast<uint32_t>(u));
    t.tid = m.threads.tid[u];
    t.tgid = m.threads.tgid[u];
    t.upid = m.threads.upid[u];
    t.comm = std::string(m.comm(t.utid));
    t.prio = m.threads.prio[u];
    t.schedClass = schedClassOf(t.prio, m.threads.policy[u]);
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
      // A slice that begins where the CPU's record begins (its first event, the
      // end of lost data) did not begin at a switch.
      const bool switchedIn = s.ts[i] >= range.from && !(s.flags[i] & kSliceStartUnknown);
      switch (s.kind[i]) {
        case SliceKind::Task: {
          c.busyNs += o;
          c.switches += switchedIn;
          const int32_t ti = taskIndex[s.utid[i].value];
          if (ti < 0) break;
          TaskStats& t = out.tasks[static_cast<size_t>(ti)];
          t.runtimeNs += o;
          if (end >= range.from && end < range.to) {
            const SliceEnd reason = switchOutOf(s, i);
            if (reason == SliceEnd::Preempted) ++t.switchesInvoluntary;
            else if (reason == SliceEnd::Blocked || reason == SliceEnd::Exited) ++t.switchesVoluntary;
          }
          break;
        }
        case SliceKind::Idle:
          c.idleNs += o;
          c.switches += switchedIn;
          break;
        case SliceKind::ForcedIdle:
          c.forcedIdleNs += o;
          c.switches += switchedIn;
          break;
        case SliceKind::Lost: c.lostNs += o; break;
      }
    }
    c.utilisation = share(c.busyNs);
    out.busyNs += c.busyNs;
    out.forcedIdleNs += c.forcedIdleNs;
    addPowerStats(m, c, range);
    out.cpus.push_back(c);
  }

  // Wait, sleep, blocked time and latencies come from the thread states.
  // The samples of every task go to one array, task after task (in the order
  // of out.tasks): the run's distributions sort it where it lies, and each
  // task's takes a copy of its part. Grown per task, the samples were copied
  // at each doubling and once more into the run's array.
  const auto& st = m.threadStates;
  std::vector<int64_t> allLat, allDelay;
  // A sample takes a runnable row and the running row after it: at most one per two rows.
  allDelay.reserve(st.ts.size() / 2 + threadCount);
  allLat.reserve(st.ts.size() / 2 + threadCount);
  struct SampleRange {
    size_t latEnd, delayEnd;
  };
  std::vector<SampleRange> samplesOf(out.tasks.size());
  for (size_t u = 1; u < threadCount; ++u) {
    const int32_t ti = taskIndex[u];
    if (ti < 0) continue;
    TaskStats& t = out.tasks[static_cast<size_t>(ti)];
    const auto [b, e] = m.stateRowsOf(Utid(static_cast<uint32_t>(u)));
    for (uint32_t r = b; r < e; ++r) {
      const int64_t rowEnd = r + 1 < e ? st.ts[r + 1] : std::max(st.ts[r], m.threads.endTs[u]);
      if (st.ts[r] >= range.to) break;
      const int64_t o = overlap(st.ts[r], rowEnd, range.from, range.to);
      switch (classify(st.state[r])) {
        case StateClass::Runnable: t.waitNs += o; break;
        case StateClass::Sleep: t.sleepNs += o; break;
        case StateClass::Blocked: t.blockedNs += o; break;
        default: break;
      }
      if (isRunnable(st.state[r]) && st.ts[r] >= range.from && r + 1 < e && st.state[r + 1] == TaskState::Running) {
        const int64_t d = st.ts[r + 1] - st.ts[r];
        allDelay.push_back(d);
        if (st.state[r] == TaskState::Runnable) allLat.push_back(d);
      }
      if (st.state[r] == TaskState::Runnable && st.ts[r] >= range.from) ++t.wakeups;
    }
    samplesOf[static_cast<size_t>(ti)] = {allLat.size(), allDelay.size()};
  }

  // Migrations.
  {
    const auto& mg = m.migrations;
    for (auto i = static_cast<size_t>(std::lower_bound(mg.ts.begin(), mg.ts.end(), range.from) - mg.ts.begin());
         i < mg.size() && mg.ts[i] < range.to; ++i) {
      const int32_t ti = taskIndex[mg.utid[i].value];
      const bool inferred = mg.flags[i] & kMigrationInferred;
      if (ti >= 0) {
        ++out.tasks[static_cast<size_t>(ti)].migrations;
        out.tasks[static_cast<size_t>(ti)].migrationsInferred += inferred;
      }
      ++out.migrations;
      out.migrationsInferred += inferred;
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

  // User-space slices (instants have no duration: they are markers, not time in state).
  {
    const UserSliceTable& us = m.userSlices;
    SliceDurations all;
    for (TaskStats& t : out.tasks) {
      const auto [b, e] = us.rowsOf(t.utid);
      SliceDurations mine;
      for (uint32_t r = b; r < e && us.ts[r] < range.to; ++r)
        if (us.kind[r] != UserSliceKind::Instant && us.ts[r] >= range.from) mine.add(us, r);
      if (mine.byName.empty()) continue;
      t.userSlices = mine.table(m.strings);
      all.merge(mine);
    }
    out.userSlices = all.table(m.strings);
  }

  // Needs only the model too: computed before waiting for the fair share, so
  // that it overlaps the sweep rather than following it.
  out.idleWhileRunnableNs = idleWhileRunnableNs(m, range);

  // Per-task summaries and run totals: everything but the fair share, so that
  // the distributions' sorts (and the caller's hook) overlap the sweep.
  const auto part = [](const std::vector<int64_t>& all, size_t b, size_t e) {
    return std::vector<int64_t>(all.begin() + static_cast<std::ptrdiff_t>(b), all.begin() + static_cast<std::ptrdiff_t>(e));
  };
  SampleRange from{0, 0};
  for (size_t ti = 0; ti < out.tasks.size(); ++ti) {
    TaskStats& t = out.tasks[ti];
    t.cpuShare = share(t.runtimeNs);
    const SampleRange to = samplesOf[ti];
    t.wakeupLatency = Distribution::of(part(allLat, from.latEnd, to.latEnd));
    t.schedDelay = Distribution::of(part(allDelay, from.delayEnd, to.delayEnd));
    from = to;
    out.switchesVoluntary += t.switchesVoluntary;
    out.switchesInvoluntary += t.switchesInvoluntary;
  }
  out.wakeupLatency = Distribution::of(std::move(allLat));
  out.schedDelay = Distribution::of(std::move(allDelay));
  if (whileFairShareRuns) whileFairShareRuns(out);

  // Fairness.
  const auto shares = sharesPending.get();
  std::vector<double> ratios;
  double lagSum = 0, lagMax = 0;
  for (TaskStats& t : out.tasks) {
    const FairShare& f = shares[t.utid.value];
    t.idealNs = std::llround(f.idealNs);
    t.gpsLagMaxNs = std::llround(f.maxAbsLagNs);
    t.competing = f.competed && f.idealNs > 0;  // x = S / S* needs an ideal
    if (!t.competing) continue;
    ratios.push_back(f.serviceNs / f.idealNs);
    lagSum += f.maxAbsLagNs;
    lagMax = std::max(lagMax, f.maxAbsLagNs);
  }
  const size_t competing = ratios.size();
  out.fairness.competingTasks = competing;
  out.fairness.jain = jainIndex(ratios);
  out.fairness.gpsLagMaxNs = std::llround(lagMax);
  out.fairness.gpsLagMeanNs = competing ? std::llround(lagSum / static_cast<double>(competing)) : 0;

  // Per core-scheduling cookie, when any task has one. The cookie index judges
  // each cookie as Jain's index judges a task: the service its competing tasks
  // got over the ideal's. Untagged tasks (cookie 0) are in it: core scheduling
  // keeps them off a core running tagged tasks as it keeps any two cookies apart.
  if (std::any_of(m.threads.cookie.begin(), m.threads.cookie.end(), [](uint32_t c) { return c != 0; })) {
    std::map<uint32_t, CookieStats> byCookie;
    std::map<uint32_t, std::pair<double, double>> service;  // cookie -> (service, ideal) of its competing tasks
    for (const TaskStats& t : out.tasks) {
      const uint32_t cookie = m.threads.cookie[t.utid.value];
      CookieStats& c = byCookie[cookie];
      c.cookie = cookie;
      ++c.tasks;
      c.runtimeNs += t.runtimeNs;
      c.forcedIdleCausedNs += t.forceidleSumNs;
      if (!t.competing) continue;
      service[cookie].first += shares[t.utid.value].serviceNs;
      service[cookie].second += shares[t.utid.value].idealNs;
    }
    std::vector<double> cookieRatios;
    for (auto& [cookie, c] : byCookie) {
      if (m.replay && cookie < m.replay->cookieNames.size()) c.name = m.replay->cookieNames[cookie];
      if (auto it = service.find(cookie); it != service.end()) {
        c.serviceRatio = it->second.first / it->second.second;
        cookieRatios.push_back(*c.serviceRatio);
      }
      out.cookies.push_back(std::move(c));
    }
    out.fairness.jainCookies = jainIndex(cookieRatios);
  }
  return out;
}

std::vector<ProcessStats> aggregateByProcess(const RunStats& stats) {
  std::vector<ProcessStats> out;
  std::map<uint32_t, size_t> byUpid;
  std::vector<std::vector<const std::vector<int64_t>*>> lat, delay;
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
      s.schedClass = t.schedClass;
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
    s.idealNs += t.idealNs;
    s.gpsLagMaxNs = std::max(s.gpsLagMaxNs, t.gpsLagMaxNs);
    s.competing = s.competing || t.competing;
    lat[idx].push_back(&t.wakeupLatency.sorted);
    delay[idx].push_back(&t.schedDelay.sorted);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].total.comm = out[i].name;
    out[i].total.wakeupLatency = Distribution::ofParts(lat[i]);
    out[i].total.schedDelay = Distribution::ofParts(delay[i]);
  }
  return out;
}

}  // namespace core::analysis
