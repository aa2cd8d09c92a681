#include "core/analysis/why.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <unordered_map>

namespace core::analysis {

namespace {

int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

// The end of a state row: the next row of the thread, or the thread's end (a
// living thread's last state holds until the trace's last event).
int64_t rowEnd(const TraceModel& m, Utid u, uint32_t r, uint32_t e) {
  return r + 1 < e ? m.threadStates.ts[r + 1] : std::max(m.threadStates.ts[r], m.threads.endTs[u.value]);
}

// The wakeup that made `u` runnable at the state row starting at `rowTs`: the
// last effective wakeup of u at or before rowTs and after the row before it
// began (SchedBuilder stamps the Runnable row with the wakeup's time; a clamp to
// the thread's previous state change can only move the row later).
// `past` is the number of u's wakeups at or before rowTs.
std::optional<uint32_t> lastEffectiveWakeup(const WakeupTable& w, std::span<const uint32_t> rows, size_t past,
                                            int64_t prevRowTs) {
  for (size_t i = past; i > 0; --i) {
    const uint32_t row = rows[i - 1];
    if (w.ts[row] < prevRowTs) break;
    if (!(w.flags[row] & kWakeupNoEffect)) return row;
  }
  return std::nullopt;
}

std::optional<uint32_t> wakeupOfRow(const TraceModel& m, Utid u, int64_t rowTs, int64_t prevRowTs) {
  const auto rows = m.wakeupsOf(u);
  const auto& w = m.wakeups;
  const auto it = std::upper_bound(rows.begin(), rows.end(), rowTs, [&](int64_t t, uint32_t i) { return t < w.ts[i]; });
  return lastEffectiveWakeup(w, rows, static_cast<size_t>(it - rows.begin()), prevRowTs);
}

// wakeupOfRow for rows visited in time order: the wakeups already passed are
// counted as the rows advance, rather than searched for at every row (a whole
// trace's runnable rows made that search the costliest step of idle-while-runnable).
class WakeupCursor {
 public:
  WakeupCursor(const TraceModel& m, Utid u) : m_wakeups(m.wakeups), m_rows(m.wakeupsOf(u)) {}
  std::optional<uint32_t> ofRow(int64_t rowTs, int64_t prevRowTs) {
    while (m_past < m_rows.size() && m_wakeups.ts[m_rows[m_past]] <= rowTs) ++m_past;
    return lastEffectiveWakeup(m_wakeups, m_rows, m_past, prevRowTs);
  }

 private:
  const WakeupTable& m_wakeups;
  std::span<const uint32_t> m_rows;
  size_t m_past = 0;
};

bool allowedOn(const TraceModel& m, Utid u, int cpu) {
  const auto& aff = m.threads.affinity[u.value];
  return aff.empty() || std::find(aff.begin(), aff.end(), static_cast<CpuId>(cpu)) != aff.end();
}

// Migration rows of one task, in time order.
std::vector<uint32_t> migrationsOf(const TraceModel& m, Utid u, TimeRange range) {
  std::vector<uint32_t> out;
  const auto& mg = m.migrations;
  for (size_t i = 0; i < mg.size() && mg.ts[i] < range.to; ++i)
    if (mg.utid[i] == u) out.push_back(static_cast<uint32_t>(i));
  return out;
}

// u's runnable time in the range, piece by piece in time order, split where a
// sched_migrate_task moved it to another runqueue. `migrations` are u's
// migration rows in time order. A cursor, so that a sweep can take the pieces
// of many tasks a time window at a time.
class RunnableStretches {
 public:
  struct Piece {
    int64_t from = 0;
    int64_t to = 0;
    int queue = 0;
    /// The state row whose wakeup gives `queue` if the piece's user asks for it
    /// (resolveQueue()); kNoRow once `queue` is final.
    uint32_t wokenRow = kNoRow;
  };
  static constexpr uint32_t kNoRow = UINT32_MAX;
  RunnableStretches(const TraceModel& m, Utid u, TimeRange range, std::span<const uint32_t> migrations)
      : m_m(m), m_u(u), m_range(range), m_migrations(migrations), m_wakeups(m, u) {
    std::tie(m_r, m_e) = m.stateRowsOf(u);
    m_b = m_r;
  }

  /// The next piece with its queue; false when there are no more.
  bool next(Piece& out) {
    if (!nextPiece(out)) return false;
    resolveQueue(out);
    return true;
  }

