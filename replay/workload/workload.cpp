#include "replay/workload/workload.h"

#include "core/radix_sort.h"

#include <algorithm>
#include <iterator>

namespace replay {

DelayDistribution DelayDistribution::of(std::vector<int64_t> samples) {
  DelayDistribution d;
  d.samples = samples.size();
  if (samples.empty()) return d;
  core::radixSort(samples);  // hundreds of thousands of wakeups on a big trace
  const size_t n = std::min(samples.size(), kQuantiles);
  d.quantiles.reserve(n);
  for (size_t i = 0; i < n; ++i) d.quantiles.push_back(samples[(2 * i + 1) * samples.size() / (2 * n)]);
  return d;
}

DelayDistribution tickSwitchDelays(const std::vector<int64_t>& switches, int64_t periodNs) {
  constexpr int64_t kMaxOffsetNs = 100'000;
  constexpr int64_t kModeWindowNs = 20'000;
  constexpr size_t kMinSwitches = 8;
  if (switches.size() < kMinSwitches || periodNs <= 2 * kMaxOffsetNs) return {};
  // The grid's phase is where the switches crowd most: the 20 us (circular)
  // window holding the most of their phases, at its median. A mean of all
  // phases is pulled off the grid by preemptions of other causes, far when
  // there are few (interactive-batch's perf.data, 7 of 9 on the grid: a
  // median delay of 156 us against 7.8 us).
  std::vector<int64_t> phases;
  phases.reserve(2 * switches.size());
  for (int64_t t : switches) phases.push_back(((t % periodNs) + periodNs) % periodNs);
  std::sort(phases.begin(), phases.end());
  const size_t n = phases.size();
  for (size_t i = 0; i < n; ++i) phases.push_back(phases[i] + periodNs);  // windows across the wrap
  size_t bestFirst = 0, bestCount = 0;
  for (size_t first = 0, last = 0; first < n; ++first) {
    last = std::max(last, first);
    while (last + 1 < phases.size() && phases[last + 1] - phases[first] <= kModeWindowNs) ++last;
    if (last - first + 1 > bestCount) bestCount = last - first + 1, bestFirst = first;
  }
  const int64_t phase = phases[bestFirst + bestCount / 2];
  std::vector<int64_t> offsets;
  for (size_t i = 0; i < n; ++i) {
    int64_t d = (((phases[i] - phase) % periodNs) + periodNs) % periodNs;  // [0, period)
    if (d >= periodNs / 2) d -= periodNs;                                  // [-period/2, period/2)
    if (d >= -kMaxOffsetNs && d <= kMaxOffsetNs) offsets.push_back(d);
  }
  if (2 * offsets.size() < n) return {};
  std::sort(offsets.begin(), offsets.end());
  const int64_t base = offsets[offsets.size() / 100];
  for (int64_t& d : offsets) d = std::max<int64_t>(0, d - base);
  return DelayDistribution::of(std::move(offsets));
}

std::string_view toString(SchedPolicy policy) {
  switch (policy) {
    case SchedPolicy::Normal: return "SCHED_OTHER";
    case SchedPolicy::Batch: return "SCHED_BATCH";
    case SchedPolicy::Idle: return "SCHED_IDLE";
    case SchedPolicy::Fifo: return "SCHED_FIFO";
    case SchedPolicy::RR: return "SCHED_RR";
    case SchedPolicy::Iso: return "SCHED_ISO";
  }
  return "?";
}

int64_t Task::totalWork() const {
  int64_t sum = 0;
  for (const Burst& b : bursts) sum += b.work;
  return sum;
}

uint64_t Unmodelled::total() const {
  uint64_t n = 0;
  for (const Item& i : items()) n += i.count;
  return n;
}

namespace {

// Every count of Unmodelled, in the order replays, the CLI and reports show them.
struct UnmodelledField {
  const char* key;
  const char* what;
  uint64_t Unmodelled::*count;
};
constexpr UnmodelledField kUnmodelledFields[] = {
    {"wakeups_from_interrupt", "wakeups from interrupt/idle context, replayed as sleeps of the recorded length",
     &Unmodelled::wakeupsFromInterrupt},
    {"wakeups_unknown_waker", "wakeups whose waker is not replayed, replayed as sleeps",
     &Unmodelled::wakeupsUnknownWaker},
    {"wakeups_self", "wakeups by the task itself, replayed as sleeps", &Unmodelled::wakeupsSelf},
    {"blocks_without_wakeup", "blocks ended without a wakeup event, replayed as sleeps",
     &Unmodelled::blocksWithoutWakeup},
    {"tasks_started_before_trace", "tasks alive at trace start (how their first burst began is unknown)",
     &Unmodelled::tasksStartedBeforeTrace},
    {"tasks_running_at_trace_end", "tasks still running at trace end (last burst cut by the trace end)",
     &Unmodelled::tasksRunningAtTraceEnd},
    {"tasks_never_ran", "tasks seen but never running (not replayed)", &Unmodelled::tasksNeverRan},
    {"forks_of_unreplayed_parent", "forks by a task not replayed (child started at its recorded time)",
     &Unmodelled::forksOfUnreplayedParent},
    {"execs_not_replayed", "execs at no point of the task's replayed work (no sched_exec() balancing there)",
     &Unmodelled::execsNotRunning},
    {"unknown_state_intervals", "intervals of unknown state (no work counted)", &Unmodelled::unknownStateIntervals},
    {"lost_event_ranges", "lost-event ranges in the recording", &Unmodelled::lostEventRanges},
    {"switch_ins_inferred", "runs whose switch-in the trace lacks (inferred at import, start estimated)",
     &Unmodelled::switchInsInferred},
    {"tasks_left_out", "tasks left out (--tasks created or tree:COMM)", &Unmodelled::tasksLeftOut},
    {"recorded_with_autogroup",
     "recorded with autogroup on (kernel.sched_autogroup_enabled = 1 beside the trace): sessions' tasks competed "
     "as groups, replayed on flat runqueues (autogroup=off, or a model without groups)",
     &Unmodelled::recordedWithAutogroup},
};
// A count added to Unmodelled and not listed here would be neither shown nor summed.
static_assert(sizeof(Unmodelled) == std::size(kUnmodelledFields) * sizeof(uint64_t));

}  // namespace

Unmodelled& Unmodelled::operator+=(const Unmodelled& o) {
  for (const UnmodelledField& f : kUnmodelledFields) this->*f.count += o.*f.count;
  return *this;
}

std::vector<Unmodelled::Item> Unmodelled::items() const {
  std::vector<Item> out;
  out.reserve(std::size(kUnmodelledFields));
  for (const UnmodelledField& f : kUnmodelledFields) out.push_back({f.key, f.what, this->*f.count});
  return out;
}

int64_t Workload::totalWork() const {
  int64_t sum = 0;
  for (const Task& t : tasks) sum += t.totalWork();
  return sum;
}

size_t Workload::burstCount() const {
  size_t n = 0;
  for (const Task& t : tasks) n += t.bursts.size();
  return n;
}

}  // namespace replay
