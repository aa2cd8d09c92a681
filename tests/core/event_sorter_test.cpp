// The ordering stage between decoders and the SchedBuilder: hand-made event
// sequences whose right order (and what must be counted) is worked out by hand.
#include <gtest/gtest.h>

#include <string>

#include "core/event_sorter.h"

using core::DecodedEvent;
using core::DiagCode;
using core::EventOp;
using core::EventSorter;
using core::TaskState;

namespace {

constexpr int64_t kWideWindow = 1'000'000;

DecodedEvent other(int64_t ts, int cpu, uint64_t line) {
  DecodedEvent e;
  e.op = EventOp::Other;
  e.ts = ts;
  e.cpu = cpu;
  e.position = line;
  return e;
}

DecodedEvent sw(int64_t ts, int cpu, uint64_t line, int prevTid, TaskState prevState, int nextTid) {
  DecodedEvent e = other(ts, cpu, line);
  e.op = EventOp::Switch;
  e.tid = prevTid;
  e.state = prevState;
  e.otherTid = nextTid;
  e.setText(0, prevTid ? "t" + std::to_string(prevTid) : "swapper");
  e.setText(1, nextTid ? "t" + std::to_string(nextTid) : "swapper");
  return e;
}

DecodedEvent waking(int64_t ts, int cpu, uint64_t line, int tid, int targetCpu) {
  DecodedEvent e = other(ts, cpu, line);
  e.op = EventOp::Waking;
  e.tid = tid;
  e.cpuA = targetCpu;
  e.setText(0, "t" + std::to_string(tid));
  return e;
}

// The first run slice of `tid` on `cpu`, or none.
struct Slice {
  int64_t ts = -1;
  int64_t dur = -1;
};
Slice sliceOf(const core::TraceModel& m, int cpu, int tid) {
  const auto& s = m.cpuSlices[static_cast<size_t>(cpu)];
  for (size_t i = 0; i < s.size(); ++i)
    if (m.threads.tid[s.utid[i].value] == tid) return {s.ts[i], s.dur[i]};
  return {};
}

}  // namespace

TEST(EventSorter, PutsCpusReadOutOfOrderBackInTimeOrderAndCountsTheMovedEvents) {
  // Task 5 sleeps on cpu0 at 100; cpu1 wakes it at 200; cpu0 runs it at 300.
  // The file has cpu0's lines first: the switch-in at 300 is read before the
  // wakeup at 200, which must be moved back (one event moved).
  core::SchedBuilder b;
  {
    EventSorter sorter(b, EventSorter::Position::Line, kWideWindow);
    sorter.push(sw(100, 0, 1, 5, TaskState::Sleeping, 0));
    sorter.push(sw(300, 0, 2, 0, TaskState::Running, 5));
    sorter.push(waking(200, 1, 3, 5, 0));
    sorter.push(other(400, 1, 4));
    sorter.finish();
    EXPECT_EQ(sorter.reordered(), 1u);
    EXPECT_EQ(sorter.maxReorderNs(), 100);
    EXPECT_EQ(sorter.late(), 0u);
  }
  auto m = b.finalize();
  EXPECT_EQ(m->diagnostics.count(DiagCode::reordered_events), 1u);
  EXPECT_EQ(m->diagnostics.count(DiagCode::unsorted_input), 0u);
  EXPECT_EQ(m->diagnostics.count(DiagCode::wakeup_of_running_task), 0u);
  EXPECT_EQ(m->diagnostics.count(DiagCode::switch_in_not_runnable), 0u);
  ASSERT_EQ(m->wakeups.size(), 1u);
  EXPECT_EQ(m->wakeups.ts[0], 200);
  // The moved event is located by its line.
  bool located = false;
  for (const auto& r : m->diagnostics.records())
    located |= r.code == DiagCode::reordered_events && r.line == 3u && r.cpu == 1;
  EXPECT_TRUE(located);
}

