// The mainline baseline: CFS as in Linux <= 6.5 and EEVDF as in 6.6+
// (docs/models.md §5), with the RT class (FIFO/RR) and a stated, simplified
// load balancer.
// Created by the policy registry; driven by replay::Engine.
#pragma once

#include <algorithm>
#include <compare>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "replay/sim/params.h"
#include "replay/sim/policy.h"

namespace replay::fair {

enum class Variant { Cfs, Eevdf };

/// A kernel release as far as the scheduler's behaviour goes: 6.18.44 from "6.18.44-fc-v857".
struct KernelVersion {
  int major = 0, minor = 0, patch = 0;
  auto operator<=>(const KernelVersion&) const = default;
  std::string text() const;
};
/// "6.6", "6.12.3", "6.18.44-fc-v857" (what follows the numbers is ignored); nullopt if it does not start so.
std::optional<KernelVersion> parseKernelVersion(std::string_view text);
/// The newest release whose EEVDF the model follows (docs/models.md §5.3).
inline constexpr KernelVersion kNewestEevdf{6, 18, 44};

void defineParams(Params& params, Variant variant);
/// EEVDF's release-dependent parameters: `release=auto` becomes the recording
/// kernel's release (`recordedRelease`, e.g. the trace's osrelease), or the
/// newest modelled one when the trace does not say; then every switch left at
/// "release" (delay_dequeue, preempt_short, ...) and base_slice_ns=-1 take that
/// release's behaviour. Each resolved value says where it came from. Errors: an
/// unparsable release, or one before EEVDF (6.6).
core::Status resolveEevdfRelease(Params& params, std::string_view recordedRelease);
/// wake_pack=settings becomes measured when the settings saved beside the
/// recording set kernel.sched_vcpu_pack (`vcpuPack`, empty when they do not
/// have it), else off; the resolved value says which setting decided.
void resolveWakePack(Params& params, bool settingsKnown, const std::string& vcpuPack);
/// autogroup=settings becomes on or off: for a recording, as the settings
/// beside it say kernel.sched_autogroup_enabled was (`setting`, empty when they
/// do not have it), on when they do not say (the kernel's default); for a
/// written workload, off (it has no sessions). The resolved value says why.
void resolveAutogroup(Params& params, bool isRecording, bool settingsKnown, const std::string& setting);
/// Core scheduling over cfs/eevdf (docs/models.md §3): coresched.variant, coresched.cookie, ...
/// The policy runs core-wide selection when these are defined and some task has a cookie.
void defineCoreschedParams(Params& params);
std::unique_ptr<Policy> make(const Params& params, Variant variant, int cpuCount);

/// Kernel sched_prio_to_weight for nice -20..19.
int niceToWeight(int nice);
/// The kernel's __calc_delta(): delta * weight / lw.weight in 32.32 fixed point
/// with lw's inverse weight, rounding exactly as fair.c does.
uint64_t calcDelta(uint64_t delta, uint64_t weight, uint64_t lwWeight, bool lwIsTaskWeight);
/// wake_pack=measured: the share of wakeups that go to the waker's busy CPU,
/// whose util is `util` (of its capacity), rather than to the wakee's previous
/// CPU, idle for `idleMs` (placement.cpp, docs/models.md §5.5).
double measuredPackingShare(double util, double idleMs);
/// wake_pack=measured: the share of wakeups of a task that slept `sleptMs`
/// that stay on its busy previous CPU, whose util is `util`, rather than go
/// to the idle CPU the idle search finds.
double measuredStayShare(double util, double sleptMs);

/// One CPU's fair runqueue, exposed for unit tests of the EEVDF arithmetic.
class FairRq {
 public:
  struct Entity {
    int64_t vruntime = 0;
    int64_t deadline = 0;
    int64_t vlag = 0;
    int64_t slice = 0;
    int64_t sumExec = 0;
    int64_t prevSumExec = 0;
    int64_t execStart = 0;
    int64_t lastRan = INT64_MIN / 2;  // when it last left a CPU (cache-hot test); never: cold
    uint64_t seq = 0;  // tree key tie-break
    int weight = 1024;
    bool onRq = false;
    bool idlePolicy = false;
    // Linux 6.12+ (DELAY_DEQUEUE, PLACE_REL_DEADLINE) and 6.17+ (the protected slice).
    bool delayed = false;        ///< slept with negative lag: still queued until picked or woken (sched_delayed)
    bool hasRelDeadline = false; ///< dequeued without sleeping (migrated): the deadline is kept relative
    int64_t relDeadline = 0;
    int64_t vprot = 0;           ///< protected (RUN_TO_PARITY) while vruntime < vprot
    int64_t customSlice = 0;     ///< sched_attr.sched_runtime, 0 = the base slice
  };
  struct Key {
    int64_t vruntime;
    uint64_t seq;
    uint32_t id;
    // The entity's deadline, which no path changes while it is queued outside
    // curr: pick_eevdf's walk then reads the keys alone, not an entity each.
    int64_t deadline;
    bool operator<(const Key& o) const { return vruntime != o.vruntime ? vruntime < o.vruntime : seq < o.seq; }
  };

