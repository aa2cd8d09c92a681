// The ordering stage between decoders and the SchedBuilder: hand-made event
// sequences whose right order (and what must be counted) is worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

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

namespace {

// Records what reaches it, in order: (ts, position), and where the event lay.
struct RecordingSink final : core::EventSink {
  std::vector<std::pair<int64_t, uint64_t>> seen;
  std::vector<const DecodedEvent*> addresses;
  std::vector<void*> done;
  void take(DecodedEvent& e) override {
    seen.emplace_back(e.ts, e.position);
    addresses.push_back(&e);
  }
  void blockDone(void* token) override { done.push_back(token); }
};

}  // namespace

// perf's rounds: only the explicit release lets records go, by (ts, file order).
TEST(EventSorter, ExplicitReleaseMergesCpusAndHoldsBackPastTheLimit) {
  core::SchedBuilder b;
  EventSorter sorter(b, EventSorter::Position::ByteOffset, 0);
  sorter.setExplicitRelease();
  RecordingSink sink;
  sorter.setSink(&sink);
  uint64_t off = 0;
  for (int64_t ts : {10, 20, 30, 40}) sorter.push(other(ts, 0, off++));
  for (int64_t ts : {15, 25, 35}) sorter.push(other(ts, 1, off++));
  EXPECT_TRUE(sink.seen.empty());  // a window of 0 would have let them all go
  sorter.releaseUpTo(26);
  ASSERT_EQ(sink.seen.size(), 4u);
  EXPECT_EQ(sink.seen[0].first, 10);
  EXPECT_EQ(sink.seen[1].first, 15);
  EXPECT_EQ(sink.seen[2].first, 20);
  EXPECT_EQ(sink.seen[3].first, 25);
  sorter.finish();
  ASSERT_EQ(sink.seen.size(), 7u);
  EXPECT_EQ(sink.seen[4].first, 30);
  EXPECT_EQ(sink.seen[6].first, 40);
  EXPECT_EQ(sorter.reordered(), 0u);  // merging perf's rounds is the format, not a repair
}

TEST(EventSorter, ExplicitReleaseTiesKeepFileOrder) {
  core::SchedBuilder b;
  EventSorter sorter(b, EventSorter::Position::ByteOffset, 0);
  sorter.setExplicitRelease();
  RecordingSink sink;
  sorter.setSink(&sink);
  sorter.push(other(5, 2, 1));
  sorter.push(other(5, 1, 2));
  sorter.push(other(5, 0, 0));
  sorter.finish();
  ASSERT_EQ(sink.seen.size(), 3u);
  EXPECT_EQ(sink.seen[0].second, 0u);
  EXPECT_EQ(sink.seen[1].second, 1u);
  EXPECT_EQ(sink.seen[2].second, 2u);
}

// Late records within a CPU (moved back on arrival), a CPU stream far out of
// order (sorted at the release), many CPUs: always the order of a full sort.
TEST(EventSorter, ExplicitReleaseMatchesAFullSort) {
  for (int cpus : {1, 3, 40}) {
    for (int shuffle : {0, 3, 1000}) {
      std::mt19937_64 rng(static_cast<uint64_t>(cpus * 7919 + shuffle));
      core::SchedBuilder b;
      EventSorter sorter(b, EventSorter::Position::ByteOffset, 0);
      sorter.setExplicitRelease();
      RecordingSink sink;
      sorter.setSink(&sink);
      std::vector<DecodedEvent> input;
      std::vector<int64_t> clock(static_cast<size_t>(cpus), 0);
      for (int i = 0; i < 5000; ++i) {
        const auto cpu = static_cast<int>(rng() % static_cast<uint64_t>(cpus));
        clock[static_cast<size_t>(cpu)] += static_cast<int64_t>(rng() % 50);
        input.push_back(other(clock[static_cast<size_t>(cpu)], cpu, static_cast<uint64_t>(i)));
      }
      // Swap neighbours (or far apart) within each CPU's stream.
      for (int i = 0; i < shuffle; ++i) {
        const size_t a = rng() % input.size(), z = std::min(input.size() - 1, a + rng() % (shuffle > 100 ? 400 : 3));
        if (input[a].cpu == input[z].cpu) std::swap(input[a].ts, input[z].ts);
      }
      std::vector<std::pair<int64_t, uint64_t>> all;
      for (const auto& e : input) {
        sorter.push(e);
        all.emplace_back(e.ts, e.position);
      }
      std::sort(all.begin(), all.end());
      sorter.finish();
      ASSERT_EQ(sink.seen, all) << "cpus " << cpus << " shuffle " << shuffle;
      EXPECT_EQ(sorter.cpuRegressions(), 0u);
    }
  }
}

