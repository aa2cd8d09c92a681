// Writes large SYNTHETIC scheduler traces for the scale benchmarks
// (tests/bench/scale_bench.sh): a made-up workload of tasks that run, wake each
// other across CPUs and sleep, as ftrace text (the tracefs `trace` file), `perf
// script` text, trace-cmd trace.dat v7 and perf.data. Not a recording: every
// file says so (the text headers, the trace.dat's uname and version, the
// perf.data's host name, release and command line), so that no figure taken
// on it is mistaken for one of a real machine.
//
// The trace.dat is written by SchedLab's own v7 writer from ring-buffer pages
// built here, with the event formats, header_page and header_event of a real
// recording (--formats-from, by default the repo's tiny-v7-none.dat), so the
// records are laid out as that kernel lays them out and `trace-cmd report`
// reads them. The perf.data is built the same way on a real `perf record`
// file (PerfDataSink). Perfetto traces of the same workload come from
// `schedlab-cli export` of the trace.dat.
//
//   synth_trace_gen --events 50000000 --cpus 2 --ftrace OUT.txt --perf-script OUT.perf.txt --dat OUT.dat
//     --perf-data OUT.perf.data
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "importers/perf/tracing_data.h"
#include "importers/tracedat/event_format.h"
#include "importers/tracedat/tracedat_layout.h"
#include "importers/tracedat/tracedat_writer.h"

namespace {

namespace td = importers::tracedat;
namespace ip = importers::perf;

enum class Kind { Switch, Waking, Wakeup, Migrate };

struct Task {
  int pid = 0;
  std::string comm;
  int prio = 120;
  int cpu = 0;
};

// One event as every writer needs it: who was on the CPU, and the event's own fields.
struct Event {
  Kind kind = Kind::Switch;
  int64_t ts = 0;
  int cpu = 0;
  const Task* current = nullptr;  ///< nullptr: the CPU's idle task
  const Task* subject = nullptr;  ///< switch: next (nullptr: idle); others: the woken or moved task
  char prevState = 'R';           ///< switch: how `current` left
  int otherCpu = 0;               ///< waking/wakeup: target CPU; migrate: destination
  int origCpu = 0;                ///< migrate: origin
};

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void event(const Event& e) = 0;
  virtual bool finish() = 0;
};

std::string idleComm(int cpu) { return "swapper/" + std::to_string(cpu); }

// The body of a sched event as the kernel's print fmt gives it (ftrace text and perf script alike).
int formatBody(char* out, size_t size, const Event& e) {
  switch (e.kind) {
    case Kind::Switch: {
      const std::string prevIdle = e.current ? std::string() : idleComm(e.cpu);
      const std::string nextIdle = e.subject ? std::string() : idleComm(e.cpu);
      return std::snprintf(out, size,
                           "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%c ==> "
                           "next_comm=%s next_pid=%d next_prio=%d",
                           e.current ? e.current->comm.c_str() : prevIdle.c_str(), e.current ? e.current->pid : 0,
                           e.current ? e.current->prio : 120, e.prevState,
                           e.subject ? e.subject->comm.c_str() : nextIdle.c_str(), e.subject ? e.subject->pid : 0,
                           e.subject ? e.subject->prio : 120);
    }
    case Kind::Waking:
    case Kind::Wakeup:
      return std::snprintf(out, size, "comm=%s pid=%d prio=%d target_cpu=%03d", e.subject->comm.c_str(), e.subject->pid,
                           e.subject->prio, e.otherCpu);
    case Kind::Migrate:
      return std::snprintf(out, size, "comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d", e.subject->comm.c_str(),
                           e.subject->pid, e.subject->prio, e.origCpu, e.otherCpu);
  }
  return 0;
}

const char* eventName(Kind k) {
  switch (k) {
    case Kind::Switch: return "sched_switch";
    case Kind::Waking: return "sched_waking";
    case Kind::Wakeup: return "sched_wakeup";
    case Kind::Migrate: return "sched_migrate_task";
  }
  return "";
}

