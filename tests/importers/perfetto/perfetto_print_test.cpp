// Perfetto's print event (PrintFtraceEvent: what a process wrote to
// trace_marker, atrace's slices and counters among it). Neither public Perfetto
// trace in shared/traces records print, so the trace is written here, and the
// slices expected are worked out by hand from the markers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "importers/importer.h"
#include "tests/importers/perfetto/perfetto_test_support.h"

namespace {

using namespace perfetto_test;
namespace fs = std::filesystem;

Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }

// FtraceEvent{timestamp, pid, print{ip, buf}}
Bytes printEvent(uint64_t ts, int32_t pid, std::string_view buf) {
  Bytes print;
  putInt(print, 1, 0xffffffff81000000ull);
  putBytes(print, 2, text(buf));
  Bytes event;
  putInt(event, 1, ts);
  putInt(event, 2, static_cast<uint64_t>(pid));
  putBytes(event, 3, print);
  return event;
}

TEST(PerfettoPrint, AtraceMarkersBecomeUserSlicesAndCounters) {
  Bytes bundle;
  putInt(bundle, 1, 0);  // cpu 0
  putBytes(bundle, 2, printEvent(1000, 101, "B|100|outer\n"));
  // Longer than an inline text: the name must survive the bundle's buffer.
  putBytes(bundle, 2, printEvent(2000, 101, "B|100|inner slice with a long name\n"));
  putBytes(bundle, 2, printEvent(3000, 101, "E|100\n"));
  putBytes(bundle, 2, printEvent(5000, 101, "E|100\n"));
  putBytes(bundle, 2, printEvent(6000, 102, "C|100|queue|7\n"));
  putBytes(bundle, 2, printEvent(7000, 102, "plain words\n"));
  putBytes(bundle, 2, printEvent(8000, 102, "E|100\n"));  // nothing of 102's open
  Bytes packet;
  putBytes(packet, 1, bundle);
  Bytes trace;
  putBytes(trace, 1, packet);

  const std::string path =
      (fs::temp_directory_path() / ("schedlab-perfetto-print-" + std::to_string(::getpid()) + ".perfetto-trace")).string();
  writeFile(path, trace);
  auto result = importers::importTrace(path);
  fs::remove(path);
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_FALSE(result->error) << result->error->message();
  const core::TraceModel& m = *result->model;

  struct Slice {
    int32_t tid;
    int64_t ts, dur;
    int depth;
    core::UserSliceKind kind;
  };
  std::map<std::string, Slice> byName;
  const auto& us = m.userSlices;
  for (size_t i = 0; i < us.size(); ++i)
    byName[std::string(m.strings.get(us.name[i]))] =
        Slice{m.threads.tid[us.utid[i].value], us.ts[i], us.dur[i], us.depth[i], us.kind[i]};
  ASSERT_EQ(byName.size(), 3u);
  ASSERT_TRUE(byName.count("outer"));
  EXPECT_EQ(byName["outer"].tid, 101);
  EXPECT_EQ(byName["outer"].ts, 1000);
  EXPECT_EQ(byName["outer"].dur, 4000);  // its E at 5000 (the one at 3000 ends "inner")
  EXPECT_EQ(byName["outer"].depth, 0);
  ASSERT_TRUE(byName.count("inner slice with a long name"));
  EXPECT_EQ(byName["inner slice with a long name"].ts, 2000);
  EXPECT_EQ(byName["inner slice with a long name"].dur, 1000);
  EXPECT_EQ(byName["inner slice with a long name"].depth, 1);
  ASSERT_TRUE(byName.count("plain words"));
  EXPECT_EQ(byName["plain words"].tid, 102);
  EXPECT_EQ(byName["plain words"].kind, core::UserSliceKind::Instant);
  EXPECT_EQ(byName["plain words"].dur, 0);
  EXPECT_EQ(m.diagnostics.count(core::DiagCode::user_slice_end_unmatched), 1u);

  size_t counters = 0;
  for (size_t k = 0; k < m.counters.tracks.size(); ++k) {
    const auto& t = m.counters.tracks[k];
    if (t.kind != core::CounterKind::User) continue;
    ++counters;
    EXPECT_EQ(t.index, 100);
    EXPECT_EQ(m.strings.get(t.name), "queue");
    const auto [b, e] = m.counters.rowsOf(k);
    ASSERT_EQ(e - b, 1u);
    EXPECT_EQ(m.counters.ts[b], 6000);
    EXPECT_EQ(m.counters.value[b], 7.0);
  }
  EXPECT_EQ(counters, 1u);
  uint64_t prints = 0;
  for (const auto& [name, n] : m.eventCounts)
    if (name == "print") prints = n;
  EXPECT_EQ(prints, 7u);
}

}  // namespace
