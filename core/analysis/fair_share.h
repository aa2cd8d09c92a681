// The ideal weighted-fair service each fair-class task could have received over
// a range, and its lag against it: a fluid (GPS) schedule that respects each
// task's CPU affinity, gives no task more than one CPU, and serves only what
// the task asked for. computeStats() builds Jain's index, the GPS lag and the
// cookie index on it; the definitions are the README's "Fairness, defined".
#pragma once

#include <vector>

#include "core/analysis/stats.h"

namespace core::analysis {

/// Of a fair- or idle-class task (the others keep the defaults).
struct FairShare {
  bool competed = false;   ///< it waited on a runqueue, or the ideal gave it less than a CPU, for some time
  double serviceNs = 0;    ///< S_i: CPU time it received in the range
  double idealNs = 0;      ///< S*_i: CPU time the ideal schedule gave it
  double maxAbsLagNs = 0;  ///< max over the range of |S*_i(t) - S_i(t)|
};

/// One entry per utid of the model.
std::vector<FairShare> computeFairShare(const TraceModel& model, TimeRange range);

}  // namespace core::analysis
