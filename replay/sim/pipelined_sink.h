// Hands the simulator's events to another sink on a thread of its own.
//
// Why: building the replayed model (replay::BuilderSink feeding a
// core::SchedBuilder) was a fifth of the simulation's time, on the thread the
// whole `replay` command waits for, while the second core had time to spare
// (docs/performance.md, "The cost of a replay"). The engine records each event into a chunk;
// full chunks go to the consumer thread, which calls the inner sink in the
// same order, so the output is the one a direct call gives. The inner sink is
// touched only by that thread until finish() returns.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "replay/sim/event_sink.h"

namespace replay {

class PipelinedSink final : public EventSink {
 public:
  explicit PipelinedSink(EventSink& inner);
  /// Calls finish().
  ~PipelinedSink() override;
  /// Waits until the inner sink has had every event. Idempotent.
  void finish();

  void onSwitch(int64_t ts, int cpu, TaskId prev, core::TaskState prevState, TaskId next, bool forcedIdle) override {
    record({.ts = ts, .a = prev, .b = next, .cpu = cpu, .kind = Kind::Switch,
            .small = static_cast<uint8_t>(prevState), .flag = forcedIdle});
  }
  void onIdleKind(int64_t ts, int cpu, bool forcedIdle) override {
    record({.ts = ts, .cpu = cpu, .kind = Kind::IdleKind, .flag = forcedIdle});
  }
  void onCounter(int64_t ts, core::CounterKind kind, int32_t index, double value) override {
    record({.ts = ts, .value = value, .x = index, .kind = Kind::Counter, .small = static_cast<uint8_t>(kind)});
  }
  void onWaking(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu) override {
    record({.ts = ts, .a = ctxTask, .b = wakee, .cpu = cpu, .x = targetCpu, .kind = Kind::Waking, .flag = irq});
  }
  void onWakeup(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu, bool isNew) override {
    record({.ts = ts, .a = ctxTask, .b = wakee, .cpu = cpu, .x = targetCpu, .kind = Kind::Wakeup,
            .small = static_cast<uint8_t>(isNew), .flag = irq});
  }
  void onMigrate(int64_t ts, int cpu, TaskId ctxTask, TaskId p, int origCpu, int destCpu) override {
    record({.ts = ts, .a = ctxTask, .b = p, .cpu = cpu, .x = origCpu, .y = destCpu, .kind = Kind::Migrate});
  }
  void onFork(int64_t ts, int cpu, TaskId parent, TaskId child) override {
    record({.ts = ts, .a = parent, .b = child, .cpu = cpu, .kind = Kind::Fork});
  }
  void onExit(int64_t ts, int cpu, TaskId p) override { record({.ts = ts, .a = p, .cpu = cpu, .kind = Kind::Exit}); }
  void onEnd(int64_t ts) override { record({.ts = ts, .kind = Kind::End}); }

 private:
  enum class Kind : uint8_t { Switch, IdleKind, Counter, Waking, Wakeup, Migrate, Fork, Exit, End };
  // Each method's arguments, in the fields its case of replayInto() reads.
  struct Record {
    int64_t ts = 0;
    double value = 0;
    TaskId a = 0, b = 0;
    int32_t cpu = 0, x = 0, y = 0;
    Kind kind = Kind::End;
    uint8_t small = 0;
    bool flag = false;
  };
  // 16k records (640 KB): a chunk stays in the consumer's cache while it is
  // read, and a handoff per chunk costs nothing beside its 16k sink calls.
  static constexpr size_t kChunkRecords = size_t{1} << 14;
  static constexpr size_t kChunksInFlight = 8;

  void record(const Record& r) {
    m_filling.push_back(r);
    if (m_filling.size() == kChunkRecords) handOff();
  }
  void handOff();
  void consume();
  static void replayInto(EventSink& sink, const Record& r);

  EventSink& m_inner;
  std::vector<Record> m_filling;  // the engine's thread only
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<std::vector<Record>> m_full;
  std::vector<std::vector<Record>> m_spare;
  bool m_closed = false;
  std::thread m_consumer;
};

}  // namespace replay
