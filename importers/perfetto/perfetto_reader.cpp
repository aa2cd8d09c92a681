#include "importers/perfetto/perfetto_reader.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/decoded_event.h"
#include "core/event_feed.h"
#include "core/event_sorter.h"
#include "core/mapped_file.h"
#include "core/power_events.h"
#include "core/task_identities.h"
#include "core/task_state.h"
#include "core/topology.h"
#include "importers/perfetto/perfetto_fields.h"
#include "importers/perfetto/perfetto_wire.h"

namespace importers::perfetto {

namespace {

using core::DecodedEvent;
using core::EventOp;

constexpr int kMaxNesting = 4;  // compressed packets inside compressed packets
// A compressed packet holds packets of at most a few hundred KB in all; more is
// a corrupt (or hostile) stream.
constexpr size_t kMaxDecompressed = size_t{256} << 20;
constexpr int kMaxCpu = core::SchedBuilder::kMaxCpus;
// task_newtask's clone_flags: CLONE_THREAD (include/uapi/linux/sched.h).
constexpr uint64_t kCloneThread = 0x00010000;
// Fork events made from task_newtask (DecodedEvent::cpuA), see Reader::take().
constexpr int32_t kForkFromNewTask = 1;

std::string offsetText(uint64_t off) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "byte offset %llu (0x%llx)", static_cast<unsigned long long>(off),
                static_cast<unsigned long long>(off));
  return buf;
}

// Where bytes being decoded lie: in the file, or in the output of a compressed
// packet (then only that packet's file offset and the place in its output say it).
struct Region {
  const uint8_t* base = nullptr;
  uint64_t fileOffset = 0;  ///< of `base` (file), or of the compressed packet
  bool decompressed = false;
  uint64_t offsetOf(const uint8_t* p) const { return decompressed ? fileOffset : fileOffset + static_cast<uint64_t>(p - base); }
  std::string describe(const uint8_t* p) const {
    if (!decompressed) return offsetText(offsetOf(p));
    return offsetText(fileOffset) + " (in its compressed packets, decompressed byte " +
           std::to_string(p - base) + ")";
  }
};

bool inflateAll(const uint8_t* data, size_t size, std::string& out, std::string& error) {
  out.clear();
  z_stream s{};
  if (inflateInit2(&s, 15 + 32) != Z_OK) {  // zlib or gzip header
    error = "zlib could not start";
    return false;
  }
  s.next_in = const_cast<Bytef*>(data);
  s.avail_in = static_cast<uInt>(std::min<size_t>(size, UINT32_MAX));
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (out.size() >= kMaxDecompressed) {
      error = "compressed packets inflate to more than " + std::to_string(kMaxDecompressed >> 20) + " MiB";
      inflateEnd(&s);
      return false;
    }
    const size_t have = out.size();
    out.resize(std::max<size_t>(have * 2, 64 << 10));
    s.next_out = reinterpret_cast<Bytef*>(out.data() + have);
    s.avail_out = static_cast<uInt>(out.size() - have);
    rc = inflate(&s, Z_NO_FLUSH);
    out.resize(out.size() - s.avail_out);
    if (rc == Z_BUF_ERROR && s.avail_in == 0) break;  // input ends before the stream does
  }
  inflateEnd(&s);
  if (rc != Z_STREAM_END) {
    error = std::string("deflate data is corrupt or cut (zlib: ") + (s.msg ? s.msg : zError(rc)) + ")";
    return false;
  }
  return true;
}

bool unzstdAll(const uint8_t* data, size_t size, std::string& out, std::string& error) {
  out.clear();
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> ds(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!ds) {
    error = "zstd could not start";
    return false;
  }
  ZSTD_inBuffer in{data, size, 0};
  size_t rc = 1;
  while (in.pos < in.size || rc != 0) {
    if (out.size() >= kMaxDecompressed) {
      error = "zstd packets decompress to more than " + std::to_string(kMaxDecompressed >> 20) + " MiB";
      return false;
    }
    const size_t have = out.size();
    out.resize(std::max<size_t>(have * 2, 64 << 10));
    ZSTD_outBuffer o{out.data() + have, out.size() - have, 0};
    rc = ZSTD_decompressStream(ds.get(), &o, &in);
    out.resize(have + o.pos);
    if (ZSTD_isError(rc)) {
      error = std::string("zstd data is corrupt (") + ZSTD_getErrorName(rc) + ")";
      return false;
    }
    if (in.pos == in.size && rc != 0 && o.pos == 0) {
      error = "zstd data is cut (the frame does not end)";
      return false;
    }
  }
  return true;
}

std::string_view clockName(uint64_t v) {
  switch (v) {
    case 0: return "boot";
    case 2: return "global";
    case 3: return "local";
    case 4: return "mono_raw";
    default: return "unknown";
  }
}

// cpu_frequency and cpu_idle (CpuFrequencyFtraceEvent, CpuIdleFtraceEvent:
// state = 1, cpu_id = 2) by the names core::decodePowerEvent asks for.
struct PowerPayloadFields final : core::EventFields {
  std::optional<int64_t> state, cpuId;
  std::optional<int64_t> number(std::string_view field) const override {
    if (field == "state") return state;
    if (field == "cpu_id") return cpuId;
    return std::nullopt;
  }
  std::optional<std::string_view> text(std::string_view) const override { return std::nullopt; }
};

// One bundle's events, sorted, as the sorter merges them in place.
struct Block {
  std::vector<DecodedEvent> events;
  std::string strings;  // exec file names and print markers, for events whose data is decompressed and reused
  std::vector<uint32_t> outsideTexts;  // events whose text 0 is in `strings`
  int64_t maxTs = INT64_MIN;
  void clear() {
    events.clear();
    strings.clear();
    outsideTexts.clear();
    maxTs = INT64_MIN;
  }
};

class Reader final : public core::EventSink {
 public:
  Reader(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options, Threading threading)
      : m_path(path), m_b(builder), m_opt(options), m_threading(threading),
        m_feed(builder, core::EventFeed::Position::ByteOffset), m_sorter(m_feed, INT64_MAX, SIZE_MAX) {
    m_sorter.setSink(this);
    m_keyOfEvent.fill(DecodedEvent::kNoCount);
  }

  core::Status run();
  void take(DecodedEvent& e) override;
  void blockDone(void* token) override {
    auto* b = static_cast<Block*>(token);
    b->clear();
    m_freeBlocks.push_back(b);
  }

 private:
  // --- walking packets (both passes) ---
  template <typename Visit>
  bool walk(const uint8_t* data, size_t size, const Region& r, int depth, Visit& visit);
  bool fail(const Region& r, const uint8_t* at, const std::string& what) {
    if (m_error.empty()) m_error = m_path + ": " + r.describe(at) + ": " + what;
    return false;
  }
  bool failReader(const Region& r, const MessageReader& m, const char* what) {
    return fail(r, m.errorAt(), std::string(what) + ": " + m.error());
  }

  // --- pass 1 ---
  bool scanPacket(const Field& packet, const Region& r);
  // In time order (the sink): `tid` named by the event being delivered.
  void see(int32_t tid) {
    if (m_tasks.see(tid) && m_taskAttributes.count(tid)) m_attribute.push_back(tid);
  }
  uint32_t streamOf(uint64_t sequence, int cpu);
  bool scanProcessTree(const Field& f, const Region& r);
  bool scanProcessStats(const Field& f, const Region& r);
  bool scanSystemInfo(const Field& f, const Region& r);
  bool scanCpuInfo(const Field& f, const Region& r);
  bool scanFtraceStats(const Field& f, const Region& r, int64_t ts);
  void settleOverruns();
  bool scanSchedlab(const Field& f, const Region& r);
  void applySchedlab();
  void emitAttributes(int32_t tid);
  void applyScan();

