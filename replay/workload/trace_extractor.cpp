#include "replay/workload/trace_extractor.h"

#include <algorithm>
#include <charconv>
#include <future>
#include <numeric>
#include <optional>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "core/prefault.h"
#include "core/sched_settings.h"

namespace replay {

namespace {

using core::TaskState;
using core::Utid;

// A wakeup of a task by another task, resolved into a trigger once every
// task's bursts are known. One per wakeup on a big trace: its time is the
// wakeup row's, and the burst keeps the block's length for the fallback.
struct PendingDep {
  uint32_t wakee;  // utid
  uint32_t wakeeBurst;
  uint32_t waker;  // utid
  uint32_t row;    // wakeup row (rows are in time order)
};
static_assert(sizeof(PendingDep) == 16);

struct Scan {
  std::vector<Burst> bursts;
  std::vector<int64_t> burstCumStart;  // work done before each burst
  // Run intervals [runTs, runEnd) in time order, from the CPU slices, with the
  // utid of the task that took the CPU at the end (runNext; 0: none at once, or
  // idle) and the work done before each (runCumBefore, for the work done by a
  // given time).
  std::vector<int64_t> runTs;
  std::vector<int64_t> runEnd;
  std::vector<uint32_t> runNext;
  std::vector<int64_t> runCumBefore;
  int64_t work = 0;
  bool exits = false;
  bool forked = false;
  int64_t startTs = 0;
  int startCpu = -1;
  bool ranOnOneCpu = true;
  int lastRunCpu = -1;

};

bool isSleepState(TaskState s) {
  switch (s) {
    case TaskState::Sleeping:
    case TaskState::Blocked:
    case TaskState::Idle:
    case TaskState::Stopped:
    case TaskState::Traced:
    case TaskState::Parked: return true;
    default: return false;
  }
}

// The bursts pass 1 of extractWorkload opens in a task's state rows [first, last).
size_t burstCount(const core::ThreadStateTable& st, uint32_t first, uint32_t last) {
  size_t count = 0;
  bool open = false;
  for (uint32_t r = first; r < last; ++r) {
    const TaskState state = st.state[r];
    if (state == TaskState::Running || core::isRunnable(state)) {
      count += !open;
      open = true;
    } else if (isSleepState(state)) {
      open = false;
    } else if (state == TaskState::Dead) {
      break;
    }
  }
  return count;
}

// The dominant prio of each task: the one it ran at longest (PI boosts are transient).
std::vector<int16_t> dominantPrio(const core::TraceModel& m) {
  const size_t n = m.threads.size();
  std::vector<std::vector<std::pair<int16_t, int64_t>>> acc(n);
  for (const auto& t : m.cpuSlices) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.kind[i] != core::SliceKind::Task) continue;
      auto& v = acc[t.utid[i].value];
      const int16_t p = t.prio[i];
      auto it = std::find_if(v.begin(), v.end(), [p](const auto& e) { return e.first == p; });
      if (it == v.end())
        v.emplace_back(p, t.dur[i]);
      else
        it->second += t.dur[i];
    }
  }
  std::vector<int16_t> out(n, -1);
  for (size_t u = 0; u < n; ++u) {
    int64_t best = -1;
    for (const auto& [p, d] : acc[u])
      if (p >= 0 && d > best) best = d, out[u] = p;
    if (out[u] < 0) out[u] = m.threads.prio[u];
  }
  return out;
}

// Whether each task's timer sleeps ended at fixed times (an absolute timer:
// clock_nanosleep(TIMER_ABSTIME), a periodic itimer) or a fixed length after
// it blocked (nanosleep, a relative timeout).
// The trace does not record which timer was armed, but it shows which of the
// two predicts the task's wakeups better: over its consecutive interrupt-woken
// cycles, an absolute timer keeps the interval from wakeup to wakeup steady
// while the sleep absorbs how long the task ran before it; a relative one keeps
// the sleep steady while the interval absorbs the run. A task with at least
// kMinTimerCycles such cycles takes absolute times when its intervals' median
// absolute deviation is smaller than its sleep lengths'; ties, and tasks with
// fewer cycles, stay relative. Kernel threads stay relative: their timeouts
// are timer-wheel jiffies that fire on the tick, whose grid is the tick's,
// not an expiry they asked for.
constexpr size_t kMinTimerCycles = 8;

