// Helpers for the perf.data and perf-script tests: running the reference tool
// (`perf script`), counting events in its text independently of our tokenizer,
// comparing per-task statistics of two models, and a small perf.data editor
// that rewrites the data section and feature sections of a real recording to
// make bad or special inputs. Used by tests/importers/perf and perfscript.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/analysis/stats.h"
#include "core/trace_model.h"
#include "importers/importer.h"

namespace perf_test {

namespace fs = std::filesystem;

inline std::string testData(const std::string& rel) { return std::string(SCHEDLAB_TEST_DATA) + "/" + rel; }

inline std::vector<uint8_t> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A scratch folder for this test process, removed at exit.
class TempDir {
 public:
  TempDir() {
    m_path = fs::temp_directory_path() / ("schedlab-perf-test-" + std::to_string(getpid()) + "-" + std::to_string(s_next++));
    fs::create_directories(m_path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) const {
    const std::string p = (m_path / name).string();
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return p;
  }
  std::string path(const std::string& name) const { return (m_path / name).string(); }

 private:
  static inline int s_next = 0;
  fs::path m_path;
};

/// Runs a shell command; its stdout, or nullopt when it fails.
inline std::optional<std::string> run(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(command.c_str(), "r"), pclose);
  if (!p) return std::nullopt;
  std::string out;
  std::array<char, 65536> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p.get())) > 0) out.append(buf.data(), n);
  const int rc = pclose(p.release());
  if (rc != 0) return std::nullopt;
  return out;
}

inline bool perfAvailable() {
  static const bool available = run("perf --version >/dev/null 2>&1").has_value();
  return available;
}

/// `perf script` output of a file, or nullopt when perf is missing or fails.
inline std::optional<std::string> perfScript(const std::string& file, const std::string& extra = "") {
  if (!perfAvailable()) return std::nullopt;
  return run("perf script " + extra + " -i '" + file + "' 2>/dev/null");
}

/// Counts events in perf script text by the first "system:name:" token of each
/// line — deliberately simpler than the importer's tokenizer.
inline std::map<std::string, uint64_t> countScriptEvents(const std::string& text) {
  std::map<std::string, uint64_t> counts;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    size_t at = 0;
    while (at < line.size()) {
      const size_t sp = line.find(' ', at);
      const std::string tok = line.substr(at, sp == std::string::npos ? std::string::npos : sp - at);
      at = sp == std::string::npos ? line.size() : sp + 1;
      const size_t c1 = tok.find(':');
      if (tok.size() > 2 && tok.back() == ':' && c1 != std::string::npos && c1 + 1 < tok.size() - 1 &&
          tok.find(':', c1 + 1) == tok.size() - 1 && tok.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_:") == std::string::npos) {
        ++counts[tok.substr(c1 + 1, tok.size() - c1 - 2)];
        break;
      }
    }
  }
  return counts;
}

inline std::map<std::string, uint64_t> modelCounts(const core::TraceModel& m) {
  return {m.eventCounts.begin(), m.eventCounts.end()};
}

/// Imports a file that must import cleanly (no error, not partial).
inline std::shared_ptr<core::TraceModel> importOk(const std::string& path) {
  auto r = importers::importTrace(path);
  if (!r) {
    ADD_FAILURE() << path << ": " << r.error().message();
    return nullptr;
  }
  if (r->error) ADD_FAILURE() << path << ": partial: " << r->error->message();
  return r->model;
}

/// Per-task statistics keyed by (tid, n-th task of that tid), so that two models
/// of one recording line up even when tids were reused.
struct TaskKey {
  int32_t tid;
  int occurrence;
  auto operator<=>(const TaskKey&) const = default;
};
struct TaskNumbers {
  int64_t runtimeNs = 0;
  uint64_t switches = 0;
  uint64_t wakeups = 0;
  uint64_t slices = 0;
};
inline std::map<TaskKey, TaskNumbers> taskNumbers(const core::TraceModel& m) {
  std::map<int32_t, int> seen;
  std::vector<TaskKey> keyOf(m.threads.size());
  for (size_t u = 1; u < m.threads.size(); ++u) keyOf[u] = {m.threads.tid[u], seen[m.threads.tid[u]]++};
  std::map<TaskKey, TaskNumbers> out;
  const auto stats = core::analysis::computeStats(m);
  for (const auto& t : stats.tasks) {
    auto& n = out[keyOf[t.utid.value]];
    n.runtimeNs = t.runtimeNs;
    n.switches = t.switchesVoluntary + t.switchesInvoluntary;
    n.wakeups = t.wakeups;
  }
  for (const auto& cpu : m.cpuSlices)
    for (size_t i = 0; i < cpu.size(); ++i)
      if (cpu.kind[i] == core::SliceKind::Task) ++out[keyOf[cpu.utid[i].value]].slices;
  return out;
}