  // --- pass 2 ---
  core::Status decodeAll();
  bool decodePacket(const Field& packet, const Region& r);
  bool decodeBundle(const Field& bundle, const Region& r, uint64_t sequence);
  bool decodeGenericTaskState(const Field& packet, const Field& event, const Region& r, uint64_t sequence);
  bool decodeEvent(const Field& f, const Region& r, int cpu, Block& block);
  bool decodeCompact(const Field& f, const Region& r, int cpu, Block& block);
  void finishDecoding();
  uint16_t keyFor(uint32_t eventId);
  uint16_t keyForName(std::string_view name, uint16_t& key) {
    if (key == DecodedEvent::kNoCount) key = m_feed.eventType(name);
    return key;
  }
  Block* takeBlock() {
    if (m_freeBlocks.empty()) {
      m_blocks.push_back(std::make_unique<Block>());
      return m_blocks.back().get();
    }
    Block* b = m_freeBlocks.back();
    m_freeBlocks.pop_back();
    return b;
  }
  void diag(core::DiagCode code, uint64_t position, const std::string& what, int cpu, int64_t ts) {
    if (m_feed.keepsRecord(code)) m_feed.diagnostic(code, position, what, cpu, ts);
  }

  std::string m_path;
  core::SchedBuilder& m_b;
  const ImportOptions& m_opt;
  Threading m_threading;
  core::MappedFile m_file;
  static constexpr uint64_t kReleaseEvery = uint64_t{16} << 20;
  uint64_t m_releasedUpTo = 0;  // of the pass under way
  core::EventFeed m_feed;
  core::EventSorter m_sorter;
  std::string m_error;  // the first malformed input met; the walk stops there
  std::array<std::string, kMaxNesting> m_inflated;  // by nesting depth, reused

  // pass 1
  // The sorter's streams: one per (writer, CPU), with their bundles still to come.
  std::unordered_map<uint64_t, uint32_t> m_streamIndex;
  std::vector<uint32_t> m_bundlesOfStream;
  core::TaskIdentities m_tasks;             // from process_tree / process_stats
  std::unordered_set<int32_t> m_namedByThread;  // tree threads with a name of their own
  uint32_t m_numCpus = 0;
  std::vector<std::pair<int, int>> m_cpuPlaces;  // cpu_info: (core, package) by CPU, from SchedLab's own fields
  bool m_cpuPlacesComplete = true;
  uint32_t m_cpuInfoCount = 0;
  uint32_t m_ftraceStatsCpus = 0;  // FtraceStats name every CPU's ring buffer, idle ones too
  std::string m_release;
  bool m_schedlabExport = false;
  // ftrace_stats: each CPU's overrun counter at the start, and at each flush
  // (END readings, by the packet's time; INT64_MAX when it has none).
  struct OverrunReading {
    int64_t ts;
    uint64_t overrun;
  };
  std::map<int, uint64_t> m_overrunAtStart;
  std::map<int, std::vector<OverrunReading>> m_overrunReadings;
  core::PrevStateEncoding m_encoding = core::PrevStateEncoding::Report414;
  // SchedLab's own exports: what a replay set per task, and the replay.
  struct TaskAttributes {
    int32_t tid = 0;
    uint32_t cookie = 0;
    int16_t uclampMin = -1;
    int16_t uclampMax = -1;
    core::TaskPolicy policy = core::TaskPolicy::Unknown;
    std::vector<core::CpuId> affinity;
  };
  // By tid, in the order of the tasks that had it: each goes to the next task
  // of that tid when it appears (a task must be alive to take them).
  std::unordered_map<int32_t, std::vector<TaskAttributes>> m_taskAttributes;
  std::optional<core::ReplayInfo> m_replay;

  // pass 2
  struct CpuState {
    int64_t lastTs = INT64_MIN;  // last event of the CPU's bundles so far
    bool haveNext = false;       // compact_sched: the task the last switch put on the CPU
    int32_t nextTid = 0;
    int32_t nextPrio = core::kPrioUnknown;
    uint8_t nextCommLen = 0;
    char nextComm[16] = {};
  };
  std::vector<CpuState> m_cpus;
  std::vector<std::unique_ptr<Block>> m_blocks;
  std::vector<Block*> m_freeBlocks;
  std::array<uint16_t, kMaxFtraceEventId> m_keyOfEvent;
  uint16_t m_keyCompactSwitch = DecodedEvent::kNoCount;
  uint16_t m_keyCompactWaking = DecodedEvent::kNoCount;
  std::vector<std::string_view> m_intern;  // compact_sched comm table of the bundle being read
  std::string m_clock;
  uint64_t m_bytesDone = 0;
  uint64_t m_packets = 0;

  // the sink
  std::vector<int32_t> m_attribute;  // tasks to give their attributes after the event that made them appear
  std::unordered_set<int32_t> m_newTaskChildren;
};

// --- walking ---------------------------------------------------------------

template <typename Visit>
bool Reader::walk(const uint8_t* data, size_t size, const Region& r, int depth, Visit& visit) {
  MessageReader trace(data, size);
  Field f;
  while (trace.next(f)) {
    if (f.id != kTracePacket) continue;  // Trace has no other field; tolerate what a newer writer adds
    if (f.type != WireType::Bytes) return fail(r, f.data ? f.data : data, "Trace.packet is not length-delimited");
    if (depth == 0) m_bytesDone = r.offsetOf(f.data + f.size);
    // Compressed packets hold packets: decompressed and walked in place of their packet.
    MessageReader packet(f);
    Field p;
    bool plain = true;
    while (packet.next(p)) {
      if (p.id != kCompressedPackets && p.id != kZstdCompressedPackets) continue;
      plain = false;
      if (p.type != WireType::Bytes) return fail(r, f.data, "compressed packets field is not length-delimited");
      if (depth + 1 >= kMaxNesting) return fail(r, p.data, "compressed packets nested too deep");
      std::string& out = m_inflated[static_cast<size_t>(depth)];
      std::string error;
      const bool ok = p.id == kCompressedPackets ? inflateAll(p.data, p.size, out, error)
                                                 : unzstdAll(p.data, p.size, out, error);
      if (!ok) return fail(r, p.data, error);
      const Region inner{reinterpret_cast<const uint8_t*>(out.data()), r.offsetOf(p.data), true};
      if (!walk(inner.base, out.size(), inner, depth + 1, visit)) return false;
    }
    if (!packet.ok()) return failReader(r, packet, "malformed TracePacket");
    if (plain && !visit(f, r)) return false;
    // A big trace read twice would be resident whole (1.5 GB for 37M events:
    // 40 B/event beside the model): each pass gives back what it has walked.
    // Events the sorter still holds may point into those bytes; reading them
    // faults the pages back in from the page cache.
    if (depth == 0 && m_file.size() > core::MappedFile::kPopulateLimit && m_bytesDone >= m_releasedUpTo + kReleaseEvery) {
      m_file.releaseBefore(m_bytesDone);
      m_releasedUpTo = m_bytesDone;
    }
    if (depth == 0 && (++m_packets & 0xfff) == 0 && m_opt.stop.stop_requested()) {
      m_error = m_path + ": import cancelled";
      return false;
    }
  }
  if (!trace.ok()) return failReader(r, trace, "malformed trace");
  return true;
}

// --- pass 1: CPUs, tasks, system -------------------------------------------