int64_t medianAbsoluteDeviation(std::vector<int64_t>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  const int64_t median = *mid;
  for (int64_t& x : v) x = x > median ? x - median : median - x;
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

void classifyTimerSleeps(Workload& w) {
  std::vector<int64_t> sleeps, intervals;
  for (size_t t = 0; t < w.tasks.size(); ++t) {
    if (w.tasks[t].kernelThread) continue;
    const std::vector<Burst>& bursts = w.tasks[t].bursts;
    sleeps.clear();
    intervals.clear();
    for (size_t k = 1; k < bursts.size(); ++k) {
      const Burst& before = bursts[k - 1];
      const Burst& b = bursts[k];
      if (!b.interruptWake || !before.interruptWake) continue;
      sleeps.push_back(b.sleepNs);
      intervals.push_back(b.recordedStart - before.recordedStart);
    }
    if (sleeps.size() < kMinTimerCycles) continue;
    ++w.timerTasksJudged;
    if (medianAbsoluteDeviation(intervals) >= medianAbsoluteDeviation(sleeps)) continue;
    w.tasks[t].absoluteTimers = true;
  }
}

// The delays of the wakeups whose wakee ran at once, by WakeupPath: onto an
// idle CPU (its next slice is the wakee's), or preempting the task that was
// running there when it woke (that slice ends preempted and the wakee's
// follows). Local: the waking ran on the target CPU itself. A preemption that
// took longer than kMaxPreemptDelayNs was a later decision (a tick, another
// wakeup), not the immediate one the model charges this delay for; an idle
// CPU that stayed idle for 10 ms after its wakeup is not counted either.
constexpr int64_t kMaxPreemptDelayNs = 250'000;
constexpr int64_t kMaxIdleDelayNs = 10'000'000;

std::array<DelayDistribution, kWakeupPaths> measureWakeupDelays(const core::TraceModel& m) {
  const auto& ws = m.wakeups;
  std::array<std::vector<int64_t>, kWakeupPaths> samples;
  // Wakeups are in time order: one cursor per CPU walks its slices once.
  std::vector<size_t> cursor(m.cpuSlices.size(), 0);
  for (size_t i = 0; i < ws.size(); ++i) {
    if (ws.flags[i] & core::kWakeupNoEffect) continue;
    const size_t cpu = ws.targetCpu[i];
    if (cpu >= m.cpuSlices.size()) continue;
    const auto& t = m.cpuSlices[cpu];
    const int64_t ts = ws.ts[i];
    size_t& c = cursor[cpu];
    while (c < t.size() && t.ts[c] <= ts) ++c;
    if (c == 0) continue;
    const size_t j = c - 1;
    if (t.end(j) <= ts || j + 1 >= t.size() || t.utid[j + 1] != ws.wakee[i] ||
        (t.flags[j + 1] & (core::kSliceStartUnknown | core::kSliceStartInferred)))
      continue;
    const bool local = ws.wakerCpu[i] == ws.targetCpu[i];
    const int64_t d = t.ts[j + 1] - ts;
    if (d < 0) continue;
    if (t.kind[j] == core::SliceKind::Idle) {
      if (d < kMaxIdleDelayNs)
        samples[static_cast<size_t>(local ? WakeupPath::LocalIdle : WakeupPath::RemoteIdle)].push_back(d);
    } else if (t.kind[j] == core::SliceKind::Task && t.endReason[j] == core::SliceEnd::Preempted && d < kMaxPreemptDelayNs) {
      samples[static_cast<size_t>(local ? WakeupPath::LocalPreempt : WakeupPath::RemotePreempt)].push_back(d);
    }
  }
  std::array<DelayDistribution, kWakeupPaths> out;
  for (size_t p = 0; p < kWakeupPaths; ++p) out[p] = DelayDistribution::of(std::move(samples[p]));
  return out;
}

// Wakeups from interrupt context on a CPU running a task, of a task whose
// previous CPU was idle then: fair.c sends them to the idle CPU
// (wake_affine_idle(), select_idle_sibling()), but the recording kernels kept
// some on the busy CPU (rcu_preempt woken from the RCU softirq beside a
// compiler: 24 of 74 in a make -j1; docs/models.md 5.5). Per thread: {such
// wakeups, those kept on the busy CPU}.
std::vector<std::pair<uint32_t, uint32_t>> measureIrqWakeupsBesideIdle(const core::TraceModel& m) {
  std::vector<std::pair<uint32_t, uint32_t>> out(m.threads.size(), {0, 0});
  const auto& ws = m.wakeups;
  const auto& st = m.threadStates;
  // Both CPUs asked about are asked in time order (the wakeups are): a cursor per CPU.
  std::vector<size_t> cursor(m.cpuSlices.size(), 0);
  auto kindAt = [&](size_t cpu, int64_t ts) -> std::optional<core::SliceKind> {
    const auto& t = m.cpuSlices[cpu];
    size_t& c = cursor[cpu];
    while (c < t.size() && t.ts[c] <= ts) ++c;
    if (c == 0 || t.end(c - 1) <= ts) return std::nullopt;
    return t.kind[c - 1];
  };
  for (size_t i = 0; i < ws.size(); ++i) {
    if ((ws.flags[i] & (core::kWakeupFromIrq | core::kWakeupNoEffect)) != core::kWakeupFromIrq) continue;
    const size_t busy = ws.wakerCpu[i];
    if (busy >= m.cpuSlices.size() || kindAt(busy, ws.ts[i]) != core::SliceKind::Task) continue;
    // Where it slept: its state row before the wakeup names the CPU it last ran on.
    const auto row = m.stateRowBefore(ws.wakee[i], ws.ts[i]);
    if (!row) continue;
    const size_t prev = st.cpu[*row];
    if (prev == busy || prev >= m.cpuSlices.size() || kindAt(prev, ws.ts[i]) != core::SliceKind::Idle) continue;
    auto& [besideIdle, keptBusy] = out[ws.wakee[i].value];
    ++besideIdle;
    keptBusy += ws.targetCpu[i] == busy;
  }
  return out;
}

// Preemptions no wakeup explains: a task slice that ends preempted, handing
// the CPU straight to another task, with no effective wakeup aimed at that
// CPU in the kMaxPreemptDelayNs before (so not wakeup preemption, whose delay
// measureWakeupDelays() takes). On a busy CPU these are the tick's.
std::vector<int64_t> measureTickPreemptions(const core::TraceModel& m) {
  // The candidates, CPU by CPU in time order (the order of the result).
  struct Candidate {
    int64_t at;
    uint32_t cpu;
  };
  std::vector<Candidate> candidates;
  for (size_t cpu = 0; cpu < m.cpuSlices.size(); ++cpu) {
    const auto& t = m.cpuSlices[cpu];
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      if (t.kind[i] != core::SliceKind::Task || t.endReason[i] != core::SliceEnd::Preempted ||
          t.kind[i + 1] != core::SliceKind::Task || t.ts[i + 1] != t.end(i) ||
          (t.flags[i + 1] & (core::kSliceStartUnknown | core::kSliceStartInferred)))
        continue;
      candidates.push_back({t.ts[i + 1], static_cast<uint32_t>(cpu)});
    }
  }
  // One pass over the wakeups (in time order) beside the candidates in time
  // order, with each CPU's latest effective wakeup: copying every wakeup's
  // time per CPU took 8 bytes a wakeup, 22 MB on a 2.7M-event trace.
  std::vector<uint32_t> byTime(candidates.size());
  std::iota(byTime.begin(), byTime.end(), 0u);
  std::stable_sort(byTime.begin(), byTime.end(),
                   [&](uint32_t a, uint32_t b) { return candidates[a].at < candidates[b].at; });
  const auto& ws = m.wakeups;
  std::vector<int64_t> lastWakeup(m.cpuSlices.size(), INT64_MIN);
  std::vector<uint8_t> explained(candidates.size(), 0);
  size_t w = 0;
  for (const uint32_t k : byTime) {
    const Candidate& c = candidates[k];
    for (; w < ws.size() && ws.ts[w] <= c.at; ++w)
      if (!(ws.flags[w] & core::kWakeupNoEffect) && ws.targetCpu[w] < lastWakeup.size())
        lastWakeup[ws.targetCpu[w]] = ws.ts[w];
    explained[k] = lastWakeup[c.cpu] != INT64_MIN && c.at - lastWakeup[c.cpu] <= kMaxPreemptDelayNs;
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < candidates.size(); ++k)
    if (!explained[k]) out.push_back(candidates[k].at);
  return out;
}

// The work a task had done by recorded time ts, `run` being how many of its
// runs had begun by then.
int64_t workDoneBy(const Scan& sc, size_t run, int64_t ts) {
  return run == 0 ? 0 : sc.runCumBefore[run - 1] + std::min(ts, sc.runEnd[run - 1]) - sc.runTs[run - 1];
}