/// Expects both models to give every task the same switch and wakeup counts and
/// runtimes within `toleranceNsPerSlice` per run slice.
inline void expectSameTaskStats(const core::TraceModel& a, const core::TraceModel& b, int64_t toleranceNsPerSlice) {
  const auto na = taskNumbers(a);
  const auto nb = taskNumbers(b);
  for (const auto& [key, x] : na) {
    if (x.runtimeNs == 0 && x.switches == 0 && x.wakeups == 0) continue;  // named only (COMM records)
    auto it = nb.find(key);
    if (it == nb.end()) {
      ADD_FAILURE() << "task tid " << key.tid << " #" << key.occurrence << " missing from the second model";
      continue;
    }
    const TaskNumbers& y = it->second;
    EXPECT_EQ(x.switches, y.switches) << "tid " << key.tid << " #" << key.occurrence;
    EXPECT_EQ(x.wakeups, y.wakeups) << "tid " << key.tid << " #" << key.occurrence;
    EXPECT_LE(std::llabs(x.runtimeNs - y.runtimeNs), toleranceNsPerSlice * static_cast<int64_t>(x.slices + 1))
        << "tid " << key.tid << " #" << key.occurrence << " runtime " << x.runtimeNs << " vs " << y.runtimeNs;
  }
  for (const auto& [key, y] : nb)
    if ((y.runtimeNs || y.switches || y.wakeups) && !na.count(key))
      ADD_FAILURE() << "task tid " << key.tid << " #" << key.occurrence << " missing from the first model";
}

/// A perf.data file (file layout, little-endian) taken apart into header,
/// data records and feature sections, so tests can edit and reassemble it.
class PerfDataFile {
 public:
  struct Record {
    uint32_t type = 0;
    std::vector<uint8_t> bytes;  ///< whole record, header included
  };

  explicit PerfDataFile(const std::vector<uint8_t>& d) {
    m_prefix.assign(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(u64(d, 40)));
    const uint64_t dataOff = u64(d, 40), dataSize = u64(d, 48);
    for (uint64_t off = dataOff; off < dataOff + dataSize;) {
      uint16_t size;
      std::memcpy(&size, d.data() + off + 6, 2);
      Record r;
      r.type = u32(d, off);
      r.bytes.assign(d.begin() + static_cast<std::ptrdiff_t>(off), d.begin() + static_cast<std::ptrdiff_t>(off + size));
      m_recordOffsets.push_back(off);
      records.push_back(std::move(r));
      off += size;
    }
    uint64_t pos = dataOff + dataSize;
    for (int f = 1; f < 256; ++f) {
      if (!(u64(d, 72 + 8 * static_cast<uint64_t>(f / 64)) >> (f % 64) & 1)) continue;
      const uint64_t o = u64(d, pos), s = u64(d, pos + 8);
      pos += 16;
      features[f].assign(d.begin() + static_cast<std::ptrdiff_t>(o), d.begin() + static_cast<std::ptrdiff_t>(o + s));
    }
  }

  /// The file offset each record had in the original file.
  uint64_t originalOffset(size_t record) const { return m_recordOffsets[record]; }
  uint64_t dataOffset() const { return m_prefix.size(); }

  std::vector<uint8_t> assemble() const {
    std::vector<uint8_t> out = m_prefix;
    for (const auto& r : records) out.insert(out.end(), r.bytes.begin(), r.bytes.end());
    const uint64_t dataSize = out.size() - m_prefix.size();
    std::memcpy(out.data() + 48, &dataSize, 8);
    std::array<uint64_t, 4> bits{};
    for (const auto& [f, body] : features) bits[static_cast<size_t>(f / 64)] |= uint64_t{1} << (f % 64);
    std::memcpy(out.data() + 72, bits.data(), 32);
    const size_t table = out.size();
    out.resize(out.size() + 16 * features.size());
    size_t i = 0;
    for (const auto& [f, body] : features) {
      const uint64_t o = out.size(), s = body.size();
      std::memcpy(out.data() + table + 16 * i, &o, 8);
      std::memcpy(out.data() + table + 16 * i + 8, &s, 8);
      out.insert(out.end(), body.begin(), body.end());
      ++i;
    }
    return out;
  }