TEST(EventSorter, WithoutAWindowTheSameLinesReachTheBuilderOutOfOrder) {
  // The control for the test above: nothing sorted, the builder meets the
  // wakeup after the switch-in, clamps it and counts both contradictions.
  core::SchedBuilder b;
  {
    EventSorter sorter(b, EventSorter::Position::Line, 0);
    sorter.push(sw(100, 0, 1, 5, TaskState::Sleeping, 0));
    sorter.push(sw(300, 0, 2, 0, TaskState::Running, 5));
    sorter.push(waking(200, 1, 3, 5, 0));
    sorter.finish();
    EXPECT_EQ(sorter.late(), 1u);
  }
  auto m = b.finalize();
  EXPECT_EQ(m->diagnostics.count(DiagCode::sort_window_exceeded), 1u);
  EXPECT_EQ(m->diagnostics.count(DiagCode::switch_in_not_runnable), 1u);
  EXPECT_EQ(m->diagnostics.count(DiagCode::wakeup_of_running_task), 1u);
  ASSERT_EQ(m->wakeups.size(), 1u);
  EXPECT_EQ(m->wakeups.ts[0], 300);  // placed at the window's edge
}

TEST(EventSorter, ATimestampRunningBackOnItsCpuIsClampedToThatCpuNotToTheLatestEvent) {
  // cpu1's event at 500 is read first. On cpu0, task 7 runs from 100; an event
  // at 150, then its switch-out stamped 140: clamped to cpu0's 150, so 7 ran
  // 50 ns. Clamping against the latest event (cpu1's 500) would make it 400.
  core::SchedBuilder b;
  {
    EventSorter sorter(b, EventSorter::Position::Line, kWideWindow);
    sorter.push(other(500, 1, 1));
    sorter.push(sw(100, 0, 2, 0, TaskState::Running, 7));
    sorter.push(other(150, 0, 3));
    sorter.push(sw(140, 0, 4, 7, TaskState::Sleeping, 0));
    sorter.finish();
    EXPECT_EQ(sorter.cpuRegressions(), 1u);
    EXPECT_EQ(sorter.late(), 0u);
  }
  auto m = b.finalize();
  EXPECT_EQ(m->diagnostics.count(DiagCode::out_of_order_timestamp), 1u);
  EXPECT_EQ(m->diagnostics.count(DiagCode::unsorted_input), 0u);
  const Slice s = sliceOf(*m, 0, 7);
  EXPECT_EQ(s.ts, 100);
  EXPECT_EQ(s.dur, 50);
}

TEST(EventSorter, EqualTimestampsOnDifferentCpusKeepTheOrderTheyWereReadIn) {
  // Text traces print microseconds: events of one microsecond on two CPUs are
  // in the file in their true order. Here cpu1 wakes task 5 (line 2) and cpu0
  // runs it (line 3), both at 100; by CPU number the switch-in would come first.
  core::SchedBuilder b;
  {
    EventSorter sorter(b, EventSorter::Position::Line, kWideWindow);
    sorter.push(sw(50, 0, 1, 5, TaskState::Sleeping, 0));
    sorter.push(waking(100, 1, 2, 5, 0));
    sorter.push(sw(100, 0, 3, 0, TaskState::Running, 5));
    sorter.finish();
    EXPECT_EQ(sorter.reordered(), 0u);
  }
  auto m = b.finalize();
  EXPECT_EQ(m->diagnostics.count(DiagCode::switch_in_not_runnable), 0u);
  EXPECT_EQ(m->diagnostics.count(DiagCode::wakeup_of_running_task), 0u);
}

