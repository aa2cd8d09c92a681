#include "importers/perf/perf_data_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/decoded_event.h"
#include "core/event_feed.h"
#include "core/event_sorter.h"
#include "core/mapped_file.h"
#include "core/power_events.h"
#include "core/task_identities.h"
#include "core/task_state.h"
#include "core/topology.h"
#include "importers/perf/compressed_records.h"
#include "importers/perf/perf_data_format.h"
#include "importers/perf/tracing_data.h"

namespace importers::perf {

namespace {

// The id table's reach past the first id: room for other sessions' events
// created in between, yet at most 32 KiB and 128 bytes per id however far
// apart a corrupt header's ids are.
constexpr uint64_t kDenseIdSlack = 4096;
constexpr uint64_t kDenseIdsPerId = 16;
constexpr size_t kMaxAttrs = 0xffff;  // perf writes one per event per recording; more is a corrupt header
constexpr uint64_t kMaxAttrSize = 1 << 16;
constexpr uint64_t kMaxIdsPerAttr = 1 << 22;
constexpr int kMaxCpu = core::SchedBuilder::kMaxCpus;
constexpr uint32_t kProgressEvery = 1 << 16;
// Folder layout: bytes of one data.N file read before choosing the next one.
constexpr uint64_t kMergeChunkBytes = 1 << 20;
constexpr size_t kMaxDataFiles = kMaxCpu;  // perf record --threads writes one per thread, at most one per CPU
constexpr uint32_t kCompressionZstd = 1;   // enum perf_comp_type (tools/perf/util/compress.h)
// What one compressed record may decompress to: the HEADER_COMPRESSED mmap_len
// (perf's own limit), within these bounds, or the upper one without it.
constexpr uint64_t kMinMaxDecompressed = 64 << 10;
constexpr uint64_t kDefaultMaxDecompressed = 256 << 20;
// perf's u64 nanoseconds beyond int64 are corrupt data; the model's time is int64.
constexpr uint64_t kMaxTs = INT64_MAX;

using core::DecodedEvent;
using core::EventOp;

// perf's own records on their way through the sorter to Reader::take(): events
// of op Private, this in cpuA, the record's CPU (-1: none) in cpuB. They wait
// on CPU 0's queue when they have none: with explicit release every queue is
// sorted by (ts, file order), so the queue does not change the order.
enum PerfRecord : int32_t {
  kRecComm,      ///< tid, aux = tgid, text 0 comm
  kRecCommExec,  ///< as kRecComm, for a COMM record of an exec
  kRecTaskIds,   ///< FORK/EXIT records: tid, aux = tgid
  kRecLost,      ///< aux = events lost (PERF_RECORD_LOST)
  kRecLostSamples,  ///< aux = samples lost (PERF_RECORD_LOST_SAMPLES)
};

// A perf record without a usable timestamp (0, or ~0: "none" to perf).
bool noTime(const DecodedEvent& e) { return e.ts <= 0; }

// Comms are at most 15 characters (TASK_COMM_LEN); longer text is cut.
void setComm(DecodedEvent& e, int k, std::string_view comm) { e.setText(k, comm.substr(0, DecodedEvent::kInlineText)); }

std::string offsetText(uint64_t off) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "byte offset %llu (0x%llx)", static_cast<unsigned long long>(off),
                static_cast<unsigned long long>(off));
  return buf;
}

// --- Attributes: one per perf event (evsel) -----------------------------------

struct Attr {
  uint32_t type = 0;
  uint64_t config = 0;
  uint64_t sampleType = 0;
  uint64_t readFormat = 0;
  bool sampleIdAll = false;
  std::vector<uint64_t> ids;

  // PERF_RECORD_SAMPLE layout: offsets from the record start, -1 when absent.
  int32_t idOff = -1;
  int32_t tidOff = -1;
  int32_t timeOff = -1;
  int32_t cpuOff = -1;
  int32_t rawOff = -1;        // fixed when nothing of variable size precedes RAW
  int32_t variableFrom = -1;  // offset of the first variable-size part (READ group, CALLCHAIN)
  // sample_id_all trailer of other records: its size and field offsets within it.
  uint32_t trailerSize = 0;
  int32_t trailerTid = -1;
  int32_t trailerTime = -1;
  int32_t trailerId = -1;
  int32_t trailerCpu = -1;

  uint32_t fixedEnd = 0;  // a sample at least this long holds the tid, time and cpu fields
  uint32_t decoder = 0;   // index into the reader's decoders
};

void computeLayout(Attr& a) {
  const uint64_t st = a.sampleType;
  int32_t pos = kRecordHeaderSize;
  auto take = [&](uint64_t bit, int32_t* where) {
    if (!(st & bit)) return;
    if (where) *where = pos;
    pos += 8;
  };
  if (st & kSampleIdentifier) {
    a.idOff = pos;
    pos += 8;
  }
  take(kSampleIp, nullptr);
  take(kSampleTid, &a.tidOff);
  take(kSampleTime, &a.timeOff);
  take(kSampleAddr, nullptr);
  if (st & kSampleId) {
    if (a.idOff < 0) a.idOff = pos;
    pos += 8;
  }
  take(kSampleStreamId, nullptr);
  take(kSampleCpu, &a.cpuOff);
  take(kSamplePeriod, nullptr);
  bool variable = false;
  if (st & kSampleRead) {
    if (a.readFormat & kReadGroup) {
      variable = true;
    } else {
      pos += 8 * (1 + std::popcount(a.readFormat & (kReadTotalTimeEnabled | kReadTotalTimeRunning | kReadId | kReadLost)));
    }
  }
  if (st & kSampleCallchain) variable = true;
  for (int32_t at : {a.tidOff, a.timeOff, a.cpuOff})
    if (at >= 0) a.fixedEnd = std::max(a.fixedEnd, static_cast<uint32_t>(at) + 8);
  if (variable) {
    a.variableFrom = pos;
  } else if (st & kSampleRaw) {
    a.rawOff = pos;
  }

  int32_t t = 0;
  auto trailer = [&](uint64_t bit, int32_t* where) {
    if (!(st & bit)) return;
    if (where) *where = t;
    t += 8;
  };
  if (a.sampleIdAll) {
    trailer(kSampleTid, &a.trailerTid);
    trailer(kSampleTime, &a.trailerTime);
    trailer(kSampleId, &a.trailerId);
    trailer(kSampleStreamId, nullptr);
    trailer(kSampleCpu, &a.trailerCpu);
    trailer(kSampleIdentifier, &a.trailerId);
  }
  a.trailerSize = static_cast<uint32_t>(t);
}

// Reads the perf_event_attr fields we need (all within PERF_ATTR_SIZE_VER0) at `off`.
Attr readAttr(const Bytes& b, uint64_t off) {
  Attr a;
  a.type = b.u32(off);
  a.config = b.u64(off + 8);
  a.sampleType = b.u64(off + 24);
  a.readFormat = b.u64(off + 32);
  // The flag bits are C bitfields: sample_id_all is bit 18, counted from the
  // least significant bit on little-endian writers and from the most significant
  // bit of the first byte on big-endian ones (perf swaps them bit by bit too).
  const uint8_t flagByte = b.data()[off + 40 + 2];
  a.sampleIdAll = b.swapped() == (std::endian::native == std::endian::little) ? (flagByte >> 5) & 1 : (flagByte >> 2) & 1;
  computeLayout(a);
  return a;
}

// --- Tracepoint field access, resolved once per format ------------------------

enum class FieldKind : uint8_t { None, Unsigned, Signed, FixedString, DynString, RelString };

struct Field {
  uint32_t off = 0;
  uint32_t size = 0;
  FieldKind kind = FieldKind::None;
  bool present() const { return kind != FieldKind::None; }
  bool isInt() const { return kind == FieldKind::Signed || kind == FieldKind::Unsigned; }
};

// strnlen for the short comm fields, a word at a time (comms are 16 bytes).
inline size_t boundedLength(const char* s, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, s + i, 8);
    const uint64_t zero = (w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL;
    if (zero) return i + static_cast<size_t>(std::countr_zero(zero) / 8);
  }
  for (; i < n; ++i)
    if (s[i] == 0) return i;
  return n;
}

Field resolve(const TracepointFormat& f, std::string_view name) {
  Field out;
  const TracepointField* tf = f.field(name);
  if (!tf) return out;
  out.off = tf->offset;
  out.size = tf->size;
  if (tf->isDynamic)
    out.kind = tf->isRelative ? FieldKind::RelString : FieldKind::DynString;
  else if (tf->size > 8)
    out.kind = FieldKind::FixedString;
  else if (tf->size == 1 || tf->size == 2 || tf->size == 4 || tf->size == 8)
    out.kind = tf->isSigned ? FieldKind::Signed : FieldKind::Unsigned;
  return out;
}

enum class SchedKind : uint8_t { Other, Switch, Wakeup, Waking, WakeupNew, Migrate, Fork, Exit, Exec, StatRuntime, Power };