// A task's (burst, offset) at recorded time ts: the last burst that had become
// runnable by ts, and the work done in it by then (as pass 3 computes it).
bool recordedPointAt(const Scan& sc, const std::vector<Burst>& bursts, int64_t ts, uint32_t& burst, int64_t& offset) {
  const auto it = std::upper_bound(bursts.begin(), bursts.end(), ts,
                                   [](int64_t t, const Burst& b) { return t < b.recordedStart; });
  if (it == bursts.begin()) return false;
  const auto b = static_cast<size_t>(it - bursts.begin() - 1);
  const auto run = static_cast<size_t>(std::upper_bound(sc.runTs.begin(), sc.runTs.end(), ts) - sc.runTs.begin());
  const int64_t done = workDoneBy(sc, run, ts);
  burst = static_cast<uint32_t>(b);
  offset = std::clamp<int64_t>(done - sc.burstCumStart[b], 0, bursts[b].work);
  return true;
}

// Runs body(from, to) over [begin, end): split into [begin, split) and
// [split, end), the second part on another thread, unless split leaves a part empty.
template <class Body>
void inTwoParts(size_t begin, size_t split, size_t end, const Body& body) {
  if (split <= begin || split >= end) {
    body(begin, end);
    return;
  }
  auto second = std::async(std::launch::async, [&] { body(split, end); });
  body(begin, split);
  second.get();
}

// Dataflow gates (ExtractOptions::dataflowGates). The recording shows a
// dependency only where the consumer slept: a read that found its data
// (written while the reader was runnable) leaves no wakeup. A preempted task
// that is switched in again at time t goes on with whatever its producer had
// written by t; the nearest producer the trace names is the task that woke the
// burst it is in, or before any such burst the first one's (a pipeline's
// reader that ran before its writer first woke it). So the burst is split
// there, and the rest waits, like a wakeup dependency, until that producer
// reaches its recorded progress at t: in the kernel a reader that got ahead
// of its writer finds the socket empty and blocks. Where the replay's
// producer is not behind, the gate is passed at once (no switch). The task
// that took the CPU at the switch-out is never the producer waited for: a
// wakee preempting its waker is an order the scheduler chose, which the
// replayed model decides for itself (waiting for it made nicemix's
// `awk | grep` block 80 times more than recorded). Every constraint,
// recorded or gate, is "task A at its progress of recorded time t waits for
// task B's progress of the same t"; a cycle of such waits would need each t
// earlier than the last, so gates cannot deadlock a replay, and the pieces of
// a burst add up to its recorded work.
void addDataflowGates(Workload& w, const std::vector<Scan>& scans, const std::vector<TaskId>& idOf,
                      bool twoThreads) {
  const size_t n = w.tasks.size();
  std::vector<uint32_t> utidOf(n, 0);
  for (size_t u = 0; u < idOf.size(); ++u)
    if (idOf[u] != kNoTask) utidOf[idOf[u]] = static_cast<uint32_t>(u);
  struct Gate {
    uint32_t burst;     // the gated task's (original numbering)
    int64_t offset;     // work done in that burst at the switch-in
    int64_t ts;         // the recorded switch-in
    TaskId producer;
    uint32_t pBurst;    // the producer's point at ts (original numbering)
    int64_t pOffset;
    uint32_t piece = 0;  // the gated piece, in the new numbering
  };
  std::vector<std::vector<Gate>> gates(n);
  const auto findGates = [&](size_t from, size_t to) {
    for (size_t id = from; id < to; ++id) {
      const Scan& sc = scans[utidOf[id]];
      const auto& bursts = w.tasks[id].bursts;
      if (bursts.empty()) continue;
      // The producer: the waker of the latest burst a task woke (kept as the
      // bursts are passed); before the first such burst, its waker, unless a
      // child: a child wakes its parent at its exit or vfork release, not with data.
      // A wakeup that ends an uninterruptible sleep names no producer: reads
      // from pipes, sockets and futexes sleep interruptibly, while D is a lock
      // or I/O handed over inside the kernel (a folio lock between two
      // compilers of a parallel build, paging in the same binary). After such
      // a handover the task stands as before its first wakeup: the next task
      // to wake it is the producer, so that two tasks taking turns at a lock
      // keep their recorded order, and none once they stop.
      const auto wokenBy = [](const Burst& x) { return x.wake == WakeKind::Task ? x.waker : kNoTask; };
      const auto handedOver = [](const Burst& x) {
        return x.blockState == core::TaskState::Blocked || x.blockState == core::TaskState::Idle;
      };
      size_t ahead = 0;  // the next burst a task other than a child woke, from a given burst on
      const auto nextWaker = [&](size_t first) {
        for (ahead = std::max(ahead, first); ahead < bursts.size(); ++ahead)
          if (const TaskId waker = wokenBy(bursts[ahead]); waker != kNoTask && w.tasks[waker].parent != id)
            return waker;
        return kNoTask;
      };
      size_t b = 0;
      TaskId p = nextWaker(0);
      for (size_t r = 1; r < sc.runTs.size(); ++r) {
        while (b + 1 < bursts.size() && bursts[b + 1].recordedStart <= sc.runTs[r])
          if (const TaskId waker = wokenBy(bursts[++b]); waker != kNoTask)
            p = handedOver(bursts[b]) ? nextWaker(b + 1) : waker;
        const int64_t offset = sc.runCumBefore[r] - sc.burstCumStart[b];
        // A switch-in inside the burst after a gap (a preemption, not a burst's start).
        if (offset <= 0 || offset >= bursts[b].work || sc.runEnd[r - 1] >= sc.runTs[r]) continue;
        const uint32_t preempterUtid = sc.runNext[r - 1];
        if (p == kNoTask || p == id || (preempterUtid && preempterUtid < idOf.size() && idOf[preempterUtid] == p)) continue;
        const Burst& burst = bursts[b];
        const Scan& ps = scans[utidOf[p]];
        uint32_t pb = 0, fromB = 0;
        int64_t po = 0, fromO = 0;
        if (!recordedPointAt(ps, w.tasks[p].bursts, sc.runTs[r], pb, po)) continue;
        // Nothing new since the burst began: the wakeup dependency (or an earlier gate) already holds it.
        if (recordedPointAt(ps, w.tasks[p].bursts, burst.recordedStart, fromB, fromO) &&
            (pb < fromB || (pb == fromB && po <= fromO)))
          continue;
        gates[id].push_back({static_cast<uint32_t>(b), offset, sc.runTs[r], p, pb, po});
      }
    }
  };
  // Each task's gates read the other tasks' bursts and write only its own: in
  // two parts of about as many bursts each.
  size_t split = n;
  if (twoThreads) {
    size_t total = 0, sum = 0;
    for (const Task& t : w.tasks) total += t.bursts.size();
    for (split = 0; split < n && sum < total / 2; ++split) sum += w.tasks[split].bursts.size();
  }
  inTwoParts(0, split, n, findGates);
  // New numbering: each burst becomes its pieces; pieceStart = offset of the
  // piece in its original burst. A task without gates keeps its numbering
  // (and no tables).
  std::vector<std::vector<uint32_t>> firstPiece(n);
  std::vector<std::vector<int64_t>> pieceStart(n);
  for (size_t id = 0; id < n; ++id) {
    if (gates[id].empty()) continue;
    const auto& bursts = w.tasks[id].bursts;
    firstPiece[id].resize(bursts.size() + 1);
    pieceStart[id].reserve(bursts.size() + gates[id].size());
    size_t g = 0;
    for (size_t b = 0; b < bursts.size(); ++b) {
      firstPiece[id][b] = static_cast<uint32_t>(pieceStart[id].size());
      pieceStart[id].push_back(0);
      for (; g < gates[id].size() && gates[id][g].burst == b; ++g) pieceStart[id].push_back(gates[id][g].offset);
    }
    firstPiece[id][bursts.size()] = static_cast<uint32_t>(pieceStart[id].size());
  }
  // A point (burst, offset) in the new numbering: a point at a split belongs to
  // the end of the piece before it (reached before the gate is passed).
  const auto remap = [&](size_t id, uint32_t b, int64_t o, uint32_t& nb, int64_t& no) {
    if (gates[id].empty()) {
      nb = b;
      no = o;
      return;
    }
    const auto begin = pieceStart[id].begin() + firstPiece[id][b];
    const auto end = pieceStart[id].begin() + firstPiece[id][b + 1];
    auto k = std::lower_bound(begin + 1, end, o);  // first piece starting at or after o
    --k;
    nb = static_cast<uint32_t>(k - pieceStart[id].begin());
    no = o - *k;
  };
  for (size_t id = 0; id < n; ++id) {
    if (gates[id].empty()) continue;
    for (Trigger& tr : w.tasks[id].triggers) remap(id, tr.burst, tr.offset, tr.burst, tr.offset);
  }
  for (size_t id = 0; id < n; ++id) {
    for (Trigger& tr : w.tasks[id].triggers)
      if (tr.kind == TriggerKind::Wake && tr.target < n && !gates[tr.target].empty())
        tr.targetBurst = firstPiece[tr.target][tr.targetBurst];
  }
  // The pieces are laid out front to back in a new array, mapped first: laid
  // out in place, the bursts were copied once to make room and then again.
  for (size_t id = 0; id < n; ++id) {
    if (gates[id].empty()) continue;
    const std::vector<Burst>& bursts = w.tasks[id].bursts;
    std::vector<Burst> pieces;
    core::reserveMapped(pieces, pieceStart[id].size());
    size_t g = 0;  // gates of bursts before b
    for (size_t b = 0; b < bursts.size(); ++b) {
      const Burst& orig = bursts[b];
      const size_t first = g;
      while (g < gates[id].size() && gates[id][g].burst == b) ++g;
      pieces.push_back(orig);
      if (first == g) continue;
      pieces.back().work = gates[id][first].offset;
      pieces.back().recordedEnd = gates[id][first].ts;
      for (size_t k = first; k < g; ++k) {
        Gate& gate = gates[id][k];
        gate.piece = static_cast<uint32_t>(pieces.size());
        Burst piece;
        piece.wake = WakeKind::Task;
        piece.gate = true;
        piece.blockState = core::TaskState::Sleeping;
        piece.waker = gate.producer;
        piece.recordedStart = gate.ts;
        piece.recordedEnd = k + 1 < g ? gates[id][k + 1].ts : orig.recordedEnd;
        piece.work = (k + 1 < g ? gates[id][k + 1].offset : orig.work) - gate.offset;
        pieces.push_back(piece);
      }
    }
    w.tasks[id].bursts.swap(pieces);
    w.dataflowGates += gates[id].size();
  }
  std::vector<size_t> gatesOfProducer(n, 0);
  for (size_t id = 0; id < n; ++id)
    for (const Gate& gate : gates[id]) ++gatesOfProducer[gate.producer];
  for (size_t id = 0; id < n; ++id) core::reserveMapped(w.tasks[id].triggers, gatesOfProducer[id]);
  for (size_t id = 0; id < n; ++id)
    for (const Gate& gate : gates[id]) {
      Trigger tr;
      remap(gate.producer, gate.pBurst, gate.pOffset, tr.burst, tr.offset);
      tr.target = static_cast<TaskId>(id);
      tr.targetBurst = gate.piece;
      w.tasks[gate.producer].triggers.push_back(tr);
    }
}