// A packet's writer (trusted_packet_sequence_id): each writer's packets are in
// order, different writers' are not (a trace may hold several for the same CPUs).
uint64_t sequenceOf(const Field& packet) {
  MessageReader m(packet);
  Field f;
  while (m.next(f))
    if (f.id == kTrustedSequenceId && f.type == WireType::Varint) return f.value;
  return 0;
}

// A packet's timestamp; INT64_MAX when it has none (after every timed one).
int64_t packetTimestamp(const Field& packet) {
  MessageReader m(packet);
  Field f;
  while (m.next(f))
    if (f.id == kPacketTimestamp && f.type == WireType::Varint) return static_cast<int64_t>(std::min<uint64_t>(f.value, INT64_MAX));
  return INT64_MAX;
}

// The CPU a GenericKernelTaskStateEvent names (0 when it does not), as a stream key.
int genericTaskCpu(const Field& event) {
  MessageReader m(event);
  Field x;
  while (m.next(x))
    if (x.id == kGenericTaskCpu && x.type == WireType::Varint) return static_cast<int>(std::min<uint64_t>(x.value, kMaxCpu - 1));
  return 0;
}

uint32_t Reader::streamOf(uint64_t sequence, int cpu) {
  const uint64_t key = (sequence << 16) ^ static_cast<uint64_t>(cpu);
  auto [it, added] = m_streamIndex.emplace(key, static_cast<uint32_t>(m_bundlesOfStream.size()));
  if (added) m_bundlesOfStream.push_back(0);
  return it->second;
}

bool Reader::scanPacket(const Field& packet, const Region& r) {
  MessageReader m(packet);
  Field f;
  while (m.next(f)) {
    if (f.type != WireType::Bytes) continue;
    switch (f.id) {
      case kFtraceEvents: {
        // Only the CPU: writers put it first, so the events are not walked here.
        MessageReader bundle(f);
        Field b;
        int cpu = 0;
        while (bundle.next(b))
          if (b.id == kBundleCpu && b.type == WireType::Varint) {
            cpu = static_cast<int>(std::min<uint64_t>(b.value, kMaxCpu));
            break;
          }
        if (!bundle.ok()) return failReader(r, bundle, "malformed FtraceEventBundle");
        if (cpu < kMaxCpu) ++m_bundlesOfStream[streamOf(sequenceOf(packet), cpu)];
        break;
      }
      case kProcessTree:
        if (!scanProcessTree(f, r)) return false;
        break;
      case kProcessStats:
        if (!scanProcessStats(f, r)) return false;
        break;
      case kSystemInfo:
        if (!scanSystemInfo(f, r)) return false;
        break;
      case kCpuInfo:
        if (!scanCpuInfo(f, r)) return false;
        break;
      case kFtraceStats:
        if (!scanFtraceStats(f, r, packetTimestamp(packet))) return false;
        break;
      case kPacketSchedlab:
        if (!scanSchedlab(f, r)) return false;
        break;
      case kGenericTaskState:
        // Its own stream: a writer's task states are in order among themselves.
        ++m_bundlesOfStream[streamOf(sequenceOf(packet), genericTaskCpu(f))];
        break;
      default: break;
    }
  }
  if (!m.ok()) return failReader(r, m, "malformed TracePacket");
  return true;
}

bool Reader::scanProcessTree(const Field& tree, const Region& r) {
  MessageReader m(tree);
  Field f;
  while (m.next(f)) {
    if (f.type != WireType::Bytes) continue;
    MessageReader item(f);
    Field x;
    if (f.id == kTreeThread) {
      int32_t tid = 0, tgid = -1;
      std::string_view name;
      while (item.next(x)) {
        if (x.id == kThreadTid && x.type == WireType::Varint) tid = x.asInt32();
        if (x.id == kThreadTgid && x.type == WireType::Varint) tgid = x.asInt32();
        if (x.id == kThreadName && x.type == WireType::Bytes) name = x.text();
      }
      if (!item.ok()) return failReader(r, item, "malformed ProcessTree.Thread");
      if (tid <= 0) continue;
      auto& id = m_tasks.of(tid);
      if (tgid > 0) id.tgid = tgid;
      if (!name.empty()) {
        id.setComm(name);
        m_namedByThread.insert(tid);
      }
    } else if (f.id == kTreeProcess) {
      int32_t pid = 0;
      std::string_view cmdline0;
      bool haveCmdline = false;
      while (item.next(x)) {
        if (x.id == kProcessPid && x.type == WireType::Varint) pid = x.asInt32();
        if (x.id == kProcessCmdline && x.type == WireType::Bytes && !haveCmdline) {
          cmdline0 = x.text();
          haveCmdline = true;
        }
      }
      if (!item.ok()) return failReader(r, item, "malformed ProcessTree.Process");
      if (pid <= 0) continue;
      auto& id = m_tasks.of(pid);
      id.tgid = pid;
      // The main thread's comm is the base name of the program, as the kernel sets it at exec.
      if (!m_namedByThread.count(pid) && !cmdline0.empty()) {
        const size_t slash = cmdline0.rfind('/');
        id.setComm(slash == std::string_view::npos ? cmdline0 : cmdline0.substr(slash + 1));
      }
    }
  }
  if (!m.ok()) return failReader(r, m, "malformed ProcessTree");
  return true;
}

bool Reader::scanProcessStats(const Field& stats, const Region& r) {
  MessageReader m(stats);
  Field f;
  while (m.next(f)) {
    if (f.id != kStatsProcess || f.type != WireType::Bytes) continue;
    MessageReader proc(f);
    Field x;
    int32_t pid = 0;
    std::vector<int32_t> tids;
    while (proc.next(x)) {
      if (x.id == kProcessPid && x.type == WireType::Varint) pid = x.asInt32();
      if (x.id == kStatsThreads && x.type == WireType::Bytes) {
        MessageReader t(x);
        Field y;
        while (t.next(y))
          if (y.id == kThreadTid && y.type == WireType::Varint) tids.push_back(y.asInt32());
        if (!t.ok()) return failReader(r, t, "malformed ProcessStats.Thread");
      }
    }
    if (!proc.ok()) return failReader(r, proc, "malformed ProcessStats.Process");
    if (pid <= 0) continue;
    for (int32_t tid : tids)
      if (tid > 0 && m_tasks.of(tid).tgid <= 0) m_tasks.of(tid).tgid = pid;
  }
  if (!m.ok()) return failReader(r, m, "malformed ProcessStats");
  return true;
}

bool Reader::scanSystemInfo(const Field& info, const Region& r) {
  MessageReader m(info);
  Field f;
  while (m.next(f)) {
    if (f.id == kSysNumCpus && f.type == WireType::Varint) m_numCpus = static_cast<uint32_t>(std::min<uint64_t>(f.value, kMaxCpu));
    if (f.type != WireType::Bytes) continue;
    if (f.id == kSysFingerprint) m_b.setMetadata("android_build_fingerprint", std::string(f.text()));
    if (f.id == kSysServiceVersion) {
      m_b.setMetadata("recorder", "perfetto " + std::string(f.text()));
      m_schedlabExport = f.text() == "SchedLab export";
    }
    if (f.id == kSysUtsname) {
      MessageReader u(f);
      Field x;
      while (u.next(x)) {
        if (x.type != WireType::Bytes) continue;
        if (x.id == kUtsRelease) m_release = std::string(x.text());
        if (x.id == kUtsMachine) m_b.setMetadata("machine", std::string(x.text()));
        if (x.id == kUtsSysname) m_b.setMetadata("sysname", std::string(x.text()));
      }
      if (!u.ok()) return failReader(r, u, "malformed Utsname");
    }
  }
  if (!m.ok()) return failReader(r, m, "malformed SystemInfo");
  return true;
}

