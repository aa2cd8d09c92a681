#include "core/sched_builder.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>
#include <utility>

#include "core/atrace_marker.h"
#include "core/power_events.h"
#include "core/prefault.h"
#include "core/kernel_runtime_check.h"

namespace core {

namespace {
constexpr uint32_t kNoRow = UINT32_MAX;
constexpr std::string_view kUnknownComm = "<...>";
constexpr size_t kMaxSwitchInDelaySamples = 1 << 16;

// Returning growth slack costs a copy; only worth it when the slack is large
// (the memory budget is per event, so a few percent does not matter).
template <typename Column>
void shrink(Column& v) {
  if (v.capacity() > v.size() + v.size() / 8 + 1024) shrinkMapped(v);
}

// Stable counting sort of row indices by a key in [0, keyCount).
template <typename KeyFn>
std::vector<uint32_t> partitionRows(size_t rows, size_t keyCount, KeyFn key, std::vector<uint32_t>& begins) {
  begins.assign(keyCount + 1, 0);
  for (size_t i = 0; i < rows; ++i) ++begins[key(i) + 1];
  std::partial_sum(begins.begin(), begins.end(), begins.begin());
  std::vector<uint32_t> order(rows);
  std::vector<uint32_t> next(begins.begin(), begins.end() - 1);
  for (size_t i = 0; i < rows; ++i) order[next[key(i)]++] = static_cast<uint32_t>(i);
  return order;
}

// Moves each row to its key's partition in one pass (a stable counting-sort
// scatter): cheaper than an order array plus one gather per column.
template <typename KeyFn, typename... Columns>
void scatterByKey(size_t rows, size_t keyCount, KeyFn key, std::vector<uint32_t>& begins, Columns&... columns) {
  begins.assign(keyCount + 1, 0);
  for (size_t i = 0; i < rows; ++i) ++begins[key(i) + 1];
  std::partial_sum(begins.begin(), begins.end(), begins.begin());
  std::vector<uint32_t> next(begins.begin(), begins.end() - 1);
  auto outs = std::make_tuple(std::vector<typename Columns::value_type>(rows)...);
  for (size_t i = 0; i < rows; ++i) {
    const uint32_t dst = next[key(i)]++;
    std::apply([&](auto&... out) { ((out[dst] = columns[i]), ...); }, outs);
  }
  std::apply([&](auto&... out) { (columns.swap(out), ...); }, outs);
}

// The same stable partition done in place, for the biggest table (thread
// states): scatterByKey's second copy of the table was the peak RSS of a whole
// import (+44 MB at 3.9M events, over the 1/3-of-KernelShark memory target).
// The final positions are filled from the end, at most `chunk` rows per sweep:
// the rows bound for [a, r) go to a small buffer, the others slide down in
// order. The rows left before a sweep are, for each key, its first rows in
// order, so the j-th of key k is bound for begins[k] + j: the destinations need
// no column of their own and the keys stay as narrow as they came. About
// rows/chunk/2 sequential sweeps, no second copy of the table. The sweeps are
// bound by memory bandwidth, so their number is the cost: a quarter of the
// table per sweep (2.5 passes) takes 23 ms on 2.9M rows where an eighth (4.5
// passes) took 32 ms, for 2.5 MB more peak RSS.
template <typename Key, typename... Columns>
void partitionInPlace(std::vector<Key>& keys, size_t keyCount, std::vector<uint32_t>& begins, Columns&... columns) {
  const size_t rows = keys.size();
  begins.assign(keyCount + 1, 0);
  for (const Key k : keys) ++begins[static_cast<size_t>(k) + 1];
  std::partial_sum(begins.begin(), begins.end(), begins.begin());
  std::vector<uint32_t> next(keyCount);
  const size_t chunk = std::max<size_t>(rows / 4, 1 << 16);
  // Default-initialised buffers: pages are only touched as rows land in them.
  auto buffers = std::make_tuple(std::unique_ptr<typename Columns::value_type[]>(
      new typename Columns::value_type[std::min(chunk, rows)])...);
  for (size_t r = rows; r > 0;) {
    const size_t a = r > chunk ? r - chunk : 0;
    std::copy(begins.begin(), begins.end() - 1, next.begin());
    size_t w = 0;
    for (size_t i = 0; i < r; ++i) {
      const Key k = keys[i];
      const size_t dst = next[k]++;
      if (dst >= a) {
        std::apply([&](auto&... buf) { ((buf[dst - a] = columns[i]), ...); }, buffers);
      } else {
        keys[w] = k;
        ((columns[w] = columns[i]), ...);
        ++w;
      }
    }
    const auto at = static_cast<std::ptrdiff_t>(a);
    std::apply([&](auto&... buf) { (std::copy(buf.get(), buf.get() + (r - a), columns.begin() + at), ...); },
               buffers);
    r = a;
  }
}
}  // namespace

struct SchedBuilder::ThreadRt {
  TaskState state = TaskState::Unknown;
  int16_t cpu = -1;  // last CPU it ran on or was queued on
  bool cpuSeen = false;  // `cpu` is one a trace event showed it on (a fork only guesses its parent's)
  bool exiting = false;
  bool dead = false;
  uint32_t pendingWaking = kNoRow;  // sched_waking row awaiting its sched_wakeup
  // Replaced on a CPU without a traced switch out (inferSwitchIn): the slice
  // that ended there and the Unknown state row after it, until its next event
  // tells how it left (resolveUntracedSwitchOut()).
  int32_t untracedOutCpu = -1;
  uint32_t untracedOutSlice = 0;
  uint32_t untracedOutRow = kNoRow;
  // Blocked after its sched_process_exit (S or D inside do_exit(), e.g. a
  // thread waiting for the rest of its group): alive until a switch out as X
  // or Z. If it never runs again, that block was its death (endExitBlock()):
  // the slice that ended there, its state row and the time.
  int32_t exitBlockCpu = -1;
  uint32_t exitBlockSlice = 0;
  uint32_t exitBlockRow = kNoRow;
  int64_t exitBlockTs = 0;
  int64_t lastStateTs = INT64_MIN;  // the time of its last thread-state row
  uint32_t stateRows = 0;
  int64_t lastMoveTs = INT64_MIN;  // its last sched_migrate_task
  // Its comm as the model has it, kept here while it fits TASK_COMM_LEN:
  // nearly every event names its task's comm again, and comparing with this
  // copy, in the cache line the event touches anyway, spares the string
  // pool's lookup (noteComm()).
  char commBytes[16];
  uint8_t commLen = kNoCommCopy;
  static constexpr uint8_t kNoCommCopy = UINT8_MAX;
  // The latest event of its own that shows it was not yet running where it
  // runs next: its wakeup (or other state change), or a move after it, which
  // comes before it can run on the CPU it was moved to.
  int64_t notRunningSince() const { return std::max(lastStateTs, lastMoveTs); }
};

struct SchedBuilder::CpuRt {
  bool seen = false;
  bool sliceOpen = false;
  Utid current;
  int64_t sliceStart = 0;
  int16_t slicePrio = kPrioUnknown;
  uint8_t sliceFlags = 0;
  bool sliceForcedIdle = false;
  int64_t lastTs = 0;
  int64_t unknownSince = 0;  // since when we do not know who runs (CPU's first event, or end of a loss)
  // Events that name the CPU's current task (common_pid): the last one before
  // the event being handled. An inferred switch-in happened after it.
  int64_t lastCtxTs = INT64_MIN;
  int64_t ctxTsBefore = INT64_MIN;
  // Events accepted on this CPU, and which of them was the last sched_waking
  // that made its wakee runnable (its wakeups row, its context): try_to_wake_up()
  // traces the move select_task_rq() chose as the very next event of that CPU,
  // in the same context.
  uint64_t events = 0;
  uint64_t wakingEvent = UINT64_MAX;
  uint32_t wakingRow = 0;
  int32_t wakingCtxTid = -1;
};

SchedBuilder::SchedBuilder() : m_model(std::make_shared<TraceModel>()) {
  // utid 0 is the idle task of every CPU.
  newThread(0, 0);
  auto& t = m_model->threads;
  t.comm[0] = m_model->strings.intern("swapper");
  t.flags[0] = kThreadIdle;
  t.prio[0] = 120;
}

SchedBuilder::~SchedBuilder() = default;

void SchedBuilder::reserve(uint64_t expectedEvents) {
  // Typical scheduler traces: ~40% switches, ~30% wakeups (waking + wakeup merge
  // into one row), ~2.7 state changes per switch. Over-reserving costs address
  // space only: untouched pages are never faulted in.
  const auto n = static_cast<size_t>(std::min<uint64_t>(expectedEvents, uint64_t{1} << 32));
  auto& s = m_model->threadStates;
  m_stateDt.reserve(n * 11 / 10);
  s.state.reserve(n * 11 / 10);
  s.cpu.reserve(n * 11 / 10);
  m_stateUtid.narrow.reserve(n * 11 / 10);
  auto& w = m_model->wakeups;
  w.ts.reserve(n / 3);
  w.wakee.reserve(n / 3);
  w.waker.reserve(n / 3);
  w.targetCpu.reserve(n / 3);
  w.wakerCpu.reserve(n / 3);
  w.flags.reserve(n / 3);
  // Slices: one per switch, over the CPUs the topology names if it is known yet.
  // Grown by doubling, the per-CPU tables left ~6 MB of freed halves resident at
  // 3.9M events; a share estimated per CPU from a trace's first pages came out
  // too low (start-up differs from the rest) and doubled anyway. Half the events,
  // spread evenly, covers the CPUs of real traces; finalize() trims the slack.
  if (const int cpus = m_model->topology.cpuLimit(); cpus > 0 && cpus <= kMaxCpus) {
    const size_t perCpu = n / 2 / static_cast<size_t>(cpus) + 1024;
    for (int cpu = 0; cpu < cpus; ++cpu) {
      cpuRt(cpu);
      auto& t = m_model->cpuSlices[static_cast<size_t>(cpu)];
      t.ts.reserve(perCpu), t.dur.reserve(perCpu), t.utid.reserve(perCpu), t.prio.reserve(perCpu);
      t.endState.reserve(perCpu), t.endReason.reserve(perCpu), t.kind.reserve(perCpu), t.flags.reserve(perCpu);
    }
  }
}

void SchedBuilder::setFormat(std::string format) { m_model->format = std::move(format); }
void SchedBuilder::addSourceFile(std::string path) {
  if (m_file.empty()) m_file = path;
  m_model->sourceFiles.push_back(std::move(path));
}
void SchedBuilder::setMetadata(std::string key, std::string value) { m_model->metadata[std::move(key)] = std::move(value); }
void SchedBuilder::setTopology(Topology topology) { m_model->topology = std::move(topology); }
void SchedBuilder::setReplayInfo(ReplayInfo info) { m_model->replay = std::move(info); }
void SchedBuilder::setPartial(std::string reason) {
  if (!m_model->partial) m_model->partialReason = std::move(reason);
  m_model->partial = true;
}
Diagnostics& SchedBuilder::diagnostics() { return m_model->diagnostics; }

void SchedBuilder::recordDiagnostic(DiagCode code, std::string message, std::optional<int> cpu,
                                    std::optional<int64_t> ts) {
  DiagnosticRecord rec{code, m_file, std::nullopt, std::nullopt, cpu, ts, std::move(message)};
  if (m_line != 0) (m_positionIsLine ? rec.line : rec.byteOffset) = m_line;
  m_model->diagnostics.record(std::move(rec));
}

uint32_t SchedBuilder::eventType(std::string_view name) {
  std::string key(name);
  if (auto it = m_eventTypeIndex.find(key); it != m_eventTypeIndex.end()) return it->second;
  const auto id = static_cast<uint32_t>(m_eventTypeNames.size());
  m_eventTypeIndex.emplace(key, id);
  m_eventTypeNames.push_back(std::move(key));
  m_eventTypeCounts.push_back(0);
  return id;
}

SchedBuilder::CpuRt& SchedBuilder::cpuRt(int cpu) {
  if (static_cast<size_t>(cpu) >= m_cpus.size()) {
    m_cpus.resize(static_cast<size_t>(cpu) + 1);
    m_model->cpuSlices.resize(static_cast<size_t>(cpu) + 1);
  }
  return m_cpus[static_cast<size_t>(cpu)];
}

bool SchedBuilder::accept(EventContext& ctx) {
  if (ctx.cpu < 0 || ctx.cpu >= kMaxCpus) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "event on cpu %d ignored", ctx.cpu);
    recordDiagnostic(DiagCode::cpu_out_of_range, buf, ctx.cpu, ctx.ts);
    return false;
  }
  ++m_eventsSeen;
  CpuRt& c = cpuRt(ctx.cpu);
  // The importer's ordering stage (core::EventSorter, or a merge of per-CPU
  // streams) delivers in time order and clamps a CPU whose own clock runs
  // backwards against that CPU. What still runs backwards here is clamped too,
  // named by whether its own CPU or only another CPU was ahead: the state
  // machine and the tables need one time order.
  const bool cpuRegressed = c.seen && ctx.ts < c.lastTs;
  if (cpuRegressed) noteClamped(DiagCode::out_of_order_timestamp, ctx, c.lastTs);
  if (ctx.ts < m_lastTs) {
    if (cpuRegressed)
      ctx.ts = m_lastTs;
    else
      noteClamped(DiagCode::unsorted_input, ctx, m_lastTs);
  }
  const int64_t ts = ctx.ts;
  if (m_eventsSeen == 1) m_model->firstTs = ts;
  m_lastTs = std::max(m_lastTs, ts);
  if (!c.seen) {
    c.seen = true;
    c.unknownSince = ts;
  }
  c.lastTs = ts;
  ++c.events;
  c.ctxTsBefore = c.lastCtxTs;
  if (ctx.ctxTid >= 0) {
    // Every event names the task current on its CPU. One that names another
    // task than the model's current one proves a switch the trace lacks (some
    // kernels never trace some switches, e.g. out of the idle task of a CPU).
    if (c.sliceOpen && m_model->threads.tid[c.current.value] != ctx.ctxTid)
      inferSwitchIn(c, ctx.cpu, threadFor(ctx.ctxTid, {}, ts), ts);
    c.lastCtxTs = ts;
  }
  return true;
}