// The dependencies and counts of one part of pass 1.
struct BurstScan {
  std::vector<PendingDep> deps;
  Unmodelled counts;
};

// Where pass 1 splits the tasks: the first task at or past half of the state
// rows, or the end (one part) below minRows.
size_t splitByStateRows(const core::TraceModel& m, uint32_t minRows) {
  const auto& begin = m.threadStates.rowsBegin;
  const size_t threadCount = m.threads.size();
  if (threadCount < 3 || begin[threadCount] < minRows) return threadCount;
  const auto half = std::lower_bound(begin.begin() + 1, begin.begin() + static_cast<std::ptrdiff_t>(threadCount),
                                     begin[threadCount] / 2);
  return static_cast<size_t>(half - begin.begin());
}

// Pass 1 of extractWorkload over the tasks [uBegin, uEnd): each task's bursts
// from its state intervals, into scans[u]; the blocks a task's wakeup ends go
// to out.deps in task order.
void scanBursts(const core::TraceModel& m, const std::vector<int64_t>& forkTs, size_t uBegin, size_t uEnd,
                std::vector<Scan>& scans, BurstScan& out) {
  const auto& ws = m.wakeups;
  for (size_t u = uBegin; u < uEnd; ++u) {
    if (m.threads.flags[u] & core::kThreadIdle) continue;
    Scan& s = scans[u];
    const auto [first, last] = m.stateRowsOf(Utid(static_cast<uint32_t>(u)));
    if (first == last && s.runTs.empty()) continue;
    s.forked = forkTs[u] >= 0;
    // Sized exactly, by the rule of the loop below: a bound of one burst per
    // two rows left a third of the array unused, 20 MB on a 2.7M-event trace,
    // and on huge pages the unused ends of the tasks' arrays are resident too.
    core::reserveMapped(s.bursts, burstCount(m.threadStates, first, last));
    const auto wakeRows = m.wakeupsOf(Utid(static_cast<uint32_t>(u)));
    // The effective wakeup (one that made it runnable) at or before ts, not
    // before `since`. Queries come in time order, so a cursor walks the task's
    // wakeups once (a binary search per burst is cache-miss bound on big traces).
    size_t wakeCursor = 0;
    auto wakeupAt = [&](int64_t ts, int64_t since) -> int64_t {
      while (wakeCursor < wakeRows.size() && ws.ts[wakeRows[wakeCursor]] <= ts) ++wakeCursor;
      for (size_t k = wakeCursor; k > 0; --k) {
        const uint32_t row = wakeRows[k - 1];
        if (ws.ts[row] < since) break;
        if (!(ws.flags[row] & core::kWakeupNoEffect)) return row;
      }
      return -1;
    };

    bool open = false;
    int64_t blockStart = m.firstTs;
    TaskState blockState = TaskState::Sleeping;
    TaskState lastState = TaskState::Unknown;
    auto openBurst = [&](int64_t ts, size_t row) {
      Burst b;
      b.recordedStart = ts;
      b.blockState = blockState;
      if (s.bursts.empty()) {
        if (s.forked) {
          b.wake = WakeKind::None;  // the parent's fork trigger starts it
          s.startTs = forkTs[u];
        } else {
          const int64_t wr = m.threadStates.state[row] == TaskState::Runnable ? wakeupAt(ts, ts) : -1;
          if (wr >= 0 && !(ws.flags[static_cast<size_t>(wr)] & core::kWakeupNew)) {
            // Asleep since before the trace began; this wakeup ends that sleep.
            s.startTs = m.firstTs;
            blockStart = m.firstTs;
            const auto wrow = static_cast<size_t>(wr);
            if ((ws.flags[wrow] & core::kWakeupFromIrq) || !ws.waker[wrow].isValid()) {
              b.wake = WakeKind::Sleep;
              b.sleepNs = ts - blockStart;
              b.interruptWake = true;
              ++out.counts.wakeupsFromInterrupt;
            } else {
              b.wake = WakeKind::Task;
              b.sleepNs = ts - blockStart;  // kept for the fallback when the waker cannot be resolved
              out.deps.push_back({static_cast<uint32_t>(u), 0, ws.waker[wrow].value, static_cast<uint32_t>(wrow)});
            }
          } else {
            b.wake = WakeKind::None;
            s.startTs = ts;
            ++out.counts.tasksStartedBeforeTrace;
          }
        }
        s.startCpu = m.threadStates.cpu[row];
      } else {
        const int64_t wr = wakeupAt(ts, blockStart);
        if (wr < 0) {
          b.wake = WakeKind::Sleep;
          b.sleepNs = ts - blockStart;
          ++out.counts.blocksWithoutWakeup;
        } else {
          const auto wrow = static_cast<size_t>(wr);
          if ((ws.flags[wrow] & core::kWakeupFromIrq) || !ws.waker[wrow].isValid()) {
            b.wake = WakeKind::Sleep;
            b.sleepNs = ts - blockStart;
            b.wakeCpu = ws.wakerCpu[wrow];  // a timer may fire on another CPU than the sleeper's
            b.interruptWake = true;
            ++out.counts.wakeupsFromInterrupt;
          } else if (ws.waker[wrow].value == u) {
            b.wake = WakeKind::Sleep;
            b.sleepNs = ts - blockStart;
            ++out.counts.wakeupsSelf;
          } else {
            b.wake = WakeKind::Task;
            b.sleepNs = ts - blockStart;  // kept for the fallback when the waker cannot be resolved
            out.deps.push_back({static_cast<uint32_t>(u), static_cast<uint32_t>(s.bursts.size()), ws.waker[wrow].value,
                            static_cast<uint32_t>(wrow)});
          }
        }
      }
      s.bursts.push_back(b);
      open = true;
    };
    auto closeBurst = [&](int64_t ts) {
      s.bursts.back().recordedEnd = ts;
      open = false;
    };

    for (uint32_t r = first; r < last; ++r) {
      const TaskState st = m.threadStates.state[r];
      const int64_t ts = m.threadStates.ts[r];
      lastState = st;
      if (st == TaskState::Running) {
        if (!open) openBurst(ts, r);
      } else if (core::isRunnable(st)) {
        if (!open) openBurst(ts, r);
      } else if (isSleepState(st)) {
        if (open) closeBurst(ts);
        blockStart = ts;
        blockState = st;
      } else if (st == TaskState::Dead) {
        if (open) closeBurst(ts);
        s.exits = true;
        break;
      } else {  // Unknown: lost data, or a repaired contradiction
        ++out.counts.unknownStateIntervals;
      }
    }
    if (open) {
      closeBurst(m.lastTs);
      if (lastState == TaskState::Running || core::isRunnable(lastState)) ++out.counts.tasksRunningAtTraceEnd;
    }
    if (s.bursts.empty() && !s.runTs.empty()) {
      // Ran without any state the builder could track: one burst over its runs.
      Burst b;
      b.recordedStart = s.runTs.front();
      b.recordedEnd = s.runEnd.back();
      s.startTs = b.recordedStart;
      s.bursts.push_back(b);
      ++out.counts.tasksStartedBeforeTrace;
    }
    // Each run counts for the burst that was open (had become runnable) when it
    // began; the first burst takes anything earlier.
    core::assignMapped(s.burstCumStart, s.bursts.size());
    core::assignMapped(s.runCumBefore, s.runTs.size());
    size_t b = 0;
    for (size_t k = 0; k < s.runTs.size(); ++k) {
      const int64_t start = s.runTs[k], end = s.runEnd[k];
      while (b + 1 < s.bursts.size() && s.bursts[b + 1].recordedStart <= start) {
        s.burstCumStart[b + 1] = s.work;
        ++b;
      }
      s.runCumBefore[k] = s.work;
      s.bursts[b].work += end - start;
      s.work += end - start;
      if (b == 0 && !s.forked && s.bursts[0].wake == WakeKind::None) s.startTs = std::min(s.startTs, start);
    }
    for (++b; b < s.bursts.size(); ++b) s.burstCumStart[b] = s.work;
    // A task that never got work and never blocks adds nothing.
    if (!s.bursts.empty() && s.work == 0 && !s.exits && s.bursts.size() == 1 && s.bursts[0].wake == WakeKind::None &&
        !s.forked) {
      s.bursts.clear();
    }
  }
}

}  // namespace

