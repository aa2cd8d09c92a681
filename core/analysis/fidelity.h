// How faithfully a replay reproduces the recording it replays: for each metric
// the recorded value, the replayed one, their ratio and a verdict against the
// bounds an identity replay (the recording's own kernel model, on its recorded
// topology) must meet. Computed with every replay (replay::runReplay) and shown
// by the CLI, the GUI's validation panel and the reports. Definitions and
// bounds: README, "Replay fidelity".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/stats.h"
#include "core/json_writer.h"

namespace core::analysis {

enum class Verdict : uint8_t {
  Pass,  ///< within its bound
  Fail,  ///< outside its bound
  Info,  ///< shown for comparison, not judged (no bound)
};
std::string_view toString(Verdict verdict);

/// The bounds of an identity replay.
struct FidelityBounds {
  double makespanRel = 0.10;       ///< |replayed / recorded - 1|
  double voluntaryRel = 0.15;      ///< total voluntary switches
  double involuntaryRel = 0.30;    ///< total involuntary switches
  double migrationFactor = 2.0;    ///< recorded / f <= replayed <= recorded * f
  double p50Rel = 0.30;            ///< wakeup latency and scheduling delay p50: within 30% ...
  int64_t p50AbsNs = 2000;         ///< ... or within 2 us
  double tailFactor = 2.0;         ///< p90 and p99: within a factor
  double ksMax = 0.25;             ///< two-sample Kolmogorov-Smirnov distance of the distributions
  double taskSharePp = 2.0;        ///< every task's CPU share, in percentage points
};

struct FidelityMetric {
  std::string key;    ///< stable JSON key, e.g. "switches_voluntary", "wakeup_latency_p50_ns"
  std::string label;  ///< for tables: "voluntary switches"
  enum class Unit : uint8_t { Count, Ns, Distance, Pp } unit = Unit::Count;
  std::optional<double> recorded;  ///< absent for metrics that compare the two (KS distance)
  std::optional<double> replayed;
  std::optional<double> ratio;     ///< replayed / recorded, when recorded is not 0
  double measure = 0;              ///< what the bound is applied to (ratio, distance, |difference|)
  std::string bound;               ///< the bound as text: "±15%", "×2", "≤ 0.25", "≤ 2 pp"
  Verdict verdict = Verdict::Info;
};

/// One task, matched between the two runs by tid (an identity replay keeps tids).
struct TaskFidelity {
  int32_t tid = 0;
  std::string comm;
  double shareRecorded = 0;  ///< CPU share, fraction of the run's range
  double shareReplayed = 0;
  int64_t waitRecordedNs = 0;
  int64_t waitReplayedNs = 0;
  uint64_t voluntaryRecorded = 0, voluntaryReplayed = 0;
  uint64_t involuntaryRecorded = 0, involuntaryReplayed = 0;
  double shareDiffPp() const { return (shareReplayed - shareRecorded) * 100.0; }
  Verdict verdict = Verdict::Pass;  ///< its CPU share against FidelityBounds::taskSharePp
};

struct Fidelity {
  std::vector<FidelityMetric> metrics;
  std::vector<TaskFidelity> tasks;  ///< tasks that ran in either run, largest |share difference| first
  size_t failed() const;
  Verdict overall() const { return failed() ? Verdict::Fail : Verdict::Pass; }
  const FidelityMetric* metric(std::string_view key) const;
};

/// What the replay itself knows about its run (replay::Validation).
struct ReplayOutcome {
  int64_t makespanRecordedNs = -1;  ///< -1: not recorded (no makespan row)
  int64_t makespanReplayNs = 0;
  bool workConserved = false;
  int64_t workRecordedNs = 0;
  int64_t workReplayNs = 0;
};

/// Compares a replay's statistics (whole run) with its recording's (whole trace).
Fidelity computeFidelity(const RunStats& recorded, const RunStats& replayed, const ReplayOutcome& outcome,
                         const FidelityBounds& bounds = {});

/// "fidelity": {"verdict", "failed", "metrics": [...], "tasks": [...]}; `taskRows` limits the task rows written.
void writeFidelityJson(JsonWriter& json, const Fidelity& fidelity, size_t taskRows = SIZE_MAX);

}  // namespace core::analysis
