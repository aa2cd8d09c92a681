// EEVDF (docs/models.md §5.3) as kernel/sched/fair.c has it from 6.6 to 6.18.y:
// lag, eligibility, virtual deadlines and the pick; from 6.12 delayed dequeue,
// relative deadlines and PREEMPT_SHORT; from 6.17 the protected slice (vprot).
// The release (m_release) selects the code paths that changed without a switch.
#include <algorithm>
#include <climits>
#include <cstdio>

#include "replay/policies/fair/fair_sched.h"

namespace replay::fair {

int64_t FairPolicy::sliceOf(uint32_t t) const {
  // Custom slices came with 6.12; before, place_entity()/update_deadline() always take the base slice.
  const int64_t custom = m_ents[t].customSlice;
  return custom > 0 && m_release >= KernelVersion{6, 12, 0} ? custom : m_baseSlice;
}

// Slice extremes over the queued entities (cfs_rq_min_slice/max_slice); every
// entity has the base slice unless custom slices are in use.
int64_t FairPolicy::queuedSliceBound(const FairRq& q, bool wantMax, uint32_t except) const {
  int64_t best = wantMax ? 0 : INT64_MAX;
  const auto take = [&](uint32_t id) {
    if (id == except) return;
    const int64_t s = m_ents[id].slice;
    best = wantMax ? std::max(best, s) : std::min(best, s);
  };
  if (m_customSlices == 0) {
    const bool any = !q.tree.empty() || (q.curr != kNone && q.curr != except && m_ents[q.curr].onRq);
    return any ? m_baseSlice : best;
  }
  for (const auto& k : q.tree) take(k.id);
  if (q.curr != kNone && m_ents[q.curr].onRq) take(q.curr);
  return best;
}

bool FairPolicy::protectedSlice(uint32_t c) const {
  const FairRq::Entity& e = m_ents[c];
  return protectedSliceVprot() ? e.vruntime - e.vprot < 0 : e.vlag == e.deadline;
}

void FairPolicy::cancelProtectedSlice(uint32_t c) {
  FairRq::Entity& e = m_ents[c];
  if (!protectedSlice(c)) return;
  if (protectedSliceVprot())
    e.vprot = e.vruntime;
  else
    e.vlag = e.deadline + 1;
}

// set_protect_slice() (6.17+), or the 6.6-6.16 RUN_TO_PARITY hack that keeps
// the deadline granted at pick in vlag.
void FairPolicy::protectSliceAtPick(FairRq& q, uint32_t next) {
  FairRq::Entity& e = m_ents[next];
  if (!protectedSliceVprot()) {
    e.vlag = e.deadline;
    return;
  }
  const int64_t normalized = m_factor > 0 ? m_baseSlice / m_factor : m_baseSlice;
  int64_t slice = m_runToParity ? queuedSliceBound(q, false, next) : normalized;
  slice = std::min(slice, e.slice);
  e.vprot = slice == e.slice ? e.deadline : std::min(e.deadline, e.vruntime + calcDeltaFair(slice, e));
}

// update_protect_slice(): a shorter-slice wakee that did not preempt shortens the protection.
void FairPolicy::shortenProtectedSlice(FairRq& q, uint32_t c) {
  FairRq::Entity& e = m_ents[c];
  const int64_t slice = queuedSliceBound(q, false, c);
  if (slice == INT64_MAX) return;
  e.vprot = std::min(e.vprot, e.vruntime + calcDeltaFair(slice, e));
}

void FairPolicy::updateDeadline(int cpu, FairRq& q, uint32_t c) {
  FairRq::Entity& e = m_ents[c];
  const bool expired = e.vruntime - e.deadline >= 0;
  if (expired) {
    if (!isGroupSe(c)) e.slice = sliceOf(c);  // a group entity's is its queue's shortest (custom_slice set)
    e.deadline = e.vruntime + calcDeltaFair(e.slice, e);
  }
  // update_curr(): 6.6 reschedules only on a new deadline; 6.12 also once a
  // cancelled protection meets an ineligible task (did_preempt_short); 6.17+
  // whenever the protected slice is over. A single queued entity never is.
  if (q.nrRunning <= 1) return;
  bool resched = expired;
  if (m_release >= KernelVersion{6, 17, 0})
    resched |= !protectedSlice(c);
  else if (m_release >= KernelVersion{6, 12, 0})
    resched |= m_preemptShort && e.vlag != e.deadline && !q.eligible(m_ents, c);
  if (resched) {
    m_e->resched(cpu);
    clearBuddies(q, c);
  }
}

void FairPolicy::updateEntityLag(FairRq& q, uint32_t id) {
  FairRq::Entity& e = m_ents[id];
  const int64_t lag = q.avgVruntimeOf(m_ents) - e.vruntime;
  // 6.18.17 bounds the lag by the largest queued slice plus a tick, before by two own slices or a tick.
  const int64_t span = lagLimitFromMaxSlice() ? std::max(queuedSliceBound(q, true, kNone), e.slice) + m_e->tickNs()
                                              : std::max<int64_t>(2 * e.slice, m_e->tickNs());
  const int64_t limit = calcDeltaFair(span, e);
  e.vlag = std::clamp(lag, -limit, limit);
}

void FairPolicy::placeEevdf(FairRq& q, uint32_t id, bool initial) {
  FairRq::Entity& e = m_ents[id];
  const int64_t v = q.avgVruntimeOf(m_ents);
  int64_t lag = 0;
  if (!isGroupSe(id)) e.slice = sliceOf(id);
  int64_t vslice = calcDeltaFair(e.slice, e);
  if (m_placeLag && q.nrRunning) {
    int64_t ld = q.avgLoad;
    if (q.curr != kNone && m_ents[q.curr].onRq) ld += m_ents[q.curr].weight;
    lag = e.vlag * (ld + e.weight);
    if (ld == 0) ld = 1;
    lag /= ld;
  }
  e.vruntime = v - lag;
  if (e.hasRelDeadline) {  // PLACE_REL_DEADLINE: moved, not slept - keep what was left of the request
    e.deadline = e.vruntime + e.relDeadline;
    e.hasRelDeadline = false;
    return;
  }
  if (initial && initialDeadlineHalved()) vslice /= 2;
  e.deadline = e.vruntime + vslice;
}

uint32_t FairPolicy::pickEevdf(const FairRq& q, bool withCurr, bool protect) const {
  uint32_t c = withCurr ? q.curr : kNone;
  if (c != kNone && !m_ents[c].onRq) c = kNone;
  if (q.nrRunning == 1) return c != kNone ? c : (q.tree.empty() ? kNone : q.tree.begin()->id);
  // PICK_BUDDY, inside __pick_eevdf() from 6.18.33 so that the wakeup test sees it too.
  if (buddyWakeupRules() && q.next != kNone && m_ents[q.next].onRq && !m_ents[q.next].delayed &&
      q.eligible(m_ents, q.next))
    return q.next;
  if (c != kNone && !q.eligible(m_ents, c)) c = kNone;
  if (m_runToParity && protect && c != kNone && protectedSlice(c)) return c;
  uint32_t best = q.earliestEligible(m_ents);
  if (best == kNone || (c != kNone && m_ents[c].deadline < m_ents[best].deadline)) best = c;
  return best;
}

uint32_t FairPolicy::pickEntity(FairRq& q, bool withCurr) {
  if (m_nextBuddy && q.next != kNone && q.eligible(m_ents, q.next)) {
    const uint32_t next = q.next;
    clearBuddies(q, next);
    return next;
  }
  const uint32_t next = pickEevdf(q, withCurr);
  if (next != kNone) return next;
  return q.tree.empty() ? q.curr : q.tree.begin()->id;  // none eligible: cannot happen but by rounding
}

uint32_t FairPolicy::pickEevdfNext(int cpu) {
  Rq& r = rq(cpu);
  while (!r.cfs.tree.empty()) {
    const uint32_t next = pickEntity(r.cfs, false);
    if (!m_ents[next].delayed) return next;
    finishDelayedDequeue(cpu, next);  // picked while delayed: it leaves now, and the pick starts over
  }
  return kNone;
}

// The wakee `t` (not delayed: it was just requeued) against the running task
// c, whose update_curr() the caller did (6.18.33+, e837456fdca8): with
// NEXT_BUDDY `t` becomes the buddy unless one with an earlier deadline keeps
// its claim, and a sync wakeup that set it preempts only a waker that has run
// migration_cost since its exec_start, which that update_curr() has just
// moved to now (preempt_sync()); everything else goes to the pick.
void FairPolicy::preemptBuddy(int cpu, FairRq& q, uint32_t c, uint32_t t, uint32_t flags) {
  const bool keepBuddy = q.next != kNone && q.next != t && m_ents[q.next].deadline < m_ents[t].deadline;
  if (c != kNone && m_nextBuddy && !keepBuddy) {
    setNextBuddy(q, t);
    if (flags & kWakeSync) {
      const int64_t ran = std::max<int64_t>(0, m_e->now() - m_ents[c].execStart);
      const int64_t threshold = m_wakeRqSelected ? m_migrationCost >> 2 : m_migrationCost;
      if (m_ents[t].deadline < m_ents[c].deadline && ran >= threshold) m_e->resched(cpu);
      return;
    }
  }
  if (wakeupPick(cpu, q, true) == t)
    m_e->resched(cpu);
  else if (m_runToParity && c != kNone)
    shortenProtectedSlice(q, c);  // update_protect_slice(): a queued shorter slice ends the protection sooner
}

// The wakeup test's pick (`pick:` in check_preempt_wakeup_fair()). From
// 6.18.33 (ac8e69e69363, "Fix wakeup_preempt_fair() vs delayed dequeue") it
// picks as pick_next_entity() does: a delayed entity it reaches is eligible,
// so it leaves the queue and the pick starts over. Before, an eligible
// delayed task with an earlier deadline than the wakee's won the test and
// kept the running task on, still counted in V. tools/experiments/vfork-wakeup.c
// shows the recording kernel deciding without it (docs/models.md 8.3).
uint32_t FairPolicy::wakeupPick(int cpu, const FairRq& q, bool protect) {
  for (;;) {
    const uint32_t picked = pickEevdf(q, true, protect);
    if (!wakeupPickDequeuesDelayed() || picked == kNone || !m_ents[picked].delayed) return picked;
    finishDelayedDequeue(cpu, picked);
  }
}

// A delayed task leaves the queue for good (dequeue_entities() with
// DEQUEUE_DELAYED): no tracepoint, it stays asleep as far as the engine knows.
void FairPolicy::finishDelayedDequeue(int cpu, uint32_t id) {
  Rq& r = rq(cpu);
  FairRq::Entity& e = m_ents[id];
  const bool group = isGroupSe(id);
  FairRq& q = group ? r.cfs : cfsRqOf(cpu, id);
  updateEntityLag(q, id);
  if (q.curr == id) {
    if (!group && r.running == id) setRunning(r, kNone);
    q.curr = kNone;
  } else {
    q.treeErase(m_ents, id);
  }
  if (group) {
    dequeueEntityFrom(q, id);
  } else {
    removeFromRq(r, id);
    countDelayed(r, -1);
    ++m_delayedPicked;
  }
  e.delayed = false;
  if (m_delayZero && e.vlag > 0) e.vlag = 0;
  q.updateMinVruntime(m_ents);
  if (const int g = groupOf(id); g >= 0) groupLeft(cpu, g, true);
}

// Delayed entities the EEVDF pick would choose are dequeued first, as
// pick_task_fair() does: what remains is what can run (core scheduling peeks
// at siblings' picks without side effects).
void FairPolicy::dropDelayedPicks(int cpu) {
  if (m_variant != Variant::Eevdf) return;
  Rq& r = rq(cpu);
  while (r.delayed > 0) {
    const uint32_t p = pickEevdf(r.cfs, true);
    if (p == kNone || !m_ents[p].delayed) return;
    finishDelayedDequeue(cpu, p);
  }
}

// requeue_delayed_entity(): woken while still queued. With DELAY_ZERO a task
// that became eligible while asleep is placed anew at V with no lag; one still
// behind keeps its vruntime and its old deadline. The kernel takes that lag
// against the running task's vruntime of its last update_curr() (neither
// ttwu_runnable() nor the ENQUEUE_DELAYED path calls it): requeue_lag_curr=stale.
void FairPolicy::requeueDelayed(int cpu, FairRq& q, uint32_t id) {
  Rq& r = rq(cpu);
  FairRq::Entity& e = m_ents[id];
  if (!m_requeueLagStale) updateCurr(cpu);
  if (m_delayZero) {
    updateEntityLag(q, id);
    if (e.vlag > 0) {
      const bool inTree = q.curr != id;
      if (inTree) q.treeErase(m_ents, id);
      --q.nrRunning;
      e.vlag = 0;
      placeEevdf(q, id, false);
      ++q.nrRunning;
      if (inTree) q.treeInsert(m_ents, id);
    }
  }
  e.delayed = false;
  if (isGroupSe(id)) return;  // countDelayed() counts sleeping tasks
  countDelayed(r, -1);
  ++m_delayedWoken;
}

void FairPolicy::countDelayed(Rq& r, int delta) {
  const int64_t now = m_e->now();
  if (r.delayed > 0) {
    r.delayedHeldNs += now - r.delayedStamp;
    r.delayedSumNs += (now - r.delayedStamp) * r.delayed;
  }
  r.delayedStamp = now;
  r.delayed += delta;
}

// A CPU holds delayed entities only while busy: an idle CPU's pick has
// dequeued them all. The kernel shows the same per CPU as h_nr_queued minus
// h_nr_runnable in /sys/kernel/debug/sched/debug (6.13+), which
// tools/experiments/delayed-dequeue-share.py samples while a command runs.
ModelCounters FairPolicy::counters(int64_t busyNs) const {
  ModelCounters out;
  if (m_autogroup) {
    char line[300];
    if (m_grouped) {
      const auto rooted = std::count(m_groupOf.begin(), m_groupOf.end(), -1);
      std::snprintf(line, sizeof line, "autogroup: %d session groups, %lld tasks in the root group; %u tasks "
                    "grouped as the autogroups saved beside the recording say, the others by the process tree; "
                    "%llu group entities kept queued by DELAY_DEQUEUE",
                    m_nGroups, static_cast<long long>(rooted), m_tasksInSavedGroups,
                    static_cast<unsigned long long>(m_groupsDelayedTotal));
      out.values = {{"autogroup_groups", m_nGroups},
                    {"autogroup_root_tasks", static_cast<double>(rooted)},
                    {"autogroup_saved_tasks", static_cast<double>(m_tasksInSavedGroups)},
                    {"autogroup_delayed_dequeues", static_cast<double>(m_groupsDelayedTotal)}};
    } else {
      std::snprintf(line, sizeof line, "autogroup: not modelled with core scheduling, flat runqueues");
    }
    out.summary = line;
  }
  if (m_delayedDequeues == 0) return out;
  int64_t held = 0, sum = 0;
  for (const Rq& r : m_rqs) {
    const int64_t open = r.delayed > 0 ? m_e->now() - r.delayedStamp : 0;
    held += r.delayedHeldNs + open;
    sum += r.delayedSumNs + open * r.delayed;
  }
  const double share = busyNs > 0 ? static_cast<double>(held) / static_cast<double>(busyNs) : 0;
  const double meanHeld = held > 0 ? static_cast<double>(sum) / static_cast<double>(held) : 0;
  char line[320];
  std::snprintf(line, sizeof line,
                "DELAY_DEQUEUE kept %llu sleepers queued (%llu woken so, %llu left at a pick); a busy CPU held "
                "one %.1f%% of its busy time, %.2f on average while it did",
                static_cast<unsigned long long>(m_delayedDequeues), static_cast<unsigned long long>(m_delayedWoken),
                static_cast<unsigned long long>(m_delayedPicked), 100 * share, meanHeld);
  out.summary = out.summary.empty() ? std::string(line) : std::string(line) + "; " + out.summary;
  out.values.insert(out.values.begin(), {{"delayed_dequeues", static_cast<double>(m_delayedDequeues)},
                                         {"delayed_woken", static_cast<double>(m_delayedWoken)},
                                         {"delayed_picked", static_cast<double>(m_delayedPicked)},
                                         {"delayed_busy_share", share},
                                         {"delayed_mean_while_held", meanHeld}});
  return out;
}

}  // namespace replay::fair
