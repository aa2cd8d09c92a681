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

#include <zstd.h>

#include "core/analysis/stats.h"
#include "core/trace_model.h"
#include "importers/importer.h"
#include "importers/perf/perf_data_reader.h"

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

/// What the reader made of a file: its status and the finalized model.
struct Built {
  core::Status status;
  std::shared_ptr<core::TraceModel> model;
};

/// Reads `path` straight through the perf.data reader (no registry), with the given threading.
inline Built build(const std::string& path, importers::perf::Threading threading,
                   const importers::ImportOptions& options = {}) {
  core::SchedBuilder b;
  b.addSourceFile(path);
  b.setFormat("perf.data");
  Built out;
  out.status = importers::perf::readPerfData(path, b, options, threading);
  out.model = b.finalize();
  return out;
}

/// Same status, counts, tasks, diagnostics, slices, states and wakeups. Of two
/// files, the diagnostics' messages only (they name the file and its offsets).
inline void expectSameModel(const Built& a, const Built& b, bool sameFile = true) {
  EXPECT_EQ(a.status.isOk(), b.status.isOk());
  if (sameFile) {
    EXPECT_EQ(a.status.message(), b.status.message());
  }
  EXPECT_EQ(modelCounts(*a.model), modelCounts(*b.model));
  EXPECT_EQ(a.model->threads.size(), b.model->threads.size());
  EXPECT_EQ(a.model->threads.tgid, b.model->threads.tgid);
  EXPECT_EQ(a.model->dataLoss.count, b.model->dataLoss.count);
  for (size_t i = 0; i < core::kDiagCount; ++i)
    EXPECT_EQ(a.model->diagnostics.count(static_cast<core::DiagCode>(i)), b.model->diagnostics.count(static_cast<core::DiagCode>(i)))
        << core::diagName(static_cast<core::DiagCode>(i));
  ASSERT_EQ(a.model->diagnostics.records().size(), b.model->diagnostics.records().size());
  for (size_t i = 0; i < a.model->diagnostics.records().size(); ++i) {
    const auto& x = a.model->diagnostics.records()[i];
    const auto& y = b.model->diagnostics.records()[i];
    EXPECT_EQ(sameFile ? x.format() : x.message, sameFile ? y.format() : y.message);
  }
  ASSERT_EQ(a.model->cpuSlices.size(), b.model->cpuSlices.size());
  for (size_t c = 0; c < a.model->cpuSlices.size(); ++c) {
    EXPECT_EQ(a.model->cpuSlices[c].ts, b.model->cpuSlices[c].ts);
    EXPECT_EQ(a.model->cpuSlices[c].dur, b.model->cpuSlices[c].dur);
    EXPECT_EQ(a.model->cpuSlices[c].utid, b.model->cpuSlices[c].utid);
  }
  EXPECT_EQ(a.model->threadStates.ts, b.model->threadStates.ts);
  EXPECT_EQ(a.model->wakeups.ts, b.model->wakeups.ts);
}

/// perf.data record types and header features the layout helpers below touch
/// (tools/perf/util/header.h, tools/lib/perf/include/perf/event.h).
inline constexpr uint32_t kCompressedRecord = 81;
inline constexpr uint32_t kFinishedRound = 68;
inline constexpr int kDirFormatFeature = 24;
inline constexpr int kCompressedFeature = 27;

/// Bare records one after another (a data.N file of perf record --threads).
inline std::vector<PerfDataFile::Record> splitRecords(const std::vector<uint8_t>& d) {
  std::vector<PerfDataFile::Record> out;
  for (size_t off = 0; off + 8 <= d.size();) {
    uint16_t size;
    std::memcpy(&size, d.data() + off + 6, 2);
    if (size < 8 || off + size > d.size()) break;
    out.push_back({PerfDataFile::u32(d, off), std::vector<uint8_t>(d.begin() + static_cast<std::ptrdiff_t>(off),
                                                                   d.begin() + static_cast<std::ptrdiff_t>(off + size))});
    off += size;
  }
  return out;
}

/// The plain twin of a perf record -z file: each compressed record replaced by
/// the records its zstd data completes (the file is one zstd stream), and the
/// COMPRESSED feature dropped. A second, deliberately simple decoder: no bounds
/// beyond the fixture's own, checked against `perf script` by the tests.
inline std::vector<uint8_t> decompressedTwin(const std::vector<uint8_t>& bytes) {
  PerfDataFile f(bytes);
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  std::vector<uint8_t> pending;
  std::vector<PerfDataFile::Record> out;
  std::vector<uint8_t> chunk(1 << 20);
  for (auto& r : f.records) {
    if (r.type != kCompressedRecord) {
      out.push_back(std::move(r));
      continue;
    }
    ZSTD_inBuffer in{r.bytes.data() + 8, r.bytes.size() - 8, 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
      if (ZSTD_isError(ZSTD_decompressStream(ctx.get(), &o, &in))) {
        ADD_FAILURE() << "zstd failed on the fixture";
        return {};
      }
      pending.insert(pending.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(o.pos));
    }
    const auto complete = splitRecords(pending);
    size_t used = 0;
    for (const auto& c : complete) used += c.bytes.size();
    out.insert(out.end(), complete.begin(), complete.end());
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(used));
  }
  EXPECT_TRUE(pending.empty());
  f.records = std::move(out);
  f.features.erase(kCompressedFeature);
  return f.assemble();
}