void SchedBuilder::onRepairedSwitch(EventContext ctx, int32_t nextTid, std::string_view nextComm, int32_t nextPrio,
                                    bool prevKeepsState) {
  ctx.ctxTid = -1;  // the switch itself, not an event in the next task's context
  if (!accept(ctx)) return;
  CpuRt& c = m_cpus[static_cast<size_t>(ctx.cpu)];
  const Utid next = threadFor(nextTid, nextComm, ctx.ts);
  notePrio(next, nextPrio);
  if (!c.sliceOpen) {
    // Nothing ran here to displace: an ordinary switch-in of what it names.
    setState(next, ctx.ts, TaskState::Running, ctx.cpu);
    openSlice(c, ctx.cpu, next, ctx.ts, kSliceStartInferred, false);
    return;
  }
  inferSwitchIn(c, ctx.cpu, next, ctx.ts, prevKeepsState);
  m_inferred.pop_back();  // placed already: the export wrote it where the estimate put it
}

void SchedBuilder::inferSwitchIn(CpuRt& c, int cpu, Utid u, int64_t ts, bool displacedKeepsState) {
  const Utid displaced = c.current;
  // It was not running here before the latest event that shows another task
  // current, nor before this CPU's slice began or its own last state change.
  // The slice start is a switch event on this CPU, so a bound of the local kind too.
  const int64_t local = std::max(c.sliceStart, c.ctxTsBefore);
  const int64_t wakeup = u != kIdleUtid ? m_threads[u.value].notRunningSince() : INT64_MIN;
  const int64_t lower = std::min(std::max(local, wakeup), ts);
  const BoundKind kind = boundKind(local, wakeup);
  const TaskState before = u != kIdleUtid ? m_threads[u.value].state : TaskState::Running;
  const bool unwoken = before != TaskState::Unknown && before != TaskState::Running && !isRunnable(before);
  char buf[160];
  StateRowRef displacedRow;
  if (displaced != kIdleUtid) {
    std::snprintf(buf, sizeof buf, "tid %d was running, but an event at %lld shows tid %d current",
                  m_model->threads.tid[displaced.value], static_cast<long long>(ts), m_model->threads.tid[u.value]);
    recordDiagnostic(DiagCode::mismatched_switch_prev_tid, buf, cpu, ts);
    closeSlice(c, cpu, ts, TaskState::Unknown, SliceEnd::Mismatch);
    // Its run here ends unseen, unless it runs elsewhere now. Not its last CPU
    // as the builder knows it: a migration (which only a task not running
    // gets, so its switch out was lost too) moved that, not the run.
    const ThreadRt& d = m_threads[displaced.value];
    const bool runsElsewhere = d.cpu != cpu && d.cpu >= 0 && static_cast<size_t>(d.cpu) < m_cpus.size() &&
                               m_cpus[static_cast<size_t>(d.cpu)].sliceOpen &&
                               m_cpus[static_cast<size_t>(d.cpu)].current == displaced;
    if (d.state == TaskState::Running && !runsElsewhere && !displacedKeepsState) {
      setState(displaced, ts, TaskState::Unknown, cpu);
      displacedRow = lastStateRow(displaced);
      ThreadRt& out = m_threads[displaced.value];
      out.untracedOutCpu = cpu;
      out.untracedOutSlice = static_cast<uint32_t>(m_model->cpuSlices[static_cast<size_t>(cpu)].size() - 1);
      out.untracedOutRow = static_cast<uint32_t>(m_stateDt.size() - 1);
    }
  } else {
    closeSlice(c, cpu, ts, TaskState::RunnablePreempted, SliceEnd::Mismatch);
  }
  const auto prevSlice = static_cast<uint32_t>(m_model->cpuSlices[static_cast<size_t>(cpu)].size() - 1);
  StateRowRef row;
  if (u != kIdleUtid) {
    ThreadRt& rt = m_threads[u.value];
    // Its CPU comes from the trace (a move's dest_cpu) and may lie past every CPU seen.
    if (rt.state == TaskState::Running && rt.cpu != cpu && rt.cpu >= 0 && static_cast<size_t>(rt.cpu) < m_cpus.size()) {
      // Its switch out of the other CPU is missing too: who runs there is unknown from here on.
      CpuRt& other = m_cpus[static_cast<size_t>(rt.cpu)];
      if (other.sliceOpen && other.current == u) {
        closeSlice(other, rt.cpu, ts, TaskState::Unknown, SliceEnd::Mismatch);
        other.unknownSince = ts;
      }
    }
    setState(u, ts, TaskState::Running, cpu);
    row = lastStateRow(u);
    m_inferredRunningRow = m_stateDt.size() - 1;  // a switch-out at this instant must not overwrite it: finalize() widens it
    m_threads[u.value].pendingWaking = kNoRow;
  }
  if (m_model->diagnostics.count(DiagCode::switch_in_inferred) < Diagnostics::kRecordsKeptPerCode) {
    std::snprintf(buf, sizeof buf, "tid %d found running without a traced switch-in; switch-in placed after %lld",
                  m_model->threads.tid[u.value], static_cast<long long>(lower));
    recordDiagnostic(DiagCode::switch_in_inferred, buf, cpu, ts);
  } else {
    m_model->diagnostics.add(DiagCode::switch_in_inferred);
  }
  openSlice(c, cpu, u, ts, kSliceStartInferred, false);
  m_inferred.push_back({cpu, prevSlice, row, displacedRow, lower, ts, kind, unwoken});
}