struct Decoder {
  SchedKind kind = SchedKind::Other;
  uint16_t countKey = DecodedEvent::kNoCount;
  uint32_t minRawSize = 0;  // every fixed field lies below this
  Field commonPid;
  Field commonFlags;
  Field f[7];
  core::PrevStateEncoding encoding = core::PrevStateEncoding::Report414;
  std::array<core::TaskState, 512> stateOf{};  // prev_state values below 512, decoded once
  std::string name;
  // Power: the event and every field by name (core::decodePowerEvent asks by name).
  core::PowerEvent power = core::PowerEvent::None;
  std::vector<std::pair<std::string, Field>> named;
};

// Fields per kind, in the order the decoder's f[] holds them.
struct KindSpec {
  std::string_view event;
  SchedKind kind;
  std::array<std::string_view, 7> fields;
  uint32_t required;  // how many leading fields must exist
};
constexpr KindSpec kKinds[] = {
    {"sched_switch", SchedKind::Switch,
     {"prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"}, 7},
    {"sched_wakeup", SchedKind::Wakeup, {"pid", "comm", "prio", "target_cpu", {}, {}, {}}, 1},
    {"sched_waking", SchedKind::Waking, {"pid", "comm", "prio", "target_cpu", {}, {}, {}}, 1},
    {"sched_wakeup_new", SchedKind::WakeupNew, {"pid", "comm", "prio", "target_cpu", {}, {}, {}}, 1},
    {"sched_migrate_task", SchedKind::Migrate, {"pid", "dest_cpu", "comm", "prio", "orig_cpu", {}, {}}, 2},
    {"sched_process_fork", SchedKind::Fork, {"parent_pid", "child_pid", "parent_comm", "child_comm", {}, {}, {}}, 2},
    {"sched_process_exit", SchedKind::Exit, {"pid", "comm", "prio", {}, {}, {}, {}}, 1},
    {"sched_process_exec", SchedKind::Exec, {"pid", "filename", "old_pid", {}, {}, {}, {}}, 1},
    // perf sched record adds it: the kernel's own accounting of CPU time (update_curr()).
    {"sched_stat_runtime", SchedKind::StatRuntime, {"pid", "runtime", {}, {}, {}, {}, {}}, 2},
};

// The flag table of prev_state's __print_flags says which encoding the kernel used.
core::PrevStateEncoding encodingFromPrintFmt(std::string_view fmt) {
  if (fmt.find("\"I\"") != std::string_view::npos) return core::PrevStateEncoding::Report414;
  if (fmt.find("\"K\"") != std::string_view::npos || fmt.find("\"W\"") != std::string_view::npos ||
      fmt.find("\"x\"") != std::string_view::npos)
    return core::PrevStateEncoding::Legacy;
  return core::PrevStateEncoding::Report414;
}

Decoder makeDecoder(const TracepointFormat& f) {
  Decoder d;
  d.name = f.name;
  d.commonPid = resolve(f, "common_pid");
  d.commonFlags = resolve(f, "common_flags");
  if (f.system == "sched") {
    for (const auto& spec : kKinds) {
      if (spec.event != f.name) continue;
      bool ok = true;
      for (uint32_t i = 0; i < spec.fields.size(); ++i) {
        if (spec.fields[i].empty()) continue;
        d.f[i] = resolve(f, spec.fields[i]);
        if (i < spec.required && !d.f[i].present()) ok = false;
      }
      d.kind = ok ? spec.kind : SchedKind::Other;
      break;
    }
    if (d.kind == SchedKind::Switch) {
      d.encoding = encodingFromPrintFmt(f.printFmt);
      for (uint64_t v = 0; v < d.stateOf.size(); ++v)
        d.stateOf[v] = core::taskStateFromRaw(v, d.encoding).value_or(core::TaskState::Unknown);
    }
  }
  // Power events are power:cpu_idle and the like, the PELT ones sched:sched_pelt_se
  // or lisa:lisa__sched_pelt_se: any system.
  if (d.kind == SchedKind::Other && (d.power = core::powerEventOf(f.name)) != core::PowerEvent::None &&
      d.power != core::PowerEvent::Print) {
    d.kind = SchedKind::Power;
    for (const auto& field : f.fields) d.named.emplace_back(field.name, resolve(f, field.name));
  }
  auto grow = [&](const Field& fl) {
    if (!fl.present()) return;
    const uint32_t end = fl.off + (fl.kind == FieldKind::DynString || fl.kind == FieldKind::RelString ? 4 : fl.size);
    d.minRawSize = std::max(d.minRawSize, end);
  };
  grow(d.commonPid);
  grow(d.commonFlags);
  for (const auto& fl : d.f) grow(fl);
  return d;
}

// --- CPU lists ("0-3,8,10-11") -----------------------------------------------

// The kernel's format, as sysfs writes it (core::parseCpuList); an empty list
// names no CPU, which no topology list may do.
bool parseCpuList(std::string_view s, std::vector<int>& out) {
  auto cpus = core::parseCpuList(s, kMaxCpu);
  if (!cpus) return false;
  out = std::move(*cpus);
  return !out.empty();
}

// --- The reader ----------------------------------------------------------------

class Reader final : public core::EventSink {
 public:
  Reader(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options, Threading threading)
      : m_path(path), m_b(builder), m_opt(options), m_threading(threading),
        m_feed(builder, core::EventFeed::Position::ByteOffset), m_sorter(m_feed, INT64_MAX, SIZE_MAX) {
    m_sorter.setExplicitRelease();
    m_sorter.setSink(this);
  }

  core::Status run();
  void take(DecodedEvent& e) override { deliver(e); }

 private:
  // A file of records: the perf.data file, or one data.N file of the folder
  // layout (perf record --threads), each written by its own perf thread with its
  // own zstd stream.
  struct DataStream {
    std::string path;
    std::unique_ptr<core::MappedFile> file;  // null for the header file's own data (m_file)
    const uint8_t* base = nullptr;
    uint64_t begin = 0;
    uint64_t end = 0;
    uint64_t pos = 0;
    uint64_t tag = 0;  // fileTag(n): put on every record's offset
    std::unique_ptr<CompressedRecords> zstd;
    // Folder merge (mergeDataFiles): per CPU, the latest time this file has given.
    std::vector<int64_t> latestByCpu;
    int64_t mark = 0;      // everything of this file up to here has been read
    int64_t nextMark = 0;  // what mark becomes after the next chunk
  };

  // Errors name the file being read, at its own offsets; inside decompressed
  // data also where in the decompressed stream.
  core::Error errorAt(uint64_t off, const std::string& what) const {
    const std::string& path = m_stream ? m_stream->path : m_path;
    if (m_inCompressed)
      return core::Error(path + ": " + offsetText(off) + ": in the zstd-compressed record, at decompressed byte " +
                         std::to_string(m_decompressedAt) + ": " + what);
    return core::Error(path + ": " + offsetText(off) + ": " + what);
  }
  // `off` is the file's own offset; events and diagnostics carry the file's tag too.
  uint64_t tagged(uint64_t off) const { return (m_stream ? m_stream->tag : 0) | off; }
  void diag(core::DiagCode code, uint64_t off, std::string what, std::optional<int> cpu = {}) {
    if (!m_feed.keepsRecord(code)) return;
    if (m_inCompressed) what = "in the zstd-compressed record: " + what;
    m_feed.diagnostic(code, tagged(off), what, cpu);
  }

  core::Status readFileHeader();
  core::Status readFeatures(uint64_t tableOffset);
  core::Status readFeature(int feat, uint64_t off, uint64_t size);
  core::Status readTracingData(uint64_t off, uint64_t size);
  void readTopology(const Bytes& sec, uint64_t base);
  void readDies(const Bytes& sec, uint64_t pos, uint64_t base);
  void readNumaTopology(const Bytes& sec, uint64_t base);
  void readCaches(const Bytes& sec, uint64_t base);
  std::optional<std::string> headerString(const Bytes& sec, uint64_t& pos);
  core::Status addAttr(Attr a);
  void rebuildDecoders();
  core::Status readAllRecords();
  core::Status findDataFiles();
  core::Status mergeDataFiles();
  core::Status processRecords(DataStream& s, uint64_t budget);
  core::Status processRecord(const uint8_t* rec, uint32_t type, uint32_t size, uint64_t off);
  core::Status processCompressed(const uint8_t* rec, uint32_t type, uint32_t size, uint64_t off);

  int attrIndexForId(uint64_t id) const;
  int attrForSample(const uint8_t* rec, uint32_t size) const;
  int attrForOther(const uint8_t* rec, uint32_t size) const;

  void queue(DecodedEvent& e);
  /// To the builder (threaded: to its thread); DataLoss counted as reported.
  void emit(const DecodedEvent& e) {
    if (e.op == EventOp::DataLoss && e.aux > 0) m_lostFed += static_cast<uint64_t>(e.aux);
    m_feed.event(e);
  }
  void decodeSample(uint64_t off, const uint8_t* rec, uint32_t size, const Attr& a);
  bool locateRaw(const uint8_t* rec, uint32_t size, const Attr& a, const uint8_t*& raw, uint32_t& rawLen) const;
  void decodeOther(uint64_t off, const uint8_t* rec, uint32_t size, uint32_t type, const Attr& a);
  void deliver(DecodedEvent& e);
  void deliverRecord(DecodedEvent& e);
  void finish();