// trace.dat's and Perfetto's decoders hand over whole per-CPU blocks: merged
// where they lie, each given back once its last event went out, and with the
// CPU count known, the CPU read least far is the one to read next.
TEST(EventSorter, BlocksAreMergedInPlaceAndGivenBackWhenDone) {
  core::SchedBuilder b;
  EventSorter sorter(b, EventSorter::Position::ByteOffset, INT64_MAX, SIZE_MAX);
  RecordingSink sink;
  sorter.setSink(&sink);
  sorter.setCpuCount(2);
  std::vector<DecodedEvent> cpu0a = {other(10, 0, 1), other(30, 0, 2)};
  std::vector<DecodedEvent> cpu0b = {other(50, 0, 3), other(70, 0, 4)};
  std::vector<DecodedEvent> cpu1a = {other(20, 1, 101), other(40, 1, 102), other(60, 1, 103)};
  sorter.pushBlock(0, cpu0a, 30, &cpu0a);
  EXPECT_EQ(sorter.starvedCpu(), 1);  // cpu1 not read at all yet
  EXPECT_TRUE(sink.seen.empty());
  sorter.pushBlock(1, cpu1a, 60, &cpu1a);
  // Both read up to 30: 10, 20, 30 go; cpu0's block is done, cpu0 is behind.
  ASSERT_EQ(sink.seen.size(), 3u);
  ASSERT_EQ(sink.done.size(), 1u);
  EXPECT_EQ(sink.done[0], &cpu0a);
  EXPECT_EQ(sink.addresses[0], &cpu0a[0]);  // the event itself, not a copy
  EXPECT_EQ(sink.addresses[1], &cpu1a[0]);
  EXPECT_EQ(sorter.starvedCpu(), 0);
  sorter.pushBlock(0, cpu0b, 70, &cpu0b);
  sorter.endCpu(0);
  sorter.endCpu(1);
  EXPECT_EQ(sorter.starvedCpu(), -1);
  sorter.finish();
  const std::vector<std::pair<int64_t, uint64_t>> want = {{10, 1},  {20, 101}, {30, 2}, {40, 102},
                                                          {50, 3},  {60, 103}, {70, 4}};
  EXPECT_EQ(sink.seen, want);
  EXPECT_EQ(sink.done.size(), 3u);
}

TEST(EventSorter, ABlockEventRunningBackOnItsCpuIsClampedWhenItComesUp) {
  core::SchedBuilder b;
  EventSorter sorter(b, EventSorter::Position::ByteOffset, INT64_MAX, SIZE_MAX);
  RecordingSink sink;
  sorter.setSink(&sink);
  std::vector<DecodedEvent> block = {other(100, 0, 1), other(150, 0, 2), other(140, 0, 3), other(160, 0, 4)};
  sorter.pushBlock(0, block, 160, nullptr);
  sorter.finish();
  const std::vector<std::pair<int64_t, uint64_t>> want = {{100, 1}, {150, 2}, {150, 3}, {160, 4}};
  EXPECT_EQ(sink.seen, want);
  EXPECT_EQ(sorter.cpuRegressions(), 1u);
}