// A task replaced without a traced switch out, whose next state is `next`. A
// wakeup (Runnable) means it had blocked: wakeups are traced and a task that
// is still runnable gets none. Running again with no wakeup means it had been
// preempted. Some kernels never trace some tasks' switches out (Linux
// 6.18.44-fc: none of a guest agent's threads, 74 times in a two-CPU build).
// Whether it slept in S or D the trace cannot tell: S is assumed, and said.
void SchedBuilder::resolveUntracedSwitchOut(ThreadRt& rt, TaskState next) {
  const int cpu = std::exchange(rt.untracedOutCpu, -1);
  TaskState was;
  if (next == TaskState::Runnable)
    was = TaskState::Sleeping;
  else if (next == TaskState::Running || next == TaskState::RunnablePreempted)
    was = TaskState::RunnablePreempted;
  else
    return;  // it died, or slept again unseen: how it left stays unknown
  auto& slices = m_model->cpuSlices[static_cast<size_t>(cpu)];  // the Mismatch slice inferSwitchIn() closed
  slices.endState[rt.untracedOutSlice] = was;
  slices.flags[rt.untracedOutSlice] |= kSliceEndInferred;
  auto& states = m_model->threadStates.state;
  if (rt.untracedOutRow < states.size() && states[rt.untracedOutRow] == TaskState::Unknown) states[rt.untracedOutRow] = was;
  m_model->diagnostics.add(DiagCode::switch_out_state_inferred);
}

void SchedBuilder::DelaySamples::add(int64_t delay) {
  if (kept.size() == kMaxSwitchInDelaySamples) {
    // Keep every other sample and take half as many from here on: an even
    // spread over the whole trace in bounded memory.
    for (size_t k = 0; k < kept.size() / 2; ++k) kept[k] = kept[2 * k];
    kept.resize(kept.size() / 2);
    stride *= 2;
  }
  if (seen++ % stride == 0) kept.push_back(delay);
}

int64_t SchedBuilder::DelaySamples::median() {
  if (kept.empty()) return -1;
  auto mid = kept.begin() + static_cast<std::ptrdiff_t>(kept.size() / 2);
  std::nth_element(kept.begin(), mid, kept.end());
  return *mid;
}

// Estimator: the median, over this trace's traced switches from idle to a
// woken task whose lower bound is of the same kind, of the time from that
// bound (the later of the wakeup, the idle slice's start and the CPU's last
// event in another context) to the switch. With no such sample the switch-in
// stays at the first event that shows the task running (a lower bound of its
// run), and so it does for a task that was blocked with no traced wakeup: it
// was woken at some unknown point after it slept, and taking its sleep's start
// for a wakeup would give it the whole sleep as CPU time (perf.data of a
// cyclictest whose CPU's idle-context events were all missing: a thread
// asleep 99% of the time shown running 92%).
void SchedBuilder::placeInferredSwitchIns() {
  if (m_inferred.empty()) return;
  int64_t delay[kBoundKinds];
  std::string described;
  for (int k = 0; k < kBoundKinds; ++k) {
    delay[k] = m_switchInDelays[k].median();
    if (!described.empty()) described += "; ";
    described += k == kBoundLocalEvent ? "after an event of the CPU in another context: " : "after a remote wakeup: ";
    described += delay[k] < 0 ? std::string("none measured (kept at the first event)")
                              : std::to_string(delay[k]) + " ns, median of " +
                                    std::to_string(m_switchInDelays[k].seen) + " traced switches from idle";
  }
  const auto unwoken = std::count_if(m_inferred.begin(), m_inferred.end(), [](const InferredSwitchIn& r) { return r.unwoken; });
  if (unwoken)
    described += "; " + std::to_string(unwoken) + " of a blocked task with no traced wakeup kept at the first event";
  m_model->metadata["switch_in_inferred_delay"] = described;
  for (const InferredSwitchIn& r : m_inferred) {
    if (delay[r.kind] < 0 || r.unwoken) continue;
    auto& t = m_model->cpuSlices[static_cast<size_t>(r.cpu)];
    const size_t i = r.prevSlice + 1;
    if (i >= t.size() || t.ts[i] != r.firstSeen || !(t.flags[i] & kSliceStartInferred)) continue;
    const int64_t at = std::clamp(r.lowerBound + delay[r.kind], r.lowerBound, r.firstSeen);
    if (at == r.firstSeen || at < t.ts[r.prevSlice]) continue;
    t.dur.set(r.prevSlice, at - t.ts[r.prevSlice]);
    t.dur.set(i, t.dur[i] + r.firstSeen - at);
    t.ts.set(i, at);
    for (const StateRowRef& row : {r.running, r.displaced})
      if (row.ordinal != kNoRow) m_stateRowMoves.push_back({row, r.firstSeen, at});
    auto& startTs = m_model->threads.startTs[t.utid[i].value];
    startTs = std::min(startTs, at);
  }
  m_inferred.clear();
  m_inferred.shrink_to_fit();
  for (auto& samples : m_switchInDelays) samples = DelaySamples();
}

void SchedBuilder::noteClamped(DiagCode code, EventContext& ctx, int64_t to) {
  if (m_model->diagnostics.count(code) < Diagnostics::kRecordsKeptPerCode) {
    char buf[112];
    // Unsigned difference: a corrupt timestamp can be INT64_MIN-ish.
    std::snprintf(buf, sizeof buf, "timestamp %lld is %llu ns before the previous event%s; clamped to it",
                  static_cast<long long>(ctx.ts),
                  static_cast<unsigned long long>(static_cast<uint64_t>(to) - static_cast<uint64_t>(ctx.ts)),
                  code == DiagCode::out_of_order_timestamp ? " on its CPU" : " (on another CPU)");
    recordDiagnostic(code, buf, ctx.cpu, ctx.ts);
  } else {
    m_model->diagnostics.add(code);
  }
  ctx.ts = to;
}

void SchedBuilder::onOtherEvent(EventContext ctx) { accept(ctx); }

Utid SchedBuilder::newThread(int32_t tid, int64_t ts) {
  auto& t = m_model->threads;
  const Utid u(static_cast<uint32_t>(t.size()));
  t.tid.push_back(tid);
  t.tgid.push_back(-1);
  t.upid.push_back(Upid());
  t.comm.push_back(StringId(0));
  t.prio.push_back(kPrioUnknown);
  t.startTs.push_back(ts);
  t.endTs.push_back(ts);
  t.parent.push_back(Utid());
  t.flags.push_back(0);
  t.cookie.push_back(0);
  t.uclampMin.push_back(-1);
  t.uclampMax.push_back(-1);
  t.policy.push_back(TaskPolicy::Unknown);
  t.kernelRuntimeNs.push_back(-1);
  t.kernelRuntimeFromTs.push_back(0);
  t.kernelRuntimeUntilTs.push_back(0);
  t.affinity.emplace_back();
  t.autogroup.push_back(-1);
  t.autogroupNice.push_back(0);
  m_threads.emplace_back();
  if (m_tidToUtid.holds(tid)) {
    m_tidToUtid.at(tid) = u.value;
  } else {
    m_bigTidToUtid[tid] = u.value;
  }
  return u;
}