  uint64_t rd64(const uint8_t* p) const {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return m_swap ? byteSwap(v) : v;
  }
  uint32_t rd32(const uint8_t* p) const {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return m_swap ? byteSwap(v) : v;
  }
  // A power sample's fields by name, for core::decodePowerEvent.
  class SampleFields final : public core::EventFields {
   public:
    SampleFields(const Reader& r, const Decoder& d, const uint8_t* raw, uint32_t rawLen)
        : m_reader(r), m_decoder(d), m_raw(raw), m_rawLen(rawLen) {}
    std::optional<int64_t> number(std::string_view name) const override;
    std::optional<std::string_view> text(std::string_view name) const override;

   private:
    const Reader& m_reader;
    const Decoder& m_decoder;
    const uint8_t* m_raw;
    uint32_t m_rawLen;
  };
  [[gnu::always_inline]] int64_t field(const uint8_t* raw, const Field& f) const;
  [[gnu::always_inline]] std::string_view string(const uint8_t* raw, uint32_t len, const Field& f) const;
  std::string m_path;
  core::SchedBuilder& m_b;
  const ImportOptions& m_opt;
  Threading m_threading;
  // Every event and diagnostic goes through the feed, never straight to m_b;
  // the sorter puts records into perf's order (rounds) and hands them to take().
  core::EventFeed m_feed;
  core::EventSorter m_sorter;
  uint64_t m_lostFed = 0;  // events reported lost so far
  core::MappedFile m_file;  // the whole input, mapped read-only
  Bytes m_bytes;
  bool m_swap = false;
  bool m_pipe = false;

  uint64_t m_dataBegin = 0;
  uint64_t m_dataEnd = 0;
  std::vector<Attr> m_attrs;
  bool m_uniformSampleType = true;
  std::vector<uint32_t> m_denseIds;                   // id - m_denseIdBase -> attr + 1, for ids near the first
  uint64_t m_denseIdBase = 0;
  uint64_t m_idCount = 0;
  std::unordered_map<uint64_t, uint32_t> m_sparseIds;  // the rest
  std::unordered_map<uint64_t, std::string> m_descNames;
  std::vector<TracepointFormat> m_formats;
  bool m_haveTracingData = false;
  std::vector<Decoder> m_decoders;
  bool m_haveExecTracepoint = false;

  int64_t m_nextFlush = 0;
  int64_t m_maxTs = 0;
  int64_t m_lastDeliveredTs = 0;

  // Identities from COMM/FORK records (tgid, the comm at trace start).
  core::TaskIdentities m_tasks;
  uint64_t m_synthLostSamples = 0;
  int m_nrCpusOnline = 0;
  int m_nrCpusAvail = 0;

  std::vector<DataStream> m_streams;  // [0]: the header file's data section; then data.N in N order
  DataStream* m_stream = nullptr;     // the one being read
  bool m_dirFormat = false;           // HEADER_DIR_FORMAT: perf record --threads
  // perf record -z (HEADER_COMPRESSED): what one record may decompress to, and
  // the ratio the recording reached (to size the model and pick threading).
  uint32_t m_compressionType = kCompressionZstd;  // the only one perf has written
  uint64_t m_maxDecompressed = kDefaultMaxDecompressed;
  uint64_t m_compressionRatio = 1;
  bool m_inCompressed = false;
  uint64_t m_decompressedAt = 0;
  // CPU_TOPOLOGY's cores and packages, refined by the NUMA_TOPOLOGY and CACHE
  // features that follow it in the file (features come in bit order).
  std::optional<core::Topology> m_topology;
};

core::Status Reader::run() {
  std::error_code ec;
  // The folder layout of perf record --threads: `data` is the header file.
  if (std::filesystem::is_directory(m_path, ec)) m_path = (std::filesystem::path(m_path) / "data").string();
  if (auto st = m_file.open(m_path); !st) return st;
  if (m_file.size() < 16) return errorAt(0, "file too short for a perf.data header (" + std::to_string(m_file.size()) + " bytes)");
  uint64_t magic;
  std::memcpy(&magic, m_file.data(), 8);
  if (std::endian::native == std::endian::big) magic = byteSwap(magic);
  if (magic == kMagic2Swapped) {
    m_swap = std::endian::native == std::endian::little;
  } else if (magic == kMagic2) {
    m_swap = std::endian::native == std::endian::big;
  } else if (std::memcmp(m_file.data(), "PERFFILE", 8) == 0) {
    return errorAt(0, "perf.data version 1 (magic PERFFILE) is not supported; only PERFILE2");
  } else {
    return errorAt(0, "not a perf.data file (no PERFILE2 magic)");
  }
  m_bytes = Bytes(m_file.data(), m_file.size(), m_swap);
  const uint64_t headerSize = m_bytes.u64(8);
  if (headerSize == kPipeHeaderSize) {
    m_pipe = true;
    m_dataBegin = kPipeHeaderSize;
    m_dataEnd = m_file.size();
  } else {
    if (auto st = readFileHeader(); !st) return st;
  }
  DataStream& header = m_streams.emplace_back();
  header.path = m_path;
  header.base = m_file.data();
  header.begin = header.pos = m_dataBegin;
  header.end = m_dataEnd;
  if (m_dirFormat) {
    if (auto st = findDataFiles(); !st) return st;
  }
  m_b.setMetadata("perf_data_layout", m_pipe ? "pipe" : m_dirFormat ? "folder" : "file");
  uint64_t dataBytes = 0;
  for (const auto& s : m_streams) dataBytes += s.end - s.begin;
  dataBytes *= m_compressionRatio;
  // A sched tracepoint sample takes 90-130 bytes; the builder sizes its tables from this.
  m_b.reserve(dataBytes / 96);
  // Reading the file and building the model take about 40% and 60% of a large
  // import: with a core to spare, read on a worker thread so the two overlap.
  // Pipe data changes the event list while it streams, so it is read here.
  const bool threaded = !m_pipe && decodeOnAWorker(m_threading, dataBytes);
  const auto read = [this] {
    core::Status body = readAllRecords();
    m_sorter.finish();
    finish();
    return body;
  };
  if (!threaded) return read();
  return m_feed.runThreaded(read, m_opt.progress, m_path);
}

core::Status Reader::readFileHeader() {
  const Bytes& b = m_bytes;
  const uint64_t headerSize = b.u64(8);
  // Headers written before the feature bitmap existed end right after event_types.
  constexpr uint64_t kHeaderWithoutFeatures = 72;
  if (headerSize != kFileHeaderSize && headerSize != kHeaderWithoutFeatures)
    return errorAt(8, "unsupported perf.data header size " + std::to_string(headerSize) + " (expected 104, or 16 for pipe data)");
  if (!b.has(0, headerSize)) return errorAt(0, "file ends inside the perf.data header");
  const uint64_t attrSize = b.u64(16);
  const uint64_t attrsOff = b.u64(24);
  const uint64_t attrsSize = b.u64(32);
  const uint64_t dataOff = b.u64(40);
  const uint64_t dataSize = b.u64(48);
  if (attrSize < kAttrMinSize + 16 || attrSize > kMaxAttrSize)
    return errorAt(16, "implausible attr_size " + std::to_string(attrSize));
  if (!b.has(attrsOff, attrsSize)) return errorAt(24, "attrs section [" + std::to_string(attrsOff) + ", +" + std::to_string(attrsSize) + ") lies outside the file (" + std::to_string(b.size()) + " bytes)");
  if (attrsSize % attrSize != 0) return errorAt(32, "attrs section size " + std::to_string(attrsSize) + " is not a multiple of attr_size " + std::to_string(attrSize));
  const uint64_t nAttrs = attrsSize / attrSize;
  if (nAttrs == 0) return errorAt(32, "the file declares no events (empty attrs section)");
  if (nAttrs > kMaxAttrs) return errorAt(32, "implausible number of events " + std::to_string(nAttrs));
  for (uint64_t i = 0; i < nAttrs; ++i) {
    const uint64_t at = attrsOff + i * attrSize;
    Attr a = readAttr(b, at);
    const uint64_t idsOff = b.u64(at + attrSize - 16);
    const uint64_t idsSize = b.u64(at + attrSize - 8);
    if (!b.has(idsOff, idsSize) || idsSize % 8 != 0 || idsSize / 8 > kMaxIdsPerAttr)
      return errorAt(at + attrSize - 16, "ids of event " + std::to_string(i) + " lie outside the file or have a bad size");
    for (uint64_t k = 0; k < idsSize / 8; ++k) a.ids.push_back(b.u64(idsOff + 8 * k));
    if (auto st = addAttr(std::move(a)); !st) return errorAt(at, st.message());
  }

  m_dataBegin = dataOff;
  m_dataEnd = dataOff + dataSize;
  if (dataOff > b.size() || dataSize > UINT64_MAX - dataOff)
    return errorAt(40, "data section offset " + std::to_string(dataOff) + " lies beyond the end of the file (" + std::to_string(b.size()) + " bytes)");
  const bool dataTruncated = m_dataEnd > b.size();
  if (headerSize == kFileHeaderSize && !dataTruncated) {
    if (auto st = readFeatures(m_dataEnd); !st) return st;
  }
  if (dataTruncated) {
    // The feature sections (tracing formats among them) follow the data: a file
    // cut inside its data has lost them, and the samples cannot be decoded.
    return errorAt(b.size(), "file ends inside the data section, which is declared to end at byte " +
                                 std::to_string(m_dataEnd) + "; the feature sections after it (event formats) are missing");
  }
  bool anyTracepoint = false;
  for (const auto& a : m_attrs) anyTracepoint |= a.type == kPerfTypeTracepoint;
  if (anyTracepoint && !m_haveTracingData)
    return errorAt(m_dataEnd, "the file has tracepoint events but no tracing data feature (event formats)");
  rebuildDecoders();
  return core::Status::ok();
}