  static uint64_t u64(const std::vector<uint8_t>& d, uint64_t off) {
    uint64_t v;
    std::memcpy(&v, d.data() + off, 8);
    return v;
  }
  static uint32_t u32(const std::vector<uint8_t>& d, uint64_t off) {
    uint32_t v;
    std::memcpy(&v, d.data() + off, 4);
    return v;
  }

  std::vector<Record> records;
  std::map<int, std::vector<uint8_t>> features;

 private:
  std::vector<uint8_t> m_prefix;  // header, attrs, ids: everything before the data
  std::vector<uint64_t> m_recordOffsets;
};

/// perf_header_string: u32 length (NUL included, padded to 64) + the text.
inline void appendHeaderString(std::vector<uint8_t>& out, const std::string& s) {
  const uint32_t len = static_cast<uint32_t>((s.size() + 1 + 63) / 64 * 64);
  out.insert(out.end(), reinterpret_cast<const uint8_t*>(&len), reinterpret_cast<const uint8_t*>(&len) + 4);
  out.insert(out.end(), s.begin(), s.end());
  out.resize(out.size() + len - s.size(), 0);
}

/// A HEADER_CPU_TOPOLOGY body: package ("core siblings") lists, then SMT thread lists.
inline std::vector<uint8_t> cpuTopologyFeature(const std::vector<std::string>& packages, const std::vector<std::string>& threads) {
  std::vector<uint8_t> out;
  for (const auto* lists : {&packages, &threads}) {
    const auto n = static_cast<uint32_t>(lists->size());
    out.insert(out.end(), reinterpret_cast<const uint8_t*>(&n), reinterpret_cast<const uint8_t*>(&n) + 4);
    for (const auto& s : *lists) appendHeaderString(out, s);
  }
  return out;
}

inline void appendU32(std::vector<uint8_t>& out, uint32_t v) {
  out.insert(out.end(), reinterpret_cast<const uint8_t*>(&v), reinterpret_cast<const uint8_t*>(&v) + 4);
}

/// The parts perf 4.10+ and 5.3+ add to HEADER_CPU_TOPOLOGY (tools/perf/util/
/// header.c write_cpu_topology): each CPU's core_id and socket_id, then the die
/// siblings lists and each CPU's die_id.
inline void appendCpuIdsAndDies(std::vector<uint8_t>& out, const std::vector<std::pair<uint32_t, uint32_t>>& coreSocket,
                                const std::vector<std::string>& dieLists, const std::vector<uint32_t>& dieIds) {
  for (const auto& [coreId, socketId] : coreSocket) {
    appendU32(out, coreId);
    appendU32(out, socketId);
  }
  appendU32(out, static_cast<uint32_t>(dieLists.size()));
  for (const auto& s : dieLists) appendHeaderString(out, s);
  for (uint32_t id : dieIds) appendU32(out, id);
}

/// HEADER_NUMA_TOPOLOGY (write_numa_topology): u32 nr, then per node u32 id,
/// u64 mem_total, u64 mem_free, the CPU list string.
inline std::vector<uint8_t> numaTopologyFeature(const std::vector<std::pair<uint32_t, std::string>>& nodes) {
  std::vector<uint8_t> out;
  appendU32(out, static_cast<uint32_t>(nodes.size()));
  for (const auto& [id, cpus] : nodes) {
    appendU32(out, id);
    out.resize(out.size() + 16, 0);
    appendHeaderString(out, cpus);
  }
  return out;
}

/// HEADER_CACHE (write_cache): u32 version 1, u32 count, then per cache u32
/// level, line_size, sets, ways and the strings type, size, map.
struct CacheEntry {
  uint32_t level;
  std::string type;
  std::string map;
};
inline std::vector<uint8_t> cacheFeature(const std::vector<CacheEntry>& caches) {
  std::vector<uint8_t> out;
  appendU32(out, 1);
  appendU32(out, static_cast<uint32_t>(caches.size()));
  for (const auto& c : caches) {
    appendU32(out, c.level);
    for (uint32_t v : {64u, 64u, 8u}) appendU32(out, v);
    appendHeaderString(out, c.type);
    appendHeaderString(out, "32K");
    appendHeaderString(out, c.map);
  }
  return out;
}

}  // namespace perf_test