uint32_t SchedBuilder::latestRowOf(int32_t tid) const {
  if (m_tidToUtid.holds(tid)) return m_tidToUtid.get(tid);
  auto it = m_bigTidToUtid.find(tid);
  return it == m_bigTidToUtid.end() ? kNoRow : it->second;
}

Utid SchedBuilder::threadFor(int32_t tid, std::string_view comm, int64_t ts, bool* created) {
  if (tid == 0) return kIdleUtid;
  const uint32_t found = latestRowOf(tid);
  Utid u;
  if (found != kNoRow && !m_threads[found].dead) {
    u = Utid(found);
  } else {
    if (found != kNoRow) {
      // The task with this tid died and no fork announced a new one.
      recordDiagnostic(DiagCode::tid_reused_without_fork, "tid " + std::to_string(tid) + " seen again after it died",
                       std::nullopt, ts);
    }
    u = newThread(tid, ts);
    if (created) *created = true;
  }
  noteComm(u, comm, ts);
  return u;
}

namespace {
// Equality of two texts of n <= 16 bytes in at most four loads a side, each
// inside [p, p + n): a memcmp call per event cost more than the rest of noteComm().
bool sameShortText(const char* a, const char* b, size_t n) {
  const auto load8 = [](const char* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  const auto load4 = [](const char* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  if (n >= 8) return load8(a) == load8(b) && load8(a + n - 8) == load8(b + n - 8);
  if (n >= 4) return load4(a) == load4(b) && load4(a + n - 4) == load4(b + n - 4);
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}
}  // namespace

void SchedBuilder::noteComm(Utid u, std::string_view comm, int64_t ts) {
  if (comm.empty() || u == kIdleUtid) return;
  ThreadRt& rt = m_threads[u.value];
  if (rt.commLen == comm.size() && sameShortText(rt.commBytes, comm.data(), comm.size())) return;
  if (comm == kUnknownComm) return;
  auto& current = m_model->threads.comm[u.value];
  if (comm.size() <= sizeof rt.commBytes) {
    std::memcpy(rt.commBytes, comm.data(), comm.size());
    rt.commLen = static_cast<uint8_t>(comm.size());
  } else {
    rt.commLen = ThreadRt::kNoCommCopy;
  }
  if (m_model->strings.get(current) == comm) return;
  const StringId id = m_model->strings.intern(comm);
  if (current.value != 0) {
    m_model->commChanges.utid.push_back(u);
    m_model->commChanges.ts.push_back(ts);
    m_model->commChanges.comm.push_back(id);
  }
  current = id;
}

// -1 is a real prio (SCHED_DEADLINE tasks: MAX_DL_PRIO - 1), not "unknown".
void SchedBuilder::notePrio(Utid u, int32_t prio) {
  if (prio >= kPrioDeadline && prio < 140 && u != kIdleUtid)
    m_model->threads.prio[u.value] = static_cast<int16_t>(prio);
}

void SchedBuilder::setState(Utid u, int64_t ts, TaskState state, int cpu) {
  if (u == kIdleUtid) return;
  ThreadRt& rt = m_threads[u.value];
  if (rt.untracedOutCpu >= 0 && state != TaskState::Unknown) resolveUntracedSwitchOut(rt, state);
  rt.exitBlockCpu = -1;  // it lives on after blocking in do_exit()
  if (rt.state == state && (state != TaskState::Running || rt.cpu == cpu)) return;
  if (ts < rt.lastStateTs) ts = rt.lastStateTs;
  auto& s = m_model->threadStates;
  if (rt.lastStateTs == ts && !m_stateDt.empty() && m_stateUtid.back() == u.value &&
      m_stateDt.size() - 1 != m_inferredRunningRow) {
    // Two changes at the same instant: the later one wins, no zero-length row.
    s.state.back() = state;
    s.cpu.back() = static_cast<CpuId>(cpu < 0 ? 0 : cpu);
  } else {
    if (m_stateDt.size() >= m_prefaultMark) prefaultNextRows();
    // Unsigned: the first row's distance from INT64_MIN overflows int64_t.
    const uint64_t dt = static_cast<uint64_t>(ts) - static_cast<uint64_t>(rt.lastStateTs);
    if (rt.stateRows == 0 || dt >= static_cast<uint32_t>(kFarDt)) {
      m_stateDt.push_back(kFarDt);
      m_stateTsFar.push_back({u, ts});
    } else {
      m_stateDt.push_back(static_cast<int32_t>(static_cast<uint32_t>(dt)));
    }
    s.state.push_back(state);
    s.cpu.push_back(static_cast<CpuId>(cpu < 0 ? 0 : cpu));
    m_stateUtid.push_back(u);
    ++rt.stateRows;
  }
  rt.state = state;
  rt.lastStateTs = ts;
  if (cpu >= 0) {
    rt.cpu = static_cast<int16_t>(cpu);
    // Where it runs or is queued is seen; a sleep keeps where it was seen last.
    // A repair's Unknown (where it was last seen, not where it is: a move may
    // have been traced since) and a task seeded asleep at the trace's start (on
    // no CPU the trace names) say nothing a move could be inferred from.
    if (state == TaskState::Unknown) rt.cpuSeen = false;
    else if (state == TaskState::Running || isRunnable(state)) rt.cpuSeen = true;
  }
}

void SchedBuilder::prefaultNextRows() {
  // Ahead of the thread states, which grow fastest: every table this builder
  // fills row by row gets its next rows' pages; a CPU's slices grow with its
  // share of the switches, so each CPU gets its share of the rows.
  constexpr size_t kRows = 8192;
  auto& s = m_model->threadStates;
  growMapped(m_stateDt, 2 * kRows), growMapped(s.state, 2 * kRows), growMapped(s.cpu, 2 * kRows);
  if (m_stateUtid.isWide)
    growMapped(m_stateUtid.wide, 2 * kRows);
  else
    growMapped(m_stateUtid.narrow, 2 * kRows);
  auto& w = m_model->wakeups;
  growMapped(w.ts, kRows), growMapped(w.wakee, kRows), growMapped(w.waker, kRows);
  growMapped(w.targetCpu, kRows), growMapped(w.wakerCpu, kRows), growMapped(w.flags, kRows);
  const size_t perCpu = std::max<size_t>(kRows / std::max<size_t>(m_model->cpuSlices.size(), 1), 512);
  for (auto& t : m_model->cpuSlices) {
    growMapped(t.ts, perCpu), growMapped(t.dur, perCpu), growMapped(t.utid, perCpu);
    growMapped(t.prio, perCpu), growMapped(t.endState, perCpu), growMapped(t.endReason, perCpu);
    growMapped(t.kind, perCpu), growMapped(t.flags, perCpu);
  }
  m_prefaultMark = m_stateDt.size() + kRows;
}

void SchedBuilder::RowThreads::push_back(Utid u) {
  if (!isWide && u.value > UINT16_MAX) {
    wide.reserve(narrow.capacity());
    wide.assign(narrow.begin(), narrow.end());
    narrow = {};
    isWide = true;
  }
  if (isWide)
    wide.push_back(u.value);
  else
    narrow.push_back(static_cast<uint16_t>(u.value));
}

SchedBuilder::StateRowRef SchedBuilder::lastStateRow(Utid u) const {
  const uint32_t rows = m_threads[u.value].stateRows;
  return {u, rows ? rows - 1 : kNoRow};
}

void SchedBuilder::openSlice(CpuRt& c, int /*cpu*/, Utid u, int64_t ts, uint8_t flags, bool forcedIdle) {
  c.sliceOpen = true;
  c.current = u;
  c.sliceStart = ts;
  c.slicePrio = m_model->threads.prio[u.value];
  c.sliceFlags = flags;
  c.sliceForcedIdle = forcedIdle && u == kIdleUtid;
}

void SchedBuilder::closeSlice(CpuRt& c, int cpu, int64_t ts, TaskState endState, SliceEnd reason) {
  if (!c.sliceOpen) return;
  auto& t = m_model->cpuSlices[static_cast<size_t>(cpu)];
  t.ts.push_back(c.sliceStart);
  t.dur.push_back(ts - c.sliceStart);
  t.utid.push_back(c.current);
  t.prio.push_back(c.slicePrio);
  t.endState.push_back(endState);
  t.endReason.push_back(reason);
  t.kind.push_back(c.current == kIdleUtid ? (c.sliceForcedIdle ? SliceKind::ForcedIdle : SliceKind::Idle)
                                          : SliceKind::Task);
  t.flags.push_back(c.sliceFlags);
  c.sliceOpen = false;
}

void SchedBuilder::markDead(Utid u, int64_t ts) {
  m_threads[u.value].dead = true;
  m_model->threads.endTs[u.value] = ts;
  m_model->threads.flags[u.value] |= kThreadExited;
}

void SchedBuilder::killThread(Utid u, int64_t ts) {
  if (u == kIdleUtid) return;
  setState(u, ts, TaskState::Dead, m_threads[u.value].cpu);
  markDead(u, ts);
}

// A task that blocked after its exit and never ran again died at that block:
// the block's slice and state row say so now.
void SchedBuilder::endExitBlock(Utid u) {
  ThreadRt& rt = m_threads[u.value];
  auto& slices = m_model->cpuSlices[static_cast<size_t>(std::exchange(rt.exitBlockCpu, -1))];
  slices.endState[rt.exitBlockSlice] = TaskState::Dead;
  slices.endReason[rt.exitBlockSlice] = SliceEnd::Exited;
  m_model->threadStates.state[rt.exitBlockRow] = TaskState::Dead;
  rt.state = TaskState::Dead;
  markDead(u, rt.exitBlockTs);
}

void SchedBuilder::onSwitch(EventContext ctx, const SwitchArgs& a) {
  if (!accept(ctx)) return;
  const int64_t ts = ctx.ts;
  const int cpu = ctx.cpu;
  CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  const Utid prev = threadFor(a.prevTid, a.prevComm, ts);
  notePrio(prev, a.prevPrio);
  const Utid next = threadFor(a.nextTid, a.nextComm, ts);
  notePrio(next, a.nextPrio);

  TaskState endState = a.prevState;
  // An exiting task can still be preempted (R+) or block (S, D) inside
  // do_exit() and run again: only X or Z, the states exit_notify() sets, end
  // it, or a state the trace does not tell.
  const bool exiting = prev != kIdleUtid && m_threads[prev.value].exiting;
  if (exiting && endState == TaskState::Unknown) endState = TaskState::Dead;
  if (endState == TaskState::Unknown) {
    recordDiagnostic(DiagCode::unknown_prev_state, "prev_state of tid " + std::to_string(a.prevTid) + " not known",
                     cpu, ts);
    endState = TaskState::Sleeping;
  }
  const SliceEnd reason = endState == TaskState::Dead ? SliceEnd::Exited
                          : isRunnable(endState)      ? SliceEnd::Preempted
                                                      : SliceEnd::Blocked;

  // prev runs here; when the format does not name the current task, this is
  // the first sign of a switch-in the trace lacks.
  if (c.sliceOpen && c.current != prev) inferSwitchIn(c, cpu, prev, ts);
  if (c.sliceOpen && c.current == kIdleUtid && next != kIdleUtid &&
      isRunnable(m_threads[next.value].state)) {
    // A traced switch from idle to a woken task: a sample for placing inferred ones.
    const int64_t local = std::max(c.sliceStart, c.ctxTsBefore);
    const int64_t wakeup = m_threads[next.value].notRunningSince();
    const int64_t lower = std::max(local, wakeup);
    if (ts >= lower) m_switchInDelays[boundKind(local, wakeup)].add(ts - lower);
  }
  if (!c.sliceOpen && (c.unknownSince < ts || prev != kIdleUtid)) {
    // First switch on this CPU (or first after lost data or a mismatch): prev has
    // been running at least since the CPU's first event after the gap. Kept even
    // when that is this very event, so that the switch itself is counted.
    const int64_t since = c.unknownSince;
    if (prev != kIdleUtid && m_threads[prev.value].lastStateTs <= since) setState(prev, since, TaskState::Running, cpu);
    openSlice(c, cpu, prev, since, kSliceStartUnknown, false);
  }
  closeSlice(c, cpu, ts, endState, reason);
  if (endState == TaskState::Dead) {
    killThread(prev, ts);
  } else {
    setState(prev, ts, endState, cpu);
    if (exiting && !isRunnable(endState)) {
      ThreadRt& rt = m_threads[prev.value];
      rt.exitBlockCpu = cpu;
      rt.exitBlockSlice = static_cast<uint32_t>(m_model->cpuSlices[static_cast<size_t>(cpu)].size() - 1);
      rt.exitBlockRow = static_cast<uint32_t>(m_stateDt.size() - 1);
      rt.exitBlockTs = ts;
    }
  }

  if (next != kIdleUtid) {
    const TaskState before = m_threads[next.value].state;
    if (before != TaskState::Unknown && !isRunnable(before) && before != TaskState::Running)
      m_model->diagnostics.add(DiagCode::switch_in_not_runnable);
    m_threads[next.value].pendingWaking = kNoRow;
    inferMigration(next, ts, cpu);
  }
  setState(next, ts, TaskState::Running, cpu);
  openSlice(c, cpu, next, ts, 0, a.forcedIdle);
}

void SchedBuilder::wake(EventContext ctx, const WakeArgs& a, bool isWaking, bool isNew) {
  if (!accept(ctx)) return;
  const int64_t ts = ctx.ts;
  if (a.tid == 0) return;  // waking the idle task: meaningless, nothing to track
  bool created = false;
  const Utid u = threadFor(a.tid, a.comm, ts, &created);
  notePrio(u, a.prio);
  if (created && !isNew) m_model->diagnostics.add(DiagCode::wakeup_unknown_task);
  auto& w = m_model->wakeups;
  const CpuId target = static_cast<CpuId>(a.targetCpu >= 0 && a.targetCpu < kMaxCpus ? a.targetCpu : ctx.cpu);

  const uint32_t pending = m_threads[u.value].pendingWaking;
  const TaskState before = m_threads[u.value].state;
  // A waking that raced with the wakee's own switch-out (try_to_wake_up() found
  // it still on its CPU) had no effect then; its sched_wakeup, after the block,
  // is the wakeup that makes it runnable.
  const bool racedWithBlock = pending != kNoRow && (w.flags[pending] & kWakeupNoEffect) &&
                              before != TaskState::Running && !isRunnable(before);
  if (!isWaking && pending != kNoRow && !racedWithBlock) {
    // The sched_wakeup that completes an earlier sched_waking: one wakeup, not two.
    // Its CPU is the one select_task_rq() chose; the waking's, the one it left.
    inferMigration(u, ts, target);
    w.flags[pending] |= kWakeupHadWakeup;
    w.targetCpu[pending] = target;
    m_threads[u.value].pendingWaking = kNoRow;
    return;
  }

  int32_t wakerTid = ctx.ctxTid;
  if (wakerTid < 0) {
    const CpuRt& c = m_cpus[static_cast<size_t>(ctx.cpu)];
    wakerTid = c.sliceOpen ? m_model->threads.tid[c.current.value] : -1;
  }
  uint8_t flags = static_cast<uint8_t>((isWaking ? kWakeupHadWaking : kWakeupHadWakeup) | (isNew ? kWakeupNew : 0));
  Utid waker;
  if ((ctx.irq & (kCtxHardIrq | kCtxSoftIrq | kCtxNmi)) || wakerTid <= 0) {
    flags |= kWakeupFromIrq;
  } else {
    waker = threadFor(wakerTid, {}, ts);  // may grow m_threads: take references only after this
  }
  ThreadRt& rt = m_threads[u.value];
  const bool active = a.foundActive || rt.state == TaskState::Running || isRunnable(rt.state);
  if (active) {
    flags |= kWakeupNoEffect;
    m_model->diagnostics.add(DiagCode::wakeup_of_running_task);
  }
  const auto row = static_cast<uint32_t>(w.ts.size());
  w.ts.push_back(ts);
  w.wakee.push_back(u);
  w.waker.push_back(waker);
  w.targetCpu.push_back(target);
  w.wakerCpu.push_back(static_cast<CpuId>(ctx.cpu));
  w.flags.push_back(flags);
  rt.pendingWaking = isWaking ? row : kNoRow;
  if (isWaking && !active) {
    CpuRt& c = cpuRt(ctx.cpu);
    c.wakingEvent = c.events;
    c.wakingRow = row;
    c.wakingCtxTid = ctx.ctxTid;
  }
  if (!active) {
    // sched_waking names the CPU the wakee is on, sched_wakeup the one it is queued on now (a new
    // task's first wakeup places it: no CPU was seen for it before).
    inferMigration(u, ts, target);
    setState(u, ts, TaskState::Runnable, target);
  }
}

void SchedBuilder::onWaking(EventContext ctx, const WakeArgs& args) { wake(ctx, args, true, false); }
void SchedBuilder::onWakeup(EventContext ctx, const WakeArgs& args, bool isNew) {
  wake(ctx, args, false, isNew);
}

void SchedBuilder::onMigrate(EventContext ctx, int32_t tid, std::string_view comm, int32_t prio,
                             int32_t origCpu, int32_t destCpu) {
  if (!accept(ctx)) return;
  if (tid == 0 || destCpu < 0 || destCpu >= kMaxCpus) return;
  const Utid u = threadFor(tid, comm, ctx.ts);
  notePrio(u, prio);
  ThreadRt& rt = m_threads[u.value];
  if (rt.cpu >= 0 && origCpu != rt.cpu) m_model->diagnostics.add(DiagCode::migrate_wrong_cpu);
  // sched_waking names the CPU the wakee was on (task_cpu() before
  // select_task_rq()); a move traced right after it on the same CPU is where
  // that wakeup sends it, which a trace without sched_wakeup (Perfetto's
  // usual config) says nowhere else. A later move (an idle pull) is not.
  const CpuRt& c = cpuRt(ctx.cpu);
  auto& w = m_model->wakeups;
  const bool nextInItsContext = c.wakingEvent + 1 == c.events && (c.wakingCtxTid < 0 || ctx.ctxTid == c.wakingCtxTid);
  if (nextInItsContext && rt.pendingWaking == c.wakingRow && w.targetCpu[c.wakingRow] == origCpu)
    w.targetCpu[c.wakingRow] = static_cast<CpuId>(destCpu);
  addMigration(ctx.ts, u, std::clamp(origCpu, 0, kMaxCpus - 1), destCpu, 0);
  rt.cpu = static_cast<int16_t>(destCpu);
  rt.cpuSeen = true;
  rt.lastMoveTs = ctx.ts;
}

void SchedBuilder::addMigration(int64_t ts, Utid u, int origCpu, int destCpu, uint8_t flags) {
  auto& m = m_model->migrations;
  m.ts.push_back(ts);
  m.utid.push_back(u);
  m.origCpu.push_back(static_cast<CpuId>(origCpu));
  m.destCpu.push_back(static_cast<CpuId>(destCpu));
  m.flags.push_back(flags);
}

// Only set_task_cpu() moves a task, and it traces sched_migrate_task (a child
// placed at fork, before it ever ran, is not moved). A task seen on another CPU
// with no such event between was moved all the same: perf record traces none of
// its own moves, and a trace without the event (or with lost events) none at all.
void SchedBuilder::inferMigration(Utid u, int64_t ts, int cpu) {
  ThreadRt& rt = m_threads[u.value];
  if (!rt.cpuSeen || rt.cpu < 0 || rt.cpu == cpu) return;
  addMigration(ts, u, rt.cpu, cpu, kMigrationInferred);
  m_model->diagnostics.add(DiagCode::migration_inferred);
  rt.cpu = static_cast<int16_t>(cpu);
}

void SchedBuilder::onFork(EventContext ctx, int32_t parentTid, std::string_view parentComm, int32_t childTid,
                          std::string_view childComm, int32_t childTgid) {
  if (!accept(ctx)) return;
  const int64_t ts = ctx.ts;
  const Utid parent = threadFor(parentTid, parentComm, ts);
  if (childTid <= 0) return;
  const uint32_t existing = latestRowOf(childTid);
  if (existing != kNoRow && m_threads[existing].exitBlockCpu >= 0) {
    endExitBlock(Utid(existing));
  } else if (existing != kNoRow && !m_threads[existing].dead) {
    m_model->diagnostics.add(DiagCode::fork_of_existing_tid);
    killThread(Utid(existing), ts);
  }
  const Utid child = newThread(childTid, ts);
  auto& t = m_model->threads;
  t.parent[child.value] = parent;
  t.flags[child.value] |= kThreadForked;
  t.prio[child.value] = t.prio[parent.value];
  t.cookie[child.value] = t.cookie[parent.value];  // prctl cookies are inherited across fork
  t.uclampMin[child.value] = t.uclampMin[parent.value];
  t.uclampMax[child.value] = t.uclampMax[parent.value];
  t.policy[child.value] = t.policy[parent.value];  // fork keeps policy and cpus_allowed
  t.affinity[child.value] = t.affinity[parent.value];
  if (childTgid >= 0) t.tgid[child.value] = childTgid;
  noteComm(child, childComm.empty() ? m_model->strings.get(t.comm[parent.value]) : childComm, ts);
  m_threads[child.value].cpu = static_cast<int16_t>(ctx.cpu);
  auto& e = m_model->taskEvents;
  e.ts.push_back(ts);
  e.kind.push_back(TaskEventKind::Fork);
  e.utid.push_back(parent);
  e.other.push_back(child);
  e.text.push_back(StringId());
}

void SchedBuilder::onExec(EventContext ctx, int32_t tid, int32_t /*oldTid*/, std::string_view filename) {
  if (!accept(ctx)) return;
  const Utid u = threadFor(tid, {}, ctx.ts);
  auto& e = m_model->taskEvents;
  e.ts.push_back(ctx.ts);
  e.kind.push_back(TaskEventKind::Exec);
  e.utid.push_back(u);
  e.other.push_back(Utid());
  e.text.push_back(m_model->strings.intern(filename));
  // The comm becomes the file's base name (TASK_COMM_LEN-1 bytes); later events confirm it.
  std::string_view base = filename.substr(filename.find_last_of('/') + 1);
  noteComm(u, base.substr(0, 15), ctx.ts);
}

void SchedBuilder::onExit(EventContext ctx, int32_t tid, std::string_view comm, int32_t prio) {
  if (!accept(ctx)) return;
  if (tid == 0) return;
  const Utid u = threadFor(tid, comm, ctx.ts);
  notePrio(u, prio);
  m_threads[u.value].exiting = true;
  auto& e = m_model->taskEvents;
  e.ts.push_back(ctx.ts);
  e.kind.push_back(TaskEventKind::Exit);
  e.utid.push_back(u);
  e.other.push_back(Utid());
  e.text.push_back(StringId());
  // A task that exits while not on a CPU (never switched out afterwards) is dead now.
  // One the model has as runnable is really running (sched_process_exit fires in
  // its own context; its switch-in was lost): its final switch-out ends it.
  const TaskState st = m_threads[u.value].state;
  if (st != TaskState::Running && !isRunnable(st)) killThread(u, ctx.ts);
}

void SchedBuilder::onRename(EventContext ctx, int32_t tid, std::string_view newComm) {
  if (!accept(ctx)) return;
  if (tid == 0) return;
  const Utid u = threadFor(tid, {}, ctx.ts);
  noteComm(u, newComm, ctx.ts);
}

void SchedBuilder::onTaskInfo(int32_t tid, int32_t tgid, std::string_view comm) {
  if (tid <= 0) return;
  const int64_t ts = m_eventsSeen ? m_lastTs : 0;
  const Utid u = threadFor(tid, {}, ts);
  if (tgid > 0) m_model->threads.tgid[u.value] = tgid;
  // Out-of-band names (saved cmdlines) describe the task as the tracer last knew it;
  // they must not override what the events themselves say.
  if (m_model->threads.comm[u.value].value == 0) noteComm(u, comm, ts);
}

void SchedBuilder::onTaskStateSeed(int64_t ts, int32_t tid, TaskState state, int32_t cpu) {
  if (tid <= 0) return;
  const Utid u = threadFor(tid, {}, ts);
  if (m_threads[u.value].state == TaskState::Unknown) setState(u, ts, state, cpu);
}

void SchedBuilder::onDataLoss(int32_t cpu, int64_t ts, int64_t count) {
  auto& d = m_model->dataLoss;
  m_model->diagnostics.add(DiagCode::lost_event_ranges);
  if (count > 0) m_model->diagnostics.add(DiagCode::lost_events, static_cast<uint64_t>(count));
  if (cpu < 0 || cpu >= kMaxCpus) {
    d.cpu.push_back(-1);
    d.tsBegin.push_back(m_eventsSeen ? m_lastTs : ts);
    d.tsEnd.push_back(std::max(ts, m_eventsSeen ? m_lastTs : ts));
    d.count.push_back(count);
    return;
  }
  CpuRt& c = cpuRt(cpu);
  const int64_t begin = c.seen ? c.lastTs : (m_eventsSeen ? m_model->firstTs : ts);
  const int64_t end = std::max(begin, ts);
  d.cpu.push_back(cpu);
  d.tsBegin.push_back(begin);
  d.tsEnd.push_back(end);
  d.count.push_back(count);
  if (c.sliceOpen) {
    const Utid running = c.current;
    closeSlice(c, cpu, begin, TaskState::Unknown, SliceEnd::DataLoss);
    setState(running, begin, TaskState::Unknown, cpu);
  }
  if (end > begin) {
    auto& t = m_model->cpuSlices[static_cast<size_t>(cpu)];
    t.ts.push_back(begin);
    t.dur.push_back(end - begin);
    t.utid.push_back(kIdleUtid);
    t.prio.push_back(kPrioUnknown);
    t.endState.push_back(TaskState::Unknown);
    t.endReason.push_back(SliceEnd::DataLoss);
    t.kind.push_back(SliceKind::Lost);
    t.flags.push_back(0);
  }
  c.seen = true;
  c.unknownSince = end;
  c.lastTs = end;
}

void SchedBuilder::settleLostCount(int32_t cpu, int64_t totalLost) {
  auto& d = m_model->dataLoss;
  int64_t counted = 0;
  size_t uncounted = 0;
  size_t uncountedRow = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if (d.cpu[i] != cpu) continue;
    if (d.count[i] > 0) counted += d.count[i];
    if (d.count[i] < 0) {
      ++uncounted;
      uncountedRow = i;
    }
  }
  if (uncounted != 1 || totalLost <= counted) return;
  d.count[uncountedRow] = totalLost - counted;
  m_model->diagnostics.add(DiagCode::lost_events, static_cast<uint64_t>(totalLost - counted));
}

size_t SchedBuilder::settleLostCountBetween(int32_t cpu, int64_t after, int64_t upTo, int64_t count) {
  auto& d = m_model->dataLoss;
  size_t uncounted = 0;
  size_t row = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if (d.cpu[i] != cpu || d.count[i] >= 0 || d.tsEnd[i] <= after || d.tsEnd[i] > upTo) continue;
    ++uncounted;
    row = i;
  }
  if (uncounted != 1 || count <= 0) return uncounted;
  d.count[row] = count;
  m_model->diagnostics.add(DiagCode::lost_events, static_cast<uint64_t>(count));
  return 1;
}

