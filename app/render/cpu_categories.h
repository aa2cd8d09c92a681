// The categories of a per-CPU chart or table. Up to a few dozen CPUs each CPU
// is its own category; on a big machine 512 bars one pixel wide say nothing, so
// the CPUs are summarised per topology group (core, LLC, NUMA node, package:
// the finest level with few enough groups) as the spread of their values. The
// GUI's statistics tab and the report use the same grouping.
#pragma once

#include <QString>
#include <functional>
#include <vector>

#include "core/analysis/stats.h"
#include "core/topology.h"

namespace app::render {

struct CpuCategories {
  QString level;  ///< "CPU", "core", "LLC", "node", "package" or "CPUs" (equal ranges)
  std::vector<QString> labels;
  std::vector<std::vector<int>> cpus;  ///< per category, ascending
  bool grouped() const { return level != QStringLiteral("CPU"); }
};

/// Categories for CPUs 0..cpuLimit-1 on `topology` (CPUs the topology lacks
/// count as single-thread cores of their own, as Topology::extendTo adds them).
/// More than `maxCategories` CPUs: the finest of core, LLC, node, package with
/// 2 to `maxCategories` groups, or else equal ranges of CPU numbers.
CpuCategories cpuCategories(const core::Topology& topology, int cpuLimit, int maxCategories = 32);

/// A run's topology and per-CPU statistics, for categories shared by runs
/// shown side by side.
struct CpuRun {
  const core::Topology* topology;
  const std::vector<core::analysis::CpuStats>* cpus;
};

/// Categories for CPUs up to the highest any run has statistics for, on the
/// topology of that run; none without runs.
CpuCategories cpuCategoriesOf(const std::vector<CpuRun>& runs, int maxCategories = 32);

/// The kernel's cpulist form of ascending CPUs: "0-31,128-159".
QString cpuListText(const std::vector<int>& cpus);

/// Five-number summary and mean of one category's per-CPU values.
struct Spread {
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0, mean = 0;
  int count = 0;
};

/// Quartiles by linear interpolation between order statistics (R's type 7,
/// numpy's default); `values` in any order. No values: count 0, all zero.
Spread spreadOf(std::vector<double> values);

/// Per category, the spread of `value` over those of its CPUs that `cpus`
/// has statistics for (a CPU category: one value, or none).
std::vector<Spread> spreadsByCategory(const CpuCategories& categories, const std::vector<core::analysis::CpuStats>& cpus,
                                      const std::function<double(const core::analysis::CpuStats&)>& value);

}  // namespace app::render