core::Status Reader::addAttr(Attr a) {
  if (m_attrs.size() >= kMaxAttrs) return core::Error("too many events");
  if (!m_attrs.empty() && a.sampleType != m_attrs.front().sampleType) m_uniformSampleType = false;
  const auto index = static_cast<uint32_t>(m_attrs.size());
  for (uint64_t id : a.ids) {
    ++m_idCount;
    if (m_denseIds.empty()) m_denseIdBase = id;
    // The kernel numbers events from one global counter, so a recording's ids
    // lie close together wherever the counter stood (past 2^20 on a machine up
    // for long): a table from the first id holds them. One far from the rest
    // (an id below the first wraps here), as a corrupt header has, goes to the
    // map, so the table stays a few entries per id.
    const uint64_t slot = id - m_denseIdBase;
    if (slot < kDenseIdSlack + kDenseIdsPerId * m_idCount) {
      if (slot >= m_denseIds.size()) m_denseIds.resize(std::max<size_t>(slot + 1, m_denseIds.size() * 2), 0);
      m_denseIds[slot] = index + 1;
    } else {
      m_sparseIds[id] = index;
    }
  }
  m_attrs.push_back(std::move(a));
  return core::Status::ok();
}

std::optional<std::string> Reader::headerString(const Bytes& sec, uint64_t& pos) {
  const auto len = sec.checkedU32(pos);
  if (!len || !sec.has(pos + 4, *len)) return std::nullopt;
  std::string_view s = sec.text(pos + 4, *len);
  pos += 4 + *len;
  return std::string(s.substr(0, s.find('\0')));
}

core::Status Reader::readFeatures(uint64_t tableOffset) {
  const Bytes& b = m_bytes;
  uint64_t pos = tableOffset;
  for (int feat = 1; feat < kFeatBits; ++feat) {
    const uint64_t word = b.u64(72 + 8 * static_cast<uint64_t>(feat / 64));  // adds_features follows event_types
    if (!(word >> (feat % 64) & 1)) continue;
    if (!b.has(pos, 16)) {
      diag(core::DiagCode::truncated_input, pos, "feature section table ends early; later header features ignored");
      break;
    }
    const uint64_t off = b.u64(pos);
    const uint64_t size = b.u64(pos + 8);
    if (!b.has(off, size)) {
      if (feat == kFeatTracingData) return errorAt(pos, "tracing data feature section lies outside the file");
      diag(core::DiagCode::malformed_record, pos, "header feature " + std::to_string(feat) + " lies outside the file; ignored");
    } else if (auto st = readFeature(feat, off, size); !st) {
      return st;
    }
    pos += 16;
  }
  return core::Status::ok();
}

core::Status Reader::readTracingData(uint64_t off, uint64_t size) {
  auto parsed = parseTracingData({m_file.data() + off, static_cast<size_t>(size)}, off);
  if (!parsed) return core::Error(m_path + ": cannot read the tracing data (event formats): " + parsed.error().message());
  m_formats = std::move(parsed->formats);
  m_haveTracingData = true;
  rebuildDecoders();
  return core::Status::ok();
}

core::Status Reader::readFeature(int feat, uint64_t off, uint64_t size) {
  const Bytes sec = m_bytes.sub(off, size);
  uint64_t pos = 0;
  switch (feat) {
    case kFeatTracingData: return readTracingData(off, size);
    case kFeatHostname:
    case kFeatOsRelease:
    case kFeatVersion:
    case kFeatArch:
    case kFeatCpuDesc: {
      const auto s = headerString(sec, pos);
      if (!s) {
        diag(core::DiagCode::malformed_record, off, "header feature " + std::to_string(feat) + " is not a valid string");
        break;
      }
      static constexpr std::pair<int, const char*> kKeys[] = {{kFeatHostname, "hostname"},
                                                              {kFeatOsRelease, "osrelease"},
                                                              {kFeatVersion, "perf_version"},
                                                              {kFeatArch, "arch"},
                                                              {kFeatCpuDesc, "cpudesc"}};
      for (const auto& [f, key] : kKeys)
        if (f == feat) m_b.setMetadata(key, *s);
      break;
    }
    case kFeatNrCpus: {
      // Written as nr_cpus_available (present CPUs) then nr_cpus_online.
      if (!sec.has(0, 8)) {
        diag(core::DiagCode::malformed_record, off, "NRCPUS header feature is too short");
        break;
      }
      m_nrCpusAvail = static_cast<int>(std::min<uint32_t>(sec.u32(0), kMaxCpu));
      m_nrCpusOnline = static_cast<int>(std::min<uint32_t>(sec.u32(4), kMaxCpu));
      m_b.setMetadata("nrcpus", std::to_string(m_nrCpusOnline));
      m_b.setMetadata("nrcpus_avail", std::to_string(m_nrCpusAvail));
      break;
    }
    case kFeatCmdline: {
      const auto n = sec.checkedU32(0);
      pos = 4;
      std::string cmdline;
      for (uint32_t i = 0; n && i < *n; ++i) {
        const auto s = headerString(sec, pos);
        if (!s) {
          diag(core::DiagCode::malformed_record, off, "CMDLINE header feature is cut short");
          break;
        }
        if (!cmdline.empty()) cmdline += ' ';
        cmdline += *s;
      }
      m_b.setMetadata("cmdline", cmdline);
      break;
    }
    case kFeatEventDesc: {
      const auto n = sec.checkedU32(0);
      const auto attrSize = sec.checkedU32(4);
      if (!n || !attrSize) break;
      pos = 8;
      for (uint32_t i = 0; i < *n; ++i) {
        const auto nrIds = sec.checkedU32(pos + *attrSize);
        if (!nrIds) break;
        pos += *attrSize + 4;
        const auto name = headerString(sec, pos);
        if (!name || !sec.has(pos, uint64_t{*nrIds} * 8)) break;
        for (uint32_t k = 0; k < *nrIds; ++k) m_descNames[sec.u64(pos + 8 * k)] = *name;
        pos += uint64_t{*nrIds} * 8;
      }
      break;
    }
    case kFeatCpuTopology: readTopology(sec, off); break;
    case kFeatDirFormat: m_dirFormat = true; break;
    case kFeatCompressed: {
      // write_compressed() in tools/perf/util/header.c: five u32.
      if (!sec.has(0, 20)) {
        diag(core::DiagCode::malformed_record, off, "COMPRESSED header feature is too short");
        break;
      }
      m_compressionType = sec.u32(4);
      m_compressionRatio = std::clamp<uint64_t>(sec.u32(12), 1, 100);
      m_maxDecompressed = std::clamp<uint64_t>(sec.u32(16), kMinMaxDecompressed, kDefaultMaxDecompressed);
      m_b.setMetadata("perf_compression", (m_compressionType == kCompressionZstd ? "zstd" : "type " + std::to_string(m_compressionType)) +
                                              " level " + std::to_string(sec.u32(8)) + ", ratio " + std::to_string(sec.u32(12)));
      break;
    }
    case kFeatNumaTopology: readNumaTopology(sec, off); break;
    case kFeatCache: readCaches(sec, off); break;
    default: break;
  }
  return core::Status::ok();
}

void Reader::readTopology(const Bytes& sec, uint64_t base) {
  uint64_t pos = 0;
  auto readList = [&](std::vector<std::string>& out) {
    const auto n = sec.checkedU32(pos);
    if (!n || *n > static_cast<uint32_t>(kMaxCpu)) return false;
    pos += 4;
    for (uint32_t i = 0; i < *n; ++i) {
      auto s = headerString(sec, pos);
      if (!s) return false;
      out.push_back(std::move(*s));
    }
    return true;
  };
  std::vector<std::string> packageLists;
  std::vector<std::string> threadLists;
  if (!readList(packageLists) || !readList(threadLists)) {
    diag(core::DiagCode::malformed_record, base, "CPU_TOPOLOGY header feature is malformed; topology not read");
    return;
  }
  // thread_siblings lists name the SMT siblings of one core ("0,4" or "0-1");
  // core_siblings lists (despite the name) the CPUs of one package.
  std::vector<std::vector<int>> packages;
  for (const auto& s : packageLists) {
    std::vector<int> cpus;
    if (parseCpuList(s, cpus)) packages.push_back(std::move(cpus));
  }
  std::vector<std::vector<int>> cores;
  std::vector<int> seen(static_cast<size_t>(kMaxCpu), 0);
  for (const auto& s : threadLists) {
    std::vector<int> cpus;
    if (!parseCpuList(s, cpus)) {
      diag(core::DiagCode::malformed_record, base, "CPU_TOPOLOGY thread siblings list '" + s + "' is not a CPU list");
      return;
    }
    for (int c : cpus)
      if (seen[static_cast<size_t>(c)]++) {
        diag(core::DiagCode::malformed_record, base, "CPU_TOPOLOGY names cpu " + std::to_string(c) + " in two cores");
        return;
      }
    cores.push_back(std::move(cpus));
  }
  if (cores.empty()) return;
  std::sort(cores.begin(), cores.end());
  std::vector<int> corePackage;
  for (const auto& core : cores) {
    int pkg = 0;
    for (size_t p = 0; p < packages.size(); ++p)
      if (std::find(packages[p].begin(), packages[p].end(), core.front()) != packages[p].end()) pkg = static_cast<int>(p);
    corePackage.push_back(pkg);
  }
  m_topology = core::Topology(std::move(cores), std::move(corePackage), "perf.data header");
  // perf 4.10+ goes on with each CPU's core_id and socket_id (nr_cpus_avail
  // pairs), perf 5.3+ with die_siblings lists and each CPU's die_id.
  const uint64_t idsBytes = uint64_t{static_cast<uint32_t>(m_nrCpusAvail)} * 8;
  if (m_nrCpusAvail > 0 && sec.has(pos, idsBytes + 4)) readDies(sec, pos + idsBytes, base);
  m_b.setTopology(*m_topology);
}