void SchedBuilder::onRuntimeStat(EventContext ctx, int32_t tid, int64_t runtimeNs) {
  if (!accept(ctx)) return;
  if (tid <= 0 || runtimeNs < 0) return;
  const Utid u = threadFor(tid, {}, ctx.ts);
  auto& t = m_model->threads;
  if (t.kernelRuntimeNs[u.value] < 0) {
    // The first one may account time from before the trace began.
    const int64_t inTrace = std::min(runtimeNs, ctx.ts - m_model->firstTs);
    t.kernelRuntimeNs[u.value] = inTrace;
    t.kernelRuntimeFromTs[u.value] = ctx.ts - inTrace;
  } else {
    t.kernelRuntimeNs[u.value] += runtimeNs;
  }
  t.kernelRuntimeUntilTs[u.value] = ctx.ts;
}

void SchedBuilder::onCounter(CounterKind kind, int32_t index, int64_t ts, double value) {
  onCounter(CounterTrack{kind, index}, ts, value);
}

void SchedBuilder::onCounter(const CounterTrack& t, int64_t ts, double value) {
  auto& ct = m_model->counters;
  const CounterTrackKey key{t.kind, t.scope, t.index, t.name.value};
  auto [it, added] = m_counterTrackIndex.try_emplace(key, static_cast<uint32_t>(ct.tracks.size()));
  if (added) ct.tracks.push_back(t);
  ct.ts.push_back(ts);
  ct.value.push_back(value);
  m_counterTrackOfRow.push_back(it->second);
}