/// The plain twin of a perf record --threads folder: the header file's records,
/// then every data.N file's, in N order, as one file without DIR_FORMAT.
inline std::vector<uint8_t> mergedTwin(const std::string& folder) {
  PerfDataFile f(readBytes(folder + "/data"));
  for (int n = 0;; ++n) {
    const std::string part = folder + "/data." + std::to_string(n);
    if (!fs::exists(part)) break;
    for (auto& r : splitRecords(readBytes(part))) f.records.push_back(std::move(r));
  }
  f.features.erase(kDirFormatFeature);
  return f.assemble();
}

/// Where a record's CPU and time are, from the file's (first) sample_type: in a
/// sample's fixed fields, or in the sample_id_all trailer of other records.
struct SampleLayout {
  int sampleTime = -1;
  int sampleCpu = -1;
  int trailerSize = 0;
  int trailerTime = -1;
  int trailerCpu = -1;
  explicit SampleLayout(const std::vector<uint8_t>& file) {
    const uint64_t st = PerfDataFile::u64(file, PerfDataFile::u64(file, 24) + 24);
    int pos = 8;
    auto take = [&](uint64_t bit, int* at) {
      if (!(st & bit)) return;
      if (at) *at = pos;
      pos += 8;
    };
    take(1u << 16, nullptr);  // IDENTIFIER
    take(1u << 0, nullptr);   // IP
    take(1u << 1, nullptr);   // TID
    take(1u << 2, &sampleTime);
    take(1u << 3, nullptr);  // ADDR
    take(1u << 6, nullptr);  // ID
    take(1u << 9, nullptr);  // STREAM_ID
    take(1u << 7, &sampleCpu);
    // The trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER (perf_evsel__id_hdr_size order).
    pos = 0;
    take(1u << 1, nullptr);
    take(1u << 2, &trailerTime);
    take(1u << 6, nullptr);
    take(1u << 9, nullptr);
    take(1u << 7, &trailerCpu);
    take(1u << 16, nullptr);
    trailerSize = pos;
  }
};

/// Rewrites a (plain, file-layout) recording as perf record --threads lays it
/// out: in `folder`, a `data` file with the header, the features plus
/// DIR_FORMAT and the records that carry no time, and one data.N file per CPU
/// with that CPU's records in file order; no FINISHED_ROUND records.
inline void splitIntoFolder(const std::vector<uint8_t>& bytes, const std::string& folder) {
  PerfDataFile f(bytes);
  const SampleLayout l(bytes);
  std::map<uint32_t, std::vector<uint8_t>> perCpu;
  std::vector<PerfDataFile::Record> kept;
  for (auto& r : f.records) {
    if (r.type == kFinishedRound) continue;
    const auto& b = r.bytes;
    uint64_t ts = 0;
    uint32_t cpu = 0;
    if (r.type == 9 && l.sampleCpu >= 0 && l.sampleTime >= 0) {
      ts = PerfDataFile::u64(b, static_cast<uint64_t>(l.sampleTime));
      cpu = PerfDataFile::u32(b, static_cast<uint64_t>(l.sampleCpu));
    } else if (r.type < 64 && l.trailerCpu >= 0 && l.trailerTime >= 0 && b.size() >= 8u + l.trailerSize) {
      const size_t at = b.size() - static_cast<size_t>(l.trailerSize);
      ts = PerfDataFile::u64(b, at + static_cast<size_t>(l.trailerTime));
      cpu = PerfDataFile::u32(b, at + static_cast<size_t>(l.trailerCpu));
    }
    if (ts == 0 || ts == UINT64_MAX) {
      kept.push_back(std::move(r));
      continue;
    }
    auto& out = perCpu[cpu];
    out.insert(out.end(), b.begin(), b.end());
  }
  f.records = std::move(kept);
  f.features[kDirFormatFeature] = {1, 0, 0, 0, 0, 0, 0, 0};  // u64 version: PERF_DIR_VERSION 1
  fs::create_directories(folder);
  const auto header = f.assemble();
  std::ofstream(folder + "/data", std::ios::binary).write(reinterpret_cast<const char*>(header.data()),
                                                          static_cast<std::streamsize>(header.size()));
  for (const auto& [cpu, data] : perCpu)
    std::ofstream(folder + "/data." + std::to_string(cpu), std::ios::binary)
        .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

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