bool Reader::scanCpuInfo(const Field& info, const Region& r) {
  MessageReader m(info);
  Field f;
  m_cpuPlaces.clear();
  m_cpuInfoCount = 0;
  m_cpuPlacesComplete = true;
  while (m.next(f)) {
    if (f.id != kCpuInfoCpu || f.type != WireType::Bytes) continue;
    ++m_cpuInfoCount;
    MessageReader c(f);
    Field x;
    int core = -1, package = 0;
    while (c.next(x)) {
      if (x.id == kCpuSchedlabCore && x.type == WireType::Varint) core = x.asInt32();
      if (x.id == kCpuSchedlabPackage && x.type == WireType::Varint) package = x.asInt32();
    }
    if (!c.ok()) return failReader(r, c, "malformed CpuInfo.Cpu");
    if (core < 0 || core >= kMaxCpu || package < 0 || package >= kMaxCpu) m_cpuPlacesComplete = false;
    m_cpuPlaces.emplace_back(core, package);
  }
  if (!m.ok()) return failReader(r, m, "malformed CpuInfo");
  return true;
}

bool Reader::scanFtraceStats(const Field& stats, const Region& r, int64_t ts) {
  MessageReader m(stats);
  Field f;
  uint64_t phase = 0;
  std::vector<std::pair<int, uint64_t>> overruns;
  while (m.next(f)) {
    if (f.id == kStatsPhase && f.type == WireType::Varint) phase = f.value;
    if (f.id != kStatsCpu || f.type != WireType::Bytes) continue;
    MessageReader c(f);
    Field x;
    int cpu = -1;
    uint64_t overrun = 0;
    while (c.next(x)) {
      if (x.id == kCpuStatsCpu && x.type == WireType::Varint) cpu = static_cast<int>(std::min<uint64_t>(x.value, kMaxCpu));
      if (x.id == kCpuStatsOverrun && x.type == WireType::Varint) overrun = x.value;
    }
    if (!c.ok()) return failReader(r, c, "malformed FtraceCpuStats");
    if (cpu >= 0 && cpu < kMaxCpu) {
      overruns.emplace_back(cpu, overrun);
      m_ftraceStatsCpus = std::max(m_ftraceStatsCpus, static_cast<uint32_t>(cpu) + 1);
    }
  }
  if (!m.ok()) return failReader(r, m, "malformed FtraceStats");
  for (const auto& [cpu, overrun] : overruns) {
    if (phase == kPhaseStart)
      m_overrunAtStart[cpu] = overrun;
    else if (phase == kPhaseEnd)
      m_overrunReadings[cpu].push_back({ts, overrun});
  }
  return true;
}

// What a CPU's overrun counter grew by between two readings was lost in that
// stretch: the count of the one loss the bundles show there (lost_events, or
// bundles missing), as SchedLab's export writes a reading after each loss.
// Several there stay uncounted (how the count splits is unknown); with none,
// the events were lost where the bundles do not say (a ring buffer that
// overwrote its oldest pages): a loss at the CPU's last event holds them.
void Reader::settleOverruns() {
  for (auto& [cpu, readings] : m_overrunReadings) {
    std::stable_sort(readings.begin(), readings.end(),
                     [](const OverrunReading& a, const OverrunReading& b) { return a.ts < b.ts; });
    auto start = m_overrunAtStart.find(cpu);
    uint64_t before = start == m_overrunAtStart.end() ? 0 : start->second;
    int64_t after = INT64_MIN;
    uint64_t unplaced = 0;
    for (const OverrunReading& reading : readings) {
      if (reading.overrun > before) {
        const auto grown = static_cast<int64_t>(std::min<uint64_t>(reading.overrun - before, INT64_MAX / 2));
        if (m_b.settleLostCountBetween(cpu, after, reading.ts, grown) == 0)
          unplaced = std::min<uint64_t>(unplaced + static_cast<uint64_t>(grown), INT64_MAX / 2);
      }
      before = reading.overrun;
      after = reading.ts;
    }
    if (unplaced == 0) continue;
    const bool seen = static_cast<size_t>(cpu) < m_cpus.size() && m_cpus[static_cast<size_t>(cpu)].lastTs != INT64_MIN;
    m_b.onDataLoss(cpu, seen ? m_cpus[static_cast<size_t>(cpu)].lastTs : 0, static_cast<int64_t>(unplaced));
  }
}

bool Reader::scanSchedlab(const Field& packet, const Region& r) {
  MessageReader m(packet);
  Field f;
  while (m.next(f)) {
    if (f.type != WireType::Bytes) continue;
    MessageReader item(f);
    Field x;
    if (f.id == kSchedlabTask) {
      TaskAttributes t;
      while (item.next(x)) {
        switch (x.id) {
          case kTaskTid: t.tid = x.asInt32(); break;
          case kTaskCookie: t.cookie = static_cast<uint32_t>(x.value); break;
          case kTaskUclampMin: t.uclampMin = static_cast<int16_t>(x.asInt32()); break;
          case kTaskUclampMax: t.uclampMax = static_cast<int16_t>(x.asInt32()); break;
          case kTaskPolicy:
            if (x.value <= static_cast<uint64_t>(core::TaskPolicy::Deadline)) t.policy = static_cast<core::TaskPolicy>(x.value);
            break;
          case kTaskAffinity: {
            if (x.type != WireType::Bytes) break;
            PackedVarints cpus(x);
            uint64_t c;
            while (cpus.next(c))
              if (c < static_cast<uint64_t>(kMaxCpu)) t.affinity.push_back(static_cast<core::CpuId>(c));
            break;
          }
          default: break;
        }
      }
      if (!item.ok()) return failReader(r, item, "malformed SchedLab task attributes");
      if (t.tid > 0) m_taskAttributes[t.tid].push_back(std::move(t));
    } else if (f.id == kSchedlabReplay) {
      core::ReplayInfo info;
      while (item.next(x)) {
        if (x.type != WireType::Bytes) continue;
        if (x.id == kReplayModel) info.model = std::string(x.text());
        if (x.id == kReplayRecording) info.recordingPath = std::string(x.text());
        if (x.id == kReplayCookieName) info.cookieNames.emplace_back(x.text());
        if (x.id == kReplayParam) {
          core::ReplayParam p;
          MessageReader pm(x);
          Field y;
          while (pm.next(y)) {
            if (y.type != WireType::Bytes) continue;
            std::string* slot = y.id == 1 ? &p.key : y.id == 2 ? &p.value : y.id == 3 ? &p.doc : y.id == 4 ? &p.origin : nullptr;
            if (slot) *slot = std::string(y.text());
          }
          if (!pm.ok()) return failReader(r, pm, "malformed SchedLab replay parameter");
          info.params.push_back(std::move(p));
        }
      }
      if (!item.ok()) return failReader(r, item, "malformed SchedLab replay");
      m_replay = std::move(info);
    }
  }
  if (!m.ok()) return failReader(r, m, "malformed SchedLab packet");
  return true;
}

void Reader::applySchedlab() {
  if (m_replay) m_b.setReplayInfo(std::move(*m_replay));
}