bool SchedBuilder::acceptPowerCpu(EventContext& ctx, int32_t cpu) {
  if (!accept(ctx)) return false;
  if (cpu >= 0 && cpu < kMaxCpus) return true;
  char buf[80];
  std::snprintf(buf, sizeof buf, "power event about cpu %d ignored", cpu);
  recordDiagnostic(DiagCode::cpu_out_of_range, buf, ctx.cpu, ctx.ts);
  return false;
}

void SchedBuilder::onCpuFrequency(EventContext ctx, int32_t cpu, int64_t khz) {
  if (!acceptPowerCpu(ctx, cpu)) return;
  onCounter(CounterTrack{CounterKind::CpuFrequencyKhz, cpu}, ctx.ts, static_cast<double>(khz));
}

void SchedBuilder::onCpuFrequencyLimits(EventContext ctx, int32_t cpu, int64_t minKhz, int64_t maxKhz) {
  if (!acceptPowerCpu(ctx, cpu)) return;
  onCounter(CounterTrack{CounterKind::CpuFrequencyMinKhz, cpu}, ctx.ts, static_cast<double>(minKhz));
  onCounter(CounterTrack{CounterKind::CpuFrequencyMaxKhz, cpu}, ctx.ts, static_cast<double>(maxKhz));
}