void Reader::readDies(const Bytes& sec, uint64_t pos, uint64_t base) {
  const auto lists = sec.checkedU32(pos);
  if (!lists || *lists > static_cast<uint32_t>(kMaxCpu)) return;
  pos += 4;
  for (uint32_t i = 0; i < *lists; ++i)
    if (!headerString(sec, pos)) {
      diag(core::DiagCode::malformed_record, base, "CPU_TOPOLOGY die siblings lists are cut short; dies not read");
      return;
    }
  const auto n = static_cast<uint32_t>(m_nrCpusAvail);
  if (!sec.has(pos, uint64_t{n} * 4)) {
    diag(core::DiagCode::malformed_record, base, "CPU_TOPOLOGY die ids are cut short; dies not read");
    return;
  }
  std::vector<std::pair<int, int>> dies;
  for (uint32_t cpu = 0; cpu < n; ++cpu) dies.emplace_back(static_cast<int>(cpu), static_cast<int>(sec.u32(pos + 4 * cpu)));
  m_topology->setDies(dies);
}

// NUMA_TOPOLOGY: u32 nr_nodes, then per node u32 node_id, u64 mem_total,
// u64 mem_free and the node's CPU list as a string.
void Reader::readNumaTopology(const Bytes& sec, uint64_t base) {
  const auto nodes = sec.checkedU32(0);
  if (!nodes || *nodes > static_cast<uint32_t>(kMaxCpu)) {
    diag(core::DiagCode::malformed_record, base, "NUMA_TOPOLOGY header feature is malformed; nodes not read");
    return;
  }
  uint64_t pos = 4;
  std::vector<std::vector<int>> cpusOfNode;
  for (uint32_t i = 0; i < *nodes; ++i) {
    const auto id = sec.checkedU32(pos);
    pos += 20;
    const auto list = sec.has(pos, 4) ? headerString(sec, pos) : std::nullopt;
    std::vector<int> cpus;
    // A node of memory only has an empty CPU list.
    if (!id || *id >= static_cast<uint32_t>(kMaxCpu) || !list || (!list->empty() && !parseCpuList(*list, cpus))) {
      diag(core::DiagCode::malformed_record, base, "NUMA_TOPOLOGY node " + std::to_string(i) + " is malformed; nodes not read");
      return;
    }
    if (cpusOfNode.size() <= *id) cpusOfNode.resize(*id + 1);
    cpusOfNode[*id] = std::move(cpus);
  }
  if (!m_topology) return;  // nodes of CPUs whose cores the file does not give
  m_topology->setNodes(cpusOfNode);
  m_b.setTopology(*m_topology);
}

// CACHE: u32 version (1), u32 count, then per cache u32 level, line_size,
// sets, ways and the strings type, size and map (its shared_cpu_list). Each
// CPU's LLC is the highest-level data or unified cache whose map holds it.
void Reader::readCaches(const Bytes& sec, uint64_t base) {
  const auto version = sec.checkedU32(0);
  const auto count = sec.checkedU32(4);
  if (!version || *version != 1 || !count || *count > 1u << 16) {
    diag(core::DiagCode::malformed_record, base, "CACHE header feature is malformed; LLCs not read");
    return;
  }
  std::vector<core::Topology::Cache> caches;
  uint64_t pos = 8;
  for (uint32_t i = 0; i < *count; ++i) {
    const auto level = sec.checkedU32(pos);
    pos += 16;
    const auto type = sec.has(pos, 4) ? headerString(sec, pos) : std::nullopt;
    const auto size = type ? headerString(sec, pos) : std::nullopt;
    const auto map = size ? headerString(sec, pos) : std::nullopt;
    core::Topology::Cache c{static_cast<int>(level.value_or(0)), {}};
    if (!level || !map || !parseCpuList(*map, c.cpus)) {
      diag(core::DiagCode::malformed_record, base, "CACHE entry " + std::to_string(i) + " is malformed; LLCs not read");
      return;
    }
    if (*type != "Instruction") caches.push_back(std::move(c));
  }
  if (!m_topology || caches.empty()) return;
  m_topology->setLlcsFromCaches(caches);
  m_b.setTopology(*m_topology);
}

void Reader::rebuildDecoders() {
  m_decoders.clear();
  m_haveExecTracepoint = false;
  for (auto& a : m_attrs) {
    Decoder d;
    const TracepointFormat* fmt = nullptr;
    if (a.type == kPerfTypeTracepoint)
      for (const auto& f : m_formats)
        if (f.id >= 0 && static_cast<uint64_t>(f.id) == a.config) fmt = &f;
    if (fmt) {
      d = makeDecoder(*fmt);
    } else {
      std::string name;
      for (uint64_t id : a.ids)
        if (auto it = m_descNames.find(id); it != m_descNames.end()) name = it->second;
      if (name.empty()) name = a.type == kPerfTypeTracepoint ? "tracepoint_" + std::to_string(a.config)
                                                             : "perf_type" + std::to_string(a.type) + "_config" +
                                                                   std::to_string(a.config);
      // Event names are counted without their "system:" prefix, like the other formats.
      if (const auto colon = name.find(':'); colon != std::string::npos && a.type == kPerfTypeTracepoint)
        name = name.substr(colon + 1);
      d.name = name;
    }
    d.countKey = m_feed.eventType(d.name);
    if (d.kind == SchedKind::Exec) m_haveExecTracepoint = true;
    a.decoder = static_cast<uint32_t>(m_decoders.size());
    m_decoders.push_back(std::move(d));
  }
}

int Reader::attrIndexForId(uint64_t id) const {
  // An id in the table's range may still be in the map: added before enough
  // ids had widened the range to take it.
  if (const uint64_t slot = id - m_denseIdBase; slot < m_denseIds.size() && m_denseIds[slot] != 0)
    return static_cast<int>(m_denseIds[slot]) - 1;
  if (m_sparseIds.empty()) return -1;
  if (auto it = m_sparseIds.find(id); it != m_sparseIds.end()) return static_cast<int>(it->second);
  return -1;
}

int Reader::attrForSample(const uint8_t* rec, uint32_t size) const {
  if (m_attrs.size() == 1) return 0;
  const Attr& first = m_attrs.front();
  // With IDENTIFIER the id sits right after the header whatever the event; with
  // ID alone perf requires every event to put it at the same place.
  if (first.idOff < 0 || static_cast<uint32_t>(first.idOff) + 8 > size) return m_uniformSampleType ? 0 : -1;
  return attrIndexForId(rd64(rec + first.idOff));
}

int Reader::attrForOther(const uint8_t* rec, uint32_t size) const {
  const Attr& first = m_attrs.front();
  if (m_attrs.size() == 1 || first.trailerId < 0) return 0;
  if (first.trailerSize + kRecordHeaderSize > size) return 0;
  const int idx = attrIndexForId(rd64(rec + size - first.trailerSize + first.trailerId));
  return idx < 0 ? 0 : idx;
}

void Reader::queue(DecodedEvent& e) {
  // perf delivers records without a usable timestamp at once (ordered_events__queue).
  if (noTime(e)) {
    deliver(e);
    return;
  }
  if (m_streams.size() > 1 && e.cpu >= 0) {
    auto& latest = m_stream->latestByCpu;
    if (static_cast<size_t>(e.cpu) >= latest.size()) latest.resize(static_cast<size_t>(e.cpu) + 1, 0);
    latest[static_cast<size_t>(e.cpu)] = std::max(latest[static_cast<size_t>(e.cpu)], e.ts);
  }
  if (e.op == EventOp::Private) e.cpu = std::max(e.cpu, 0);
  m_sorter.push(e);
  m_maxTs = std::max(m_maxTs, e.ts);
}

core::Status Reader::readAllRecords() {
  if (m_streams.size() > 1) return mergeDataFiles();
  return processRecords(m_streams.front(), UINT64_MAX);
}

