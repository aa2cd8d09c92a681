#include "core/trace_model.h"

#include <algorithm>

namespace core {

std::string_view toString(SliceKind kind) {
  switch (kind) {
    case SliceKind::Task: return "task";
    case SliceKind::Idle: return "idle";
    case SliceKind::ForcedIdle: return "forced idle";
    case SliceKind::Lost: return "lost data";
  }
  return "?";
}

std::string_view toString(SliceEnd end) {
  switch (end) {
    case SliceEnd::Preempted: return "preempted";
    case SliceEnd::Blocked: return "blocked";
    case SliceEnd::Exited: return "exited";
    case SliceEnd::TraceEnd: return "trace end";
    case SliceEnd::DataLoss: return "data loss";
    case SliceEnd::Mismatch: return "mismatched switch";
  }
  return "?";
}

SliceEnd switchOutOf(const CpuSliceTable& slices, size_t i) {
  const SliceEnd reason = slices.endReason[i];
  if (reason != SliceEnd::Mismatch || !(slices.flags[i] & kSliceEndInferred)) return reason;
  return slices.endState[i] == TaskState::RunnablePreempted ? SliceEnd::Preempted : SliceEnd::Blocked;
}

std::string describeSliceEnd(const CpuSliceTable& slices, size_t i) {
  std::string text(toString(slices.endReason[i]));
  const SliceEnd out = switchOutOf(slices, i);
  if (slices.endReason[i] == SliceEnd::Blocked)
    text += " (" + std::string(toString(slices.endState[i])) + ")";
  else if (out != slices.endReason[i])
    text += ", then " + std::string(toString(out)) +
            (out == SliceEnd::Preempted ? " (inferred: it ran again unwoken)" : " (inferred: it was woken next)");
  return text;
}

SchedClass schedClassOf(int prio, TaskPolicy policy) {
  switch (policy) {
    case TaskPolicy::Deadline: return SchedClass::Deadline;
    case TaskPolicy::Fifo:
    case TaskPolicy::RR: return SchedClass::RealTime;
    case TaskPolicy::Idle: return SchedClass::Idle;
    case TaskPolicy::Normal:
    case TaskPolicy::Batch:
    case TaskPolicy::Iso: return SchedClass::Fair;  // a known policy outlasts a PI boost seen in the prio
    case TaskPolicy::Unknown: break;
  }
  if (prio == kPrioUnknown) return SchedClass::Fair;
  if (prio < 0) return SchedClass::Deadline;
  return prio < 100 ? SchedClass::RealTime : SchedClass::Fair;
}

std::string_view toString(SchedClass c) {
  switch (c) {
    case SchedClass::Deadline: return "deadline";
    case SchedClass::RealTime: return "rt";
    case SchedClass::Fair: return "fair";
    case SchedClass::Idle: return "idle";
  }
  return "?";
}

std::string_view toString(CounterKind kind) {
  switch (kind) {
    case CounterKind::CpuFrequencyKhz: return "cpu_frequency_khz";
    case CounterKind::NrRunning: return "nr_running";
    case CounterKind::UclampMin: return "uclamp_min";
    case CounterKind::UclampMax: return "uclamp_max";
    case CounterKind::Utilisation: return "util";
    case CounterKind::CpuIdleState: return "cpu_idle_state";
    case CounterKind::CpuFrequencyMinKhz: return "cpu_frequency_min_khz";
    case CounterKind::CpuFrequencyMaxKhz: return "cpu_frequency_max_khz";
    case CounterKind::PeltLoad: return "load";
    case CounterKind::PeltRunnable: return "runnable";
    case CounterKind::UtilEstEnqueued: return "util_est_enqueued";
    case CounterKind::UtilEstEwma: return "util_est_ewma";
    case CounterKind::UtilRt: return "util_rt";
    case CounterKind::UtilDl: return "util_dl";
    case CounterKind::UtilIrq: return "util_irq";
    case CounterKind::User: return "user";
  }
  return "?";
}

size_t CounterTable::find(CounterKind kind, int32_t index, CounterScope scope) const {
  for (size_t k = 0; k < tracks.size(); ++k)
    if (tracks[k].kind == kind && tracks[k].index == index && tracks[k].scope == scope) return k;
  return SIZE_MAX;
}

std::span<const uint32_t> TraceModel::wakeupsOf(Utid u) const {
  if (u.value + 1 >= wakeups.byWakeeBegin.size()) return {};
  const uint32_t b = wakeups.byWakeeBegin[u.value];
  const uint32_t e = wakeups.byWakeeBegin[u.value + 1];
  return std::span<const uint32_t>(wakeups.byWakee).subspan(b, e - b);
}

Utid TraceModel::threadOfStateRow(uint32_t row) const {
  const auto& b = threadStates.rowsBegin;
  const auto it = std::upper_bound(b.begin(), b.end(), row);
  return Utid(static_cast<uint32_t>(it - b.begin() - 1));
}

int64_t TraceModel::stateEnd(uint32_t row) const {
  const Utid u = threadOfStateRow(row);
  if (row + 1 < threadStates.rowsBegin[u.value + 1]) return threadStates.ts[row + 1];
  return std::max(threadStates.ts[row], threads.endTs[u.value]);
}

std::optional<uint32_t> TraceModel::stateRowBefore(Utid u, int64_t ts) const {
  const auto [first, last] = stateRowsOf(u);
  const auto begin = threadStates.ts.begin();
  const auto row = static_cast<uint32_t>(std::lower_bound(begin + first, begin + last, ts) - begin);
  if (row == first) return std::nullopt;
  return row - 1;
}

int64_t TraceModel::lostEvents() const {
  int64_t total = 0;
  for (int64_t c : dataLoss.count) total += std::max<int64_t>(c, 0);
  return total;
}

size_t TraceModel::lostRangesOfUnknownCount() const {
  return static_cast<size_t>(std::count_if(dataLoss.count.begin(), dataLoss.count.end(), [](int64_t c) { return c < 0; }));
}

uint64_t TraceModel::sliceCount() const {
  uint64_t n = 0;
  for (const auto& t : cpuSlices) n += t.size();
  return n;
}

namespace {
template <typename T>
size_t bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
size_t bytes(const TimeColumn& c) { return c.memoryBytes(); }
}  // namespace

size_t TraceModel::memoryBytes() const {
  size_t n = strings.memoryBytes();
  for (const auto& t : cpuSlices)
    n += bytes(t.ts) + bytes(t.dur) + bytes(t.utid) + bytes(t.prio) + bytes(t.endState) + bytes(t.endReason) +
         bytes(t.kind) + bytes(t.flags);
  n += bytes(threadStates.ts) + bytes(threadStates.state) + bytes(threadStates.cpu) + bytes(threadStates.rowsBegin);
  n += bytes(wakeups.ts) + bytes(wakeups.wakee) + bytes(wakeups.waker) + bytes(wakeups.targetCpu) +
       bytes(wakeups.wakerCpu) + bytes(wakeups.flags) + bytes(wakeups.byWakee) + bytes(wakeups.byWakeeBegin);
  n += bytes(migrations.ts) + bytes(migrations.utid) + bytes(migrations.origCpu) + bytes(migrations.destCpu) +
       bytes(migrations.flags);
  n += bytes(taskEvents.ts) + bytes(taskEvents.kind) + bytes(taskEvents.utid) + bytes(taskEvents.other) +
       bytes(taskEvents.text);
  n += bytes(dataLoss.cpu) + bytes(dataLoss.tsBegin) + bytes(dataLoss.tsEnd) + bytes(dataLoss.count);
  n += bytes(counters.tracks) + bytes(counters.rowsBegin) + bytes(counters.ts) + bytes(counters.value);
  n += bytes(userSlices.ts) + bytes(userSlices.dur) + bytes(userSlices.utid) + bytes(userSlices.name) +
       bytes(userSlices.depth) + bytes(userSlices.kind) + bytes(userSlices.flags) + bytes(userSlices.rowsBegin);
  n += bytes(threads.tid) + bytes(threads.tgid) + bytes(threads.upid) + bytes(threads.comm) + bytes(threads.prio) +
       bytes(threads.startTs) + bytes(threads.endTs) + bytes(threads.parent) + bytes(threads.flags) +
       bytes(threads.cookie) + bytes(threads.uclampMin) + bytes(threads.uclampMax) + bytes(threads.policy) +
       bytes(threads.affinity) + bytes(threads.kernelRuntimeNs) + bytes(threads.kernelRuntimeFromTs) +
       bytes(threads.kernelRuntimeUntilTs) + bytes(threads.autogroup) + bytes(threads.autogroupNice);
  for (const auto& cpus : threads.affinity) n += bytes(cpus);
  n += bytes(commChanges.utid) + bytes(commChanges.ts) + bytes(commChanges.comm);
  n += bytes(processes.tgid) + bytes(processes.name);
  return n;
}

std::string TraceModel::kernelRelease() const {
  if (auto it = metadata.find("osrelease"); it != metadata.end() && !it->second.empty()) return it->second;
  // trace.dat keeps `uname -a`'s first fields: "Linux HOST RELEASE MACHINE".
  if (auto it = metadata.find("kernel"); it != metadata.end()) {
    const std::string& u = it->second;
    size_t pos = 0;
    for (int field = 0; field < 2 && pos != std::string::npos; ++field) pos = u.find(' ', pos == 0 ? 0 : pos + 1);
    if (pos != std::string::npos && u.rfind("Linux ", 0) == 0) {
      const size_t end = u.find(' ', pos + 1);
      return u.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
    }
  }
  return {};
}

}  // namespace core
