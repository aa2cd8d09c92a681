// Reads a hand-written rt-app style JSON workload (a documented subset) into
// a Workload for synthetic replays and tests. Called by the CLI when the input
// is a .json file, and by tests.
//
// Subset: {"global": {"duration": SECONDS, "default_policy": POLICY},
//          "tasks": {NAME: {"instance": N, "loop": N, "policy": POLICY,
//                           "priority": N, "cpus": [CPU...], "delay": US,
//                           EVENTS... | "phases": {NAME: {"loop": N, EVENTS...}}}}}
// EVENTS, in file order: "run": US (CPU work), "sleep": US, "timer":
// {"ref": NAME, "period": US} (wait for the next period boundary of that
// timer, one timer per task and ref). Keys may carry a suffix ("run0",
// "sleep1") as in rt-app. POLICY: SCHED_OTHER, SCHED_BATCH, SCHED_IDLE,
// SCHED_FIFO, SCHED_RR (and SCHED_ISO for BFS-family replays). "priority" is
// the nice value for the fair policies and 1..99 for FIFO/RR. loop -1 repeats
// until global.duration. rt-app keys that do not change scheduling
// (calibration, logdir, log_basename, lock_pages, ftrace, gnuplot, ...) are accepted
// and ignored; any other key is an error.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "replay/workload/workload.h"

namespace replay {

/// Parses JSON text; `name` is used in error messages ("NAME: line L, column C: ...").
core::Result<Workload> readRtAppWorkload(std::string_view text, const std::string& name);
/// Reads the file first; a missing or unreadable file is an error naming it.
core::Result<Workload> readRtAppWorkloadFile(const std::string& path);

/// True when the file looks like a JSON workload rather than a trace (name ends
/// in .json or the first non-blank byte is '{').
bool looksLikeWorkloadJson(const std::string& path);

}  // namespace replay