TEST(EventSorter, AnEventLaterThanTheWindowIsPlacedAtItsEdgeAndCounted) {
  // Window 100 ns. cpu0 at 1000 and 1200: reading 1200 lets everything up to
  // 1100 go, i.e. the event at 1000. cpu1's 900 comes too late (placed at 1000);
  // cpu1's 1050 is still in the window: moved back before 1200.
  core::SchedBuilder b;
  {
    EventSorter sorter(b, EventSorter::Position::Line, 100);
    sorter.push(other(1000, 0, 1));
    sorter.push(other(1200, 0, 2));
    sorter.push(other(900, 1, 3));
    sorter.push(other(1050, 1, 4));
    sorter.finish();
    EXPECT_EQ(sorter.late(), 1u);
    EXPECT_EQ(sorter.reordered(), 1u);  // the late one is counted as late, not as moved
  }
  auto m = b.finalize();
  EXPECT_EQ(m->diagnostics.count(DiagCode::sort_window_exceeded), 1u);
  EXPECT_EQ(m->diagnostics.count(DiagCode::unsorted_input), 0u);
  EXPECT_EQ(m->firstTs, 1000);
  EXPECT_EQ(m->lastTs, 1200);
}

TEST(EventSorter, TheEventsInFlightAreBoundedWhateverTheirTimes) {
  // At most 4 queued: the fifth push lets the oldest go early, long before the
  // window (100 and 101, down to 3 queued), so an event older than them that
  // comes after is late.
  core::SchedBuilder b;
  EventSorter sorter(b, EventSorter::Position::Line, kWideWindow, 4);
  for (int i = 0; i < 5; ++i) sorter.push(other(100 + i, 0, static_cast<uint64_t>(i + 1)));
  sorter.push(other(99, 1, 6));
  sorter.finish();
  EXPECT_EQ(sorter.late(), 1u);
  EXPECT_EQ(b.finalize()->diagnostics.count(DiagCode::sort_window_exceeded), 1u);
}

TEST(EventSorter, KeepsItsOwnCopyOfTextsLongerThanAComm) {
  core::SchedBuilder b;
  EventSorter sorter(b, EventSorter::Position::Line, kWideWindow);
  std::string line = "/usr/lib/x86_64-linux-gnu/some/long/path/to/a/program";
  DecodedEvent e = other(100, 0, 1);
  e.op = EventOp::Exec;
  e.tid = 9;
  e.otherTid = 9;
  e.setText(0, line);
  sorter.push(e);
  line.assign(line.size(), 'x');  // the reader's buffer moves on to the next line
  sorter.push(other(200, 0, 2));
  sorter.finish();
  auto m = b.finalize();
  ASSERT_EQ(m->taskEvents.size(), 1u);
  EXPECT_EQ(m->strings.get(m->taskEvents.text[0]), "/usr/lib/x86_64-linux-gnu/some/long/path/to/a/program");
}

TEST(EventSorter, WithEveryCpuKnownEventsGoOutOnceEachCpuIsReadPastThem) {
  // A window far wider than the trace: without a CPU count nothing reaches the
  // builder before finish(). With both CPUs known, an event goes out once both
  // have been read up to its time; a late line is then a regression of its own
  // CPU (it cannot be placed before what that CPU already had).
  core::SchedBuilder withCount;
  core::SchedBuilder withoutCount;
  EventSorter known(withCount, EventSorter::Position::Line, kWideWindow * 1000);
  EventSorter unknown(withoutCount, EventSorter::Position::Line, kWideWindow * 1000);
  known.setCpuCount(2);
  for (int i = 0; i < 200; ++i) {
    known.push(other(100 * i, i % 2, static_cast<uint64_t>(i + 1)));
    unknown.push(other(100 * i, i % 2, static_cast<uint64_t>(i + 1)));
  }
  EXPECT_GT(withCount.eventsSeen(), 100u);
  EXPECT_EQ(withoutCount.eventsSeen(), 0u);
  known.push(other(50, 0, 201));
  EXPECT_EQ(known.cpuRegressions(), 1u);
  EXPECT_EQ(known.late(), 0u);
  // A CPU beyond the count: the count was wrong, only the window holds events back.
  const uint64_t before = withCount.eventsSeen();
  known.push(other(20000, 2, 202));
  for (int i = 0; i < 200; ++i) known.push(other(20100 + 100 * i, i % 3, static_cast<uint64_t>(203 + i)));
  EXPECT_EQ(withCount.eventsSeen(), before);
  known.finish();
  unknown.finish();
}
