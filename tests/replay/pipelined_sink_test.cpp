// replay::PipelinedSink: the inner sink gets every call, with its arguments,
// in the order the engine made them, across many chunk handoffs; and only
// once finish() has returned is it done.
#include "replay/sim/pipelined_sink.h"
#include "replay_test_util.h"

#include <gtest/gtest.h>

#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace {

using replay::TaskId;

// Writes each call as a line, and which thread made it.
class LoggingSink final : public replay::EventSink {
 public:
  std::vector<std::string> calls;
  std::vector<std::thread::id> threads;

  void onSwitch(int64_t ts, int cpu, TaskId prev, core::TaskState s, TaskId next, bool fi) override {
    log("switch " + n(ts) + " " + n(cpu) + " " + n(prev) + " " + n(static_cast<int>(s)) + " " + n(next) + " " + n(fi));
  }
  void onIdleKind(int64_t ts, int cpu, bool fi) override { log("idle " + n(ts) + " " + n(cpu) + " " + n(fi)); }
  void onCounter(int64_t ts, core::CounterKind k, int32_t i, double v) override {
    log("counter " + n(ts) + " " + n(static_cast<int>(k)) + " " + n(i) + " " + std::to_string(v));
  }
  void onWaking(int64_t ts, int cpu, TaskId c, bool irq, TaskId w, int t) override {
    log("waking " + n(ts) + " " + n(cpu) + " " + n(c) + " " + n(irq) + " " + n(w) + " " + n(t));
  }
  void onWakeup(int64_t ts, int cpu, TaskId c, bool irq, TaskId w, int t, bool isNew) override {
    log("wakeup " + n(ts) + " " + n(cpu) + " " + n(c) + " " + n(irq) + " " + n(w) + " " + n(t) + " " + n(isNew));
  }
  void onMigrate(int64_t ts, int cpu, TaskId c, TaskId p, int o, int d) override {
    log("migrate " + n(ts) + " " + n(cpu) + " " + n(c) + " " + n(p) + " " + n(o) + " " + n(d));
  }
  void onFork(int64_t ts, int cpu, TaskId p, TaskId c) override {
    log("fork " + n(ts) + " " + n(cpu) + " " + n(p) + " " + n(c));
  }
  void onExit(int64_t ts, int cpu, TaskId p) override { log("exit " + n(ts) + " " + n(cpu) + " " + n(p)); }
  void onEnd(int64_t ts) override { log("end " + n(ts)); }

 private:
  template <typename T>
  static std::string n(T v) {
    return std::to_string(v);
  }
  void log(std::string line) {
    calls.push_back(std::move(line));
    threads.push_back(std::this_thread::get_id());
  }
};

// Every kind of call with distinct arguments, `rounds` times (ts = round).
void drive(replay::EventSink& sink, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    const auto u = static_cast<TaskId>(i);
    sink.onSwitch(i, i % 7, u, core::TaskState::RunnablePreempted, u + 1, i % 2 == 0);
    sink.onIdleKind(i, i % 5, i % 3 == 0);
    sink.onCounter(i, core::CounterKind::NrRunning, i % 11, 0.5 * i);
    sink.onWaking(i, 1, u + 2, i % 2 == 1, u + 3, 4);
    sink.onWakeup(i, 2, u + 4, i % 3 == 1, u + 5, 6, i % 4 == 0);
    sink.onMigrate(i, 3, u + 6, u + 7, 8, 9);
    sink.onFork(i, 4, u + 8, u + 9);
    sink.onExit(i, 5, u + 10);
  }
  sink.onEnd(rounds);
}

TEST(PipelinedSink, TheInnerSinkGetsEveryCallInOrderOnItsOwnThread) {
  LoggingSink direct;
  drive(direct, 10000);  // 80001 calls: several chunks of 16k

  LoggingSink inner;
  replay::PipelinedSink pipelined(inner);
  drive(pipelined, 10000);
  pipelined.finish();
  ASSERT_EQ(inner.calls.size(), direct.calls.size());
  for (size_t i = 0; i < direct.calls.size(); ++i) ASSERT_EQ(inner.calls[i], direct.calls[i]) << "call " << i;
  for (const auto& id : inner.threads) ASSERT_NE(id, std::this_thread::get_id());
  pipelined.finish();  // again: nothing more
  EXPECT_EQ(inner.calls.size(), direct.calls.size());
}

TEST(PipelinedSink, FewerCallsThanAChunkArriveAtFinishAndAtDestruction) {
  LoggingSink inner;
  {
    replay::PipelinedSink pipelined(inner);
    pipelined.onExit(7, 1, 3);
    pipelined.onEnd(9);
  }
  ASSERT_EQ(inner.calls.size(), 2u);
  EXPECT_EQ(inner.calls[0], "exit 7 1 3");
  EXPECT_EQ(inner.calls[1], "end 9");
}

// A replay cancelled while its events are built on the sinks' thread stops,
// says so, and leaves no thread behind (a hang here is the failure).
TEST(PipelinedSink, ACancelledReplayStopsAndSaysSo) {
  // 10 us runs and sleeps for 10 s: far more events than the engine handles
  // between two looks at its stop token (65536).
  const auto w = replay_test::rtapp(R"({"global": {"duration": 10},
    "tasks": {"a": {"loop": -1, "run": 10, "sleep": 10}}})");
  std::stop_source stop;
  stop.request_stop();
  replay::ReplayOptions o;
  o.model = "eevdf";
  o.topology = core::Topology::uniform(1, 1, "test");
  o.stop = stop.get_token();
  const auto r = replay::runReplay(w, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("cancelled"), std::string::npos) << r.error().message();
}

}  // namespace