bool looksLikeKernelThread(std::string_view comm) {
  // The trace has no mm pointer; kernel threads are recognised by their fixed names.
  static constexpr std::string_view kPrefixes[] = {
      "kworker/", "ksoftirqd/", "migration/", "rcu_", "rcuc/", "rcuop/", "cpuhp/", "kthreadd", "idle_inject/",
      "watchdog/", "irq/", "kcompactd", "kswapd", "jbd2/", "khugepaged", "oom_reaper", "writeback", "kblockd",
      "kauditd", "khungtaskd", "ksmd", "kintegrityd", "kdevtmpfs", "pool_workqueue", "kdamond."};
  for (std::string_view p : kPrefixes)
    if (comm.substr(0, p.size()) == p) return true;
  return false;
}

int perCpuKthreadCpu(std::string_view comm) {
  static constexpr std::string_view kPrefixes[] = {"ksoftirqd/", "migration/", "cpuhp/", "kworker/",
                                                   "rcuc/",      "watchdog/",  "idle_inject/", "rcuop/"};
  for (std::string_view prefix : kPrefixes) {
    if (comm.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = comm.substr(prefix.size());
    int cpu = -1;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), cpu);
    if (ec != std::errc() || p == rest.data()) return -1;
    // kworker/N:M is per-CPU; kworker/uN:M (unbound) fails the digit parse above.
    if (prefix == "kworker/" && (p == rest.data() + rest.size() || *p != ':')) return -1;
    if (prefix != "kworker/" && p != rest.data() + rest.size()) return -1;
    return cpu;
  }
  return -1;
}