  /// The next piece, whose queue may wait for resolveQueue(): the queue of a
  /// woken task is its wakeup's target CPU, found among the task's wakeups (a
  /// cache miss or two each), which a sweep that drops most pieces need not pay.
  bool nextPiece(Piece& out) {
    const auto& st = m_m.threadStates;
    const auto& mg = m_m.migrations;
    for (;;) {
      if (!m_inRow) {
        if (m_r >= m_e || st.ts[m_r] >= m_range.to) return false;
        const uint32_t r = m_r;
        if (!isRunnable(st.state[r]) || (m_rowEnd = rowEnd(m_m, m_u, r, m_e)) <= m_range.from) {
          ++m_r;
          continue;
        }
        m_at = st.ts[r];
        m_queue = st.cpu[r];
        m_wokenRow = st.state[r] == TaskState::Runnable ? r : kNoRow;
        while (m_k < m_migrations.size() && mg.ts[m_migrations[m_k]] < m_at) ++m_k;
        m_inRow = true;
      }
      if (m_k < m_migrations.size() && mg.ts[m_migrations[m_k]] < m_rowEnd) {
        const int64_t t = mg.ts[m_migrations[m_k]];
        const Piece piece{std::max(m_at, m_range.from), std::min(t, m_range.to), m_queue, m_wokenRow};
        m_queue = mg.destCpu[m_migrations[m_k]];
        m_wokenRow = kNoRow;
        const bool some = t > m_at && piece.to > piece.from;
        m_at = std::max(m_at, t);
        ++m_k;
        if (some) return out = piece, true;
        continue;
      }
      m_inRow = false;
      ++m_r;
      const Piece piece{std::max(m_at, m_range.from), std::min(m_rowEnd, m_range.to), m_queue, m_wokenRow};
      if (piece.to > piece.from) return out = piece, true;
    }
  }

  /// Sets the queue of a piece from nextPiece(). Pieces must be resolved in
  /// the order they came (the wakeups are walked forward).
  void resolveQueue(Piece& p) {
    if (p.wokenRow == kNoRow) return;
    const auto& st = m_m.threadStates;
    const uint32_t r = p.wokenRow;
    if (auto w = m_wakeups.ofRow(st.ts[r], r > m_b ? st.ts[r - 1] : INT64_MIN)) p.queue = m_m.wakeups.targetCpu[*w];
    p.wokenRow = kNoRow;
  }

 private:
  const TraceModel& m_m;
  Utid m_u;
  TimeRange m_range;
  std::span<const uint32_t> m_migrations;
  WakeupCursor m_wakeups;
  uint32_t m_b = 0, m_r = 0, m_e = 0;  // the task's rows; the current one
  size_t m_k = 0;                      // next migration
  bool m_inRow = false;                // pieces of row m_r are being handed out
  int64_t m_at = 0;                    // where the row's next piece starts
  int64_t m_rowEnd = 0;
  int m_queue = 0;
  uint32_t m_wokenRow = kNoRow;  // the row whose wakeup gives m_queue, until a migration moves the task
};

template <typename Fn>
void forEachRunnableStretch(const TraceModel& m, Utid u, TimeRange range, std::span<const uint32_t> migrations,
                            Fn&& fn) {
  RunnableStretches pieces(m, u, range, migrations);
  for (RunnableStretches::Piece p; pieces.next(p);) fn(p.from, p.to, p.queue);
}

// Visits the slices of one CPU that overlap [a, b).
// The first slice of one CPU that may overlap [a, ...): the one running at a, or the first after.
size_t firstSliceFrom(const CpuSliceTable& s, int64_t a) {
  auto i = static_cast<size_t>(std::lower_bound(s.ts.begin(), s.ts.end(), a) - s.ts.begin());
  if (i > 0 && s.end(i - 1) > a) --i;
  return i;
}

template <typename Fn>
void forEachSlice(const CpuSliceTable& s, int64_t a, int64_t b, Fn&& fn) {
  for (size_t i = firstSliceFrom(s, a); i < s.size() && s.ts[i] < b; ++i)
    if (s.end(i) > a) fn(i);
}

using Interval = std::pair<int64_t, int64_t>;

// Sorts intervals and merges the overlapping ones: their union, in order.
void mergeIntervals(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end());
  size_t w = 0;
  for (const Interval& iv : v) {
    if (w > 0 && iv.first <= v[w - 1].second) v[w - 1].second = std::max(v[w - 1].second, iv.second);
    else v[w++] = iv;
  }
  v.resize(w);
}

// Length of (union of `a`) ∩ (union of `b`); both are merged in place.
int64_t intersectionLength(std::vector<Interval>& a, std::vector<Interval>& b) {
  mergeIntervals(a);
  mergeIntervals(b);
  int64_t total = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    total += overlap(a[i].first, a[i].second, b[j].first, b[j].second);
    if (a[i].second < b[j].second) ++i;
    else ++j;
  }
  return total;
}

