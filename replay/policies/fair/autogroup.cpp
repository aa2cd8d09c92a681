// Autogroup (docs/models.md §5.6): one level of group scheduling under EEVDF,
// as kernel/sched/fair.c runs it when kernel.sched_autogroup_enabled is 1.
// Each session's tasks queue on their group's cfs_rq of their CPU; on the
// CPU's root cfs_rq the group competes as one entity, whose weight is its
// share of the group's 1024 (calc_group_shares()), beside the root group's
// tasks (kernel threads). A group entity is placed, picked, preempted and
// delayed (DELAY_DEQUEUE) as a task is, and set_next_entity() runs only for
// the levels whose entity changes, so its protected slice (RUN_TO_PARITY)
// is not renewed while the CPU switches between tasks of one group.
#include <algorithm>
#include <map>

#include "replay/policies/fair/fair_sched.h"

namespace replay::fair {

namespace {
constexpr int kMinShares = 2;  // MIN_SHARES
}  // namespace

// A task's group, in this order: the one saved beside the recording
// (`schedlab-cli record` reads /proc/PID/autogroup when tracing starts and
// stops), else its parent's (fork inherits the autogroup; a setsid() inside
// the trace is not seen), else the root group for a kernel thread, else its
// process's own group (a session per process: daemons call setsid(); a shell
// and the jobs it ran before the trace share one, which only the saved
// autogroups show). A group's shares are its nice's weight (autogroup.c's
// proc_sched_autogroup_set_nice(); 1024 at nice 0).
void FairPolicy::assignGroups() {
  m_nTasks = static_cast<uint32_t>(m_e->taskCount());
  m_grouped = m_autogroup && m_variant == Variant::Eevdf && !m_csActive;
  m_nGroups = 0;
  m_tasksInSavedGroups = 0;
  m_groupOf.assign(m_nTasks, -1);
  m_groupRqs.clear();
  m_groupLoad.clear();
  m_groupShares.clear();
  m_groupsDelayedTotal = 0;
  if (!m_grouped) return;
  constexpr int kUnknown = -2;
  std::vector<int> group(m_nTasks, kUnknown);
  std::map<std::pair<bool, int32_t>, int> groupIds;  // (saved?, the autogroup's number or the process's id)
  const auto groupFor = [&](bool saved, int32_t key, int nice) {
    const auto [it, added] = groupIds.try_emplace({saved, key}, m_nGroups);
    if (added) {
      ++m_nGroups;
      m_groupShares.push_back(niceToWeight(nice));
    }
    return it->second;
  };
  std::vector<uint32_t> chain;
  for (uint32_t t = 0; t < m_nTasks; ++t) {
    chain.clear();
    uint32_t u = t;
    while (group[u] == kUnknown && m_e->task(u).autogroup < 0 && !m_e->task(u).kernelThread &&
           m_e->task(u).parent != kNoTask) {
      chain.push_back(u);
      u = m_e->task(u).parent;
      if (chain.size() > m_nTasks) break;  // a cycle cannot come from a trace; stop rather than loop
    }
    if (group[u] == kUnknown) {
      const Task& task = m_e->task(u);
      if (task.autogroup >= 0) {
        group[u] = task.autogroup == 0 ? -1 : groupFor(true, task.autogroup, task.autogroupNice);
        ++m_tasksInSavedGroups;
      } else if (task.kernelThread) {
        group[u] = -1;
      } else {
        // A trace without process ids (trace.dat's sched events carry none) makes each task its own process.
        group[u] = groupFor(false, task.tgid >= 0 ? task.tgid : task.tid, 0);
      }
    }
    for (uint32_t c : chain) group[c] = group[u];
  }
  m_groupOf = std::move(group);
  const size_t slots = static_cast<size_t>(m_nGroups) * static_cast<size_t>(m_e->cpuCount());
  m_groupRqs.assign(slots, FairRq());
  m_groupLoad.assign(static_cast<size_t>(m_nGroups), 0);
  m_ents.resize(m_nTasks + slots, FairRq::Entity());
  for (size_t i = m_nTasks; i < m_ents.size(); ++i)
    m_ents[i].weight = m_groupShares[(i - m_nTasks) / static_cast<size_t>(m_e->cpuCount())];
}

// update_cfs_group(): the group entity's weight from its queue's share of the
// group's load over all CPUs. The kernel divides PELT load averages (formula 6
// of calc_group_shares()); this divides the queued weights, the exact
// proportion its comment starts from (formula 1), so a group whose tasks sleep
// on one CPU gives the others its whole weight at once instead of as the
// average decays. Kept, as the kernel keeps it, while the queue is empty.
void FairPolicy::updateGroupShares(int cpu, int g) {
  const FairRq& q = groupRq(g, cpu);
  if (q.load <= 0) return;
  const int64_t total = std::max(q.load, m_groupLoad[static_cast<size_t>(g)]);
  const int64_t groupShares = m_groupShares[static_cast<size_t>(g)];
  const auto shares = static_cast<int>(std::clamp<int64_t>(groupShares * q.load / total, kMinShares, groupShares));
  reweightGroupEntity(cpu, groupSe(g, cpu), shares);
}

// reweight_entity(): a queued entity keeps its lag and its deadline's distance
// in real time, so both are rescaled to the new weight and it is placed again.
void FairPolicy::reweightGroupEntity(int cpu, uint32_t gse, int weight) {
  FairRq::Entity& e = m_ents[gse];
  if (e.weight == weight) return;
  FairRq& root = rq(cpu).cfs;
  const bool curr = root.curr == gse;
  if (e.onRq) {
    chargeCurr(cpu, root);
    updateEntityLag(root, gse);
    e.deadline -= e.vruntime;
    if (!curr) root.treeErase(m_ents, gse);
    --root.nrRunning;
    root.load -= e.weight;
  }
  e.vlag = e.vlag * e.weight / weight;
  if (e.onRq) e.deadline = e.deadline * e.weight / weight;
  e.weight = weight;
  if (!e.onRq) return;
  e.relDeadline = e.deadline;
  e.hasRelDeadline = true;
  placeEevdf(root, gse, false);
  root.load += weight;
  if (!curr) root.treeInsert(m_ents, gse);
  ++root.nrRunning;
  root.updateMinVruntime(m_ents);
}

// enqueue_task_fair() above the task: the group's entity joins the root queue
// when the group had nothing queued on this CPU (or is woken from its delayed
// dequeue), with the shortest slice of its queue; its weight is updated.
void FairPolicy::enqueueGroupEntity(int cpu, int g) {
  FairRq& root = rq(cpu).cfs;
  const uint32_t gse = groupSe(g, cpu);
  FairRq::Entity& ge = m_ents[gse];
  if (ge.delayed) requeueDelayed(cpu, root, gse);
  updateGroupShares(cpu, g);
  ge.slice = queuedSliceBound(groupRq(g, cpu), false, kNone);
  if (ge.onRq) return;
  placeEevdf(root, gse, false);
  enqueueEntityOn(root, gse);
}

// dequeue_entities() above a task that left its group's queue on `cpu`: the
// group entity stays while the queue holds others (and, when the task went
// to sleep, becomes the root's next buddy so that the pick stays in the
// group); with the queue empty it is dequeued as a sleeper, so DELAY_DEQUEUE
// may keep it queued.
void FairPolicy::groupLeft(int cpu, int g, bool taskSleep) {
  FairRq& root = rq(cpu).cfs;
  const FairRq& q = groupRq(g, cpu);
  const uint32_t gse = groupSe(g, cpu);
  FairRq::Entity& ge = m_ents[gse];
  if (q.nrRunning > 0) {
    updateGroupShares(cpu, g);
    ge.slice = queuedSliceBound(q, false, kNone);
    if (taskSleep) setNextBuddy(root, gse);
    return;
  }
  if (!ge.onRq || ge.delayed) return;
  clearBuddies(root, gse);
  if (m_delayDequeue && !root.eligible(m_ents, gse)) {
    ge.delayed = true;
    ++m_groupsDelayedTotal;
    return;
  }
  updateEntityLag(root, gse);
  if (root.curr == gse)
    root.curr = kNone;
  else
    root.treeErase(m_ents, gse);
  dequeueEntityFrom(root, gse);
  root.updateMinVruntime(m_ents);
}

// put_prev_entity() of the root level, when the pick leaves the running group.
void FairPolicy::putRootCurr(Rq& r) {
  if (!m_grouped || r.cfs.curr == kNone || !isGroupSe(r.cfs.curr)) return;
  const uint32_t gse = r.cfs.curr;
  chargeCurr(cpuOf(r), r.cfs);
  r.cfs.curr = kNone;
  if (m_ents[gse].onRq) r.cfs.treeInsert(m_ents, gse);
}

// pick_next_task_fair() with groups: the root's pick (the running group's
// entity competing as the current one, its protection included), then the
// group's; delayed entities met on the way leave and the pick starts over.
// Only a level whose entity changes is put and set (set_next_entity()), and
// the running task was put back by the caller.
TaskId FairPolicy::pickGrouped(int cpu, TaskId prev, bool prevRunnable) {
  Rq& r = rq(cpu);
  FairRq& root = r.cfs;
  for (;;) {
    if (r.hNr == 0) idleBalance(cpu);
    if (r.hNr == 0) {
      // Only delayed group entities can be left: the kernel's pick dequeues them before the CPU idles.
      while (root.nrRunning > 0) finishDelayedDequeue(cpu, pickEntity(root, true));
      putRootCurr(r);
      return kNoTask;
    }
    const uint32_t se = pickEntity(root, true);
    if (m_ents[se].delayed) {
      finishDelayedDequeue(cpu, se);
      continue;
    }
    if (!isGroupSe(se)) {
      putRootCurr(r);
      if (se == prev && prevRunnable) {  // picked again: no put_prev/set_next (pickNext())
        root.treeErase(m_ents, se);
        root.curr = se;
        setRunning(r, se);
        return se;
      }
      setNextEntity(r, se);
      return se;
    }
    FairRq& q = ownRq(se);
    const uint32_t t = pickEntity(q, true);
    if (m_ents[t].delayed) {
      finishDelayedDequeue(cpu, t);
      continue;
    }
    if (root.curr != se) {
      putRootCurr(r);
      setNextEntityOn(root, se);
    }
    setRunning(r, t);
    if (t == prev && prevRunnable) {
      q.treeErase(m_ents, t);
      q.curr = t;
      return t;
    }
    setNextEntityOn(q, t);
    return t;
  }
}

int64_t FairPolicy::hierarchicalWeight(int cpu, uint32_t t) const {
  const int64_t w = m_ents[t].weight;
  const int g = groupOf(t);
  if (g < 0) return w;
  const FairRq& q = m_groupRqs[static_cast<size_t>(g * m_e->cpuCount() + cpu)];
  return q.load > 0 ? w * m_ents[groupSe(g, cpu)].weight / q.load : w;
}

}  // namespace replay::fair