void SchedBuilder::onCpuIdle(EventContext ctx, int32_t cpu, int64_t state) {
  if (!acceptPowerCpu(ctx, cpu)) return;
  onCounter(CounterTrack{CounterKind::CpuIdleState, cpu}, ctx.ts, static_cast<double>(state));
}

void SchedBuilder::onPelt(EventContext ctx, CounterKind kind, int32_t cpu, int32_t tid, std::string_view comm,
                          int64_t value) {
  if (!acceptPowerCpu(ctx, cpu)) return;
  if (tid < 0) {
    onCounter(CounterTrack{kind, cpu}, ctx.ts, static_cast<double>(value));
    return;
  }
  const Utid u = threadFor(tid, comm, ctx.ts);
  onCounter(CounterTrack{kind, static_cast<int32_t>(u.value), CounterScope::Task}, ctx.ts, static_cast<double>(value));
}

uint32_t SchedBuilder::addUserSlice(int64_t ts, Utid u, std::string_view name, uint8_t depth, UserSliceKind kind) {
  auto& us = m_model->userSlices;
  const auto row = static_cast<uint32_t>(us.ts.size());
  us.ts.push_back(ts);
  us.dur.push_back(kind == UserSliceKind::Instant ? 0 : -1);
  us.utid.push_back(u);
  us.name.push_back(m_model->strings.intern(name));
  us.depth.push_back(depth);
  us.kind.push_back(kind);
  us.flags.push_back(0);
  return row;
}

void SchedBuilder::onUserMark(EventContext ctx, int32_t tid, std::string_view text) {
  if (!accept(ctx)) return;
  const int64_t ts = ctx.ts;
  if (ctx.ctxTid >= 0) tid = ctx.ctxTid;
  // devlib (lisa's target library) writes each CPU's frequency when tracing
  // starts, in cpu_frequency's own print format: "cpu_frequency_devlib:" since
  // 2019, "cpu_frequency:" before (lisa/example_rtapp).
  static constexpr std::string_view kDevlibFrequency[] = {"cpu_frequency_devlib:", "cpu_frequency:"};
  const auto devlib = std::find_if(std::begin(kDevlibFrequency), std::end(kDevlibFrequency),
                                   [&](std::string_view prefix) { return text.starts_with(prefix); });
  if (devlib != std::end(kDevlibFrequency)) {
    const TextFields fields(text.substr(devlib->size()));
    const auto khz = fields.number("state");
    const auto cpu = fields.number("cpu_id");
    if (khz && cpu && *cpu >= 0 && *cpu < kMaxCpus)
      onCounter(CounterTrack{CounterKind::CpuFrequencyKhz, static_cast<int32_t>(*cpu)}, ts, static_cast<double>(*khz));
    return;
  }
  // systrace's clock alignment between trace_marker and the app clocks; no user event.
  if (text.substr(0, 23) == "trace_event_clock_sync:") return;
  const AtraceMarker m = parseAtraceMarker(text);
  if (m.type == AtraceMarker::Type::Plain && m.name.empty()) return;
  const Utid u = threadFor(tid, {}, ts);
  if (m.tgid > 0 && m_model->threads.tgid[u.value] <= 0) m_model->threads.tgid[u.value] = m.tgid;
  auto& us = m_model->userSlices;
  switch (m.type) {
    case AtraceMarker::Type::Begin: {
      auto& open = m_openUserSlices[u.value];
      open.push_back(addUserSlice(ts, u, m.name, static_cast<uint8_t>(std::min<size_t>(open.size(), 255)),
                                  UserSliceKind::Sync));
      break;
    }
    case AtraceMarker::Type::End: {
      auto it = m_openUserSlices.find(u.value);
      if (it == m_openUserSlices.end() || it->second.empty()) {
        m_model->diagnostics.add(DiagCode::user_slice_end_unmatched);
        break;
      }
      const uint32_t row = it->second.back();
      it->second.pop_back();
      us.dur[row] = ts - us.ts[row];
      break;
    }
    case AtraceMarker::Type::AsyncBegin: {
      const AsyncKey key{m.tgid, m_model->strings.intern(m.name).value, m.cookie};
      if (m_openAsyncSlices.count(key)) break;  // a second begin of the same cookie: the first stands
      // Its lane: the first one no async slice of its process open now is in
      // (the last lane takes the rest). Counts, not a scan of the open slices:
      // a trace may leave thousands open.
      auto& laneUse = m_asyncLaneUse[m.tgid];
      uint8_t lane = 0;
      while (lane < laneUse.size() - 1 && laneUse[lane]) ++lane;
      ++laneUse[lane];
      m_openAsyncSlices.emplace(key, addUserSlice(ts, u, m.name, lane, UserSliceKind::Async));
      break;
    }
    case AtraceMarker::Type::AsyncEnd: {
      const AsyncKey key{m.tgid, m_model->strings.intern(m.name).value, m.cookie};
      auto it = m_openAsyncSlices.find(key);
      if (it == m_openAsyncSlices.end()) {
        m_model->diagnostics.add(DiagCode::user_slice_end_unmatched);
        break;
      }
      const uint32_t row = it->second;
      m_openAsyncSlices.erase(it);
      us.dur[row] = ts - us.ts[row];
      --m_asyncLaneUse[m.tgid][us.depth[row]];
      break;
    }
    case AtraceMarker::Type::Counter:
      onCounter(CounterTrack{CounterKind::User, m.tgid, CounterScope::Process, m_model->strings.intern(m.name)}, ts,
                m.value);
      break;
    case AtraceMarker::Type::Instant:
    case AtraceMarker::Type::Plain: addUserSlice(ts, u, m.name, 0, UserSliceKind::Instant); break;
  }
}

