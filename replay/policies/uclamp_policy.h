// uclamp (docs/models.md §4) with PELT utilisation, the schedutil governor and an
// energy estimate, as a decorator around a cfs/eevdf policy (with or without
// core scheduling): it forwards every decision to that policy unchanged and
// only sets each CPU's frequency. Created by the policy registry (+uclamp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/result.h"
#include "replay/sim/params.h"
#include "replay/sim/policy.h"

namespace replay::uclamp {

/// SCHED_CAPACITY_SCALE: clamps and utilisation are in 0..1024.
constexpr int kCapacity = 1024;

enum class ClampId : uint8_t { Min = 0, Max = 1 };

/// The three uclamp sysctls (kernel/sched/core.c).
struct Sysctls {
  int utilClampMin = kCapacity;           ///< sched_util_clamp_min: cap on every effective uclamp.min
  int utilClampMax = kCapacity;           ///< sched_util_clamp_max: cap on every effective uclamp.max
  int utilClampMinRtDefault = kCapacity;  ///< sched_util_clamp_min_rt_default: RT tasks' uclamp.min unless set
};

struct EffectiveClamps {
  int min = 0;
  int max = kCapacity;
};

/// uclamp_eff_get() without task groups (docs/models.md §4.2): the request, or the
/// class default when not set (fair: 0/1024; RT min: the RT default), capped
/// by the system-wide sysctl of that clamp id. -1 = not requested.
EffectiveClamps effectiveClamps(int requestMin, int requestMax, bool rt, const Sysctls& sysctls);

/// One runqueue's clamp aggregation (struct uclamp_rq x 2 + uclamp_flags),
/// exactly as uclamp_rq_inc_id / uclamp_rq_dec_id / uclamp_rq_max_value /
/// uclamp_idle_reset do it (docs/models.md §4.3), including the accepted "local max"
/// over-boost and the MAX value held while the rq is idle.
class UclampRq {
 public:
  /// `buckets`: CONFIG_UCLAMP_BUCKETS_COUNT, 5..20.
  explicit UclampRq(int buckets = 5);

  /// UCLAMP_BUCKET_DELTA = DIV_ROUND_CLOSEST(1024, buckets): 205 for 5.
  static int bucketDelta(int buckets);
  int bucketId(int clampValue) const;
  int buckets() const { return m_buckets; }

  /// uclamp_rq_inc(): a task with these effective clamps becomes runnable here.
  void inc(const EffectiveClamps& task);
  /// uclamp_rq_dec(): it stops being runnable here (sleeps, exits, migrates).
  void dec(const EffectiveClamps& task);

  int value(ClampId id) const { return m_ids[static_cast<size_t>(id)].value; }
  /// UCLAMP_FLAG_IDLE: no runnable task; value(Max) holds the last one's max.
  bool idle() const { return m_idle; }
  int bucketTasks(ClampId id, int bucket) const {
    return m_ids[static_cast<size_t>(id)].bucket[static_cast<size_t>(bucket)].tasks;
  }
  int bucketValue(ClampId id, int bucket) const {
    return m_ids[static_cast<size_t>(id)].bucket[static_cast<size_t>(bucket)].value;
  }

 private:
  struct Bucket {
    int value = 0;
    int tasks = 0;
  };
  struct PerId {
    int value = 0;
    std::vector<Bucket> bucket;
  };
  void incId(ClampId id, int clampValue);
  void decId(ClampId id, int clampValue);

  int m_buckets;
  int m_delta;
  PerId m_ids[2];
  bool m_idle = true;  // a fresh rq is idle (init_uclamp_rq sets UCLAMP_FLAG_IDLE)
};

/// Declares uclamp.*, sysctl.sched_util_clamp_*, pelt.* and schedutil.* parameters.
void defineParams(Params& params);
/// Checks what defineParams' typed ranges cannot: the OPP and power lists
/// (numbers, same length, increasing frequencies) and min <= max of the sysctls.
core::Status validateParams(const Params& params);
/// Wraps `inner` (cfs/eevdf, maybe with core scheduling). Parameters must have
/// passed validateParams.
std::unique_ptr<Policy> wrap(std::unique_ptr<Policy> inner, const Params& params, int cpuCount);

/// Energy of the replay from the first scheduling event to `endTs`: busy time
/// at each OPP x its power, plus idle (and forced-idle) time x idle power, over
/// all CPUs, in joules. nullopt when `policy` is not a uclamp wrapper.
std::optional<double> energyJoules(const Policy& policy, int64_t endTs);

}  // namespace replay::uclamp