core::Result<Workload> extractWorkload(const core::TraceModel& m, const ExtractOptions& options) {
  Workload w;
  w.kind = "trace";
  w.source = m.sourceFiles.empty() ? std::string() : m.sourceFiles.front();
  w.originTs = m.firstTs;
  w.recordedTopology = m.topology;
  w.kernelRelease = m.kernelRelease();
  w.unmodelled.lostEventRanges = m.dataLoss.size();
  w.unmodelled.switchInsInferred = m.diagnostics.count(core::DiagCode::switch_in_inferred);
  if (const auto it = m.metadata.find(core::kAutogroupSetting); it != m.metadata.end()) {
    w.autogroupSetting = it->second;
    w.unmodelled.recordedWithAutogroup = it->second == "1";
  }
  w.schedSettingsKnown = m.metadata.count(core::kSchedSettingsFromKey) != 0;
  if (const auto it = m.metadata.find(core::kVcpuPackSetting); it != m.metadata.end()) w.vcpuPackSetting = it->second;
  if (const auto it = m.metadata.find(core::kPreemptSetting); it != m.metadata.end()) w.preemptSetting = it->second;
  // Read from the model alone: measured on another thread while the runs are gathered.
  auto delays = std::async(std::launch::async, [&m, &options] {
    return std::make_tuple(measureWakeupDelays(m),
                           options.tickPreemptions ? measureTickPreemptions(m) : std::vector<int64_t>(),
                           measureIrqWakeupsBesideIdle(m));
  });

  const size_t threadCount = m.threads.size();
  std::vector<Scan> scans(threadCount);
  std::vector<PendingDep> deps;
  const auto& ws = m.wakeups;
  deps.reserve(ws.size());  // at most one per wakeup; pages beyond those used are never touched

  // Forks by child: who started in the trace, and from which parent.
  std::vector<int64_t> forkTs(threadCount, -1);
  std::vector<uint32_t> parentOf(threadCount, UINT32_MAX);
  for (size_t i = 0; i < m.taskEvents.size(); ++i)
    if (m.taskEvents.kind[i] == core::TaskEventKind::Fork && m.taskEvents.other[i].isValid() &&
        m.taskEvents.other[i].value < threadCount) {
      forkTs[m.taskEvents.other[i].value] = m.taskEvents.ts[i];
      parentOf[m.taskEvents.other[i].value] = m.taskEvents.utid[i].value;
    }

  // Work is CPU time as the run slices have it (what `stats` calls runtime), so
  // that a replay conserves exactly what the recording shows; the state
  // intervals give the structure (when a task blocks and what woke it).
  // The CPUs' slices are merged by start time (each CPU's are in time order),
  // so that every task's runs come out sorted: sorting them per task afterwards
  // cost 6% of the extraction.
  {
    // Sized first: grown by doubling, these vectors were copied and their new
    // pages faulted in again, 8% of the extraction on a 3M-event trace.
    std::vector<uint32_t> runCount(threadCount, 0);
    for (const auto& t : m.cpuSlices)
      for (size_t i = 0; i < t.size(); ++i)
        if (t.kind[i] == core::SliceKind::Task && t.dur[i] > 0) ++runCount[t.utid[i].value];
    for (size_t u = 0; u < threadCount; ++u) {
      core::reserveMapped(scans[u].runTs, runCount[u]);
      core::reserveMapped(scans[u].runEnd, runCount[u]);
      core::reserveMapped(scans[u].runNext, runCount[u]);
    }
    using Head = std::pair<int64_t, uint32_t>;  // (start of the CPU's next slice, cpu)
    std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
    std::vector<size_t> next(m.cpuSlices.size(), 0);
    for (size_t cpu = 0; cpu < m.cpuSlices.size(); ++cpu)
      if (!m.cpuSlices[cpu].ts.empty()) heads.emplace(m.cpuSlices[cpu].ts[0], static_cast<uint32_t>(cpu));
    while (!heads.empty()) {
      const uint32_t cpu = heads.top().second;
      heads.pop();
      const auto& t = m.cpuSlices[cpu];
      const size_t i = next[cpu]++;
      if (next[cpu] < t.size()) heads.emplace(t.ts[next[cpu]], cpu);
      if (t.kind[i] != core::SliceKind::Task || t.dur[i] <= 0) continue;
      Scan& s = scans[t.utid[i].value];
      const bool handedOver = i + 1 < t.size() && t.kind[i + 1] == core::SliceKind::Task && t.ts[i + 1] == t.end(i);
      s.runTs.push_back(t.ts[i]);
      s.runEnd.push_back(t.end(i));
      s.runNext.push_back(handedOver ? t.utid[i + 1].value : 0u);
      if (s.lastRunCpu >= 0 && s.lastRunCpu != static_cast<int>(cpu)) s.ranOnOneCpu = false;
      s.lastRunCpu = static_cast<int>(cpu);
    }
  }

  // Pass 1. Tasks are independent here, so on a big trace the tasks are split
  // at half of the state rows and the second part is scanned on another
  // thread: the CPU the recording's statistics take later is free now. The
  // parts' dependencies are joined in task order, as one loop makes them.
  const size_t split = splitByStateRows(m, options.twoThreadsFromStateRows);
  BurstScan firstPart, secondPart;
  firstPart.deps = std::move(deps);
  size_t secondWakeups = 0;
  for (size_t u = split; u < threadCount; ++u) secondWakeups += m.wakeupsOf(Utid(static_cast<uint32_t>(u))).size();
  secondPart.deps.reserve(secondWakeups);
  inTwoParts(1, split, threadCount, [&](size_t from, size_t to) {
    scanBursts(m, forkTs, from, to, scans, from < split ? firstPart : secondPart);
  });
  deps = std::move(firstPart.deps);
  core::reserveMapped(deps, secondPart.deps.size());
  deps.insert(deps.end(), secondPart.deps.begin(), secondPart.deps.end());
  w.unmodelled += firstPart.counts;
  w.unmodelled += secondPart.counts;
  std::vector<std::pair<uint32_t, uint32_t>> irqWakeupsBesideIdle;
  std::tie(w.wakeupDelays, w.tickPreemptions, irqWakeupsBesideIdle) = delays.get();

  // Pass 2: number the replayed tasks.
  std::vector<TaskId> idOf(threadCount, kNoTask);
  const auto prios = dominantPrio(m);
  bool onlyCreated = false;
  if (options.onlyCreatedTasks)
    for (size_t u = 1; u < threadCount && !onlyCreated; ++u) onlyCreated = scans[u].forked && !scans[u].bursts.empty();
  // The traced command's tree: the first created task with that comm, and every
  // task forked from it (a parent's utid is always below its child's).
  std::vector<uint8_t> inTree;
  if (!options.treeOf.empty()) {
    uint32_t root = 0;
    for (size_t u = 1; u < threadCount && !root; ++u)
      if (scans[u].forked && m.comm(Utid(static_cast<uint32_t>(u))) == options.treeOf) root = static_cast<uint32_t>(u);
    if (root) {
      inTree.assign(threadCount, 0);
      inTree[root] = 1;
      for (size_t u = root + 1; u < threadCount; ++u) {
        const Utid p = m.threads.parent[u];
        if (p.isValid() && p.value < u && inTree[p.value]) inTree[u] = 1;
      }
    }
  }
  for (size_t u = 1; u < threadCount; ++u) {
    if (m.threads.flags[u] & core::kThreadIdle) continue;
    Scan& s = scans[u];
    if (s.bursts.empty()) {
      ++w.unmodelled.tasksNeverRan;
      continue;
    }
    if ((onlyCreated && !s.forked) || (!inTree.empty() && !inTree[u])) {
      ++w.unmodelled.tasksLeftOut;
      continue;
    }
    idOf[u] = static_cast<TaskId>(w.tasks.size());
    Task t;
    t.tid = m.threads.tid[u];
    t.tgid = m.threads.tgid[u];
    t.comm = std::string(m.comm(Utid(static_cast<uint32_t>(u))));
    t.prio = prios[u] >= 0 ? prios[u] : 120;
    t.policy = t.prio < 100 ? SchedPolicy::Fifo : SchedPolicy::Normal;
    t.startTs = s.startTs;
    t.startCpu = s.startCpu;
    t.exits = s.exits;
    t.kernelThread = looksLikeKernelThread(t.comm);
    t.autogroup = m.threads.autogroup[u];
    t.autogroupNice = m.threads.autogroupNice[u];
    t.inMakespan = s.forked;
    std::tie(t.irqWakeupsBesideIdle, t.irqWakeupsKeptBusy) = irqWakeupsBesideIdle[u];
    if (options.pinPerCpuKthreads) {
      const int cpu = perCpuKthreadCpu(t.comm);
      if (cpu >= 0 && s.ranOnOneCpu && (s.lastRunCpu < 0 || s.lastRunCpu == cpu) && m.topology.cpu(cpu))
        t.affinity = {cpu};
    }
    t.bursts = std::move(s.bursts);
    w.tasks.push_back(std::move(t));
  }
  if (w.tasks.empty()) {
    return core::Error((w.source.empty() ? std::string("trace") : w.source) +
                       ": no task ever ran in the recording; nothing to replay");
  }

  // Pass 3: dependencies become triggers on the waker's work, forks start
  // children, execs mark where sched_exec() balances.
  // A task's (burst, offset) at time ts: the last burst that had become runnable
  // by ts, and the work done in it by then. Queries are grouped per task and
  // sorted by time so that cursors walk each task's bursts and runs once.
  // A dependency's query carries its wakee, so that the triggers are made in
  // query order without a random read of deps per query.
  struct PointQuery {
    uint32_t utid;
    uint32_t index;  // into deps (fork and exec queries: deps.size() + their number)
    int64_t ts;
    TaskId wakee = kNoTask;
    uint32_t wakeeBurst = 0;
  };
  // Grouped by task (a stable counting sort, filled straight into place) and in
  // time order within a task: wakeups are visited in row order, which is time
  // order; forks and execs likewise.
  std::vector<uint32_t> begin(threadCount + 1, 0);  // per utid, where its queries start
  std::vector<uint32_t> depOfRow;
  core::assignMapped(depOfRow, ws.size(), UINT32_MAX);
  for (size_t i = 0; i < deps.size(); ++i) {
    const PendingDep& d = deps[i];
    if (idOf[d.wakee] == kNoTask || d.waker == d.wakee) continue;
    uint32_t& dep = depOfRow[d.row];
    if (dep != UINT32_MAX) --begin[deps[dep].waker + 1];  // two blocks ended by one wakeup: the later keeps it
    dep = static_cast<uint32_t>(i);
    ++begin[d.waker + 1];
  }
  // Forks of replayed children (queried on the parent) and execs of replayed tasks.
  // sched_exec() runs at the start of execve(), before the new program is
  // loaded and before a vfork child releases its parent; sched_process_exec
  // comes after both. So an exec whose task woke its parent earlier in the
  // same run is placed just before that wakeup: the parent still waits when
  // the kernel chooses the CPU.
  std::vector<std::vector<int64_t>> parentWakes(threadCount);  // per task, in time order
  for (const PendingDep& d : deps)
    if (d.waker < threadCount && parentOf[d.waker] == d.wakee) parentWakes[d.waker].push_back(ws.ts[d.row]);
  const auto execPoint = [&](uint32_t actor, int64_t execTs) {
    const auto& wakes = parentWakes[actor];
    const auto after = std::upper_bound(wakes.begin(), wakes.end(), execTs);
    if (after == wakes.begin()) return execTs;
    const int64_t wakeTs = *(after - 1);
    const auto& bursts = w.tasks[idOf[actor]].bursts;
    // The burst running at the exec must have begun by the wakeup (no block between them).
    const auto running = std::upper_bound(bursts.begin(), bursts.end(), execTs,
                                          [](int64_t ts, const Burst& b) { return ts < b.recordedStart; });
    if (running == bursts.begin() || (running - 1)->recordedStart > wakeTs) return execTs;
    return wakeTs - 1;
  };
  std::vector<size_t> eventRows;
  std::vector<PointQuery> eventQueries;
  for (size_t i = 0; i < m.taskEvents.size(); ++i) {
    const core::TaskEventKind kind = m.taskEvents.kind[i];
    const uint32_t actor = m.taskEvents.utid[i].value;
    int64_t ts = m.taskEvents.ts[i];
    if (kind == core::TaskEventKind::Fork) {
      if (!m.taskEvents.other[i].isValid() || idOf[m.taskEvents.other[i].value] == kNoTask) continue;
    } else if (kind != core::TaskEventKind::Exec || actor >= threadCount || idOf[actor] == kNoTask) {
      continue;
    } else {
      ts = execPoint(actor, ts);
    }
    if (actor < threadCount) {
      eventQueries.push_back({actor, static_cast<uint32_t>(deps.size() + eventRows.size()), ts});
      ++begin[actor + 1];
    }
    eventRows.push_back(i);
  }
  for (size_t u = 0; u < threadCount; ++u) begin[u + 1] += begin[u];
  // Each acting task gets a trigger per query it resolves: at most its queries,
  // and nearly all of them are resolved, so their pages are mapped now.
  for (size_t u = 0; u < threadCount; ++u)
    if (idOf[u] != kNoTask) core::reserveMapped(w.tasks[idOf[u]].triggers, begin[u + 1] - begin[u]);
  std::vector<PointQuery> queries;
  core::assignMapped(queries, begin[threadCount]);
  for (size_t row = 0; row < ws.size(); ++row)
    if (const uint32_t i = depOfRow[row]; i != UINT32_MAX) {
      const PendingDep& d = deps[i];
      queries[begin[d.waker]++] = {d.waker, i, ws.ts[row], idOf[d.wakee], d.wakeeBurst};
    }
  // Forks and execs are few: merge them into their task's run by time.
  for (const auto& q : eventQueries) queries[begin[q.utid]++] = q;
  for (size_t q = 0; q < queries.size();) {
    size_t e = q;
    while (e < queries.size() && queries[e].utid == queries[q].utid) ++e;
    if (!std::is_sorted(queries.begin() + static_cast<std::ptrdiff_t>(q), queries.begin() + static_cast<std::ptrdiff_t>(e),
                        [](const PointQuery& a, const PointQuery& b) { return a.ts < b.ts; }))
      std::stable_sort(queries.begin() + static_cast<std::ptrdiff_t>(q), queries.begin() + static_cast<std::ptrdiff_t>(e),
                       [](const PointQuery& a, const PointQuery& b) { return a.ts < b.ts; });
    q = e;
  }
  // Each query that finds its point becomes a trigger of its acting task, in
  // query order: per task and in time order, hence already sorted by (burst,
  // offset) in the common case. Whether each dependency, fork and exec found
  // its point, by their index.
  std::vector<uint8_t> resolved;
  core::assignMapped(resolved, deps.size() + eventRows.size(), uint8_t{0});
  for (size_t q = 0; q < queries.size();) {
    const uint32_t utid = queries[q].utid;
    const TaskId id = idOf[utid];
    const Scan& sc = scans[utid];
    size_t b = 0, run = 0;  // cursors: next burst to pass, next run to pass
    for (; q < queries.size() && queries[q].utid == utid; ++q) {
      if (id == kNoTask) continue;
      const PointQuery& query = queries[q];
      Task& acting = w.tasks[id];
      while (b < acting.bursts.size() && acting.bursts[b].recordedStart <= query.ts) ++b;
      if (b == 0) continue;
      while (run < sc.runTs.size() && sc.runTs[run] <= query.ts) ++run;
      const auto burst = static_cast<uint32_t>(b - 1);
      const int64_t offset =
          std::clamp<int64_t>(workDoneBy(sc, run, query.ts) - sc.burstCumStart[burst], 0, acting.bursts[burst].work);
      resolved[query.index] = 1;
      if (query.index < deps.size()) {
        acting.triggers.push_back({offset, burst, query.wakee, query.wakeeBurst, TriggerKind::Wake});
        continue;
      }
      const size_t i = eventRows[query.index - deps.size()];
      if (m.taskEvents.kind[i] == core::TaskEventKind::Exec) {
        acting.triggers.push_back({offset, burst, id, 0, TriggerKind::Exec});
        continue;
      }
      const TaskId child = idOf[m.taskEvents.other[i].value];
      w.tasks[child].parent = id;
      acting.triggers.push_back({offset, burst, child, 0, TriggerKind::Fork});
    }
  }
  // deps are in wakee order: this walks the bursts they wake in memory order.
  for (size_t i = 0; i < deps.size(); ++i) {
    const PendingDep& d = deps[i];
    const TaskId wakee = idOf[d.wakee];
    if (wakee == kNoTask) continue;
    Burst& b = w.tasks[wakee].bursts[d.wakeeBurst];
    if (resolved[i]) {
      b.waker = idOf[d.waker];
      continue;
    }
    b.wake = WakeKind::Sleep;
    b.sleepNs = std::max<int64_t>(0, b.sleepNs);
    ++w.unmodelled.wakeupsUnknownWaker;
  }
  for (size_t k = 0; k < eventRows.size(); ++k) {
    if (resolved[deps.size() + k]) continue;
    const size_t i = eventRows[k];
    if (m.taskEvents.kind[i] == core::TaskEventKind::Exec) {
      ++w.unmodelled.execsNotRunning;
      continue;
    }
    w.tasks[idOf[m.taskEvents.other[i].value]].startTs = m.taskEvents.ts[i];
    ++w.unmodelled.forksOfUnreplayedParent;
  }
  classifyTimerSleeps(w);
  if (options.dataflowGates) addDataflowGates(w, scans, idOf, /*twoThreads=*/split < threadCount);
  for (Task& t : w.tasks) {
    // Same-point triggers keep their recorded order (stable), gates' after them.
    const auto before = [](const Trigger& a, const Trigger& b) {
      return a.burst != b.burst ? a.burst < b.burst : a.offset < b.offset;
    };
    // The task's own triggers come in time order and its gates after them:
    // sorting the tail and merging it in gives what a stable sort of all of
    // them gives, for a seventh fewer of the extraction's instructions on a
    // hackbench trace (the whole sort was 15% of them).
    const auto tail = std::is_sorted_until(t.triggers.begin(), t.triggers.end(), before);
    if (tail == t.triggers.end()) continue;
    std::stable_sort(tail, t.triggers.end(), before);
    std::inplace_merge(t.triggers.begin(), tail, t.triggers.end(), before);
  }

  // The makespan covers what the trace created (the traced command's tree);
  // background tasks that were already alive only count when nothing was created.
  bool anyForked = false;
  for (const Task& t : w.tasks) anyForked |= t.inMakespan;
  if (!anyForked)
    for (Task& t : w.tasks) t.inMakespan = true;
  int64_t first = INT64_MAX, lastEnd = INT64_MIN;
  for (const Task& t : w.tasks)
    for (const Burst& b : t.bursts) {
      if (!t.inMakespan) continue;
      first = std::min(first, b.recordedStart);
      lastEnd = std::max(lastEnd, b.recordedEnd);
    }
  w.recordedMakespanNs = lastEnd >= first ? lastEnd - first : 0;
  return w;
}

}  // namespace replay