// perf's data__open_dir takes every "data.*" file of the folder; these are the
// ones perf record writes (data.0 ... data.N-1, one per thread), in number order
// so that a file's tag, and the order of equal timestamps, never depend on
// readdir. Empty ones (a thread that wrote nothing) are skipped, as perf does.
core::Status Reader::findDataFiles() {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(m_path).parent_path();
  std::vector<std::pair<uint64_t, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder.empty() ? fs::path(".") : folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 6 || name.compare(0, 5, "data.") != 0) continue;
    uint64_t n = 0;
    const char* digits = name.data() + 5;
    const auto [end, err] = std::from_chars(digits, name.data() + name.size(), n);
    if (err != std::errc() || end != name.data() + name.size() || !entry.is_regular_file(ec)) continue;
    found.emplace_back(n, entry.path().string());
  }
  std::sort(found.begin(), found.end());
  if (found.size() > kMaxDataFiles)
    return errorAt(0, "the folder holds " + std::to_string(found.size()) + " data.N files, more than one per CPU (" +
                          std::to_string(kMaxDataFiles) + ")");
  for (const auto& [n, path] : found) {
    auto file = std::make_unique<core::MappedFile>();
    if (auto st = file->open(path); !st) return st;
    if (file->size() == 0) continue;
    DataStream& s = m_streams.emplace_back();
    s.path = path;
    s.base = file->data();
    s.end = file->size();
    s.tag = core::fileTag(m_streams.size() - 1);
    s.file = std::move(file);
  }
  if (m_streams.size() == 1)
    return errorAt(m_dataEnd, "the header says the data lies in data.N files beside it (perf record --threads), "
                              "but the folder has none with data");
  std::vector<std::string> paths;
  for (const auto& s : m_streams) paths.push_back(s.path);
  m_feed.setFiles(std::move(paths));
  return core::Status::ok();
}

// perf record --threads writes no FINISHED_ROUND records: each file holds the
// ring buffers of its thread's CPUs, each CPU's records in time order. The
// files are read a chunk at a time, always the one read least far in time, and
// the sorter releases what a FINISHED_ROUND would let go: everything up to the
// time that every file has been read to, one chunk back (the slack a round
// leaves for a record that arrives a little late within its CPU).
core::Status Reader::mergeDataFiles() {
  while (true) {
    DataStream* next = nullptr;
    for (auto& s : m_streams)
      if (s.pos < s.end && (!next || s.mark < next->mark)) next = &s;
    if (!next) return core::Status::ok();
    if (auto st = processRecords(*next, kMergeChunkBytes); !st) return st;
    next->mark = next->nextMark;
    // Before it has read a CPU, a file may still hold anything: the limit waits.
    int64_t readTo = INT64_MAX;
    for (int64_t ts : next->latestByCpu)
      if (ts > 0) readTo = std::min(readTo, ts);
    next->nextMark = next->pos < next->end ? (readTo == INT64_MAX ? 0 : readTo) : INT64_MAX;
    if (next->pos >= next->end) next->mark = INT64_MAX;
    int64_t limit = INT64_MAX;
    for (const auto& s : m_streams) limit = std::min(limit, s.mark);
    if (limit > m_nextFlush) {
      m_sorter.releaseUpTo(limit);
      m_nextFlush = limit;
    }
  }
}

core::Status Reader::processRecords(DataStream& s, uint64_t budget) {
  m_stream = &s;
  const uint8_t* base = s.base;
  const uint64_t end = s.end;
  const uint64_t stopAt = end - s.pos > budget ? s.pos + budget : end;
  uint64_t off = s.pos;
  uint32_t untilProgress = 1;  // check for cancellation before the first record too
  while (off < stopAt) {
    if (--untilProgress == 0) {
      untilProgress = kProgressEvery;
      if (m_opt.stop.stop_requested()) return core::Error(m_path + ": import cancelled");
      s.pos = off;
      // A big file is walked once and its samples are decoded into copies:
      // what lies behind leaves the resident set, or a 5.5 GB perf.data of
      // 50M events peaks at 133 B/event (the file, beside a 21 B/event model).
      core::MappedFile& mapped = s.file ? *s.file : m_file;
      if (mapped.size() > core::MappedFile::kPopulateLimit) mapped.releaseBefore(off);
      uint64_t done = 0;
      uint64_t all = 1;
      for (const auto& t : m_streams) done += t.pos - t.begin, all += t.end - t.begin;
      const double fraction = static_cast<double>(done) / static_cast<double>(all);
      if (m_feed.threaded())
        m_feed.progress(fraction);
      else if (m_opt.progress)
        m_opt.progress(fraction);
    }
    s.pos = off;
    if (end - off < kRecordHeaderSize) return errorAt(off, "data ends inside a record header");
    const uint8_t* rec = base + off;
    // The hardware prefetcher stops at every 4 KiB page of the mapping; records
    // are ~100 bytes, so two lines fetched 1 KiB ahead keep the scan fed.
    __builtin_prefetch(rec + 1024);
    __builtin_prefetch(rec + 1088);
    const uint32_t type = rd32(rec);
    uint16_t size;
    std::memcpy(&size, rec + 6, 2);
    if (m_swap) size = byteSwap(size);
    if (size < kRecordHeaderSize) return errorAt(off, "record size " + std::to_string(size) + " is smaller than a record header (type " + std::to_string(type) + ")");
    if (size > end - off) return errorAt(off, "record of " + std::to_string(size) + " bytes (type " + std::to_string(type) + ") runs past the end of the data (" + std::to_string(end - off) + " bytes left)");
    uint64_t next = off + size;
    switch (type) {
      // The two records whose data follows them in the file, outside their size.
      case kRecordHeaderTracingData: {
        if (size < 12) return errorAt(off, "tracing data record too short");
        // The formats follow the record; its header only holds their (8-aligned) size.
        const uint64_t dataSize = rd32(rec + 8);
        if (dataSize > end - next) return errorAt(off, "tracing data of " + std::to_string(dataSize) + " bytes runs past the end of the file");
        if (&s != &m_streams.front()) {
          diag(core::DiagCode::malformed_record, off, "tracing data in a data.N file (perf writes it to the header file); skipped");
        } else if (auto st = readTracingData(next, dataSize); !st) {
          return st;
        }
        next += dataSize;
        break;
      }
      case kRecordAuxtrace: {
        if (size < 16) return errorAt(off, "auxtrace record too short");
        const uint64_t auxSize = rd64(rec + 8);
        if (auxSize > end - next) return errorAt(off, "auxtrace data of " + std::to_string(auxSize) + " bytes runs past the end of the data");
        next += auxSize;
        break;
      }
      case kRecordCompressed:
      case kRecordCompressed2:
        if (auto st = processCompressed(rec, type, size, off); !st) return st;
        break;
      default:
        if (auto st = processRecord(rec, type, size, off); !st) return st;
        break;
    }
    off = next;
  }
  s.pos = off;
  if (off > end) return errorAt(end, "records overrun the end of the data section");
  if (off == end && s.zstd && s.zstd->pendingBytes() > 0)
    return errorAt(end, "the zstd-compressed data ends inside a record (" + std::to_string(s.zstd->pendingBytes()) +
                            " bytes of it decompressed)");
  return core::Status::ok();
}

// A record whose bytes are all in `rec` — in the mapped file, or decompressed.
core::Status Reader::processRecord(const uint8_t* rec, uint32_t type, uint32_t size, uint64_t off) {
  switch (type) {
    case kRecordSample: {
      if (m_attrs.empty()) return errorAt(off, "sample before any event attribute");
      const int idx = attrForSample(rec, size);
      if (idx < 0) {
        diag(core::DiagCode::malformed_record, off, "sample with an id no event declares; skipped");
        break;
      }
      decodeSample(off, rec, size, m_attrs[static_cast<size_t>(idx)]);
      break;
    }
    case kRecordFinishedRound:
      // perf record writes one round per pass over the per-CPU buffers; an event
      // of round N can only be overtaken by events up to the end of round N-1.
      // (In a folder, the round of one file says nothing of the others: the
      // merge sets the limit there.)
      if (m_streams.size() > 1) break;
      m_sorter.releaseUpTo(m_nextFlush);
      m_nextFlush = m_maxTs;
      break;
    case kRecordComm:
    case kRecordFork:
    case kRecordExit:
    case kRecordLost:
    case kRecordLostSamples: {
      if (m_attrs.empty()) break;
      decodeOther(off, rec, size, type, m_attrs[static_cast<size_t>(attrForOther(rec, size))]);
      break;
    }
    case kRecordHeaderAttr:
    case kRecordHeaderFeature:
      // perf writes its own header records straight to the header file, never
      // through the ring buffers it compresses or the data.N files.
      if (m_inCompressed || m_stream != &m_streams.front()) {
        diag(core::DiagCode::malformed_record, off, "header record (type " + std::to_string(type) + ") outside the header file's own records; skipped");
        break;
      }
      if (type == kRecordHeaderAttr) {
        if (size < kRecordHeaderSize + kAttrMinSize) return errorAt(off, "attribute record too short");
        const Bytes rb(rec, size, m_swap);
        uint32_t attrSize = rb.u32(kRecordHeaderSize + 4);
        if (attrSize == 0) attrSize = kAttrMinSize;
        if (attrSize < kAttrMinSize || kRecordHeaderSize + attrSize > size) return errorAt(off, "attribute record declares attr size " + std::to_string(attrSize) + " beyond the record");
        Attr a = readAttr(rb, kRecordHeaderSize);
        for (uint64_t p = kRecordHeaderSize + attrSize; p + 8 <= size; p += 8) a.ids.push_back(rb.u64(p));
        if (auto st = addAttr(std::move(a)); !st) return errorAt(off, st.message());
        rebuildDecoders();
      } else {
        if (size < 16) return errorAt(off, "feature record too short");
        const uint64_t feat = rd64(rec + 8);
        if (feat < kFeatBits) {
          if (auto st = readFeature(static_cast<int>(feat), off + 16, size - 16); !st) return st;
        }
      }
      break;
    case kRecordHeaderTracingData:
    case kRecordAuxtrace:
    case kRecordCompressed:
    case kRecordCompressed2:
      // Only here from inside compressed data: their payloads lie in the file.
      diag(core::DiagCode::malformed_record, off, "record of type " + std::to_string(type) + " inside compressed data; skipped");
      break;
    default: break;  // MMAP, ID_INDEX, build ids...: nothing the schedule needs
  }
  return core::Status::ok();
}

