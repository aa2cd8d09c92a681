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
/// One table of `grouping`'s rows (tasks, processes or CPUs), with a header line.
std::string runStatsCsv(const RunStats& stats, StatsGrouping grouping);
/// The tables of runStatsCsv's multi-valued fields, in long form (one row per
/// value, as a spreadsheet's pivot table wants them), each with a header line:
/// FreqResidency `cpu,freq_khz,residency_ns`; IdleResidency
/// `cpu,state,residency_ns` (state -1: not idle); UserSlices
/// `scope,tid,tgid,comm,name,count,open,total_ns,p50_ns,p99_ns,max_ns`, scope
/// `task` (a task's slices of that name) or `all` (every task's; no tid).
enum class StatsCsvTable { FreqResidency, IdleResidency, UserSlices };
std::string runStatsCsv(const RunStats& stats, StatsCsvTable table);
/// "freq_residency", "idle_residency", "user_slices": the names `stats --json` gives these fields.
std::string_view toString(StatsCsvTable table);

}  // namespace core::analysis