class TextSink : public Sink {
 public:
  enum class Style { Ftrace, PerfScript };
  TextSink(const std::string& path, Style style, int cpus, uint64_t events) : m_style(style), m_path(path) {
    m_file = std::fopen(path.c_str(), "w");
    if (!m_file) return;
    std::setvbuf(m_file, nullptr, _IOFBF, 1 << 20);
    if (style == Style::Ftrace)
      std::fprintf(m_file,
                   "# tracer: nop\n#\n"
                   "# SYNTHETIC trace written by synth_trace_gen (SchedLab tests/bench), not a recording\n"
                   "#\n# entries-in-buffer/entries-written: %" PRIu64 "/%" PRIu64 "   #P:%d\n#\n"
                   "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
                   "#              | |         |   |||||     |         |\n",
                   events, events, cpus);
  }
  bool ok() const { return m_file != nullptr; }
  void event(const Event& e) override {
    char body[256];
    formatBody(body, sizeof body, e);
    const std::string idle = m_style == Style::Ftrace ? std::string("<idle>") : std::string("swapper");
    const char* comm = e.current ? e.current->comm.c_str() : idle.c_str();
    const int pid = e.current ? e.current->pid : 0;
    const auto sec = static_cast<unsigned long long>(e.ts / 1000000000);
    const auto usec = static_cast<unsigned long long>(e.ts % 1000000000 / 1000);
    if (m_style == Style::Ftrace)
      std::fprintf(m_file, "%16s-%-7d [%03d] d..2. %5llu.%06llu: %s: %s\n", comm, pid, e.cpu, sec, usec,
                   eventName(e.kind), body);
    else
      std::fprintf(m_file, "%16s %5d [%03d] %5llu.%06llu: %24s: %s\n", comm, pid, e.cpu, sec, usec,
                   (std::string("sched:") + eventName(e.kind)).c_str(), body);
  }
  bool finish() override {
    const bool ok = std::fflush(m_file) == 0 && !std::ferror(m_file);
    std::fclose(m_file);
    if (!ok) std::fprintf(stderr, "%s: write failed\n", m_path.c_str());
    return ok;
  }

 private:
  Style m_style;
  std::string m_path;
  std::FILE* m_file = nullptr;
};

// An event's record as the kernel writes it into the ring buffer, laid out by
// the recording's format of that event: what a trace.dat page and a perf.data
// sample's raw data both carry.
void setField(std::vector<uint8_t>& rec, const td::EventFormat& fmt, const char* name, uint64_t v) {
  if (const td::FormatField* f = fmt.field(name)) std::memcpy(rec.data() + f->offset, &v, std::min<uint32_t>(f->size, 8));
}

void setText(std::vector<uint8_t>& rec, const td::EventFormat& fmt, const char* name, const std::string& s) {
  const td::FormatField* f = fmt.field(name);
  if (!f) return;
  if (!f->isDataLoc) {
    std::memcpy(rec.data() + f->offset, s.data(), std::min<size_t>(f->size - 1, s.size()));
    return;
  }
  const auto where = static_cast<uint32_t>(rec.size()), length = static_cast<uint32_t>(s.size() + 1);
  rec.insert(rec.end(), s.begin(), s.end());
  rec.push_back(0);
  const uint32_t loc = length << 16 | where;
  std::memcpy(rec.data() + f->offset, &loc, 4);
}

void encodePayload(const td::EventFormat& fmt, const Event& e, std::vector<uint8_t>& rec) {
  rec.assign(fmt.fields.empty() ? 8 : fmt.fields.back().offset + fmt.fields.back().size, 0);
  setField(rec, fmt, "common_type", static_cast<uint64_t>(fmt.id));
  setField(rec, fmt, "common_flags", 1);  // irqs off, as in the scheduler
  setField(rec, fmt, "common_preempt_count", 2);
  setField(rec, fmt, "common_pid", static_cast<uint64_t>(e.current ? e.current->pid : 0));
  switch (e.kind) {
    case Kind::Switch:
      setText(rec, fmt, "prev_comm", e.current ? e.current->comm : idleComm(e.cpu));
      setField(rec, fmt, "prev_pid", static_cast<uint64_t>(e.current ? e.current->pid : 0));
      setField(rec, fmt, "prev_prio", static_cast<uint64_t>(e.current ? e.current->prio : 120));
      setField(rec, fmt, "prev_state", e.prevState == 'S' ? 1 : 0);
      setText(rec, fmt, "next_comm", e.subject ? e.subject->comm : idleComm(e.cpu));
      setField(rec, fmt, "next_pid", static_cast<uint64_t>(e.subject ? e.subject->pid : 0));
      setField(rec, fmt, "next_prio", static_cast<uint64_t>(e.subject ? e.subject->prio : 120));
      break;
    case Kind::Waking:
    case Kind::Wakeup:
      setText(rec, fmt, "comm", e.subject->comm);
      setField(rec, fmt, "pid", static_cast<uint64_t>(e.subject->pid));
      setField(rec, fmt, "prio", static_cast<uint64_t>(e.subject->prio));
      setField(rec, fmt, "target_cpu", static_cast<uint64_t>(e.otherCpu));
      break;
    case Kind::Migrate:
      setText(rec, fmt, "comm", e.subject->comm);
      setField(rec, fmt, "pid", static_cast<uint64_t>(e.subject->pid));
      setField(rec, fmt, "prio", static_cast<uint64_t>(e.subject->prio));
      setField(rec, fmt, "orig_cpu", static_cast<uint64_t>(e.origCpu));
      setField(rec, fmt, "dest_cpu", static_cast<uint64_t>(e.otherCpu));
      break;
  }
}