// The next attributes of `tid`, for the task of it that just appeared.
void Reader::emitAttributes(int32_t tid) {
  auto it = m_taskAttributes.find(tid);
  if (it == m_taskAttributes.end() || it->second.empty()) return;
  const TaskAttributes& t = it->second.front();
  DecodedEvent e;
  e.op = EventOp::TaskAttributes;
  e.tid = tid;
  e.aux = t.cookie;
  e.prio = t.uclampMin;
  e.otherPrio = t.uclampMax;
  e.cpuA = static_cast<int32_t>(t.policy);
  std::string mask;
  for (core::CpuId c : t.affinity) {
    if (mask.size() <= c / 8u) mask.resize(c / 8u + 1, '\0');
    mask[c / 8u] = static_cast<char>(mask[c / 8u] | (1 << (c % 8)));
  }
  e.setText(0, mask);  // the feed copies a long one
  m_feed.event(e);
  it->second.erase(it->second.begin());
}

void Reader::applyScan() {
  // The kernel's prev_state bits: TASK_REPORT folding since 4.14 (core/task_state.h).
  if (!m_release.empty()) {
    // As perf.data names it: the key TraceModel::kernelRelease() and the
    // replay's baseline take the recording kernel's release from.
    m_b.setMetadata("osrelease", m_release);
    int major = 0, minor = 0;
    // SchedLab's export writes the 4.14+ encoding whatever kernel it names.
    if (!m_schedlabExport && std::sscanf(m_release.c_str(), "%d.%d", &major, &minor) == 2 &&
        (major < 4 || (major == 4 && minor < 14)))
      m_encoding = core::PrevStateEncoding::Legacy;
  }
  if (m_opt.topology) return;
  if (!m_cpuPlaces.empty() && m_cpuPlacesComplete) {
    // SchedLab's own export: the core and package of every CPU.
    int cores = 0;
    for (const auto& [core, package] : m_cpuPlaces) cores = std::max(cores, core + 1);
    std::vector<std::vector<int>> members(static_cast<size_t>(cores));
    std::vector<int> corePackage(static_cast<size_t>(cores), 0);
    for (size_t cpu = 0; cpu < m_cpuPlaces.size(); ++cpu) {
      members[static_cast<size_t>(m_cpuPlaces[cpu].first)].push_back(static_cast<int>(cpu));
      corePackage[static_cast<size_t>(m_cpuPlaces[cpu].first)] = m_cpuPlaces[cpu].second;
    }
    if (std::none_of(members.begin(), members.end(), [](const auto& v) { return v.empty(); })) {
      m_b.setTopology(core::Topology(std::move(members), std::move(corePackage), "perfetto cpu_info"));
      return;
    }
  }
  // Perfetto records how many CPUs there were, not how they pair into cores.
  if (m_numCpus > 0)
    m_b.setTopology(core::Topology::flat(static_cast<int>(m_numCpus), "perfetto system_info"));
  else if (m_cpuInfoCount > 0)
    m_b.setTopology(core::Topology::flat(static_cast<int>(std::min<uint32_t>(m_cpuInfoCount, kMaxCpu)), "perfetto cpu_info"));
  else if (m_ftraceStatsCpus > 0)
    m_b.setTopology(core::Topology::flat(static_cast<int>(m_ftraceStatsCpus), "perfetto ftrace_stats"));
}

// --- pass 2: the bundles ---------------------------------------------------

uint16_t Reader::keyFor(uint32_t eventId) {
  if (eventId >= kMaxFtraceEventId) eventId = 0;  // counted together as unknown
  uint16_t& key = m_keyOfEvent[eventId];
  if (key == DecodedEvent::kNoCount) {
    const std::string_view name = ftraceEventName(eventId);
    key = m_feed.eventType(name.empty() ? "ftrace_event_" + std::to_string(eventId) : std::string(name));
  }
  return key;
}

// A GenericKernelTaskStateEvent, read as a state the task is known to have
// from the packet's time on: a seed, which the builder takes only for a task
// whose state no event before it told (as LTTng's statedump). Reading the
// switches and wakeups trace_processor infers from a stream of them is not
// done: traces that schedule through these events alone are not supported.
bool Reader::decodeGenericTaskState(const Field& packet, const Field& event, const Region& r, uint64_t sequence) {
  int64_t ts = 0;
  {
    MessageReader m(packet);
    Field f;
    while (m.next(f))
      if (f.id == kPacketTimestamp && f.type == WireType::Varint) ts = static_cast<int64_t>(std::min<uint64_t>(f.value, INT64_MAX));
  }
  DecodedEvent e;
  e.op = EventOp::TaskSeed;
  e.ts = ts;
  e.position = r.offsetOf(event.data);
  uint64_t state = 0;
  MessageReader m(event);
  Field x;
  while (m.next(x)) {
    if (x.type != WireType::Varint) continue;
    if (x.id == kGenericTaskTid) e.tid = x.asInt32();
    if (x.id == kGenericTaskStateField) state = x.value;
    if (x.id == kGenericTaskCpu) e.cpu = static_cast<int32_t>(std::min<uint64_t>(x.value, kMaxCpu - 1));
  }
  if (!m.ok()) return failReader(r, m, "malformed GenericKernelTaskStateEvent");
  // TaskStateEnum: 2 RUNNABLE, 3 RUNNING, 4 INTERRUPTIBLE_SLEEP, 5 UNINTERRUPTIBLE_SLEEP, 6 STOPPED, 7 DEAD.
  static constexpr core::TaskState kStates[] = {core::TaskState::Unknown,  core::TaskState::Unknown,
                                                core::TaskState::Runnable, core::TaskState::Running,
                                                core::TaskState::Sleeping, core::TaskState::Blocked,
                                                core::TaskState::Stopped,  core::TaskState::Dead};
  e.state = state < std::size(kStates) ? kStates[state] : core::TaskState::Unknown;
  Block* block = takeBlock();
  // TASK_STATE_UNKNOWN still says the task exists (SchedLab's export writes
  // it for tasks no event names): it makes the task, with no state.
  if (e.tid > 0 && (e.state != core::TaskState::Unknown || state == 0)) block->events.push_back(e);
  block->maxTs = ts;
  const uint32_t stream = streamOf(sequence, genericTaskCpu(event));
  m_sorter.pushBlock(static_cast<int>(stream), block->events, block->maxTs, block);
  if (m_bundlesOfStream[stream] > 0 && --m_bundlesOfStream[stream] == 0) m_sorter.endCpu(static_cast<int>(stream));
  return true;
}

bool Reader::decodePacket(const Field& packet, const Region& r) {
  MessageReader m(packet);
  Field f;
  uint64_t sequence = UINT64_MAX;
  while (m.next(f)) {
    if (f.type != WireType::Bytes || (f.id != kFtraceEvents && f.id != kGenericTaskState)) continue;
    if (sequence == UINT64_MAX) sequence = sequenceOf(packet);
    if (!(f.id == kFtraceEvents ? decodeBundle(f, r, sequence) : decodeGenericTaskState(packet, f, r, sequence)))
      return false;
  }
  if (!m.ok()) return failReader(r, m, "malformed TracePacket");
  return true;
}

