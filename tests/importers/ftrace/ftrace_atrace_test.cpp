// User-space slices from the real atrace and systrace traces of shared/traces,
// against a second, deliberately simple reading of their trace_marker lines
// (below: a per-thread stack of "B|" lines that "E" lines pop): the same
// slices with the same begin times, names, depths and durations, the same
// unmatched ends and open slices, and the statistics' time-in-state table with
// the same counts. Skipped when shared/traces is not beside the checkout.
#include <gtest/gtest.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/analysis/stats.h"
#include "importers/importer.h"

namespace {

namespace fs = std::filesystem;

struct OracleSlice {
  int64_t ts = 0;
  int64_t dur = -1;  // -1: no end in the trace
  std::string name;
  int depth = 0;
};

struct Oracle {
  std::map<int32_t, std::vector<OracleSlice>> byTid;  // in begin order
  uint64_t begins = 0, ends = 0, unmatchedEnds = 0, counters = 0;
};

// "214168.479970" -> ns, integer and fraction apart (no floating point).
int64_t secondsToNs(std::string_view s) {
  const size_t dot = s.find('.');
  int64_t sec = 0, frac = 0;
  std::from_chars(s.data(), s.data() + dot, sec);
  std::string digits(s.substr(dot + 1));
  digits.resize(9, '0');
  std::from_chars(digits.data(), digits.data() + 9, frac);
  return sec * 1'000'000'000 + frac;
}

Oracle readMarkers(const std::string& path) {
  Oracle o;
  std::map<int32_t, std::vector<size_t>> open;  // per tid: indices into byTid[tid]
  std::ifstream in(path);
  std::string raw;
  while (std::getline(in, raw)) {
    std::string_view line(raw);
    if (line.size() >= 3 && line.substr(line.size() - 3) == "\\n\\") line.remove_suffix(3);  // systrace's JS string
    // The marker: tracefs prints "tracing_mark_write: TEXT", old kernels "0: TEXT".
    size_t at = line.find(": tracing_mark_write: ");
    size_t textAt = at + 22;
    if (at == std::string_view::npos) {
      at = line.find(": 0: ");
      textAt = at + 5;
    }
    if (at == std::string_view::npos) continue;
    const std::string_view text = line.substr(textAt);
    const size_t tsBegin = line.rfind(' ', at) + 1;
    const int64_t ts = secondsToNs(line.substr(tsBegin, at - tsBegin));
    // TASK-PID is everything before the "[CPU]" column, less an optional "(TGID)".
    std::string_view task = line.substr(0, line.find(" ["));
    if (const size_t paren = task.rfind(" ("); paren != std::string_view::npos) task = task.substr(0, paren);
    while (!task.empty() && task.back() == ' ') task.remove_suffix(1);
    int32_t tid = 0;
    std::from_chars(task.data() + task.rfind('-') + 1, task.data() + task.size(), tid);
    if (text.substr(0, 2) == "B|") {
      ++o.begins;
      const std::string_view rest = text.substr(2);
      auto& list = o.byTid[tid];
      list.push_back({ts, -1, std::string(rest.substr(rest.find('|') + 1)), static_cast<int>(open[tid].size())});
      open[tid].push_back(list.size() - 1);
    } else if (text == "E" || text.substr(0, 2) == "E|") {
      ++o.ends;
      auto& stack = open[tid];
      if (stack.empty()) {
        ++o.unmatchedEnds;
        continue;
      }
      OracleSlice& s = o.byTid[tid][stack.back()];
      s.dur = ts - s.ts;
      stack.pop_back();
    } else if (text.substr(0, 2) == "C|") {
      ++o.counters;
    }
  }
  return o;
}

class AtraceSlices : public ::testing::TestWithParam<const char*> {};

TEST_P(AtraceSlices, SameSlicesAsTheMarkerLines) {
  const std::string path = std::string(SCHEDLAB_SHARED_TRACES) + "/" + GetParam();
  if (!fs::exists(path)) GTEST_SKIP() << "shared trace not found: " << path;
  const Oracle o = readMarkers(path);
  auto r = importers::importTrace(path);
  ASSERT_TRUE(r) << r.error().message();
  const core::TraceModel& m = *r->model;
  const auto& us = m.userSlices;

  uint64_t sync = 0, open = 0;
  std::map<int32_t, std::vector<OracleSlice>> got;
  for (size_t u = 1; u < m.threads.size(); ++u) {
    const auto [b, e] = us.rowsOf(core::Utid(static_cast<uint32_t>(u)));
    for (uint32_t row = b; row < e; ++row) {
      if (us.kind[row] != core::UserSliceKind::Sync) continue;
      ++sync;
      const bool isOpen = us.flags[row] & core::kUserSliceOpenAtEnd;
      open += isOpen;
      got[m.threads.tid[u]].push_back(
          {us.ts[row], isOpen ? -1 : us.dur[row], std::string(m.strings.get(us.name[row])), us.depth[row]});
    }
  }
  uint64_t oracleOpen = 0;
  for (const auto& [tid, list] : o.byTid)
    for (const OracleSlice& s : list) oracleOpen += s.dur < 0;
  EXPECT_EQ(sync, o.begins);
  EXPECT_EQ(open, oracleOpen);
  EXPECT_EQ(m.diagnostics.count(core::DiagCode::user_slice_end_unmatched), o.unmatchedEnds);
  EXPECT_EQ(m.diagnostics.count(core::DiagCode::user_slice_open_at_end), oracleOpen);
  ASSERT_EQ(got.size(), o.byTid.size());
  for (const auto& [tid, expected] : o.byTid) {
    SCOPED_TRACE("tid " + std::to_string(tid));
    const auto& list = got[tid];
    ASSERT_EQ(list.size(), expected.size());
    for (size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(list[i].ts, expected[i].ts) << i;
      EXPECT_EQ(list[i].dur, expected[i].dur) << i;
      EXPECT_EQ(list[i].name, expected[i].name) << i;
      EXPECT_EQ(list[i].depth, expected[i].depth) << i;
    }
  }
  uint64_t counterSamples = 0;
  for (size_t k = 0; k < m.counters.tracks.size(); ++k)
    if (m.counters.tracks[k].kind == core::CounterKind::User)
      counterSamples += m.counters.rowsBegin[k + 1] - m.counters.rowsBegin[k];
  EXPECT_EQ(counterSamples, o.counters);

  // The time-in-state table: per name, the completed slices' count and total.
  std::map<std::string, std::pair<uint64_t, int64_t>> expectedTable;
  for (const auto& [tid, list] : o.byTid)
    for (const OracleSlice& s : list)
      if (s.dur >= 0) {
        ++expectedTable[s.name].first;
        expectedTable[s.name].second += s.dur;
      }
  const auto stats = core::analysis::computeStats(m);
  std::map<std::string, std::pair<uint64_t, int64_t>> table;
  for (const auto& row : stats.userSlices)
    if (row.count) table[row.name] = {row.count, row.totalNs};
  EXPECT_EQ(table, expectedTable);
}

// The traces without any marker are in the table too: nothing may appear from nowhere.
INSTANTIATE_TEST_SUITE_P(Shared, AtraceSlices,
                         ::testing::Values("public/tracecompass-incubator/atrace-test",
                                           "public/catapult/android_systrace.html",
                                           "public/catapult/android_systrace.txt", "public/catapult/atrace_data"));

TEST(AtraceSlices, TracesWithMarkersHaveThem) {
  // The oracle itself must see what the traces are known to hold (MANIFEST:
  // atrace-test's tracing_mark_write lines, systrace's "0: B|" lines).
  const std::string root = SCHEDLAB_SHARED_TRACES;
  if (!fs::exists(root + "/public/catapult/android_systrace.html")) GTEST_SKIP() << "no shared traces at " << root;
  const Oracle atrace = readMarkers(root + "/public/tracecompass-incubator/atrace-test");
  EXPECT_EQ(atrace.begins, 164u);
  EXPECT_EQ(atrace.ends, 166u);
  const Oracle systrace = readMarkers(root + "/public/catapult/android_systrace.html");
  EXPECT_EQ(systrace.begins, 5984u);
  EXPECT_EQ(systrace.ends, 5982u);
  EXPECT_EQ(systrace.counters, 1611u);
}

}  // namespace