// trace.dat: each CPU's events as ring-buffer sub-buffers in an unlinked spool file,
// handed to the v7 writer at the end.
class TraceDatSink : public Sink {
 public:
  TraceDatSink(std::string path, const td::TraceLayout& source, int cpus, td::Compression compression)
      : m_path(std::move(path)), m_header(source.headerPage), m_pageSize(source.pageSize),
        m_content(td::metadataOf(source)) {
    m_content.compression = compression;
    m_content.cmdlines.clear();  // the source's tasks are not this trace's
    for (const auto& f : source.formats)
      if (f.system == "sched")
        if (auto fmt = td::parseEventFormat(f.text, f.system))
          for (Kind k : {Kind::Switch, Kind::Waking, Kind::Wakeup, Kind::Migrate})
            if (fmt->name == eventName(k)) m_formats[static_cast<int>(k)] = *fmt;
    m_content.clock = "local";
    m_content.traceClock = "[local] global counter uptime perf mono mono_raw boot\n";
    m_content.uname = "Linux synthetic 0.0.0-synthetic x86_64";
    m_content.version = "SchedLab synth_trace_gen (SYNTHETIC, not a recording)";
    m_content.traceId = 0x5c4ed1ab5c4ed1abULL;
    m_content.cpuCount = cpus;
    const std::string dir = std::filesystem::path(m_path).parent_path().string();
    for (int c = 0; c < cpus; ++c) {
      Cpu cpu;
      char name[] = "/synth-spool-XXXXXX";
      std::string tmpl = (dir.empty() ? std::string(".") : dir) + name;
      cpu.fd = ::mkstemp(tmpl.data());
      if (cpu.fd >= 0) ::unlink(tmpl.c_str());
      cpu.page.assign(m_pageSize, 0);
      m_cpus.push_back(std::move(cpu));
    }
  }
  ~TraceDatSink() override {
    for (auto& c : m_cpus)
      if (c.fd >= 0) ::close(c.fd);
  }
  std::string missing() const {
    std::string out;
    if (m_header.dataOffset + 8 > m_pageSize) out += " header_page";
    for (Kind k : {Kind::Switch, Kind::Waking, Kind::Wakeup, Kind::Migrate})
      if (m_formats[static_cast<int>(k)].id < 0) out += std::string(" ") + eventName(k);
    for (const auto& c : m_cpus)
      if (c.fd < 0) return out + " spool-file";
    return out;
  }
  void event(const Event& e) override {
    encodePayload(m_formats[static_cast<int>(e.kind)], e, m_record);
    append(m_cpus[static_cast<size_t>(e.cpu)], e.ts, m_record);
  }
  bool finish() override {
    for (size_t c = 0; c < m_cpus.size(); ++c) {
      Cpu& cpu = m_cpus[c];
      if (cpu.used) flush(cpu);
      if (cpu.bytes) m_content.cpus.push_back({static_cast<int>(c), cpu.fd, 0, cpu.bytes, {}});
    }
    auto status = td::writeTraceDat(m_path, m_content);
    if (!status) std::fprintf(stderr, "%s\n", status.message().c_str());
    return static_cast<bool>(status);
  }

 private:
  struct Cpu {
    int fd = -1;
    std::vector<uint8_t> page;
    uint32_t used = 0;  ///< bytes of event data in `page`
    int64_t lastTs = 0;
    uint64_t bytes = 0;  ///< written to the spool file
  };

  void put32(Cpu& cpu, uint32_t v) {
    std::memcpy(cpu.page.data() + m_header.dataOffset + cpu.used, &v, 4);
    cpu.used += 4;
  }

  // A record: its 32-bit header (type_len = payload words, time_delta in the upper
  // 27 bits), preceded by a TIME_EXTEND when the delta does not fit in 27 bits.
  void append(Cpu& cpu, int64_t ts, const std::vector<uint8_t>& payload) {
    const uint32_t words = static_cast<uint32_t>((payload.size() + 3) / 4);
    const uint32_t need = 4 + words * 4 + 8;
    if (cpu.used && m_header.dataOffset + cpu.used + need > m_pageSize) flush(cpu);
    if (!cpu.used) {
      const auto base = static_cast<uint64_t>(ts);
      std::memcpy(cpu.page.data(), &base, 8);
      cpu.lastTs = ts;
    }
    uint64_t delta = static_cast<uint64_t>(ts - cpu.lastTs);
    cpu.lastTs = ts;
    constexpr uint32_t kTimeExtend = 30;
    if (delta >= (1u << 27)) {
      put32(cpu, kTimeExtend | static_cast<uint32_t>((delta & ((1u << 27) - 1)) << 5));
      put32(cpu, static_cast<uint32_t>(delta >> 27));
      delta = 0;
    }
    put32(cpu, words | static_cast<uint32_t>(delta << 5));
    std::memcpy(cpu.page.data() + m_header.dataOffset + cpu.used, payload.data(), payload.size());
    std::memset(cpu.page.data() + m_header.dataOffset + cpu.used + payload.size(), 0, words * 4 - payload.size());
    cpu.used += words * 4;
  }

  void flush(Cpu& cpu) {
    const uint64_t commit = cpu.used;
    std::memcpy(cpu.page.data() + m_header.commitOffset, &commit, std::min<uint32_t>(m_header.commitSize, 8));
    std::memset(cpu.page.data() + m_header.dataOffset + cpu.used, 0, m_pageSize - m_header.dataOffset - cpu.used);
    const ssize_t wrote = ::pwrite(cpu.fd, cpu.page.data(), m_pageSize, static_cast<off_t>(cpu.bytes));
    if (wrote != static_cast<ssize_t>(m_pageSize)) {
      std::perror("spool write");
      std::exit(1);
    }
    cpu.bytes += m_pageSize;
    cpu.used = 0;
  }