std::optional<PathState> pathStateOf(TaskState s) {
  switch (classify(s)) {
    case StateClass::Running: return PathState::Running;
    case StateClass::Runnable: return PathState::Runnable;
    case StateClass::Sleep: return PathState::Sleeping;
    case StateClass::Blocked: return PathState::Blocked;
    default: return std::nullopt;
  }
}

// The task whose run on `cpu` ended at `ts` (the switch that let `waiter` in), if a task's did.
Utid holderBefore(const TraceModel& m, int cpu, int64_t ts, Utid waiter) {
  if (cpu < 0 || cpu >= m.cpuCount()) return {};
  const CpuSliceTable& s = m.cpuSlices[static_cast<size_t>(cpu)];
  const auto i = static_cast<size_t>(std::lower_bound(s.ts.begin(), s.ts.end(), ts) - s.ts.begin());
  if (i == 0 || s.end(i - 1) != ts || s.kind[i - 1] != SliceKind::Task || s.utid[i - 1] == waiter) return {};
  return s.utid[i - 1];
}

}  // namespace

std::string_view toString(PathState state) {
  switch (state) {
    case PathState::Running: return "running";
    case PathState::Runnable: return "runnable";
    case PathState::Sleeping: return "sleeping";
    case PathState::Blocked: return "blocked";
  }
  return "?";
}

std::string_view toString(PathStop stop) {
  switch (stop) {
    case PathStop::RangeStart: return "range start";
    case PathStop::UnknownState: return "unknown state";
    case PathStop::TaskUnseen: return "task not seen earlier";
  }
  return "?";
}

CriticalPath criticalPath(const TraceModel& m, Utid utid, TimeRange range) {
  CriticalPath path;
  const auto& st = m.threadStates;
  path.end = std::min(range.to, m.threads.endTs[utid.value]);
  std::vector<PathSegment> backwards;
  const auto emit = [&](Utid u, PathState s, int64_t from, int64_t to) {
    if (!backwards.empty() && backwards.back().utid == u && backwards.back().state == s &&
        backwards.back().from == to)
      backwards.back().from = from;
    else
      backwards.push_back({u, s, from, to, Utid()});
  };
  Utid task = utid;
  int64_t t = path.end;
  while (t > range.from) {
    const auto row = m.stateRowBefore(task, t);
    if (!row) {
      path.stop = PathStop::TaskUnseen;
      break;
    }
    const uint32_t r = *row;
    const auto [b, e] = m.stateRowsOf(task);
    const auto state = pathStateOf(st.state[r]);
    if (!state) {
      path.stop = PathStop::UnknownState;
      break;
    }
    const int64_t start = std::max(st.ts[r], range.from);
    emit(task, *state, start, t);
    if (*state == PathState::Runnable && r + 1 < e && st.ts[r + 1] == t && st.state[r + 1] == TaskState::Running)
      backwards.back().waitedBehind = holderBefore(m, st.cpu[r + 1], t, task);
    t = start;
    if (t > range.from && st.state[r] == TaskState::Runnable) {
      const auto w = wakeupOfRow(m, task, st.ts[r], r > b ? st.ts[r - 1] : INT64_MIN);
      // SchedBuilder leaves the waker invalid for interrupt-context wakeups.
      if (w && m.wakeups.waker[*w].isValid() && m.wakeups.waker[*w] != kIdleUtid)
        task = m.wakeups.waker[*w];
    }
  }
  path.segments.assign(backwards.rbegin(), backwards.rend());
  return path;
}