core::Status Reader::processCompressed(const uint8_t* rec, uint32_t type, uint32_t size, uint64_t off) {
  uint64_t payloadAt = kRecordHeaderSize;
  uint64_t payloadSize = size - kRecordHeaderSize;
  if (type == kRecordCompressed2) {
    // header, u64 data_size, the zstd bytes, padding to 8 (perf 6.15, builtin-record.c).
    if (size < kRecordHeaderSize + 8) return errorAt(off, "compressed record too short for its data size");
    payloadAt += 8;
    payloadSize = rd64(rec + kRecordHeaderSize);
    if (payloadSize > size - payloadAt)
      return errorAt(off, "compressed record declares " + std::to_string(payloadSize) + " bytes of data, more than its " +
                              std::to_string(size - payloadAt));
  }
  if (m_compressionType != kCompressionZstd)
    return errorAt(off, "compressed record, but the header declares compression type " +
                            std::to_string(m_compressionType) + " (only zstd, type 1, is known)");
  DataStream& s = *m_stream;
  if (!s.zstd) s.zstd = std::make_unique<CompressedRecords>();
  m_inCompressed = true;
  m_decompressedAt = s.zstd->streamBytes();
  core::Status st = s.zstd->feed(
      {rec + payloadAt, static_cast<size_t>(payloadSize)}, m_maxDecompressed,
      [&](const uint8_t* inner, uint32_t innerSize, uint64_t at) {
        m_decompressedAt = at;
        return processRecord(inner, rd32(inner), innerSize, off);
      },
      m_swap);
  m_inCompressed = false;
  // The decompressor's own errors say where in the stream; the records' say it themselves.
  if (!st && st.message().rfind(s.path, 0) != 0) st = errorAt(off, "zstd-compressed record: " + st.message());
  return st;
}


inline int64_t Reader::field(const uint8_t* raw, const Field& f) const {
  const uint8_t* p = raw + f.off;
  switch (f.size) {
    case 1: return f.kind == FieldKind::Signed ? static_cast<int8_t>(*p) : *p;
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      if (m_swap) v = byteSwap(v);
      return f.kind == FieldKind::Signed ? static_cast<int16_t>(v) : v;
    }
    case 4: {
      uint32_t v = rd32(p);
      return f.kind == FieldKind::Signed ? static_cast<int32_t>(v) : static_cast<int64_t>(v);
    }
    case 8: return static_cast<int64_t>(rd64(p));
    default: return 0;
  }
}

inline std::string_view Reader::string(const uint8_t* raw, uint32_t len, const Field& f) const {
  const char* s = nullptr;
  size_t n = 0;
  switch (f.kind) {
    case FieldKind::FixedString:
      s = reinterpret_cast<const char*>(raw + f.off);
      n = f.size;
      break;
    case FieldKind::DynString:
    case FieldKind::RelString: {
      const uint32_t loc = rd32(raw + f.off);
      uint32_t at = loc & 0xffff;
      n = loc >> 16;
      if (f.kind == FieldKind::RelString) at += f.off + f.size;
      if (at > len || n > len - at) return {};
      s = reinterpret_cast<const char*>(raw + at);
      break;
    }
    default: return {};
  }
  return {s, boundedLength(s, n)};
}

bool Reader::locateRaw(const uint8_t* rec, uint32_t size, const Attr& a, const uint8_t*& raw, uint32_t& rawLen) const {
  uint64_t pos;
  if (a.rawOff >= 0) {
    pos = static_cast<uint64_t>(a.rawOff);
  } else {
    // Variable-size parts first: READ group values, then the callchain.
    pos = static_cast<uint64_t>(a.variableFrom);
    if (a.sampleType & kSampleRead) {
      if (pos + 8 > size) return false;
      const uint64_t nr = rd64(rec + pos);
      const uint64_t per = 8 * (1 + ((a.readFormat & kReadId) ? 1 : 0) + ((a.readFormat & kReadLost) ? 1 : 0));
      const uint64_t times =
          8 * static_cast<uint64_t>(std::popcount(a.readFormat & (kReadTotalTimeEnabled | kReadTotalTimeRunning)));
      if (nr > size) return false;
      pos += 8 + times + nr * per;
    }
    if (a.sampleType & kSampleCallchain) {
      if (pos + 8 > size) return false;
      const uint64_t nr = rd64(rec + pos);
      if (nr > size) return false;
      pos += 8 + 8 * nr;
    }
  }
  if (pos + 4 > size) return false;
  rawLen = rd32(rec + pos);
  if (rawLen > size - pos - 4) return false;
  raw = rec + pos + 4;
  return true;
}

void Reader::decodeSample(uint64_t off, const uint8_t* rec, uint32_t size, const Attr& a) {
  const Decoder& d = m_decoders[a.decoder];
  DecodedEvent e;
  e.position = tagged(off);
  e.cpu = -1;
  e.countKey = d.countKey;
  // Every sample is counted, like perf script prints it, even one that cannot be placed.
  auto skip = [&](core::DiagCode code, std::string why) {
    e.op = EventOp::CountOnly;
    diag(code, off, std::move(why), e.cpu >= 0 ? std::optional<int>(e.cpu) : std::nullopt);
    emit(e);
  };
  if (size < a.fixedEnd) {
    skip(core::DiagCode::malformed_record, "sample record of " + std::to_string(size) + " bytes is too short for its declared fields");
    return;
  }
  const uint64_t ts = a.timeOff >= 0 ? rd64(rec + a.timeOff) : 0;
  if (ts > kMaxTs) {
    skip(core::DiagCode::malformed_record, "sample timestamp " + std::to_string(ts) + " is beyond the signed 64-bit range");
    return;
  }
  e.ts = static_cast<int64_t>(ts);
  if (a.cpuOff >= 0) {
    const uint32_t cpu = rd32(rec + a.cpuOff);
    e.cpu = cpu < static_cast<uint32_t>(kMaxCpu) ? static_cast<int32_t>(cpu) : -1;
  }
  if (a.tidOff >= 0) e.ctxTid = static_cast<int32_t>(rd32(rec + a.tidOff + 4));

  const uint8_t* raw = nullptr;
  uint32_t rawLen = 0;
  if ((a.sampleType & kSampleRaw) && !locateRaw(rec, size, a, raw, rawLen)) {
    skip(core::DiagCode::malformed_record, "sample record of " + std::to_string(size) + " bytes is too short for its declared fields");
    return;
  }
  if (e.cpu < 0) {
    skip(core::DiagCode::cpu_out_of_range, "sample without a valid CPU number; not placed on a CPU");
    return;
  }
  if (d.kind == SchedKind::Other) {
    e.op = EventOp::Other;
    queue(e);
    return;
  }
  if (!raw || rawLen < d.minRawSize) {
    skip(core::DiagCode::unsupported_event, d.name + " payload of " + std::to_string(rawLen) + " bytes is shorter than its format");
    return;
  }
  if (d.commonPid.present()) e.ctxTid = static_cast<int32_t>(field(raw, d.commonPid));
  if (d.commonFlags.present()) {
    e.irq = core::irqFromTraceFlags(static_cast<uint32_t>(field(raw, d.commonFlags)));
  }
  auto i32 = [&](int k, int32_t fallback) { return d.f[k].isInt() ? static_cast<int32_t>(field(raw, d.f[k])) : fallback; };
  auto str = [&](int k) { return d.f[k].present() ? string(raw, rawLen, d.f[k]) : std::string_view{}; };

  switch (d.kind) {
    case SchedKind::Switch: {
      e.op = EventOp::Switch;
      setComm(e, 0, str(0));
      e.tid = i32(1, 0);
      const auto rawState = static_cast<uint64_t>(field(raw, d.f[3]));
      e.state = rawState < d.stateOf.size() ? d.stateOf[rawState]
                                            : core::taskStateFromRaw(rawState, d.encoding).value_or(core::TaskState::Unknown);
      setComm(e, 1, str(4));
      e.otherTid = i32(5, 0);
      e.prio = i32(2, core::kPrioUnknown);
      e.otherPrio = i32(6, core::kPrioUnknown);
      break;
    }
    case SchedKind::Wakeup:
    case SchedKind::Waking:
    case SchedKind::WakeupNew:
      e.op = d.kind == SchedKind::Waking ? EventOp::Waking
                                         : d.kind == SchedKind::WakeupNew ? EventOp::WakeupNew : EventOp::Wakeup;
      e.tid = i32(0, 0);
      setComm(e, 0, str(1));
      e.prio = i32(2, core::kPrioUnknown);
      e.cpuA = i32(3, -1);
      break;
    case SchedKind::Migrate:
      e.op = EventOp::Migrate;
      e.tid = i32(0, 0);
      e.cpuB = i32(1, -1);
      setComm(e, 0, str(2));
      e.prio = i32(3, core::kPrioUnknown);
      e.cpuA = i32(4, -1);
      break;
    case SchedKind::Fork:
      e.op = EventOp::Fork;
      e.tid = i32(0, 0);
      e.otherTid = i32(1, 0);
      setComm(e, 0, str(2));
      setComm(e, 1, str(3));
      break;
    case SchedKind::Exit:
      e.op = EventOp::Exit;
      e.tid = i32(0, 0);
      setComm(e, 0, str(1));
      e.prio = i32(2, core::kPrioUnknown);
      break;
    case SchedKind::Exec:
      e.op = EventOp::Exec;
      e.tid = i32(0, 0);
      e.otherTid = i32(2, e.tid);
      // A long one points into the mapped file or the decompressed record: the
      // sorter (or the threaded feed) keeps a copy.
      e.setText(0, str(1));
      break;
    case SchedKind::StatRuntime:
      e.op = EventOp::RuntimeStat;
      e.tid = i32(0, 0);
      e.aux = static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(field(raw, d.f[1])), INT64_MAX));
      break;
    case SchedKind::Power: {
      const SampleFields fields(*this, d, raw, rawLen);
      std::array<DecodedEvent, core::kMaxPowerEventsPerRecord> out;
      const auto n = core::decodePowerEvent(d.power, fields, e, out);
      if (!n) {
        skip(core::DiagCode::unsupported_event, d.name + " lacks a field its decoding needs");
        return;
      }
      if (*n == 0) break;  // a signal the model does not keep: the sample only marks its CPU
      // Only the first carries the sample's count; the others are more values of it.
      for (size_t i = 0; i < *n; ++i) {
        if (i > 0) out[i].countKey = DecodedEvent::kNoCount;
        queue(out[i]);
      }
      return;
    }
    case SchedKind::Other: break;
  }
  queue(e);
}

