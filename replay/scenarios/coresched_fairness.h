// The core-scheduling fairness experiment of the v3 thread (Aug-Sep 2019,
// docs/models.md §6.1) as a built-in scenario: one SMT core, a CPU-bound and a memory-bound task
// pinned one per thread, every tagging case under every core-scheduling
// variant, repeated with varied start phases. Used by `schedlab-cli scenario
// coresched-fairness` and its tests.
#pragma once

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

#include "core/result.h"

namespace replay::scenario {

struct FairnessOptions {
  int runs = 10;
  double seconds = 30.0;          ///< per run, as in the experiment (10 runs of 30 s)
  std::string base = "cfs";       ///< cfs or eevdf under +coresched
  std::vector<std::string> params;  ///< extra key=value for every run (e.g. smt.task_factor)
  std::stop_token stop;
};

struct FairnessRow {
  std::string variant;  ///< "alone", "nosmt", "baseline" (no core scheduling), or a coresched.variant
  std::string tagging;  ///< "no-tag", "cpu-tagged", "mem-tagged", "both-tagged" ("-" for alone/nosmt)
  double mean = 0;      ///< CPU-bound task's throughput relative to running alone on the core
  double stddev = 0;    ///< sample standard deviation over the runs
  double runMs = 0;     ///< mean length of the CPU-bound task's uninterrupted runs, over all runs (ms)
  std::vector<double> values;
};

/// The experiment's reference: sysbench cpu alone on the core, events/s (to show results in its units).
inline constexpr double kSeedAloneEventsPerSecond = 1306.90;

inline const std::vector<std::string>& fairnessTaggings() {
  static const std::vector<std::string> k = {"no-tag", "cpu-tagged", "mem-tagged", "both-tagged"};
  return k;
}
const std::vector<std::string>& coreschedVariants();

/// Rows: alone, nosmt, then for each variant the four taggings. Errors: bad
/// parameters, cancellation.
core::Result<std::vector<FairnessRow>> runCoreschedFairness(const FairnessOptions& options);

}  // namespace replay::scenario