  std::string m_path;
  td::HeaderPage m_header;
  uint32_t m_pageSize;
  td::TraceDatContent m_content;
  td::EventFormat m_formats[4];
  std::vector<Cpu> m_cpus;
  std::vector<uint8_t> m_record;
};

// perf.data: the file layout `perf record -a -e sched:...` writes, built on a
// real recording's (--perf-template, by default the repo's sleep-0.1.perf.data):
// its attrs, sample ids and tracepoint formats, so that samples are laid out as
// that perf and kernel lay them out and `perf script` reads them. The
// template's samples are not copied; its feature sections are, except those
// that describe its machine (topology, caches, build ids), and its host name,
// release, CPU count and sample times are rewritten to say what this file is.
class PerfDataSink : public Sink {
 public:
  PerfDataSink(std::string path, const std::string& templatePath, int cpus) : m_path(std::move(path)), m_cpus(cpus) {
    std::error_code ec;
    m_template.resize(std::filesystem::file_size(templatePath, ec));
    std::FILE* in = ec ? nullptr : std::fopen(templatePath.c_str(), "rb");
    if (!in || std::fread(m_template.data(), 1, m_template.size(), in) != m_template.size()) m_template.clear();
    if (in) std::fclose(in);
    if (!readTemplate()) {
      m_problem = templatePath + ": " + m_problem;
      return;
    }
    m_file = std::fopen(m_path.c_str(), "wb");
    if (!m_file) {
      m_problem = m_path + ": " + std::strerror(errno);
      return;
    }
    std::setvbuf(m_file, nullptr, _IOFBF, 1 << 20);
    // Everything before the data section (header, attrs, their sample ids) as
    // the template has it; the header's data size and features are patched at the end.
    std::fwrite(m_template.data(), 1, m_dataOffset, m_file);
  }
  ~PerfDataSink() override {
    if (m_file) std::fclose(m_file);
  }
  /// Why the template cannot be used; empty when it can.
  const std::string& problem() const { return m_problem; }
  /// The tasks whose COMM records open the data.
  void setTasks(std::vector<const Task*> tasks) { m_tasks = std::move(tasks); }

  void event(const Event& e) override {
    if (m_firstTs < 0) {
      m_firstTs = e.ts;
      writeComms();
    }
    m_lastTs = e.ts;
    const Attr& attr = m_attrs[static_cast<int>(e.kind)];
    encodePayload(attr.format, e, m_payload);
    // The kernel pads the raw data so that its u32 size and the data end on 8 bytes.
    const auto rawSize = static_cast<uint32_t>((m_payload.size() + 4 + 7) / 8 * 8 - 4);
    const uint32_t pid = e.current ? static_cast<uint32_t>(e.current->pid) : 0;
    m_record.clear();
    putHeader(kSample, kMiscKernel, 0);
    if (attr.sampleType & kSampleIdentifier) put64(attr.id);
    if (attr.sampleType & kSampleIp) put64(kIp);
    if (attr.sampleType & kSampleTid) put32(pid), put32(pid);
    if (attr.sampleType & kSampleTime) put64(static_cast<uint64_t>(e.ts));
    if (attr.sampleType & kSampleCpu) put32(static_cast<uint32_t>(e.cpu)), put32(0);
    if (attr.sampleType & kSamplePeriod) put64(1);
    put32(rawSize);
    m_record.insert(m_record.end(), m_payload.begin(), m_payload.end());
    m_record.resize(m_record.size() + rawSize - m_payload.size(), 0);
    finishRecord();
    // perf record ends a round each time it has emptied every CPU's buffer;
    // perf script sorts what it holds at each one, so rounds bound its memory.
    if (++m_inRound == kRoundEvents) {
      m_inRound = 0;
      m_record.clear();
      putHeader(kFinishedRound, 0, 0);
      finishRecord();
    }
  }

