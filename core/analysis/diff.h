// Diff of two runs (two recordings, or a recording and a replay): tasks matched
// by comm within process (tids differ between runs), aggregated where a run has
// several tasks of one name; every metric with absolute and relative change;
// distributions compared by Kolmogorov–Smirnov distance. Used by `schedlab-cli
// diff`, the GUI's Diff tab and the reports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/stats.h"

namespace core::analysis {

/// A named scalar metric of a task group or a run, with its change.
struct MetricDelta {
  std::string name;
  double a = 0;
  double b = 0;
  double delta() const { return b - a; }
  /// (b - a) / a; nullopt when a is 0.
  std::optional<double> relative() const;
};

struct TaskDiff {
  std::string process;  ///< process name (leader's comm), or the comm when the process is unknown
  std::string comm;
  size_t tasksA = 0;  ///< how many task identities were aggregated on each side
  size_t tasksB = 0;
  std::optional<TaskStats> a;
  std::optional<TaskStats> b;
  std::vector<MetricDelta> metrics;
  double wakeupLatencyKs = 0;  ///< KS distance of the wakeup-latency distributions (0 if either is empty)
  double schedDelayKs = 0;
};

struct RunSummary {
  std::string label;
  int64_t spanNs = 0;
  int cpus = 0;
  RunStats stats;
};

struct RunDiff {
  RunSummary a;
  RunSummary b;
  std::vector<TaskDiff> tasks;        ///< sorted by |runtime change|, largest first
  std::vector<MetricDelta> summary;   ///< run-level metrics
  std::vector<MetricDelta> cpus;      ///< per-CPU utilisation ("cpu3 utilisation") and switches
  double wakeupLatencyKs = 0;
  double schedDelayKs = 0;
};

/// sup_x |F_a(x) - F_b(x)| over two sorted samples.
double ksDistance(const std::vector<int64_t>& sortedA, const std::vector<int64_t>& sortedB);

/// Sums a group of tasks (distributions merged).
TaskStats sumTasks(const std::vector<const TaskStats*>& tasks);

RunDiff diffRuns(const TraceModel& a, const RunStats& statsA, std::string labelA, const TraceModel& b,
                 const RunStats& statsB, std::string labelB);

}  // namespace core::analysis