std::optional<int64_t> Reader::SampleFields::number(std::string_view name) const {
  for (const auto& [n, f] : m_decoder.named)
    if (n == name) return f.isInt() ? std::optional<int64_t>(m_reader.field(m_raw, f)) : std::nullopt;
  return std::nullopt;
}

std::optional<std::string_view> Reader::SampleFields::text(std::string_view name) const {
  for (const auto& [n, f] : m_decoder.named)
    if (n == name) return m_reader.string(m_raw, m_rawLen, f);
  return std::nullopt;
}

void Reader::decodeOther(uint64_t off, const uint8_t* rec, uint32_t size, uint32_t type, const Attr& a) {
  DecodedEvent e;
  e.position = tagged(off);
  e.op = EventOp::Private;
  e.cpu = -1;
  const bool haveTrailer = a.trailerSize > 0 && a.trailerSize + kRecordHeaderSize <= size;
  const uint8_t* trailer = rec + size - a.trailerSize;
  uint64_t ts = 0;
  if (haveTrailer && a.trailerTime >= 0) ts = rd64(trailer + a.trailerTime);
  if (ts > kMaxTs && ts != UINT64_MAX) return;  // garbage; ~0 means "no time" to perf
  e.ts = ts == UINT64_MAX ? 0 : static_cast<int64_t>(ts);
  if (haveTrailer && a.trailerCpu >= 0) {
    const uint32_t c = rd32(trailer + a.trailerCpu);
    if (c < static_cast<uint32_t>(kMaxCpu)) e.cpu = static_cast<int32_t>(c);
  }
  e.cpuB = e.cpu;
  const uint32_t payloadEnd = haveTrailer ? size - a.trailerSize : size;
  switch (type) {
    case kRecordComm: {
      if (payloadEnd < 16) return;
      e.aux = static_cast<int32_t>(rd32(rec + 8));
      e.tid = static_cast<int32_t>(rd32(rec + 12));
      const char* s = reinterpret_cast<const char*>(rec + 16);
      setComm(e, 0, {s, boundedLength(s, payloadEnd - 16)});
      uint16_t misc;
      std::memcpy(&misc, rec + 4, 2);
      if (m_swap) misc = byteSwap(misc);
      e.cpuA = (misc & kMiscCommExec) ? kRecCommExec : kRecComm;
      break;
    }
    case kRecordFork:
    case kRecordExit:
      if (payloadEnd < 24) return;
      e.cpuA = kRecTaskIds;
      e.aux = static_cast<int32_t>(rd32(rec + 8));
      e.tid = static_cast<int32_t>(rd32(rec + 16));
      break;
    case kRecordLost:
      if (payloadEnd < 24) return;
      e.cpuA = kRecLost;
      e.aux = static_cast<int64_t>(std::min<uint64_t>(rd64(rec + 16), INT64_MAX / 2));
      break;
    case kRecordLostSamples:
      if (payloadEnd < 16) return;
      e.cpuA = kRecLostSamples;
      e.aux = static_cast<int64_t>(std::min<uint64_t>(rd64(rec + 8), INT64_MAX / 2));
      break;
    default: return;
  }
  queue(e);
}

// In timestamp order: the reader's own state (who is known, which tids the
// schedule has named), then the event to the builder.
void Reader::deliver(DecodedEvent& e) {
  switch (e.op) {
    case EventOp::Fork:
      m_tasks.see(e.tid);
      m_tasks.see(e.otherTid);
      if (const auto* id = m_tasks.find(e.otherTid)) e.aux = id->tgid;
      break;
    case EventOp::Private: {
      if (e.cpuA != kRecComm && e.cpuA != kRecCommExec) {
        deliverRecord(e);
        return;
      }
      auto& info = m_tasks.of(e.tid);
      info.tgid = static_cast<int32_t>(e.aux);
      info.setComm(e.textAt(0));
      if (noTime(e)) return;  // synthesized at start: names a task, not an event
      if (m_tasks.seen(e.tid)) {
        DecodedEvent ids;
        ids.op = EventOp::TaskInfo;
        ids.position = e.position;
        ids.tid = e.tid;
        ids.aux = info.tgid;
        emit(ids);
      }
      // A rename in the trace (prctl, or exec when sched_process_exec is not
      // recorded) is an event of its own.
      if (e.cpuB < 0 || (e.cpuA == kRecCommExec && m_haveExecTracepoint)) return;
      m_tasks.see(e.tid);
      e.op = EventOp::Rename;
      e.cpu = e.cpuB;
      emit(e);
      m_tasks.announce(m_feed, false);
      return;
    }
    default: core::TaskIdentities::forEachNamedTid(e, [this](int32_t tid) { m_tasks.see(tid); }); break;
  }
  emit(e);
  m_tasks.announce(m_feed, e.op == EventOp::Exit);
  m_lastDeliveredTs = e.ts;
}

void Reader::deliverRecord(DecodedEvent& e) {
  switch (e.cpuA) {
    case kRecTaskIds: m_tasks.of(e.tid).tgid = static_cast<int32_t>(e.aux); return;
    case kRecLostSamples:
      if (noTime(e)) {
        // Synthesized by perf record at the end from each event's lost-sample
        // counter: the same overruns the LOST records already reported, per event.
        m_synthLostSamples += static_cast<uint64_t>(e.aux);
        return;
      }
      [[fallthrough]];
    case kRecLost:
      e.op = EventOp::DataLoss;
      e.cpu = e.cpuB;
      if (noTime(e)) e.ts = m_lastDeliveredTs;
      emit(e);
      return;
    default: return;
  }
}

void Reader::finish() {
  // Synthesized LOST_SAMPLES repeat what LOST records said; only an excess (a
  // LOST record that never got written) is news.
  if (m_synthLostSamples > m_lostFed) {
    DecodedEvent e;
    e.op = EventOp::DataLoss;
    e.cpu = -1;
    e.position = m_dataEnd;
    e.ts = m_lastDeliveredTs;
    e.aux = static_cast<int64_t>(m_synthLostSamples - m_lostFed);
    emit(e);
  }
}

}  // namespace

int probePerfData(std::span<const std::byte> head) {
  if (head.size() < 8) return 0;
  if (std::memcmp(head.data(), "PERFILE2", 8) == 0 || std::memcmp(head.data(), "2ELIFREP", 8) == 0) return 100;
  if (std::memcmp(head.data(), "PERFFILE", 8) == 0) return 60;
  return 0;
}

int probePerfDataFolder(const std::string& path, const std::vector<std::string>& entries) {
  if (std::find(entries.begin(), entries.end(), "data") == entries.end()) return 0;
  char magic[8] = {};
  const int fd = ::open((std::filesystem::path(path) / "data").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const ssize_t n = ::read(fd, magic, sizeof magic);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof magic)) return 0;
  return probePerfData(std::as_bytes(std::span(magic))) == 100 ? 100 : 0;
}

core::Status readPerfData(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options,
                          Threading threading) {
  Reader reader(path, builder, options, threading);
  return reader.run();
}

}  // namespace importers::perf