  bool finish() override {
    const auto dataEnd = static_cast<uint64_t>(m_dataOffset + m_dataSize);
    // The feature table follows the data: one (offset, size) per feature bit set, in bit order.
    std::vector<std::pair<int, std::vector<uint8_t>>> features;
    for (const auto& [bit, body] : m_features) {
      if (bit == kFeatBuildId || bit == kFeatCpuDesc || bit == kFeatCpuId || bit == kFeatTotalMem ||
          bit == kFeatCpuTopology || bit == kFeatNumaTopology || bit == kFeatCache || bit == kFeatMemTopology ||
          bit == kFeatBpfProgInfo || bit == kFeatBpfBtf)
        continue;
      if (bit == kFeatHostname) features.emplace_back(bit, perfString("synthetic"));
      else if (bit == kFeatOsRelease) features.emplace_back(bit, perfString("0.0.0-synthetic"));
      else if (bit == kFeatVersion) features.emplace_back(bit, perfString("SchedLab synth_trace_gen (SYNTHETIC, not a recording)"));
      else if (bit == kFeatCmdline) features.emplace_back(bit, perfStrings({"synth_trace_gen (SYNTHETIC, not a recording)"}));
      else if (bit == kFeatNrCpus) features.emplace_back(bit, u32Pair(static_cast<uint32_t>(m_cpus), static_cast<uint32_t>(m_cpus)));
      else if (bit == kFeatSampleTime) features.emplace_back(bit, u64Pair(static_cast<uint64_t>(m_firstTs), static_cast<uint64_t>(m_lastTs)));
      else features.emplace_back(bit, body);
    }
    uint64_t at = dataEnd + 16 * features.size();
    std::vector<uint8_t> table;
    for (const auto& [bit, body] : features) {
      appendU64(table, at);
      appendU64(table, body.size());
      at += body.size();
    }
    std::fwrite(table.data(), 1, table.size(), m_file);
    for (const auto& [bit, body] : features) std::fwrite(body.data(), 1, body.size(), m_file);
    uint64_t bitmap[4] = {};
    for (const auto& [bit, body] : features) bitmap[bit / 64] |= uint64_t{1} << (bit % 64);
    bool ok = std::fseek(m_file, 48, SEEK_SET) == 0 && std::fwrite(&m_dataSize, 8, 1, m_file) == 1 &&
              std::fseek(m_file, 72, SEEK_SET) == 0 && std::fwrite(bitmap, 8, 4, m_file) == 4;
    ok = std::fflush(m_file) == 0 && !std::ferror(m_file) && ok;
    std::fclose(m_file);
    m_file = nullptr;
    if (!ok) std::fprintf(stderr, "%s: write failed\n", m_path.c_str());
    return ok;
  }

 private:
  // include/uapi/linux/perf_event.h and tools/perf/util/header.h.
  static constexpr uint32_t kSample = 9, kComm = 3, kFinishedRound = 68;
  static constexpr uint16_t kMiscKernel = 1, kMiscUser = 2;
  static constexpr uint64_t kSampleIp = 1u << 0, kSampleTid = 1u << 1, kSampleTime = 1u << 2, kSampleCpu = 1u << 7,
                            kSamplePeriod = 1u << 8, kSampleRaw = 1u << 10, kSampleIdentifier = 1u << 16;
  static constexpr int kFeatBuildId = 2, kFeatHostname = 3, kFeatOsRelease = 4, kFeatVersion = 5, kFeatNrCpus = 7,
                       kFeatCpuDesc = 8, kFeatCpuId = 9, kFeatTotalMem = 10, kFeatCmdline = 11, kFeatCpuTopology = 13, kFeatNumaTopology = 14, kFeatCache = 20, kFeatSampleTime = 21,
                       kFeatMemTopology = 22, kFeatBpfProgInfo = 25, kFeatBpfBtf = 26;
  static constexpr uint64_t kIp = 0xffffffff81000000ULL;  // any kernel text address: tracepoints fire in the kernel
  static constexpr int kRoundEvents = 4096;

  struct Attr {
    uint64_t sampleType = 0;
    uint64_t id = 0;  ///< the first of its ids; the reader maps ids to attrs, not to CPUs
    td::EventFormat format;
  };

  template <typename T>
  bool at(uint64_t offset, T& out) const {
    if (offset > m_template.size() || sizeof(T) > m_template.size() - offset) return false;
    std::memcpy(&out, m_template.data() + offset, sizeof(T));
    return true;
  }