bool Reader::decodeBundle(const Field& bundle, const Region& r, uint64_t sequence) {
  // The bundle's own fields first (a writer may put `cpu` after the events).
  int cpu = 0;
  bool lost = false;
  bool haveClock = false;
  uint64_t clock = 0;
  int64_t previousEnd = -1;
  {
    MessageReader m(bundle);
    Field f;
    while (m.next(f)) {
      if (f.type != WireType::Varint) continue;
      if (f.id == kBundleCpu) cpu = static_cast<int>(std::min<uint64_t>(f.value, kMaxCpu));
      if (f.id == kBundleLostEvents) lost = f.value != 0;
      if (f.id == kBundleClock) {
        haveClock = true;
        clock = f.value;
      }
      if (f.id == kBundlePreviousEnd) previousEnd = static_cast<int64_t>(std::min<uint64_t>(f.value, INT64_MAX));
    }
    if (!m.ok()) return failReader(r, m, "malformed FtraceEventBundle");
  }
  if (m_clock.empty() || haveClock) m_clock = std::string(clockName(haveClock ? clock : 0));
  if (static_cast<size_t>(cpu) >= m_cpus.size()) m_cpus.resize(static_cast<size_t>(cpu) + 1);
  CpuState& st = m_cpus[static_cast<size_t>(cpu)];

  Block* block = takeBlock();
  // A loss before the bundle: the kernel's buffer overran (lost_events), or
  // bundles between this and the CPU's last one are missing from the trace.
  const bool gap = previousEnd >= 0 && st.lastTs != INT64_MIN && previousEnd > st.lastTs;
  if (lost || gap) {
    DecodedEvent& e = block->events.emplace_back();
    e.op = EventOp::DataLoss;
    e.cpu = cpu;
    e.aux = -1;
    e.position = r.offsetOf(bundle.data);
  }
  bool ok = true;
  MessageReader m(bundle);
  Field f;
  while (ok && m.next(f)) {
    if (f.type != WireType::Bytes) continue;
    if (f.id == kBundleEvent)
      ok = decodeEvent(f, r, cpu, *block);
    else if (f.id == kBundleCompactSched)
      ok = decodeCompact(f, r, cpu, *block);
  }
  if (ok && !m.ok()) ok = failReader(r, m, "malformed FtraceEventBundle");

  auto& ev = block->events;
  for (uint32_t i : block->outsideTexts) {
    DecodedEvent& e = ev[i];
    e.setText(0, std::string_view(block->strings).substr(static_cast<size_t>(e.cpuA), static_cast<size_t>(e.cpuB)));
    e.cpuA = e.cpuB = -1;
  }
  // Per-event and compact events come in separate lists: one order for both.
  // The loss marker (no time yet) sorts first and then takes the first event's time.
  const auto byTime = [](const DecodedEvent& a, const DecodedEvent& b) { return a.ts < b.ts; };
  const size_t from = (lost || gap) ? 1 : 0;
  if (!std::is_sorted(ev.begin() + static_cast<std::ptrdiff_t>(from), ev.end(), byTime))
    std::stable_sort(ev.begin() + static_cast<std::ptrdiff_t>(from), ev.end(), byTime);
  if (from == 1) ev[0].ts = ev.size() > 1 ? ev[1].ts : std::max<int64_t>(previousEnd, st.lastTs);
  for (const auto& e : ev) block->maxTs = std::max(block->maxTs, e.ts);
  if (block->maxTs != INT64_MIN) st.lastTs = std::max(st.lastTs, block->maxTs);

  if (cpu >= kMaxCpu) {
    m_sorter.pushBlock(-1, ev, block->maxTs, block);  // no queue: the builder counts and drops them
    return ok;
  }
  const uint32_t stream = streamOf(sequence, cpu);
  m_sorter.pushBlock(static_cast<int>(stream), ev, block->maxTs, block);
  if (m_bundlesOfStream[stream] > 0 && --m_bundlesOfStream[stream] == 0) m_sorter.endCpu(static_cast<int>(stream));
  return ok;
}

bool Reader::decodeEvent(const Field& event, const Region& r, int cpu, Block& block) {
  MessageReader m(event);
  Field f;
  int64_t ts = 0;
  int32_t pid = -1;
  uint32_t flags = 0;
  Field payload;
  bool havePayload = false;
  uint64_t idleKind = 0;
  while (m.next(f)) {
    switch (f.id) {
      case kEventTimestamp: ts = static_cast<int64_t>(std::min<uint64_t>(f.value, INT64_MAX)); break;
      case kEventPid: pid = f.asInt32(); break;
      case kEventCommonFlags: flags = static_cast<uint32_t>(f.value); break;
      case kEventSchedlabIdleKind: idleKind = f.value; break;
      default:
        if (f.type == WireType::Bytes && f.id >= kFirstEventPayload) {
          payload = f;
          havePayload = true;
        }
        break;
    }
  }
  if (!m.ok()) return failReader(r, m, "malformed FtraceEvent");
  DecodedEvent& e = block.events.emplace_back();
  e.ts = ts;
  e.cpu = cpu;
  e.ctxTid = pid;
  e.position = r.offsetOf(event.data);
  e.irq = core::irqFromTraceFlags(flags);
  if (!havePayload) {
    if (idleKind != 0) {
      e.op = EventOp::IdleKind;
      e.aux = idleKind == 2 ? 1 : 0;
      return true;  // SchedLab's own: not an event of the recorded trace, not counted
    }
    // A timestamp alone: where SchedLab's export marks a CPU seen (a run or
    // lost data beginning without a switch); every ftrace event has a payload,
    // so this is none, not counted, only the time it shows.
    return true;
  }
  e.countKey = keyFor(payload.id);
  MessageReader p(payload);
  Field x;
  auto comm = [](const Field& s) { return s.text().substr(0, DecodedEvent::kInlineText); };
  switch (payload.id) {
    case kSchedSwitch: {
      e.op = EventOp::Switch;
      while (p.next(x)) {
        switch (x.id) {
          case 1: e.setText(0, comm(x)); break;
          case 2: e.tid = x.asInt32(); break;
          case 3: e.prio = x.asInt32(); break;
          case 4: e.state = core::taskStateFromRaw(x.value, m_encoding).value_or(core::TaskState::Unknown); break;
          case 5: e.setText(1, comm(x)); break;
          case 6: e.otherTid = x.asInt32(); break;
          case 7: e.otherPrio = x.asInt32(); break;
          case kSwitchSchedlabForcedIdle: e.aux = x.value != 0 ? 1 : -1; break;
          case kSwitchSchedlabRepaired:
            // The import's repair, not a switch the recording traced: counted
            // again as the repair (switch_in_inferred), not as a sched_switch.
            if (x.value != 0) {
              e.aux = x.value == kRepairedKeepsPrevState ? 3 : 2;
              e.countKey = DecodedEvent::kNoCount;
            }
            break;
          default: break;
        }
      }
      CpuState& st = m_cpus[static_cast<size_t>(std::min(cpu, kMaxCpu))];
      st.haveNext = true;
      st.nextTid = e.otherTid;
      st.nextPrio = e.otherPrio;
      const std::string_view next = e.textAt(1);
      st.nextCommLen = static_cast<uint8_t>(next.size());
      std::memcpy(st.nextComm, next.data(), next.size());
      break;
    }
    case kSchedWaking:
    case kSchedWakeup:
    case kSchedWakeupNew:
      e.op = payload.id == kSchedWaking ? EventOp::Waking : payload.id == kSchedWakeup ? EventOp::Wakeup : EventOp::WakeupNew;
      while (p.next(x)) {
        if (x.id == 1) e.setText(0, comm(x));
        if (x.id == 2) e.tid = x.asInt32();
        if (x.id == 3) e.prio = x.asInt32();
        if (x.id == 4 && x.value == 0) e.aux = 0;  // success 0: found running (WakeArgs::foundActive)
        if (x.id == 5) e.cpuA = x.asInt32();
      }
      break;
    case kSchedMigrateTask:
      e.op = EventOp::Migrate;
      while (p.next(x)) {
        if (x.id == 1) e.setText(0, comm(x));
        if (x.id == 2) e.tid = x.asInt32();
        if (x.id == 3) e.prio = x.asInt32();
        if (x.id == 4) e.cpuA = x.asInt32();
        if (x.id == 5) e.cpuB = x.asInt32();
      }
      break;
    case kSchedProcessFork:
      e.op = EventOp::Fork;
      while (p.next(x)) {
        if (x.id == 1) e.setText(0, comm(x));
        if (x.id == 2) e.tid = x.asInt32();
        if (x.id == 3) e.setText(1, comm(x));
        if (x.id == 4) e.otherTid = x.asInt32();
      }
      break;
    case kTaskNewtask: {
      // The kernel's clone hook: a new task of parent `pid` (the event's context).
      e.op = EventOp::Fork;
      e.tid = pid;
      e.cpuA = kForkFromNewTask;
      uint64_t cloneFlags = 0;
      while (p.next(x)) {
        if (x.id == 1) e.otherTid = x.asInt32();
        if (x.id == 2) e.setText(1, comm(x));
        if (x.id == 3) cloneFlags = x.value;
      }
      e.aux = (cloneFlags & kCloneThread) ? -1 : e.otherTid;
      break;
    }
    case kSchedProcessExit:
      e.op = EventOp::Exit;
      while (p.next(x)) {
        if (x.id == 1) e.setText(0, comm(x));
        if (x.id == 2) e.tid = x.asInt32();
        if (x.id == 4) e.prio = x.asInt32();
      }
      break;
    case kSchedProcessExec: {
      e.op = EventOp::Exec;
      std::string_view filename;
      e.otherTid = -1;
      while (p.next(x)) {
        if (x.id == 1) filename = x.text();
        if (x.id == 2) e.tid = x.asInt32();
        if (x.id == 3) e.otherTid = x.asInt32();
      }
      if (e.otherTid < 0) e.otherTid = e.tid;
      // Kept with the block: decompressed packets are read into a reused buffer.
      e.cpuA = static_cast<int32_t>(block.strings.size());
      e.cpuB = static_cast<int32_t>(std::min<size_t>(filename.size(), 4096));
      block.strings.append(filename.substr(0, 4096));
      block.outsideTexts.push_back(static_cast<uint32_t>(block.events.size() - 1));
      break;
    }
    case kTaskRename:
      e.op = EventOp::Rename;
      while (p.next(x)) {
        if (x.id == 1) e.tid = x.asInt32();
        if (x.id == 3) e.setText(0, comm(x));
      }
      break;
    case kCpuFrequency:
    case kCpuIdle: {
      PowerPayloadFields fields;
      while (p.next(x)) {
        if (x.id == 1) fields.state = x.asInt64();
        if (x.id == 2) fields.cpuId = x.asInt64();
      }
      if (!p.ok()) break;
      const auto kind = payload.id == kCpuFrequency ? core::PowerEvent::CpuFrequency : core::PowerEvent::CpuIdle;
      std::array<DecodedEvent, core::kMaxPowerEventsPerRecord> out;
      const auto n = core::decodePowerEvent(kind, fields, e, out);
      if (n && *n == 1) {
        e = out[0];
      } else {
        diag(core::DiagCode::unsupported_event, e.position,
             std::string(ftraceEventName(payload.id)) + " without its state or cpu_id", cpu, ts);
      }
      break;
    }
    case kPrint: {
      std::string_view text;
      while (p.next(x))
        if (x.id == 2) text = x.text();
      if (!p.ok()) break;
      // Kept with the block, like exec file names: the marker is often longer than an inline text.
      e = core::userMarkEvent(e, pid, {});
      e.cpuA = static_cast<int32_t>(block.strings.size());
      e.cpuB = static_cast<int32_t>(std::min<size_t>(text.size(), 4096));
      block.strings.append(text.substr(0, 4096));
      block.outsideTexts.push_back(static_cast<uint32_t>(block.events.size() - 1));
      break;
    }
    default: break;  // counted, marks its CPU busy
  }
  if (!p.ok()) {
    block.events.pop_back();
    return failReader(r, p, ("malformed " + std::string(ftraceEventName(payload.id))).c_str());
  }
  return true;
}

