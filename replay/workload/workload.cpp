#include "replay/workload/workload.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numbers>

namespace replay {

DelayDistribution DelayDistribution::of(std::vector<int64_t> samples) {
  DelayDistribution d;
  d.samples = samples.size();
  if (samples.empty()) return d;
  std::sort(samples.begin(), samples.end());
  const size_t n = std::min(samples.size(), kQuantiles);
  d.quantiles.reserve(n);
  for (size_t i = 0; i < n; ++i) d.quantiles.push_back(samples[(2 * i + 1) * samples.size() / (2 * n)]);
  return d;
}

DelayDistribution tickSwitchDelays(const std::vector<int64_t>& switches, int64_t periodNs) {
  constexpr int64_t kMaxOffsetNs = 100'000;
  constexpr size_t kMinSwitches = 8;
  if (switches.size() < kMinSwitches || periodNs <= 2 * kMaxOffsetNs) return {};
  const double turn = 2 * std::numbers::pi / static_cast<double>(periodNs);
  double sumCos = 0, sumSin = 0;
  for (int64_t t : switches) {
    const double angle = static_cast<double>(((t % periodNs) + periodNs) % periodNs) * turn;
    sumCos += std::cos(angle);
    sumSin += std::sin(angle);
  }
  const auto phase = static_cast<int64_t>(std::llround(std::atan2(sumSin, sumCos) / turn));
  std::vector<int64_t> offsets;
  for (int64_t t : switches) {
    int64_t d = (((t - phase) % periodNs) + periodNs) % periodNs;  // [0, period)
    if (d >= periodNs / 2) d -= periodNs;                            // [-period/2, period/2)
    if (d >= -kMaxOffsetNs && d <= kMaxOffsetNs) offsets.push_back(d);
  }
  if (2 * offsets.size() < switches.size()) return {};
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