  bool readTemplate() {
    uint64_t size = 0, attrSize = 0, attrsAt = 0, attrsSize = 0, dataAt = 0, dataSize = 0;
    if (m_template.size() < 104 || std::memcmp(m_template.data(), "PERFILE2", 8) != 0 || !at(8, size) || size != 104)
      return m_problem = "not a little-endian perf.data file in the file layout", false;
    at(16, attrSize), at(24, attrsAt), at(32, attrsSize), at(40, dataAt), at(48, dataSize);
    uint64_t bitmap[4];
    for (int i = 0; i < 4; ++i) at(72 + 8 * static_cast<uint64_t>(i), bitmap[i]);
    m_dataOffset = dataAt;
    uint64_t tableAt = dataAt + dataSize;
    for (int bit = 0; bit < 256; ++bit) {
      if (!(bitmap[bit / 64] >> (bit % 64) & 1)) continue;
      uint64_t offset = 0, length = 0;
      if (!at(tableAt, offset) || !at(tableAt + 8, length) || offset > m_template.size() ||
          length > m_template.size() - offset)
        return m_problem = "feature table cut short", false;
      tableAt += 16;
      m_features.emplace_back(bit, std::vector<uint8_t>(m_template.begin() + static_cast<ptrdiff_t>(offset),
                                                        m_template.begin() + static_cast<ptrdiff_t>(offset + length)));
    }
    std::vector<ip::TracepointFormat> formats;
    for (const auto& [bit, body] : m_features)
      if (bit == 1)
        if (auto parsed = ip::parseTracingData(body, 0)) formats = parsed->formats;
    if (attrSize < 80 || dataAt > m_template.size() || attrsAt + attrsSize > dataAt)
      return m_problem = "attr section out of place", false;
    bool haveComm = false;
    for (uint64_t a = attrsAt; a + attrSize <= attrsAt + attrsSize; a += attrSize) {
      uint32_t type = 0;
      uint64_t config = 0, sampleType = 0, flags = 0, idsAt = 0, idsSize = 0, id = 0;
      at(a, type), at(a + 8, config), at(a + 24, sampleType), at(a + 40, flags);
      at(a + attrSize - 16, idsAt), at(a + attrSize - 8, idsSize);
      if (!idsSize || !at(idsAt, id)) continue;
      if (type == 2) {
        for (const auto& f : formats)
          for (Kind k : {Kind::Switch, Kind::Waking, Kind::Wakeup, Kind::Migrate})
            if (static_cast<uint64_t>(f.id) == config && f.name == eventName(k)) {
              Attr& attr = m_attrs[static_cast<int>(k)];
              attr.sampleType = sampleType;
              attr.id = id;
              attr.format.id = f.id;
              attr.format.name = f.name;
              for (const auto& field : f.fields)
                attr.format.fields.push_back({field.name, field.offset, field.size, field.isSigned, false, field.isDynamic});
            }
      }
      // COMM records belong to the attr with `comm` set (bit 9 of the flags): perf's dummy event.
      if (!haveComm && (flags >> 9 & 1)) haveComm = true, m_commSampleType = sampleType;
    }
    constexpr uint64_t kKnown = kSampleIp | kSampleTid | kSampleTime | kSampleCpu | kSamplePeriod | kSampleRaw | kSampleIdentifier;
    for (Kind k : {Kind::Switch, Kind::Waking, Kind::Wakeup, Kind::Migrate}) {
      const Attr& attr = m_attrs[static_cast<int>(k)];
      if (attr.format.id < 0) return m_problem = std::string("no ") + eventName(k) + " attr with its format", false;
      if ((attr.sampleType & ~kKnown) || !(attr.sampleType & kSampleRaw))
        return m_problem = std::string(eventName(k)) + ": sample_type has fields this writer does not write", false;
    }
    if (!haveComm || (m_commSampleType & ~kKnown)) return m_problem = "no attr for COMM records", false;
    return true;
  }

  void putHeader(uint32_t type, uint16_t misc, uint16_t size) {
    put32(type);
    m_record.push_back(static_cast<uint8_t>(misc)), m_record.push_back(static_cast<uint8_t>(misc >> 8));
    m_record.push_back(static_cast<uint8_t>(size)), m_record.push_back(static_cast<uint8_t>(size >> 8));
  }
  void put32(uint32_t v) { m_record.insert(m_record.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 4); }
  void put64(uint64_t v) { m_record.insert(m_record.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 8); }
  void finishRecord() {
    const auto size = static_cast<uint16_t>(m_record.size());
    std::memcpy(m_record.data() + 6, &size, 2);
    std::fwrite(m_record.data(), 1, m_record.size(), m_file);
    m_dataSize += m_record.size();
  }

  // perf record synthesizes a COMM record for every task alive when it starts,
  // with its sample_id fields zero (no time, no CPU): perf_event__synthesize_comm().
  void writeComms() {
    for (const Task* task : m_tasks) {
      m_record.clear();
      putHeader(kComm, kMiscUser, 0);
      put32(static_cast<uint32_t>(task->pid)), put32(static_cast<uint32_t>(task->pid));
      std::string comm = task->comm;
      comm.resize((comm.size() + 8) / 8 * 8, '\0');
      m_record.insert(m_record.end(), comm.begin(), comm.end());
      for (uint64_t bit : {kSampleTid, kSampleTime, kSampleCpu, kSampleIdentifier})
        if (m_commSampleType & bit) put64(0);
      finishRecord();
    }
  }

  static void appendU64(std::vector<uint8_t>& out, uint64_t v) {
    out.insert(out.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 8);
  }
  // perf's do_write_string(): a u32 length, then the string padded with NULs to 64 bytes.
  static std::vector<uint8_t> perfString(const std::string& s) {
    const auto length = static_cast<uint32_t>((s.size() + 1 + 63) / 64 * 64);
    std::vector<uint8_t> out(4 + length, 0);
    std::memcpy(out.data(), &length, 4);
    std::memcpy(out.data() + 4, s.data(), s.size());
    return out;
  }
  // perf's cmdline feature: a u32 count, then each string as above.
  static std::vector<uint8_t> perfStrings(const std::vector<std::string>& strings) {
    std::vector<uint8_t> out(4, 0);
    const auto count = static_cast<uint32_t>(strings.size());
    std::memcpy(out.data(), &count, 4);
    for (const auto& s : strings) {
      const auto one = perfString(s);
      out.insert(out.end(), one.begin(), one.end());
    }
    return out;
  }
  static std::vector<uint8_t> u32Pair(uint32_t a, uint32_t b) {
    std::vector<uint8_t> out(8);
    std::memcpy(out.data(), &a, 4), std::memcpy(out.data() + 4, &b, 4);
    return out;
  }
  static std::vector<uint8_t> u64Pair(uint64_t a, uint64_t b) {
    std::vector<uint8_t> out;
    appendU64(out, a), appendU64(out, b);
    return out;
  }

