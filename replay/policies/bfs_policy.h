// The BFS family: BFS v0.463 (docs/models.md §1), Alfred Chen's -gc for 4.1
// (BFS 0.463 with priodl keys, §2.2) and VRQ 0.89 (per-CPU queues with idle
// pulling, §2.3). Created by the policy registry; driven by replay::Engine.
#pragma once

#include <cstdint>
#include <memory>

#include "replay/sim/params.h"
#include "replay/sim/policy.h"

namespace replay::bfs {

enum class Variant { Bfs, Gc, Vrq };

void defineParams(Params& params, Variant variant);
std::unique_ptr<Policy> make(const Params& params, Variant variant);

// BFS levels (its own renumbering of kernel prios).
inline constexpr int kIsoPrio = 101;
inline constexpr int kNormalPrio = 102;
inline constexpr int kIdlePrio = 103;
inline constexpr int kPrioLimit = 104;  ///< the idle task
/// Slices are in BFS "µs" (2^10 ns): a slice under this is as good as expired.
inline constexpr int64_t kReschedUs = 100;

/// prio_ratios[user_prio]: 128 at nice -20, each level x 11/10 (integer).
int prioRatio(int userPrio);
/// prio_deadline_diff(): the virtual deadline offset of a nice level, in ns
/// (ratio x rr_interval x 2^20/128: BFS's "ms" is 2^20 ns).
int64_t deadlineDiff(int nice, int rrIntervalMs);
/// timeslice(): rr_interval in BFS µs (rr_interval << 10).
inline int64_t timesliceUs(int rrIntervalMs) { return static_cast<int64_t>(rrIntervalMs) << 10; }

}  // namespace replay::bfs
