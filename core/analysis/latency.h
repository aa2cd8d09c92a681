// Every wakeup-latency and scheduling-delay sample of a run over a range, with
// the time and task it belongs to: the points of the GUI's latency scatter and
// the per-task latency tables (with their worst instance). The same samples as
// the Distributions of stats.h (same definitions, same range rule: a sample
// belongs to the range in which its wait began).
#pragma once

#include <cstdint>
#include <vector>

#include "core/analysis/stats.h"
#include "core/trace_model.h"

namespace core::analysis {

struct LatencySample {
  int64_t ts = 0;  ///< the start of the wait (the wakeup, or the preemption)
  int64_t ns = 0;  ///< until the switch-in that ended it
  Utid utid;
  bool woken = false;  ///< a wakeup latency (woken from sleep); else the delay after a preemption
};

/// Samples of every task in the range, in time order.
std::vector<LatencySample> latencySamples(const TraceModel& model, TimeRange range);

/// One task's latencies: wakeup latency and scheduling delay (which includes the
/// woken samples), and the worst sample of each.
struct TaskLatency {
  Utid utid;
  Distribution wakeupLatency;
  Distribution schedDelay;
  LatencySample worstWakeup;  ///< ns 0 when it has none
  LatencySample worstDelay;
};
/// Per task with at least one sample, in utid order.
std::vector<TaskLatency> taskLatencies(const TraceModel& model, const std::vector<LatencySample>& samples);

}  // namespace core::analysis