  /// The queued entities in key order. A sorted array, not a balanced tree:
  /// runqueues hold tens of entities, where inserting by a move of the tail
  /// costs less than a node allocation, and pick_eevdf's walk over the eligible
  /// prefix reads contiguous keys (with std::set the walk and the rebalancing
  /// were a fifth of a hackbench replay). Large queues pay O(n) per insert.
  class SortedKeys {
   public:
    using const_iterator = std::vector<Key>::const_iterator;
    const_iterator begin() const { return m_keys.begin(); }
    const_iterator end() const { return m_keys.end(); }
    bool empty() const { return m_keys.empty(); }
    size_t size() const { return m_keys.size(); }
    void insert(const Key& k) { m_keys.insert(std::upper_bound(m_keys.begin(), m_keys.end(), k), k); }
    void erase(const Key& k) {
      const auto it = std::lower_bound(m_keys.begin(), m_keys.end(), k);
      if (it != m_keys.end() && !(k < *it)) m_keys.erase(it);
    }

   private:
    std::vector<Key> m_keys;
  };

  SortedKeys tree;  ///< queued entities, not curr, by vruntime
  uint32_t curr = UINT32_MAX;  ///< running fair entity (on_rq, outside the tree)
  int64_t minVruntime = 0;
  int64_t avgVruntime = 0;  ///< sum of (v - min_vruntime) * w over the tree
  int64_t avgLoad = 0;      ///< sum of w over the tree
  int64_t load = 0;         ///< sum of w of tree + curr
  int nrRunning = 0;        ///< tree + curr
  uint32_t next = UINT32_MAX, last = UINT32_MAX;  ///< buddies

  /// avg_vruntime(): V = min_vruntime + sum((v - v0) w) / sum(w), curr included.
  int64_t avgVruntimeOf(const std::vector<Entity>& ents) const;
  /// entity_eligible(): (v - v0) * W <= sum((v_i - v0) w_i), curr included.
  bool eligible(const std::vector<Entity>& ents, uint32_t id) const;
  void treeInsert(std::vector<Entity>& ents, uint32_t id);
  void treeErase(std::vector<Entity>& ents, uint32_t id);
  void updateMinVruntime(const std::vector<Entity>& ents);
  /// Moves min_vruntime forward to `v` (no-op if not ahead), keeping the
  /// avg_vruntime sum relative to it: core-wide min_vruntime, forced-idle credit.
  void advanceMinVruntime(int64_t v);
  /// The eligible entity with the earliest deadline (pick_eevdf without curr).
  uint32_t earliestEligible(const std::vector<Entity>& ents) const;

 private:
  /// The avg_vruntime sums with the running entity added: (sum (v - v0) w, sum w).
  std::pair<int64_t, int64_t> sumsWithCurr(const std::vector<Entity>& ents) const;
  uint64_t m_seq = 0;
};

}  // namespace replay::fair