  std::string m_path;
  int m_cpus;
  std::vector<uint8_t> m_template;
  std::string m_problem;
  uint64_t m_dataOffset = 0;
  uint64_t m_dataSize = 0;
  std::vector<std::pair<int, std::vector<uint8_t>>> m_features;
  Attr m_attrs[4];
  uint64_t m_commSampleType = 0;
  std::vector<const Task*> m_tasks;
  std::FILE* m_file = nullptr;
  std::vector<uint8_t> m_payload, m_record;
  int64_t m_firstTs = -1, m_lastTs = 0;
  int m_inRound = 0;
};

// The workload: tasks named in groups of 8 that run, wake a sleeping task (see
// targetCpu), get preempted or sleep; idle CPUs take wakeups from
// "interrupts". Each event comes a random 1 to 2*--step-us-1 microseconds after
// the one before, on any CPU: whole microseconds, as the text formats print
// them, and never two at one time, so every format carries the same events in
// the same order.
class Workload {
 public:
  Workload(int cpus, int tasksPerCpu, uint64_t seed, int64_t stepUs)
      : m_rng(seed), m_stepUs(stepUs), m_curr(static_cast<size_t>(cpus), -1), m_rq(static_cast<size_t>(cpus)) {
    const int n = cpus * tasksPerCpu;
    for (int i = 0; i < n; ++i) {
      m_tasks.push_back({20000 + i, "synth-" + std::to_string(i / 8), 120, i % cpus});
      m_sleeping.push_back(i);
    }
  }

  const std::vector<Task>& tasks() const { return m_tasks; }

  void run(uint64_t events, const std::vector<Sink*>& sinks) {
    m_sinks = sinks;
    m_left = events;
    while (m_left) {
      const int cpu = static_cast<int>(m_rng() % m_curr.size());
      step(cpu);
    }
  }

 private:
  void emit(Event e) {
    if (!m_left) return;
    m_now += 1000 * (1 + static_cast<int64_t>(m_rng() % static_cast<uint64_t>(2 * m_stepUs - 1)));
    e.ts = kStartNs + m_now;
    for (Sink* s : m_sinks) s->event(e);
    --m_left;
  }

  const Task* curr(int cpu) const {
    const int t = m_curr[static_cast<size_t>(cpu)];
    return t < 0 ? nullptr : &m_tasks[static_cast<size_t>(t)];
  }

  // Mostly where the task last ran (wake-affine to its cache), else the waker's
  // CPU or one sharing its LLC of 8 CPUs, rarely anywhere.
  int targetCpu(int wakerCpu, int prevCpu) {
    const auto n = static_cast<int>(m_curr.size());
    const uint64_t r = m_rng() % 16;
    if (r < 12) return prevCpu;
    if (r < 14) return wakerCpu;
    if (r < 15) return std::min(n - 1, wakerCpu / 8 * 8 + static_cast<int>(m_rng() % 8));
    return static_cast<int>(m_rng() % static_cast<uint64_t>(n));
  }

  void wakeOne(int cpu) {
    if (m_sleeping.empty()) return;
    const size_t pick = m_rng() % m_sleeping.size();
    const int t = m_sleeping[pick];
    m_sleeping[pick] = m_sleeping.back();
    m_sleeping.pop_back();
    Task& task = m_tasks[static_cast<size_t>(t)];
    const int target = targetCpu(cpu, task.cpu);
    // sched_waking names the CPU the task last ran on; sched_wakeup the one chosen.
    emit({Kind::Waking, 0, cpu, curr(cpu), &task, 'R', task.cpu, 0});
    if (task.cpu != target) {
      emit({Kind::Migrate, 0, cpu, curr(cpu), &task, 'R', target, task.cpu});
      task.cpu = target;
    }
    emit({Kind::Wakeup, 0, cpu, curr(cpu), &task, 'R', target, 0});
    m_rq[static_cast<size_t>(target)].push_back(t);
  }

  void switchTo(int cpu, char prevState) {
    auto& rq = m_rq[static_cast<size_t>(cpu)];
    const int prev = m_curr[static_cast<size_t>(cpu)];
    const int next = rq.empty() ? -1 : rq.front();
    if (next >= 0) rq.pop_front();
    if (prev >= 0) (prevState == 'R' ? rq.push_back(prev) : m_sleeping.push_back(prev));
    emit({Kind::Switch, 0, cpu, prev < 0 ? nullptr : &m_tasks[static_cast<size_t>(prev)],
          next < 0 ? nullptr : &m_tasks[static_cast<size_t>(next)], prevState, 0, 0});
    m_curr[static_cast<size_t>(cpu)] = next;
  }

