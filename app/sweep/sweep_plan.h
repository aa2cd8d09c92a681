// A sweep is many replays (traces x models x parameter grids), each one job
// whose result is its `schedlab-cli replay --json` document. Here the plan
// (a JSON file, or the CLI's shorthand flags) expands into jobs, and the
// results folder is laid out: the manifest every runner reads (the local one,
// GNU parallel, Slurm), the reports and the GUI. Called by `schedlab-cli sweep`,
// `sweep-job`, `sweep-report` and the GUI's sweep view. No Qt.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace app::sweep {

struct Param {
  std::string key;
  std::string value;
  bool operator==(const Param&) const = default;
};

struct Job {
  std::string id;              ///< 16 hex digits hashed from what the job runs: one job, one id, in every plan
  std::string trace;           ///< absolute path of the recording (or rt-app workload)
  std::string model;           ///< as the plan names it: "baseline", "cfs+coresched"
  std::vector<Param> params;   ///< overrides, in the plan's order
  std::string topology;        ///< --topology of the replay; empty: the recorded one
  bool reference = false;      ///< the trace's identity replay (baseline, recorded topology, no overrides)

  /// The arguments of `schedlab-cli replay` whose --json output is this job's result.
  std::vector<std::string> replayArgs() const;
  /// "hz=250, smt.factor=0.7" plus the topology; "defaults" when nothing is set.
  std::string settingsText() const;
  /// Model and settings: what stays the same across the traces of a sweep.
  std::string settingKey() const;
};

/// One axis of a parameter grid: a key and its values, in the plan's order.
struct Axis {
  std::string key;
  std::vector<std::string> values;
};

struct ModelEntry {
  std::string model;
  std::vector<Axis> axes;  ///< this model's own axes, crossed with the plan's
};

struct Plan {
  std::vector<std::string> traces;  ///< paths or glob patterns; relative ones against baseDir
  std::vector<ModelEntry> models;
  std::vector<Axis> axes;           ///< crossed with every model
  std::string topology;
  bool reference = true;            ///< add each trace's identity replay (its fidelity judges the sweep)
  std::string baseDir;
};

/// "nicemix/trace.dat": the file and its folder, as tables and progress lines show a trace.
std::string traceLabel(const std::string& path);

/// The plan format (README "Sweeps"). Errors name the file, line and column.
core::Result<Plan> parsePlan(std::string_view text, const std::string& name, const std::string& baseDir);
/// Relative traces in the plan are relative to the plan file's folder.
core::Result<Plan> readPlanFile(const std::string& path);
/// The shorthand: --trace GLOB..., --model M..., --param KEY=V1,V2...; traces relative to the working directory.
core::Result<Plan> planFromFlags(const std::vector<std::string>& traces, const std::vector<std::string>& models,
                                 const std::vector<std::string>& params, const std::string& topology, bool reference);

/// Every job of the plan: per trace (in pattern order, each glob sorted) its
/// reference first, then models x axes with the last axis varying fastest.
/// Errors: a pattern that matches no file, an unknown model, a parameter no
/// model of that name has, a value the parameter refuses, a key given twice.
core::Result<std::vector<Job>> expandPlan(const Plan& plan);

// ---- the results folder ----
//   RESULTS/sweep.json           the manifest: every job, with its arguments
//   RESULTS/jobs/ID.json         a job's result, its `replay --json` document
//   RESULTS/jobs/ID.error.json   a job that failed: {"id", "exit_code", "error"}

std::string manifestPath(const std::string& dir);
std::string resultPath(const std::string& dir, const std::string& id);
std::string errorPath(const std::string& dir, const std::string& id);

/// Creates RESULTS/ and RESULTS/jobs/ and writes the manifest. Errors name the path.
core::Status writeManifest(const std::string& dir, const std::vector<Job>& jobs);
/// Errors: no manifest (not a sweep's results), a manifest that does not parse.
core::Result<std::vector<Job>> readManifest(const std::string& dir);

enum class JobState : uint8_t { Pending, Done, Failed };
JobState jobState(const std::string& dir, const std::string& id);

/// Writes through a temporary file in the same folder and a rename, so every
/// reader (and a rerun after a kill) sees the whole file or none of it.
/// Errors name the path and the system's reason.
core::Status writeFileAtomically(const std::string& path, std::string_view text);

}  // namespace app::sweep
