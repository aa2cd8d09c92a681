// The stable JSON and CSV schemas of run statistics (`stats --json`, the
// replay's and the diff's per-run blocks, report exports). Other tools read
// these names: change them only deliberately.
#pragma once

#include <string>

#include "core/analysis/diff.h"
#include "core/analysis/stats.h"
#include "core/json_writer.h"

namespace core::analysis {

enum class StatsGrouping { Task, Process, Cpu };

void writeDistributionJson(JsonWriter& j, const Distribution& d);
/// `[{"name", "count", "total_ns", "p50_ns", "p99_ns", "max_ns", "open"}...]`
void writeUserSlicesJson(JsonWriter& j, const std::vector<UserSliceStats>& slices);
/// Fields of one task or process (inside an object the caller opened).
void writeTaskFieldsJson(JsonWriter& j, const TaskStats& t);
/// "tasks" (or "processes"), "cpus", "fairness", "range", "totals" keys into an open object.
void writeRunStatsJson(JsonWriter& j, const RunStats& stats, StatsGrouping grouping);
/// The `diff --json` document body: "a", "b", "tasks", "summary" keys into an open object.
void writeRunDiffJson(JsonWriter& j, const RunDiff& diff);
void writeMetricDeltaJson(JsonWriter& j, const MetricDelta& m);
std::string runStatsCsv(const RunStats& stats, StatsGrouping grouping);

}  // namespace core::analysis