  void step(int cpu) {
    auto& rq = m_rq[static_cast<size_t>(cpu)];
    if (m_curr[static_cast<size_t>(cpu)] < 0) {
      if (rq.empty()) wakeOne(cpu);
      if (!rq.empty()) switchTo(cpu, 'R');
      return;
    }
    const uint64_t r = m_rng() % 100;
    if (r < 45) {
      wakeOne(cpu);
    } else if (r < 60 && !rq.empty()) {
      switchTo(cpu, 'R');
    } else {
      switchTo(cpu, 'S');
    }
  }

  static constexpr int64_t kStartNs = 1000LL * 1000000000LL;
  std::mt19937_64 m_rng;
  int64_t m_stepUs;
  int64_t m_now = 0;
  std::vector<Task> m_tasks;
  std::vector<int> m_curr;
  std::vector<std::deque<int>> m_rq;
  std::vector<int> m_sleeping;
  std::vector<Sink*> m_sinks;
  uint64_t m_left = 0;
};

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: synth_trace_gen --events N [--cpus C] [--tasks-per-cpu K] [--step-us S] [--seed X]\n"
               "                       [--ftrace OUT.txt] [--perf-script OUT.txt] [--dat OUT.dat] [--perf-data OUT]\n"
               "                       [--formats-from REAL.dat] [--compression zstd|zlib|none]\n"
               "                       [--perf-template REAL.perf.data]\n"
               "Writes a SYNTHETIC trace (not a recording) in each format asked for; the same events in each.\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t events = 0;
  int cpus = 2, tasksPerCpu = 4;
  int64_t stepUs = 2;
  uint64_t seed = 1;
  std::string ftrace, perfScript, dat, perfData, formatsFrom = SCHEDLAB_TRACEDAT_FORMATS, compression = "zstd";
  std::string perfTemplate = SCHEDLAB_PERF_TEMPLATE;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage();
    const char* v = argv[++i];
    if (a == "--events") events = std::strtoull(v, nullptr, 10);
    else if (a == "--cpus") cpus = std::atoi(v);
    else if (a == "--tasks-per-cpu") tasksPerCpu = std::atoi(v);
    else if (a == "--step-us") stepUs = std::atoll(v);
    else if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
    else if (a == "--ftrace") ftrace = v;
    else if (a == "--perf-script") perfScript = v;
    else if (a == "--dat") dat = v;
    else if (a == "--perf-data") perfData = v;
    else if (a == "--perf-template") perfTemplate = v;
    else if (a == "--formats-from") formatsFrom = v;
    else if (a == "--compression") compression = v;
    else usage();
  }
  if (!events || cpus < 1 || cpus > 4096 || tasksPerCpu < 1 || stepUs < 1) usage();
  if (ftrace.empty() && perfScript.empty() && dat.empty() && perfData.empty()) usage();

  std::vector<std::unique_ptr<Sink>> sinks;
  if (!ftrace.empty()) {
    auto s = std::make_unique<TextSink>(ftrace, TextSink::Style::Ftrace, cpus, events);
    if (!s->ok()) return std::perror(ftrace.c_str()), 1;
    sinks.push_back(std::move(s));
  }
  if (!perfScript.empty()) {
    auto s = std::make_unique<TextSink>(perfScript, TextSink::Style::PerfScript, cpus, events);
    if (!s->ok()) return std::perror(perfScript.c_str()), 1;
    sinks.push_back(std::move(s));
  }
  if (!dat.empty()) {
    td::Compression algo;
    if (!td::compressionFromName(compression, algo)) usage();
    auto file = td::TraceFile::open(formatsFrom);
    if (!file) return std::fprintf(stderr, "%s\n", file.error().message().c_str()), 1;
    auto layout = td::readLayout(**file);
    if (!layout) return std::fprintf(stderr, "%s\n", layout.error().message().c_str()), 1;
    auto s = std::make_unique<TraceDatSink>(dat, *layout, cpus, algo);
    if (const std::string missing = s->missing(); !missing.empty()) {
      std::fprintf(stderr, "%s: cannot write a trace.dat from its formats, missing:%s\n", formatsFrom.c_str(),
                   missing.c_str());
      return 1;
    }
    sinks.push_back(std::move(s));
  }
  Workload workload(cpus, tasksPerCpu, seed, stepUs);
  if (!perfData.empty()) {
    auto s = std::make_unique<PerfDataSink>(perfData, perfTemplate, cpus);
    if (!s->problem().empty())
      return std::fprintf(stderr, "cannot write a perf.data: %s\n", s->problem().c_str()), 1;
    std::vector<const Task*> tasks;
    for (const Task& t : workload.tasks()) tasks.push_back(&t);
    s->setTasks(std::move(tasks));
    sinks.push_back(std::move(s));
  }
  std::vector<Sink*> raw;
  for (auto& s : sinks) raw.push_back(s.get());
  workload.run(events, raw);
  bool ok = true;
  for (auto& s : sinks) ok = s->finish() && ok;
  return ok ? 0 : 1;
}
