// The interface every scheduler model implements. The engine owns time, work
// progress, blocking and the output events; a policy owns its runqueues and
// makes the decisions the kernel's scheduler class makes: where a waking task
// goes, whether it preempts, what runs next, what a tick does, and balancing.
// Implemented by replay/policies/*; called only by replay::Engine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "replay/workload/workload.h"

namespace replay {

class Engine;

enum WakeFlags : uint32_t {
  kWakeSync = 1,     ///< the waker is about to block (WF_SYNC)
  kWakeFork = 2,     ///< first wakeup of a forked child (wake_up_new_task)
  kWakeInitial = 4,  ///< a task alive at trace start arrives in its recorded state
  kWakeIrq = 8,      ///< woken from interrupt/timer context, not by a task
};

/// What a model counts of its own mechanics over a replay, where the kernel
/// exposes the same state to compare with but the trace does not carry it
/// (docs/models.md says how to measure the kernel's side).
struct ModelCounters {
  std::string summary;                               ///< one line for people; empty: nothing to say
  std::vector<std::pair<std::string, double>> values;  ///< the same, keyed for --json
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;

  /// Called once before the run: size per-CPU and per-task state.
  virtual void attach(Engine& engine) = 0;
  /// sched_fork(): initialise `p`'s scheduler state; `parent` is running (kNoTask
  /// for tasks that arrive without a fork).
  virtual void taskNew(TaskId p, TaskId parent) = 0;
  /// select_task_rq(): the CPU `p` is queued on. `wakerCpu` is the CPU of the
  /// waking context (or p's CPU for timer wakeups).
  virtual int selectCpu(TaskId p, uint32_t wakeFlags, int wakerCpu) = 0;
  /// Puts `p` on `cpu`'s queue (or the global one); p's CPU is already `cpu`.
  virtual void enqueue(int cpu, TaskId p, uint32_t wakeFlags) = 0;
  /// Wakeup preemption: call Engine::resched() on whichever CPU should reschedule.
  virtual void checkPreemptWakeup(int cpu, TaskId p, uint32_t wakeFlags) = 0;
  /// `p`, running on `cpu`, blocks (dying = exits); schedule() follows at once.
  virtual void dequeue(int cpu, TaskId p, bool dying) = 0;
  /// schedule() on `cpu`: `prev` is what ran there (kNoTask: idle); when
  /// `prevRunnable` it is preempted and must be requeued or picked again.
  /// Returns the task to run (kNoTask: go idle); it must be runnable, queued
  /// (or prev) and allowed on `cpu`.
  virtual TaskId pickNext(int cpu, TaskId prev, bool prevRunnable) = 0;
  /// scheduler_tick() on a busy CPU.
  virtual void tick(int cpu, TaskId curr) = 0;
  /// Periodic balancing, after each tick of a busy CPU.
  virtual void balance(int /*cpu*/) {}
  /// sched_exec(): `p`, running on `cpu`, execs. A policy that balances at exec
  /// reschedules `cpu` and, in the pickNext() that follows, moves `p` (queued
  /// again by then) with Engine::moveQueued(), as the kernel's stopper does.
  virtual void exec(int /*cpu*/, TaskId /*p*/) {}
  /// After pickNext returned kNoTask: the CPU idles although it has runnable
  /// tasks, because core scheduling forbids them next to its siblings' tasks.
  virtual bool forcedIdle(int /*cpu*/) const { return false; }
  /// After the run: the model's own counts; `busyNs` is the CPU time the replay ran tasks.
  virtual ModelCounters counters(int64_t /*busyNs*/) const { return {}; }
};

}  // namespace replay