bool Reader::decodeCompact(const Field& compact, const Region& r, int cpu, Block& block) {
  Field cols[kCompactLastField + 1];
  bool have[kCompactLastField + 1] = {};
  m_intern.clear();
  MessageReader m(compact);
  Field f;
  while (m.next(f)) {
    if (f.id == kCompactInternTable && f.type == WireType::Bytes) {
      m_intern.push_back(f.text());
      continue;
    }
    if (f.id > kCompactLastField) continue;
    if (f.type != WireType::Bytes)
      return fail(r, compact.data, "compact_sched field " + std::to_string(f.id) + " is not packed");
    if (have[f.id]) return fail(r, f.data, "compact_sched field " + std::to_string(f.id) + " appears twice");
    cols[f.id] = f;
    have[f.id] = true;
  }
  if (!m.ok()) return failReader(r, m, "malformed compact_sched");
  const uint64_t position = r.offsetOf(compact.data);
  auto column = [&](uint32_t id) { return have[id] ? PackedVarints(cols[id]) : PackedVarints(); };
  auto internedComm = [&](uint64_t index, std::string_view& out) {
    if (index >= m_intern.size()) return false;
    out = m_intern[index].substr(0, DecodedEvent::kInlineText);
    return true;
  };
  CpuState& st = m_cpus[static_cast<size_t>(std::min(cpu, kMaxCpu))];

  // sched_switch: prev_* is the previous switch's next_* on this CPU.
  {
    PackedVarints ts = column(kCompactSwitchTs), prevState = column(kCompactSwitchPrevState),
                   nextPid = column(kCompactSwitchNextPid), nextPrio = column(kCompactSwitchNextPrio),
                   nextComm = column(kCompactSwitchNextComm);
    const uint16_t key = keyForName("sched_switch", m_keyCompactSwitch);
    uint64_t t = 0, delta, state, tid, prio, commIndex;
    while (ts.next(delta)) {
      t += delta;
      if (!prevState.next(state) || !nextPid.next(tid) || !nextPrio.next(prio) || !nextComm.next(commIndex))
        return fail(r, compact.data, "compact_sched switch columns differ in length");
      std::string_view comm;
      if (!internedComm(commIndex, comm))
        return fail(r, compact.data, "compact_sched comm index " + std::to_string(commIndex) + " beyond its intern table (" +
                                         std::to_string(m_intern.size()) + " entries)");
      DecodedEvent& e = block.events.emplace_back();
      e.ts = static_cast<int64_t>(std::min<uint64_t>(t, INT64_MAX));
      e.cpu = cpu;
      e.position = position;
      e.countKey = key;
      if (!st.haveNext) {
        // The first switch on a CPU names only the task it puts on: its prev_*
        // would be the switch before, which the trace does not hold. Kept as an
        // event of the CPU (the next switch names this task as prev, running
        // since here), and counted.
        diag(core::DiagCode::compact_switch_prev_unknown, position,
             "first compact sched_switch on cpu " + std::to_string(cpu) + ": the task it switched out is not recorded",
             cpu, e.ts);
      } else {
        e.op = EventOp::Switch;
        e.tid = st.nextTid;
        e.prio = st.nextPrio;
        e.setText(0, {st.nextComm, st.nextCommLen});
        e.state = core::taskStateFromRaw(state, m_encoding).value_or(core::TaskState::Unknown);
        e.otherTid = static_cast<int32_t>(tid);
        e.otherPrio = static_cast<int32_t>(prio);
        e.setText(1, comm);
      }
      st.haveNext = true;
      st.nextTid = static_cast<int32_t>(tid);
      st.nextPrio = static_cast<int32_t>(prio);
      st.nextCommLen = static_cast<uint8_t>(comm.size());
      std::memcpy(st.nextComm, comm.data(), comm.size());
    }
    if (!ts.ok() || !prevState.ok() || !nextPid.ok() || !nextPrio.ok() || !nextComm.ok() || prevState.next(state))
      return fail(r, compact.data, "compact_sched switch columns are cut or differ in length");
  }
  // sched_waking, with its own delta-encoded timestamps.
  {
    PackedVarints ts = column(kCompactWakingTs), pid = column(kCompactWakingPid),
                   target = column(kCompactWakingTargetCpu), prio = column(kCompactWakingPrio),
                   commCol = column(kCompactWakingComm), flagsCol = column(kCompactWakingFlags);
    const bool haveFlags = have[kCompactWakingFlags];
    const uint16_t key = keyForName("sched_waking", m_keyCompactWaking);
    uint64_t t = 0, delta, tid, targetCpu, p, commIndex, flags = 0;
    while (ts.next(delta)) {
      t += delta;
      if (!pid.next(tid) || !target.next(targetCpu) || !prio.next(p) || !commCol.next(commIndex) ||
          (haveFlags && !flagsCol.next(flags)))
        return fail(r, compact.data, "compact_sched waking columns differ in length");
      std::string_view comm;
      if (!internedComm(commIndex, comm))
        return fail(r, compact.data, "compact_sched comm index " + std::to_string(commIndex) + " beyond its intern table (" +
                                         std::to_string(m_intern.size()) + " entries)");
      DecodedEvent& e = block.events.emplace_back();
      e.op = EventOp::Waking;
      e.ts = static_cast<int64_t>(std::min<uint64_t>(t, INT64_MAX));
      e.cpu = cpu;
      e.position = position;
      e.countKey = key;
      e.tid = static_cast<int32_t>(tid);
      e.cpuA = static_cast<int32_t>(targetCpu);
      e.prio = static_cast<int32_t>(p);
      e.setText(0, comm);
      e.irq = core::irqFromTraceFlags(flags);
    }
    if (!ts.ok() || !pid.ok() || !target.ok() || !prio.ok() || !commCol.ok() || pid.next(tid))
      return fail(r, compact.data, "compact_sched waking columns are cut or differ in length");
  }
  return true;
}