WhyReport explainTask(const TraceModel& m, Utid u, TimeRange range) {
  WhyReport out;
  out.utid = u;
  out.range = range;
  const auto& st = m.threadStates;
  const auto [b, e] = m.stateRowsOf(u);
  for (uint32_t r = b; r < e && st.ts[r] < range.to; ++r) {
    const int64_t o = overlap(st.ts[r], rowEnd(m, u, r, e), range.from, range.to);
    switch (classify(st.state[r])) {
      case StateClass::Running: out.runningNs += o; break;
      case StateClass::Runnable: out.runnableNs += o; break;
      case StateClass::Sleep: out.sleepingNs += o; break;
      case StateClass::Blocked: out.blockedNs += o; break;
      case StateClass::Unknown: out.unknownNs += o; break;
      case StateClass::Dead: break;
    }
  }

  // Antagonists and idle-while-runnable, one runnable stretch at a time.
  std::unordered_map<uint32_t, int64_t> antagonistNs;
  std::vector<Interval> idleElsewhere, queueBusy;
  const auto migrations = migrationsOf(m, u, range);
  forEachRunnableStretch(m, u, range, migrations, [&](int64_t a0, int64_t a1, int q) {
    idleElsewhere.clear();
    queueBusy.clear();
    for (int cpu = 0; cpu < m.cpuCount(); ++cpu) {
      if (!allowedOn(m, u, cpu) && cpu != q) continue;
      const CpuSliceTable& s = m.cpuSlices[static_cast<size_t>(cpu)];
      forEachSlice(s, a0, a1, [&](size_t i) {
        const int64_t from = std::max(s.ts[i], a0), to = std::min(s.end(i), a1);
        if (s.kind[i] == SliceKind::Task && s.utid[i] != u) {
          antagonistNs[s.utid[i].value] += to - from;
          if (cpu == q) queueBusy.emplace_back(from, to);
        } else if (s.kind[i] == SliceKind::Idle && cpu != q) {
          idleElsewhere.emplace_back(from, to);
        }
      });
    }
    out.idleWhileRunnableNs += intersectionLength(idleElsewhere, queueBusy);
  });
  for (const auto& [utid, ns] : antagonistNs) out.antagonists.push_back({Utid(utid), ns});
  std::sort(out.antagonists.begin(), out.antagonists.end(), [&](const Antagonist& x, const Antagonist& y) {
    if (x.ns != y.ns) return x.ns > y.ns;
    return m.threads.tid[x.utid.value] < m.threads.tid[y.utid.value];
  });

  // Wakers: each effective wakeup in the range, with the sleep it ended.
  std::map<uint32_t, WakerShare> byWaker;  // keyed by utid; interrupts under the invalid id
  const auto& w = m.wakeups;
  for (const uint32_t i : m.wakeupsOf(u)) {
    if (w.ts[i] < range.from || w.ts[i] >= range.to || (w.flags[i] & kWakeupNoEffect)) continue;
    const bool irq = (w.flags[i] & kWakeupFromIrq) || !w.waker[i].isValid() || w.waker[i] == kIdleUtid;
    const Utid waker = irq ? Utid() : w.waker[i];
    WakerShare& share = byWaker[waker.value];
    share.utid = waker;
    ++share.count;
    // The sleep it ended: the state row before the wakeup.
    const auto row = m.stateRowBefore(u, w.ts[i]);
    if (!row) continue;
    const uint32_t r = *row;
    const StateClass c = classify(st.state[r]);
    if (c == StateClass::Sleep || c == StateClass::Blocked) share.sleepNs += overlap(st.ts[r], w.ts[i], range.from, range.to);
  }
  for (auto& [key, share] : byWaker) out.wakers.push_back(share);
  std::sort(out.wakers.begin(), out.wakers.end(), [&](const WakerShare& x, const WakerShare& y) {
    if (x.utid.isValid() != y.utid.isValid()) return x.utid.isValid();
    if (x.count != y.count) return x.count > y.count;
    if (x.sleepNs != y.sleepNs) return x.sleepNs > y.sleepNs;
    return x.utid.isValid() && m.threads.tid[x.utid.value] < m.threads.tid[y.utid.value];
  });

  out.criticalPath = criticalPath(m, u, range);
  return out;
}

std::vector<WhyReport> explainTopWaiters(const TraceModel& m, const RunStats& stats, size_t count) {
  std::vector<const TaskStats*> order;
  for (const TaskStats& t : stats.tasks)
    if (t.waitNs > 0) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const TaskStats* a, const TaskStats* b) { return a->waitNs > b->waitNs; });
  std::vector<WhyReport> out;
  for (size_t i = 0; i < order.size() && i < count; ++i) out.push_back(explainTask(m, order[i]->utid, stats.range));
  return out;
}

