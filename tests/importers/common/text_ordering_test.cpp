// Text traces whose CPUs come interleaved out of order (per-CPU buffers merged,
// trace_pipe read while recording, `perf script` of unordered perf.data) import
// to the same model as the sorted trace, with the moved events counted. The
// out-of-order copies are made here from real recordings in shared/traces, by
// delaying each CPU's lines by a bounded random amount; skipped when
// shared/traces is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "importers/importer.h"
#include "replay/replay.h"

namespace {

namespace fs = std::filesystem;

struct Line {
  std::string text;
  int cpu = -1;    ///< -1: not an event line (headers)
  int64_t ts = 0;  ///< as printed: microseconds or nanoseconds, only compared
};

// Both formats print "[CPU]" and then "SECONDS.FRACTION:" on every event line;
// read independently of the importers' tokenizers.
std::vector<Line> readLines(const std::string& path) {
  static const std::regex kEvent(R"(\[(\d+)\][^:]*? (\d+)\.(\d+):)");
  std::vector<Line> lines;
  std::ifstream in(path, std::ios::binary);
  std::string text;
  std::smatch m;
  while (std::getline(in, text)) {
    Line l;
    l.text = text;
    if (!text.empty() && text.front() != '#' && std::regex_search(text, m, kEvent)) {
      l.cpu = std::stoi(m[1]);
      l.ts = std::stoll(m[2].str() + m[3].str());  // same fraction width throughout a file
    }
    lines.push_back(std::move(l));
  }
  return lines;
}

// A reordering a reader of per-CPU buffers could produce: every CPU's lines
// keep their order; a CPU's next line may go out while another CPU still
// holds lines up to `window` earlier; lines of equal time on different CPUs
// keep their order (the file's order is the only record of it at microsecond
// precision, so no reader could restore it). Bursts of up to 64 lines.
std::vector<Line> interleaveOutOfOrder(const std::vector<Line>& sorted, int64_t window, uint32_t seed) {
  std::vector<Line> out;
  std::vector<std::vector<size_t>> perCpu;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i].cpu < 0) {
      out.push_back(sorted[i]);  // header lines, all before the first event in these traces
      continue;
    }
    if (static_cast<size_t>(sorted[i].cpu) >= perCpu.size()) perCpu.resize(static_cast<size_t>(sorted[i].cpu) + 1);
    perCpu[static_cast<size_t>(sorted[i].cpu)].push_back(i);
  }
  std::vector<size_t> head(perCpu.size(), 0);
  const auto eligible = [&](size_t c) {
    if (head[c] == perCpu[c].size()) return false;
    const Line& mine = sorted[perCpu[c][head[c]]];
    for (size_t d = 0; d < perCpu.size(); ++d) {
      if (d == c) continue;
      for (size_t k = head[d]; k < perCpu[d].size(); ++k) {
        const Line& theirs = sorted[perCpu[d][k]];
        if (theirs.ts > mine.ts) break;
        if (theirs.ts < mine.ts - window) return false;
        if (theirs.ts == mine.ts && perCpu[d][k] < perCpu[c][head[c]]) return false;
      }
    }
    return true;
  };
  std::mt19937 rng(seed);
  size_t left = 0;
  for (const auto& q : perCpu) left += q.size();
  while (left > 0) {
    size_t c = rng() % perCpu.size();
    if (!eligible(c)) {
      // The earliest pending line is always allowed to go.
      size_t best = SIZE_MAX;
      for (size_t d = 0; d < perCpu.size(); ++d)
        if (head[d] < perCpu[d].size() && (best == SIZE_MAX || perCpu[d][head[d]] < perCpu[best][head[best]])) best = d;
      c = best;
    }
    for (size_t burst = 1 + rng() % 64; burst > 0 && eligible(c); --burst) {
      out.push_back(sorted[perCpu[c][head[c]++]]);
      --left;
    }
  }
  return out;
}

// Events read after an event with a later time: what the importer must move.
uint64_t countMovedBack(const std::vector<Line>& lines) {
  uint64_t moved = 0;
  int64_t latest = INT64_MIN;
  for (const auto& l : lines) {
    if (l.cpu < 0) continue;
    if (l.ts < latest) ++moved;
    latest = std::max(latest, l.ts);
  }
  return moved;
}