void SchedBuilder::onIdleKind(EventContext ctx, bool forcedIdle) {
  if (!accept(ctx)) return;
  CpuRt& c = m_cpus[static_cast<size_t>(ctx.cpu)];
  if (c.sliceOpen && (c.current != kIdleUtid || c.sliceForcedIdle == forcedIdle)) return;
  if (c.sliceOpen) {
    if (ctx.ts == c.sliceStart) {  // no zero-length slice: the new kind starts with it
      c.sliceForcedIdle = forcedIdle;
      return;
    }
    closeSlice(c, ctx.cpu, ctx.ts, TaskState::RunnablePreempted, SliceEnd::Preempted);
  }
  openSlice(c, ctx.cpu, kIdleUtid, ctx.ts, c.sliceOpen ? 0 : kSliceStartUnknown, forcedIdle);
}

void SchedBuilder::setTaskAttributes(int32_t tid, uint32_t cookie, int16_t uclampMin, int16_t uclampMax) {
  const Utid u = threadFor(tid, {}, m_eventsSeen ? m_lastTs : 0);
  auto& t = m_model->threads;
  t.cookie[u.value] = cookie;
  t.uclampMin[u.value] = uclampMin;
  t.uclampMax[u.value] = uclampMax;
}

void SchedBuilder::setTaskPolicy(int32_t tid, TaskPolicy policy, std::vector<CpuId> affinity) {
  const Utid u = threadFor(tid, {}, m_eventsSeen ? m_lastTs : 0);
  m_model->threads.policy[u.value] = policy;
  m_model->threads.affinity[u.value] = std::move(affinity);
}

std::shared_ptr<TraceModel> SchedBuilder::finalize() {
  TraceModel& m = *m_model;
  const int64_t end = m_eventsSeen ? m_lastTs : 0;
  m.lastTs = end;
  if (!m_eventsSeen) m.firstTs = 0;

  // Whatever still runs, runs until the trace ends.
  uint64_t open = 0;
  for (size_t cpu = 0; cpu < m_cpus.size(); ++cpu) {
    CpuRt& c = m_cpus[cpu];
    if (c.sliceOpen) {
      ++open;
      closeSlice(c, static_cast<int>(cpu), end, TaskState::Running, SliceEnd::TraceEnd);
    }
  }
  if (open) m.diagnostics.add(DiagCode::slice_open_at_end, open);
  for (size_t u = 1; u < m_threads.size(); ++u)
    if (m_threads[u].exitBlockCpu >= 0) endExitBlock(Utid(static_cast<uint32_t>(u)));
  placeInferredSwitchIns();
  checkKernelRuntime(m);
  for (size_t u = 1; u < m.threads.size(); ++u)
    if (!m_threads[u].dead) m.threads.endTs[u] = end;

  // Thread states: partition by utid (stable, so each thread's rows stay in time order).
  {
    auto& s = m.threadStates;
    if (m_stateUtid.isWide)
      partitionInPlace(m_stateUtid.wide, m.threads.size(), s.rowsBegin, m_stateDt, s.state, s.cpu);
    else
      partitionInPlace(m_stateUtid.narrow, m.threads.size(), s.rowsBegin, m_stateDt, s.state, s.cpu);
    m_stateUtid = {};
    // Each thread's far times, in its rows' order.
    std::stable_sort(m_stateTsFar.begin(), m_stateTsFar.end(),
                     [](const FarTime& a, const FarTime& b) { return a.thread.value < b.thread.value; });
    auto far = m_stateTsFar.begin();
    int64_t ts = 0;  // each thread's first row is far: nothing carries over between threads
    s.ts.adopt(std::move(m_stateDt), [&](int32_t dt) {
      return ts = dt == kFarDt ? (far++)->ts : ts + static_cast<uint32_t>(dt);
    });
    m_stateTsFar = {};
    for (const StateRowMove& move : m_stateRowMoves) {
      const size_t row = s.rowsBegin[move.row.thread.value] + move.row.ordinal;
      if (s.ts[row] == move.from) s.ts.set(row, move.to);
    }
    m_stateRowMoves = {};
  }
  // Wakeups: per-wakee index.
  {
    auto& w = m.wakeups;
    w.byWakee = partitionRows(
        w.ts.size(), m.threads.size(), [&](size_t i) { return w.wakee[i].value; }, w.byWakeeBegin);
  }
  // User slices: what is still open runs to the end; then by thread (stable: each thread's rows stay in time order).
  {
    auto& us = m.userSlices;
    uint64_t openAtEnd = 0;
    for (size_t r = 0; r < us.size(); ++r)
      if (us.dur[r] < 0) {
        us.dur[r] = std::max<int64_t>(0, end - us.ts[r]);
        us.flags[r] |= kUserSliceOpenAtEnd;
        ++openAtEnd;
      }
    if (openAtEnd) m.diagnostics.add(DiagCode::user_slice_open_at_end, openAtEnd);
    // The key is read before any column moves: the scatter swaps them in at its end.
    scatterByKey(
        us.size(), m.threads.size(), [&](size_t i) { return us.utid[i].value; }, us.rowsBegin, us.ts, us.dur, us.utid,
        us.name, us.depth, us.kind, us.flags);
    m_openUserSlices.clear();
    m_openAsyncSlices.clear();
    m_asyncLaneUse.clear();
  }
  // Counters: contiguous rows per track.
  {
    auto& ct = m.counters;
    scatterByKey(
        ct.ts.size(), ct.tracks.size(), [&](size_t i) { return m_counterTrackOfRow[i]; }, ct.rowsBegin, ct.ts,
        ct.value);
  }
  // Processes: one per tgid lifetime; a tgid whose leader died and came back is a new process.
  {
    std::map<int32_t, std::pair<uint32_t, uint32_t>> live;  // tgid -> (upid, leader utid)
    for (size_t u = 1; u < m.threads.size(); ++u) {
      const int32_t tgid = m.threads.tgid[u];
      if (tgid <= 0) continue;
      auto it = live.find(tgid);
      const bool isLeader = m.threads.tid[u] == tgid;
      if (it == live.end() || (isLeader && it->second.second != UINT32_MAX &&
                               (m.threads.flags[it->second.second] & kThreadExited) &&
                               m.threads.endTs[it->second.second] <= m.threads.startTs[u])) {
        const auto upid = static_cast<uint32_t>(m.processes.size());
        m.processes.tgid.push_back(tgid);
        m.processes.name.push_back(m.threads.comm[u]);
        it = live.insert_or_assign(tgid, std::make_pair(upid, isLeader ? static_cast<uint32_t>(u) : UINT32_MAX)).first;
      } else if (isLeader && it->second.second == UINT32_MAX) {
        it->second.second = static_cast<uint32_t>(u);
        m.processes.name[it->second.first] = m.threads.comm[u];
      }
      m.threads.upid[u] = Upid(it->second.first);
    }
  }
  // Event counts, by name.
  for (size_t i = 0; i < m_eventTypeNames.size(); ++i)
    if (m_eventTypeCounts[i]) {
      m.eventCounts.emplace_back(m_eventTypeNames[i], m_eventTypeCounts[i]);
      m.eventCount += m_eventTypeCounts[i];
    }
  std::sort(m.eventCounts.begin(), m.eventCounts.end());

  if (m.topology.empty())
    m.topology = Topology::flat(std::max(1, m.cpuCount()), "default");
  else
    m.topology.extendTo(m.cpuCount());
  if (m.cpuCount() < m.topology.cpuLimit()) m.cpuSlices.resize(static_cast<size_t>(m.topology.cpuLimit()));

  for (auto& t : m.cpuSlices) {
    shrink(t.ts), shrink(t.dur), shrink(t.utid), shrink(t.prio), shrink(t.endState), shrink(t.endReason),
        shrink(t.kind), shrink(t.flags);
  }
  shrink(m.threadStates.ts), shrink(m.threadStates.state), shrink(m.threadStates.cpu);
  shrink(m.wakeups.ts), shrink(m.wakeups.wakee), shrink(m.wakeups.waker), shrink(m.wakeups.targetCpu),
      shrink(m.wakeups.wakerCpu), shrink(m.wakeups.flags);
  shrink(m.migrations.ts), shrink(m.migrations.utid), shrink(m.migrations.origCpu), shrink(m.migrations.destCpu);
  shrink(m.migrations.flags);
  m_threads.clear();
  m_cpus.clear();
  auto out = std::move(m_model);
  m_model = std::make_shared<TraceModel>();
  return out;
}

}  // namespace core