int64_t idleWhileRunnableNs(const TraceModel& m, TimeRange range) {
  const int cpus = m.cpuCount();
  if (cpus < 2 || range.length() <= 0) return 0;
  enum : uint8_t { kOther, kBusy, kIdle };
  struct Event {
    int64_t ts;
    CpuId cpu;
    int8_t delta;  // waiter +1/-1; 0: the CPU's status becomes `status`
    uint8_t status;
    uint32_t restricted;  // utid of an affinity-restricted waiter, else 0
  };
  static_assert(sizeof(Event) == 16);
  // Outside the union of every CPU's idle time the condition cannot hold: a
  // stretch that misses it needs no events (on a busy machine, most of them).
  std::vector<Interval> anyIdle;
  for (int cpu = 0; cpu < cpus; ++cpu) {
    const CpuSliceTable& s = m.cpuSlices[static_cast<size_t>(cpu)];
    forEachSlice(s, range.from, range.to, [&](size_t i) {
      if (s.kind[i] == SliceKind::Idle) anyIdle.emplace_back(s.ts[i], s.end(i));
    });
  }
  mergeIntervals(anyIdle);
  const auto meetsIdle = [&](int64_t a0, int64_t a1) {
    auto it = std::upper_bound(anyIdle.begin(), anyIdle.end(), a0, [](int64_t t, const Interval& iv) { return t < iv.second; });
    return it != anyIdle.end() && it->first < a1;
  };

  // The events come a time window at a time, each sorted alone and swept; an
  // event a window makes for later (a waiter leaving, a CPU's gap after a slice
  // that runs on) waits in `later`. All of them at once were two 16-byte
  // events per stretch: 500 MB at 50M events, the peak of a trace's statistics.
  std::vector<Event> batch, later;
  int64_t windowEnd = 0;
  const auto add = [&](const Event& e) { (e.ts < windowEnd ? batch : later).push_back(e); };

  // CPU status changes (runs of task slices are one busy span), from a cursor
  // per CPU over its slices that overlap the range. A slice is taken in the
  // window of its first event: the gap before it, else its start.
  struct CpuCursor {
    size_t i = 0;
    uint8_t status = kOther;
    int64_t prevEnd = INT64_MIN;
    bool done = false;
  };
  std::vector<CpuCursor> cpuCursors(static_cast<size_t>(cpus));
  for (int cpu = 0; cpu < cpus; ++cpu)
    cpuCursors[static_cast<size_t>(cpu)].i = firstSliceFrom(m.cpuSlices[static_cast<size_t>(cpu)], range.from);
  const auto cpuEvents = [&](int cpu) {
    const CpuSliceTable& s = m.cpuSlices[static_cast<size_t>(cpu)];
    CpuCursor& c = cpuCursors[static_cast<size_t>(cpu)];
    const auto id = static_cast<CpuId>(cpu);
    for (; !c.done; ++c.i) {
      if (c.i >= s.size() || s.ts[c.i] >= range.to) {
        if (c.status != kOther) add({c.prevEnd, id, 0, kOther, 0});
        c.done = true;
        break;
      }
      if (s.end(c.i) <= range.from) continue;
      const bool gap = s.ts[c.i] > c.prevEnd && c.status != kOther;
      if ((gap ? c.prevEnd : std::max(s.ts[c.i], range.from)) >= windowEnd) break;
      if (gap) add({c.prevEnd, id, 0, c.status = kOther, 0});
      const uint8_t now = s.kind[c.i] == SliceKind::Task ? kBusy : s.kind[c.i] == SliceKind::Idle ? kIdle : kOther;
      if (now != c.status) add({std::max(s.ts[c.i], range.from), id, 0, c.status = now, 0});
      c.prevEnd = s.end(c.i);
    }
  };

  // Waiters, per runnable stretch that meets idle time, from a cursor per task.
  std::vector<uint32_t> migBegin;
  const auto& mg = m.migrations;
  std::vector<uint32_t> migOrder;
  {
    migBegin.assign(m.threads.size() + 1, 0);
    for (size_t i = 0; i < mg.size(); ++i) ++migBegin[mg.utid[i].value + 1];
    for (size_t u = 0; u < m.threads.size(); ++u) migBegin[u + 1] += migBegin[u];
    migOrder.resize(mg.size());
    std::vector<uint32_t> next(migBegin.begin(), migBegin.end() - 1);
    for (size_t i = 0; i < mg.size(); ++i) migOrder[next[mg.utid[i].value]++] = static_cast<uint32_t>(i);
  }
  struct TaskCursor {
    RunnableStretches pieces;
    RunnableStretches::Piece piece;
    bool has = false;
    uint32_t restricted = 0;  // the task's utid when it is kept off some CPU: checked per waiter
  };
  std::vector<TaskCursor> tasks;
  const auto advance = [&](TaskCursor& t) {
    while ((t.has = t.pieces.nextPiece(t.piece)))
      if (meetsIdle(t.piece.from, t.piece.to)) {
        t.pieces.resolveQueue(t.piece);
        if (t.piece.queue < cpus) return;
      }
  };
  for (uint32_t u = 1; u < m.threads.size(); ++u) {
    const auto& aff = m.threads.affinity[u];
    std::set<CpuId> allowed;
    for (const CpuId c : aff)
      if (c < cpus) allowed.insert(c);
    const bool everywhere = aff.empty() || allowed.size() == static_cast<size_t>(cpus);
    const std::span<const uint32_t> migrations(migOrder.data() + migBegin[u], migBegin[u + 1] - migBegin[u]);
    TaskCursor t{RunnableStretches(m, Utid(u), range, migrations), {}, false, everywhere ? 0 : u};
    advance(t);
    if (t.has) tasks.push_back(std::move(t));
  }

  // Sweep: busyWaiters counts unrestricted waiters queued on busy CPUs; with any
  // of them and any idle CPU the condition holds (a busy CPU is not idle). The
  // state after a group of equal times does not depend on the order within it.
  std::vector<uint8_t> status(static_cast<size_t>(cpus), kOther);
  std::vector<int64_t> waiters(static_cast<size_t>(cpus), 0);
  std::vector<std::pair<uint32_t, int>> restrictedWaiters;  // (utid, queue CPU)
  int64_t busyWaiters = 0;
  int idleCpus = 0;
  int64_t total = 0;
  const auto holds = [&] {
    if (idleCpus == 0) return false;
    if (busyWaiters > 0) return true;
    for (const auto& [u, q] : restrictedWaiters) {
      if (status[static_cast<size_t>(q)] != kBusy) continue;
      for (int c = 0; c < cpus; ++c)
        if (c != q && status[static_cast<size_t>(c)] == kIdle && allowedOn(m, Utid(u), c)) return true;
    }
    return false;
  };
  const auto apply = [&](const Event& ev) {
    const auto c = static_cast<size_t>(ev.cpu);
    if (ev.delta == 0) {
      if (status[c] == kBusy) busyWaiters -= waiters[c];
      if (status[c] == kIdle) --idleCpus;
      status[c] = ev.status;
      if (status[c] == kBusy) busyWaiters += waiters[c];
      if (status[c] == kIdle) ++idleCpus;
    } else if (ev.restricted) {
      if (ev.delta > 0) {
        restrictedWaiters.emplace_back(ev.restricted, ev.cpu);
      } else {
        const auto it = std::find(restrictedWaiters.begin(), restrictedWaiters.end(),
                                  std::make_pair(ev.restricted, static_cast<int>(ev.cpu)));
        if (it != restrictedWaiters.end()) restrictedWaiters.erase(it);
      }
    } else {
      waiters[c] += ev.delta;
      if (status[c] == kBusy) busyWaiters += ev.delta;
    }
  };

  // About a million state rows and slices per window.
  const size_t rows = m.threadStates.size() + m.sliceCount();
  const auto windows = static_cast<int64_t>(rows / (size_t{1} << 20) + 1);
  int64_t groupTs = INT64_MIN;  // the last group swept, and whether the condition held after it
  bool heldAfterGroup = false;
  for (int64_t w = 1; w <= windows; ++w) {
    windowEnd = w == windows ? INT64_MAX : windowBound(range.from, std::min(range.to, m.lastTs), w, windows);
    batch.clear();
    std::vector<Event> stillLater;
    for (const Event& e : later) (e.ts < windowEnd ? batch : stillLater).push_back(e);
    later.swap(stillLater);
    for (int cpu = 0; cpu < cpus; ++cpu) cpuEvents(cpu);
    for (TaskCursor& t : tasks)
      for (; t.has && t.piece.from < windowEnd; advance(t)) {
        add({t.piece.from, static_cast<CpuId>(t.piece.queue), +1, 0, t.restricted});
        add({t.piece.to, static_cast<CpuId>(t.piece.queue), -1, 0, t.restricted});
      }
    std::sort(batch.begin(), batch.end(), [](const Event& x, const Event& y) { return x.ts < y.ts; });
    for (size_t i = 0; i < batch.size();) {
      const int64_t t = batch[i].ts;
      if (heldAfterGroup) total += overlap(groupTs, t, range.from, range.to);
      for (; i < batch.size() && batch[i].ts == t; ++i) apply(batch[i]);
      groupTs = t;
      heldAfterGroup = holds();
    }
  }
  return total;
}