void Reader::take(DecodedEvent& e) {
  switch (e.op) {
    case EventOp::Fork:
      // task_newtask and sched_process_fork both report a fork (in that order)
      // when both are traced: the second is only counted.
      if (e.cpuA == kForkFromNewTask) {
        m_newTaskChildren.insert(e.otherTid);
      } else if (m_newTaskChildren.erase(e.otherTid)) {
        e.op = EventOp::Other;
        break;
      }
      e.cpuA = -1;
      see(e.tid);
      if (m_tasks.seen(e.otherTid) && m_taskAttributes.count(e.otherTid)) m_attribute.push_back(e.otherTid);  // a new task of a known tid
      see(e.otherTid);
      if (const auto* id = m_tasks.find(e.otherTid); id && id->tgid > 0 && e.aux < 0) e.aux = id->tgid;
      break;
    default: core::TaskIdentities::forEachNamedTid(e, [this](int32_t tid) { see(tid); }); break;
  }
  // An event that ends the task it names first (its exit, or its last switch
  // out, dead) gets the identities first: after it, naming the tid would make
  // a new task of it (tid_reused_without_fork), and before, the task is alive.
  const bool endsTask = e.op == EventOp::Exit || (e.op == EventOp::Switch && e.state == core::TaskState::Dead);
  if (endsTask) m_tasks.announce(m_feed, false);
  m_feed.event(e);
  if (!endsTask) m_tasks.announce(m_feed, false);
  if (!m_attribute.empty()) {
    if (e.op != EventOp::Exit)
      for (int32_t tid : m_attribute) emitAttributes(tid);
    m_attribute.clear();
  }
}

void Reader::finishDecoding() {
  m_sorter.finish();
  m_feed.metadata("clock", m_clock.empty() ? "boot" : m_clock);
}

core::Status Reader::decodeAll() {
  const Region file{m_file.data(), 0, false};
  auto visit = [this](const Field& packet, const Region& r) { return decodePacket(packet, r); };
  uint64_t lastReport = 0;
  auto progressed = [&] {
    if (m_feed.threaded())
      m_feed.progress(static_cast<double>(m_bytesDone) / static_cast<double>(std::max<size_t>(m_file.size(), 1)));
    else if (m_opt.progress)
      m_opt.progress(static_cast<double>(m_bytesDone) / static_cast<double>(std::max<size_t>(m_file.size(), 1)));
  };
  (void)lastReport;
  walk(file.base, m_file.size(), file, 0, visit);
  progressed();
  finishDecoding();
  if (!m_error.empty()) return core::Error(m_error);
  return {};
}

core::Status Reader::run() {
  if (auto st = m_file.open(m_path); !st) return st;
  m_b.setFormat("perfetto");
  {
    const Region file{m_file.data(), 0, false};
    auto visit = [this](const Field& packet, const Region& r) { return scanPacket(packet, r); };
    walk(file.base, m_file.size(), file, 0, visit);
    if (m_error.ends_with("import cancelled")) return core::Error(m_error);
    m_error.clear();  // the second pass meets it again, after the events before it
    m_packets = 0;
    m_releasedUpTo = 0;
    m_file.startPass();
  }
  applyScan();
  // A busy trace has ~20 bytes per event on disk (compressed: fewer).
  m_b.reserve(m_file.size() / 20);
  // Every stream is known from the first pass: each holds the others back
  // only until its last bundle is read.
  m_sorter.setCpuCount(std::max<int>(static_cast<int>(m_bundlesOfStream.size()), 1));
  if (m_bundlesOfStream.empty()) m_sorter.endCpu(0);

  const bool threaded = decodeOnAWorker(m_threading, m_file.size());
  // Decoding and building take about the same time: with a core to spare the
  // bundles are decoded and sorted on a worker, the model is built here.
  core::Status body = threaded ? m_feed.runThreaded([this] { return decodeAll(); }, m_opt.progress, m_path) : decodeAll();
  // Once every loss the bundles show is in the model.
  settleOverruns();
  applySchedlab();
  return body;
}

}  // namespace

int probePerfetto(std::span<const std::byte> head, uint64_t fileSize) {
  // A trace is Trace.packet records: tag 0x0a and a length, whose content
  // parses as fields. Two such packets (or one that is the whole file) make it sure.
  const auto* p = reinterpret_cast<const uint8_t*>(head.data());
  MessageReader trace(p, head.size());
  Field f;
  int packets = 0;
  while (packets < 2 && trace.next(f)) {
    if (f.id != kTracePacket || f.type != WireType::Bytes) return 0;
    MessageReader packet(f);
    Field x;
    while (packet.next(x)) {
    }
    if (!packet.ok()) return 0;
    ++packets;
  }
  if (packets == 2) return 90;
  if (packets == 1 && (trace.ok() || head.size() < fileSize)) {
    // One whole packet, or the head ended inside the second one.
    return 90;
  }
  if (packets == 0 && !trace.ok() && head.size() >= 2 && p[0] == 0x0a && head.size() < fileSize) {
    // The first packet is longer than the head: its tag and length are all there is to go by.
    return 50;
  }
  return 0;
}

core::Status readPerfetto(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options,
                          Threading threading) {
  try {
    Reader reader(path, builder, options, threading);
    return reader.run();
  } catch (const std::bad_alloc&) {
    return core::Error(path + ": out of memory");
  }
}

}  // namespace importers::perfetto