class TempFile {
 public:
  TempFile(const std::vector<Line>& lines, const std::string& name) {
    std::random_device rd;
    m_path = (fs::temp_directory_path() / ("schedlab-ordering-" + std::to_string(rd()) + "-" + name)).string();
    std::ofstream out(m_path, std::ios::binary);
    for (const auto& l : lines) out << l.text << '\n';
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(m_path, ec);
  }
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

struct Case {
  const char* path;    ///< under shared/traces
  const char* format;  ///< the importer that must read it
  int64_t window;      ///< how far lines are moved, in the file's time unit
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.path; }

class TextOrdering : public testing::TestWithParam<Case> {};

TEST_P(TextOrdering, CpusInterleavedOutOfOrderImportToTheSortedModelWithTheMovesCounted) {
  const std::string path = std::string(SCHEDLAB_SHARED_TRACES) + "/" + GetParam().path;
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present (shared/traces is needed)";
  const std::vector<Line> sorted = readLines(path);
  ASSERT_EQ(countMovedBack(sorted), 0u) << "the recording itself is expected in time order";
  const std::vector<Line> shuffled = interleaveOutOfOrder(sorted, GetParam().window, 13);
  ASSERT_EQ(shuffled.size(), sorted.size());
  const uint64_t moved = countMovedBack(shuffled);
  ASSERT_GT(moved, 1000u) << "the copy must really be out of order";

  auto reference = importers::importTrace(path);
  ASSERT_TRUE(reference) << reference.error().message();
  ASSERT_FALSE(reference->error);
  const TempFile copy(shuffled, fs::path(path).filename().string());
  auto reordered = importers::importTrace(copy.path());
  ASSERT_TRUE(reordered) << reordered.error().message();
  ASSERT_FALSE(reordered->error);
  const core::TraceModel& a = *reference->model;
  const core::TraceModel& b = *reordered->model;
  EXPECT_EQ(a.format, GetParam().format);
  EXPECT_EQ(b.format, GetParam().format);

  // The same model: every table, task and count.
  EXPECT_EQ(replay::modelHash(a), replay::modelHash(b));
  EXPECT_EQ(a.eventCounts, b.eventCounts);
  ASSERT_EQ(a.threads.size(), b.threads.size());
  for (size_t u = 0; u < a.threads.size(); ++u)
    EXPECT_EQ(a.strings.get(a.threads.comm[u]), b.strings.get(b.threads.comm[u])) << "utid " << u;
  for (size_t i = 0; i < core::kDiagCount; ++i) {
    const auto code = static_cast<core::DiagCode>(i);
    if (code == core::DiagCode::reordered_events) continue;
    EXPECT_EQ(a.diagnostics.count(code), b.diagnostics.count(code)) << core::diagName(code);
  }
  // Nothing had to move in the recording; in the copy, exactly what was read late.
  EXPECT_EQ(a.diagnostics.count(core::DiagCode::reordered_events), 0u);
  EXPECT_EQ(b.diagnostics.count(core::DiagCode::reordered_events), moved);
  EXPECT_EQ(b.diagnostics.count(core::DiagCode::sort_window_exceeded), 0u);
  EXPECT_EQ(b.diagnostics.count(core::DiagCode::out_of_order_timestamp), 0u);
  EXPECT_EQ(b.diagnostics.count(core::DiagCode::unsorted_input), 0u);
}

// Windows of 5 ms: microseconds in the ftrace text and in perf script's default output.
INSTANTIATE_TEST_SUITE_P(Recorded, TextOrdering,
                         testing::Values(Case{"recorded/pipe-threads/trace.txt", "ftrace-text", 5000},
                                         Case{"recorded/hackbench-proc/trace.txt", "ftrace-text", 5000},
                                         Case{"recorded/pipe-threads/perf-script.txt", "perf-script", 5000},
                                         Case{"recorded/hackbench-proc/perf-script.txt", "perf-script", 5000}),
                         [](const testing::TestParamInfo<Case>& param) {
                           std::string name = param.param.path;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