std::vector<Utid> findTasks(const TraceModel& m, std::string_view spec) {
  std::vector<Utid> out;
  int32_t tid = 0;
  const auto [end, ec] = std::from_chars(spec.data(), spec.data() + spec.size(), tid);
  const bool isTid = ec == std::errc() && end == spec.data() + spec.size();
  for (uint32_t u = 1; u < m.threads.size(); ++u)
    if (isTid ? m.threads.tid[u] == tid : m.comm(Utid(u)) == spec) out.emplace_back(u);
  return out;
}

Utid busiestTask(const TraceModel& m, const std::vector<Utid>& tasks, TimeRange range) {
  Utid best;
  int64_t bestNs = -1;
  for (const Utid u : tasks) {
    int64_t ns = 0;
    const auto [b, e] = m.stateRowsOf(u);
    for (uint32_t r = b; r < e; ++r)
      if (m.threadStates.state[r] == TaskState::Running) ns += overlap(m.threadStates.ts[r], rowEnd(m, u, r, e), range.from, range.to);
    if (ns > bestNs) bestNs = ns, best = u;
  }
  return best;
}

namespace {
std::string_view processName(const TraceModel& m, Utid u) {
  const Upid p = m.threads.upid[u.value];
  return p.isValid() ? m.strings.get(m.processes.name[p.value]) : m.comm(u);
}
}  // namespace

