// One call that replays a workload through a scheduler model: builds the
// parameters (engine + policy defaults, then overrides), runs the simulator,
// feeds its events into a SchedBuilder (and optionally an ftrace text file),
// and validates the result against the recording; replayRecording adds the
// statistics of both and the fidelity. Called by the CLI, the GUI's replay
// worker, reports, tests and benchmarks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/analysis/fidelity.h"
#include "core/analysis/stats.h"
#include "core/json_writer.h"
#include "core/result.h"
#include "core/topology.h"
#include "core/trace_model.h"
#include "replay/sim/engine.h"
#include "replay/sim/params.h"
#include "replay/workload/trace_extractor.h"
#include "replay/workload/workload.h"

namespace replay {

struct ReplayOptions {
  std::string model = "cfs";
  /// Replay topology; default: the recorded one (rt-app: one CPU per CPU named in affinities, at least 1).
  std::optional<core::Topology> topology;
  std::vector<std::string> params;  ///< "key=value" overrides, applied in order
  std::optional<int> hz;            ///< sugar for hz=N (applied after params)
  std::string outTrace;             ///< also write the replay as ftrace text here
  std::string recordingPath;        ///< shown with the replay
  std::stop_token stop;
  /// Skip building the output model (benchmarks of the simulator alone).
  bool discardEvents = false;
};

struct Validation {
  int64_t makespanRecordedNs = -1;  ///< -1 when the workload was not recorded
  int64_t makespanReplayNs = 0;
  bool workConserved = false;       ///< every task finished and did exactly its recorded work
  uint64_t tasksUnfinished = 0;
  uint64_t tasksWorkMismatch = 0;
  int64_t workRecordedNs = 0;
  int64_t workReplayNs = 0;
  size_t tasks = 0;  ///< workload tasks replayed
  Unmodelled unmodelled;
  /// Against the recording (replayRecording).
  std::optional<core::analysis::Fidelity> fidelity;
  /// replay / recorded makespan (0 when not recorded)
  double makespanRatio() const {
    return makespanRecordedNs > 0 ? static_cast<double>(makespanReplayNs) / static_cast<double>(makespanRecordedNs) : 0;
  }
};

/// How far a replay's wakers were from their recorded wakeup points when
/// their wakees ended the bursts before recorded blocks: the medians of
/// EngineStats::wakerPastNs (blocks lost) and wakerShortNs (kept).
struct WakerDrift {
  std::optional<int64_t> medianPastNs, medianShortNs;  ///< nothing when no block was lost, kept
};
/// Takes the samples (reordered); nothing when there are none.
std::optional<WakerDrift> wakerDrift(std::vector<int64_t>& pastNs, std::vector<int64_t>& shortNs);
/// What the CLI's "Blocks:" line, the GUI and reports say of a recording's
/// replay: the recorded blocks replayed and lost, the dataflow gates, and the
/// wakers' distance from their points (`workload` as replayed).
std::string describeBlocks(const EngineStats& stats, const std::optional<WakerDrift>& drift, const Workload& workload);

struct ReplayResult {
  std::shared_ptr<core::TraceModel> model;  ///< null when discardEvents
  /// The replay's statistics (whole run), computed with the fidelity (replayRecording).
  std::optional<core::analysis::RunStats> runStats;
  Validation validation;
  EngineStats stats;  ///< its waker distances summed up in wakerDrift
  std::optional<WakerDrift> wakerDrift;
  ModelCounters modelCounters;  ///< the model's counts of its own mechanics (Policy::counters())
  std::vector<TaskOutcome> outcomes;  ///< per workload task
  std::vector<core::ReplayParam> params;
  core::Topology topology;
  /// Core scheduling: the name of each cookie value ([0] = "untagged"); empty without +coresched.
  std::vector<std::string> cookieNames;
  /// +uclamp: energy of the whole replay from the OPP power table, in joules.
  std::optional<double> energyJoules;
};

/// The parameters of a model with their defaults (engine's first), for --help
/// and for validating overrides. Error: unknown model.
core::Result<Params> defaultParams(const std::string& model);

/// Errors: unknown model, bad parameter (names it and what is allowed), a
/// workload that does not fit the topology, an unwritable output trace,
/// cancellation.
core::Result<ReplayResult> runReplay(const Workload& workload, const ReplayOptions& options);

/// A recording replayed: its workload, its statistics, and the replay with
/// its own statistics and fidelity against the recording's.
struct RecordingReplay {
  Workload workload;
  core::analysis::RunStats recordedStats;
  ReplayResult result;
};

/// `extract` as the replay's parameters shape the workload: the dataflow gates
/// of wakeup_dependency=dataflow (the default). For callers that extract a
/// workload themselves before runReplay().
ExtractOptions extractOptionsFor(const ReplayOptions& options, ExtractOptions extract = {});

/// Extracts the recording's workload and replays it (options.model as given:
/// resolve "baseline" first), computing the recording's statistics on a
/// second thread meanwhile; then the replay's statistics and its fidelity
/// (ReplayResult::runStats, Validation::fidelity, also in the model's ReplayInfo).
/// `progress` (optional) hears the fraction done after each step.
/// Errors: those of extractWorkload and runReplay.
core::Result<RecordingReplay> replayRecording(const core::TraceModel& recording, const ReplayOptions& options,
                                              const ExtractOptions& extract = {},
                                              const std::function<void(double)>& progress = {});

/// The replay's statistics (ReplayResult::runStats) and its fidelity against
/// the recording's (Validation::fidelity, also in the model's ReplayInfo); the
/// last step of replayRecording, for callers that run the steps themselves.
void judgeAgainstRecording(ReplayResult& result, const core::analysis::RunStats& recordedStats);

/// "validation": {makespans, work, tasks, "unmodelled", "fidelity"}: the one
/// writer for replay --json and the JSON reports.
void writeValidationJson(core::JsonWriter& json, const Validation& validation);

/// Hash over a model's tables (slices, states, wakeups, migrations, task
/// events, threads): equal hashes mean identical schedules.
uint64_t modelHash(const core::TraceModel& model);

}  // namespace replay