// The threaded hand-off: events and side records reach the builder in the
// order they were made, on the thread that drains.
TEST(EventFeed, ThreadedHandsEventsAndSideRecordsOverInOrder) {
  core::SchedBuilder b;
  core::EventFeed feed(b, core::EventFeed::Position::ByteOffset);
  feed.setThreaded();
  std::vector<double> progress;
  std::thread producer([&] {
    const uint16_t key = feed.eventType("sched_switch");
    feed.metadata("recorder", "test");
    for (int i = 0; i < 5000; ++i) {
      DecodedEvent e = sw(100 + 2 * i, 0, static_cast<uint64_t>(i), i % 2 ? 7 : 0,
                          i % 2 ? TaskState::Sleeping : TaskState::Running, i % 2 ? 0 : 7);
      e.countKey = key;
      feed.event(e);
      if (i == 2500) feed.progress(0.5);
    }
    std::string path = "/usr/lib/x86_64-linux-gnu/some/long/path/to/a/program";
    DecodedEvent exec = other(20000, 0, 5000);
    exec.op = EventOp::Exec;
    exec.tid = exec.otherTid = 7;
    exec.setText(0, path);
    feed.event(exec);
    path.assign(path.size(), 'x');  // the decoder's buffer moves on
    for (int i = 0; i < 10; ++i)
      if (feed.keepsRecord(DiagCode::malformed_record)) feed.diagnostic(DiagCode::malformed_record, 77, "bad");
    feed.finish({});
  });
  const core::Status st = feed.drain([&](double f) { progress.push_back(f); });
  producer.join();
  ASSERT_TRUE(st) << st.message();
  auto m = b.finalize();
  EXPECT_EQ(progress, std::vector<double>{0.5});
  EXPECT_EQ(m->metadata.at("recorder"), "test");
  EXPECT_EQ(m->diagnostics.count(DiagCode::malformed_record), 10u);
  size_t kept = 0;
  for (const auto& r : m->diagnostics.records())
    if (r.code == DiagCode::malformed_record) {
      ++kept;
      EXPECT_EQ(r.byteOffset, 77u);
    }
  EXPECT_EQ(kept, core::Diagnostics::kRecordsKeptPerCode);
  // 2500 switches to 7 and back: its slices; the exec's file name kept whole.
  EXPECT_EQ(m->cpuSlices[0].size(), 5000u);
  ASSERT_EQ(m->taskEvents.size(), 1u);
  EXPECT_EQ(m->strings.get(m->taskEvents.text[0]), "/usr/lib/x86_64-linux-gnu/some/long/path/to/a/program");
}

// An input of several files (perf record --threads): a position's file tag
// names the file in the diagnostic, at that file's own offset; both ways in.
TEST(EventFeed, AFileTaggedPositionNamesItsFileAtItsOwnOffset) {
  for (const bool threaded : {false, true}) {
    core::SchedBuilder b;
    core::EventFeed feed(b, core::EventFeed::Position::ByteOffset);
    feed.setFiles({"folder/data", "folder/data.0", "folder/data.1"});
    const auto produce = [&] {
      feed.diagnostic(DiagCode::malformed_record, core::fileTag(2) | 40, "in data.1");
      feed.diagnostic(DiagCode::malformed_record, core::fileTag(0) | 8, "in the header file");
      return core::Status::ok();
    };
    const core::Status st = threaded ? feed.runThreaded(produce, {}, "folder") : produce();
    ASSERT_TRUE(st) << st.message();
    const auto m = b.finalize();
    std::vector<std::pair<std::string, uint64_t>> where;
    for (const auto& r : m->diagnostics.records())
      if (r.code == DiagCode::malformed_record) where.emplace_back(r.file, r.byteOffset.value_or(0));
    const std::vector<std::pair<std::string, uint64_t>> expected = {{"folder/data.1", 40}, {"folder/data", 8}};
    EXPECT_EQ(where, expected) << (threaded ? "threaded" : "direct");
  }
}