Utid matchTask(const TraceModel& a, Utid utid, const TraceModel& b) {
  const std::string_view comm = a.comm(utid);
  const std::string_view process = processName(a, utid);
  std::vector<Utid> candidates, sameProcess;
  for (const Utid u : findTasks(b, comm)) {
    candidates.push_back(u);
    if (processName(b, u) == process) sameProcess.push_back(u);
  }
  return busiestTask(b, sameProcess.empty() ? candidates : sameProcess, wholeTrace(b));
}

WhyDiff diffWhy(const TraceModel& a, const WhyReport& x, const TraceModel& b, const WhyReport& y) {
  WhyDiff d;
  d.metrics = {
      {"running_ns", static_cast<double>(x.runningNs), static_cast<double>(y.runningNs)},
      {"runnable_ns", static_cast<double>(x.runnableNs), static_cast<double>(y.runnableNs)},
      {"sleeping_ns", static_cast<double>(x.sleepingNs), static_cast<double>(y.sleepingNs)},
      {"blocked_ns", static_cast<double>(x.blockedNs), static_cast<double>(y.blockedNs)},
      {"idle_while_runnable_ns", static_cast<double>(x.idleWhileRunnableNs), static_cast<double>(y.idleWhileRunnableNs)},
  };
  std::map<std::string, WhyDiff::AntagonistDelta> byComm;
  for (const Antagonist& t : x.antagonists) {
    auto& entry = byComm[std::string(a.comm(t.utid))];
    entry.aNs += t.ns;
  }
  for (const Antagonist& t : y.antagonists) {
    auto& entry = byComm[std::string(b.comm(t.utid))];
    entry.bNs += t.ns;
  }
  for (auto& [comm, entry] : byComm) {
    entry.comm = comm;
    d.antagonists.push_back(entry);
  }
  std::stable_sort(d.antagonists.begin(), d.antagonists.end(), [](const auto& p, const auto& q) {
    return std::llabs(p.bNs - p.aNs) > std::llabs(q.bNs - q.aNs);
  });
  return d;
}

}  // namespace core::analysis
