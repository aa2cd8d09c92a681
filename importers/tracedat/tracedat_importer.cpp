// The trace.dat importer (trace-cmd file versions 6 and 7, v7 zstd/zlib
// compressed): reads the layout, decodes every CPU's ring-buffer pages on worker
// threads (cpu_stream.cpp), merges the CPUs by timestamp and feeds
// core::SchedBuilder. Registered through makeTraceDatImporter().
//
// Why the file is not opened with libtracecmd's tracecmd_open_head(): measured
// here, it takes ~240 ms on a 1 MB trace (it parses all ~2300 event formats and
// kallsyms with sscanf), and neither it nor libtraceevent survives corrupt
// input: a HOOK option id in place of CPUSTAT makes tracecmd_create_event_hook()
// return NULL that handle_options() dereferences, and a one-byte change in a
// print fmt ("REC->prev_state" -> "REC->prev_sua") makes tep_parse_event()
// dereference NULL (libtraceevent 1.7.1); kbuffer loops forever on an 8-byte
// page record (ring_buffer_page.h). The trace.dat layout is simple and
// documented (trace-cmd.dat.v6(5), trace-cmd.dat.v7(5)), so it is read here with
// every size checked; libtracecmd, libtraceevent and kbuffer are the reference
// the tests compare this reader with, record by record.
#include <malloc.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "core/decoded_event.h"
#include "core/event_feed.h"
#include "core/event_sorter.h"
#include "core/power_events.h"
#include "core/tid_table.h"
#include "importers/importer.h"
#include "importers/registered.h"
#include "importers/tracedat/cpu_stream.h"
#include "importers/tracedat/sched_event_decoder.h"
#include "importers/tracedat/tracedat_format.h"
#include "importers/tracedat/tracedat_layout.h"

namespace importers {

namespace tracedat {
namespace {

constexpr size_t kPipelineBudgetBytes = 24u << 20;  // decoded events in flight, all CPUs together

// "FILE: byte offset N (0xN) (cpu C): message", as core::DiagnosticRecord::format() writes it.
std::string locate(const std::string& path, uint64_t offset, int cpu, const std::string& message) {
  char buf[96];
  if (cpu >= 0)
    std::snprintf(buf, sizeof buf, ": byte offset %llu (0x%llx) (cpu %d): ", static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(offset), cpu);
  else
    std::snprintf(buf, sizeof buf, ": byte offset %llu (0x%llx): ", static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(offset));
  return path + buf + message;
}

// Merges the CPUs' streams through the core::EventSorter: every CPU's blocks
// are handed over in place (no copy per event), the CPU read least far first,
// and events go on once every CPU is read past them. As their sink it counts
// events by id and notes which tids the events name, then feeds the builder.
class Merger final : public core::EventSink {
 public:
  Merger(const std::string& path, const TraceLayout& layout, const EventDecoderTable& table,
         core::SchedBuilder& builder, const ImportOptions& options)
      : m_path(path), m_layout(layout), m_table(table), m_builder(builder), m_options(options),
        m_feed(builder, core::EventFeed::Position::ByteOffset), m_sorter(m_feed, INT64_MAX, SIZE_MAX) {
    m_sorter.setSink(this);
  }

  core::Status run(DecodePipeline& pipeline);
  void take(DecodedEvent& e) override;
  void blockDone(void* token) override {
    auto* block = static_cast<EventBlock*>(token);
    m_pipeline->release(m_streamOfCpu[static_cast<size_t>(block->cpu)], block);
  }

 private:
  struct StreamState {
    int cpu = 0;
    uint64_t bytesDone = 0;
    bool done = false;
    int64_t lastTs = INT64_MIN;
    bool broken = false;  // the data ended early (corrupt or cut)
  };
  void handOver(size_t s, EventBlock* block);
  void takePower(const DecodedEvent& e);
  void noteTid(int32_t tid, uint8_t bits) {
    if (tid > 0 && m_tidSeen.holds(tid)) m_tidSeen.at(tid) |= bits;
  }
  void applyCmdlines();
  void reserveModel(DecodePipeline& pipeline, const std::vector<EventBlock*>& first);
  void reportProgress(DecodePipeline& pipeline);

  static constexpr uint8_t kSeenAsWaker = 1, kSeenWithComm = 2, kExited = 4;

  const std::string& m_path;
  const TraceLayout& m_layout;
  const EventDecoderTable& m_table;
  core::SchedBuilder& m_builder;
  const ImportOptions& m_options;
  core::EventFeed m_feed;
  core::EventSorter m_sorter;
  DecodePipeline* m_pipeline = nullptr;
  std::vector<StreamState> m_streams;
  std::vector<size_t> m_streamOfCpu;
  std::vector<uint64_t> m_counts;  // by event id
  core::TidTable<uint8_t> m_tidSeen;
  std::string m_firstError;
  uint64_t m_totalBytes = 0;
};

void Merger::handOver(size_t s, EventBlock* block) {
  StreamState& st = m_streams[s];
  st.bytesDone = block->bytesDone;
  st.lastTs = std::max(st.lastTs, block->maxTs);
  const bool last = block->last;
  if (last && block->error) {
    const StreamError& err = *block->error;
    if (m_firstError.empty()) m_firstError = locate(m_path, err.fileOffset, st.cpu, err.message);
    const auto code = err.truncated ? core::DiagCode::truncated_input : core::DiagCode::malformed_record;
    if (m_feed.keepsRecord(code))
      m_feed.diagnostic(code, err.fileOffset, err.message, st.cpu,
                        st.lastTs == INT64_MIN ? std::nullopt : std::optional<int64_t>(st.lastTs));
    st.broken = true;
  }
  m_sorter.pushBlock(st.cpu, block->events(), block->maxTs, block);
  if (last) {
    st.done = true;
    m_sorter.endCpu(st.cpu);
  }
}

void Merger::take(DecodedEvent& e) {
  switch (e.op) {
    case EventOp::Private: {
      if (e.cpuA == kPowerRecord) {
        takePower(e);
        return;
      }
      if (!m_feed.keepsRecord(core::DiagCode::malformed_record)) return;
      const std::string_view name = m_table.name(e.countKey);
      m_feed.diagnostic(core::DiagCode::malformed_record, e.position,
                        name.empty() ? "record of no known event (id " + std::to_string(e.countKey) + ")"
                                     : "record too short for its format (" + std::string(name) + ")",
                        e.cpu, e.ts);
      return;
    }
    case EventOp::DataLoss: m_feed.event(e); return;
    case EventOp::Waking:
    case EventOp::Wakeup:
    case EventOp::WakeupNew: noteTid(e.ctxTid, kSeenAsWaker); break;
    case EventOp::Fork:
      noteTid(e.tid, kSeenWithComm);
      noteTid(e.otherTid, kSeenWithComm);
      break;
    case EventOp::Exit: noteTid(e.tid, kExited); break;
    case EventOp::Rename: noteTid(e.tid, kSeenWithComm); break;
    default: break;
  }
  // Counted here by id, named once at the end (a name lookup per event would cost).
  ++m_counts[e.countKey];
  e.countKey = DecodedEvent::kNoCount;
  m_feed.event(e);
}

void Merger::takePower(const DecodedEvent& e) {
  const EventDecoder* d = m_table.decoder(e.countKey);
  ++m_counts[e.countKey];
  DecodedEvent base = e;
  base.op = EventOp::Other;
  base.countKey = DecodedEvent::kNoCount;
  base.cpuA = -1;
  base.externalText = 0;
  base.textLen[0] = 0;
  if (!d) {
    m_feed.event(base);
    return;
  }
  const RecordFields fields(m_table, *d, e.textAt(0));
  if (d->power == core::PowerEvent::Print) {
    m_feed.event(core::userMarkEvent(base, e.ctxTid, fields.text("buf").value_or("")));
    return;
  }
  std::array<DecodedEvent, core::kMaxPowerEventsPerRecord> out;
  const auto n = core::decodePowerEvent(d->power, fields, base, out);
  if (!n || *n == 0) {
    // Fields missing from the format (counted as unsupported), or a signal the model does not keep.
    if (!n && m_feed.keepsRecord(core::DiagCode::unsupported_event))
      m_feed.diagnostic(core::DiagCode::unsupported_event, e.position,
                        std::string(m_table.name(e.countKey)) + " lacks a field its decoding needs", e.cpu, e.ts);
    m_feed.event(base);
    return;
  }
  for (size_t i = 0; i < *n; ++i) m_feed.event(out[i]);
}

// saved_cmdlines is the tracer's tid -> comm cache at extract time. It only
// names tasks the events never name themselves: wakers seen as common_pid only.
void Merger::applyCmdlines() {
  std::string_view text = m_layout.cmdlines;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    int tid = 0;
    for (char c : line.substr(0, sp)) {
      if (c < '0' || c > '9' || tid > (1 << 22)) {
        tid = -1;
        break;
      }
      tid = tid * 10 + (c - '0');
    }
    if (tid <= 0) continue;
    const uint8_t seen = m_tidSeen.get(tid);
    if ((seen & kSeenAsWaker) && !(seen & (kSeenWithComm | kExited)))
      m_builder.onTaskInfo(tid, -1, line.substr(sp + 1, kCommLen - 1));
  }
}

// Sizing the model's tables up front keeps a large import from growing them by
// doubling (the freed halves stay resident: +30% peak RSS measured at 3.9M
// events). The first block of every CPU gives its events per page; the chunk
// table (or the data size) gives its page count.
void Merger::reserveModel(DecodePipeline& pipeline, const std::vector<EventBlock*>& first) {
  double expected = 0;
  for (size_t s = 0; s < first.size(); ++s) {
    const EventBlock* b = first[s];
    if (!b || b->pagesDone == 0) continue;
    const double pages = static_cast<double>(std::max(pipeline.stream(s).pageEstimate(), b->pagesDone));
    expected += static_cast<double>(b->count) / static_cast<double>(b->pagesDone) * pages;
  }
  if (expected > 1 << 20) m_builder.reserve(static_cast<uint64_t>(std::min(expected, 4e9)));
}

void Merger::reportProgress(DecodePipeline& pipeline) {
  if (!m_options.progress || m_totalBytes == 0) return;
  uint64_t done = 0;
  for (size_t s = 0; s < m_streams.size(); ++s)
    done += m_streams[s].done ? pipeline.stream(s).totalBytes() : m_streams[s].bytesDone;
  m_options.progress(std::min(1.0, static_cast<double>(done) / static_cast<double>(m_totalBytes)));
}

core::Status Merger::run(DecodePipeline& pipeline) {
  m_pipeline = &pipeline;
  m_counts.assign(std::max<size_t>(m_table.idLimit(), 1), 0);
  m_streams.resize(pipeline.streamCount());
  int cpus = 0;
  for (size_t s = 0; s < m_streams.size(); ++s) {
    m_streams[s].cpu = pipeline.stream(s).cpu();
    cpus = std::max(cpus, m_streams[s].cpu + 1);
    m_totalBytes += pipeline.stream(s).totalBytes();
  }
  m_streamOfCpu.assign(static_cast<size_t>(cpus), SIZE_MAX);
  for (size_t s = 0; s < m_streams.size(); ++s) m_streamOfCpu[static_cast<size_t>(m_streams[s].cpu)] = s;
  m_sorter.setCpuCount(cpus);
  for (int cpu = 0; cpu < cpus; ++cpu)
    if (m_streamOfCpu[static_cast<size_t>(cpu)] == SIZE_MAX) m_sorter.endCpu(cpu);

  std::vector<EventBlock*> first(m_streams.size());
  for (size_t s = 0; s < m_streams.size(); ++s) first[s] = pipeline.next(s);
  reserveModel(pipeline, first);
  for (size_t s = 0; s < m_streams.size(); ++s) handOver(s, first[s]);

  // The CPU read least far holds every other back: read it next. A block holds
  // up to 4096 events, a short trace only a few blocks: cancellation is checked
  // before each one.
  bool cancelled = false;
  for (uint64_t n = 1;; ++n) {
    if (m_options.stop.stop_requested()) {
      cancelled = true;
      break;
    }
    const int cpu = m_sorter.starvedCpu();
    if (cpu < 0) break;
    handOver(m_streamOfCpu[static_cast<size_t>(cpu)], pipeline.next(m_streamOfCpu[static_cast<size_t>(cpu)]));
    if ((n & 0x3f) == 0) reportProgress(pipeline);
  }
  if (cancelled) {
    pipeline.stop();
    return core::Error(m_path + ": import cancelled");
  }
  m_sorter.finish();

  // CPUs whose data broke off: what they did from there to the end is unknown.
  int64_t lastTs = INT64_MIN;
  for (const auto& st : m_streams) lastTs = std::max(lastTs, st.lastTs);
  for (const auto& st : m_streams)
    if (st.broken && lastTs != INT64_MIN) m_builder.onDataLoss(st.cpu, std::max(lastTs, st.lastTs), -1);
  // A page that lost events has room for their count only if it is not full;
  // the ring buffer's own overrun total (CPUSTAT) tells the count it lacks.
  for (const auto& stat : m_layout.cpuStats) m_builder.settleLostCount(stat.cpu, stat.overrun);

  for (size_t id = 0; id < m_counts.size(); ++id)
    if (m_counts[id]) m_builder.countEvent(m_builder.eventType(m_table.name(static_cast<uint16_t>(id))), m_counts[id]);
  applyCmdlines();
  if (m_options.progress) m_options.progress(1.0);
  if (!m_firstError.empty()) return core::Error(m_firstError);
  return core::Status::ok();
}

std::string formatName(const TraceLayout& layout) {
  std::string f = "trace.dat v" + std::to_string(layout.version);
  if (layout.compression != Compression::None)
    f += " (" + layout.compressionName.substr(0, layout.compressionName.find(' ')) + ")";
  return f;
}

class TraceDatImporter final : public Importer {
 public:
  std::string_view name() const override { return "trace.dat"; }
  int probe(const ProbeInput& input) const override {
    if (input.isDirectory) return 0;
    return input.headText().starts_with(kMagic) ? 100 : 0;
  }
  core::Status read(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options) override;
};

core::Status TraceDatImporter::read(const std::string& path, core::SchedBuilder& builder,
                                    const ImportOptions& options) {
  try {
    auto file = TraceFile::open(path);
    if (!file) return file.error();
    auto layout = readLayout(**file);
    if (!layout) return layout.error();
    TraceLayout& l = *layout;

    DecodeConfig config;
    config.swap = l.swap;
    config.haveTsc2Nsec = l.haveTsc2Nsec;
    config.tscMult = l.tscMult;
    config.tscShift = l.tscShift;
    config.tsOffset = l.tsOffset;
    EventDecoderTable table;
    std::string error;
    if (!table.build(l.formats, l.uname, config, error)) return core::Error(path + ": " + error);
    // The format texts (a few MB: trace-cmd saves every event the kernel has) are done with.
    std::vector<EventFormatText>().swap(l.formats);
#ifdef __GLIBC__
    // Hand the freed format texts back to the system: the model that comes next is
    // made of large mmap'ed columns that never reuse them, so they would stay in
    // the peak RSS.
    malloc_trim(0);
#endif

    builder.setFormat(formatName(l));
    if (!l.clock.empty()) builder.setMetadata("clock", l.clock);
    if (!l.uname.empty()) builder.setMetadata("kernel", l.uname);
    // trace-cmd writes its bare version ("3.1.6 not-a-git-repo"); other writers name themselves.
    if (!l.tracerVersion.empty())
      builder.setMetadata("recorder", std::isdigit(static_cast<unsigned char>(l.tracerVersion[0]))
                                          ? "trace-cmd " + l.tracerVersion
                                          : l.tracerVersion);
    if (!l.bufferName.empty()) builder.setMetadata("instance", l.bufferName);
    if (!l.otherBuffers.empty()) {
      std::string names;
      for (const auto& b : l.otherBuffers) names += (names.empty() ? "" : ", ") + b;
      builder.setMetadata("instances not read", names);
    }
    // trace.dat says how many CPUs there were, not how they pair into cores.
    if (l.cpuCount > 0) builder.setTopology(core::Topology::flat(std::min(l.cpuCount, core::SchedBuilder::kMaxCpus)));
    if (l.recoveredByScan) {
      builder.setByteOffset(l.dataStart);
      builder.recordDiagnostic(core::DiagCode::truncated_input,
                               "the option listing the CPU data is missing (file cut?): the data was found by "
                               "walking the flyrecord section, CPU numbers assumed in order");
    }

    std::vector<std::unique_ptr<CpuStreamDecoder>> streams;
    for (const auto& ref : l.cpuData)
      if (ref.size > 0 && ref.cpu < core::SchedBuilder::kMaxCpus)
        streams.push_back(std::make_unique<CpuStreamDecoder>(**file, l, table, ref));
    if (streams.empty())
      return core::Error(locate(path, l.dataStart, -1, "the file holds no ring-buffer data (cut before it?)"));

    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const int workers = static_cast<int>(std::min<size_t>(hw, streams.size()));
    const size_t depth = 3;
    const size_t blockEvents =
        std::clamp<size_t>(kPipelineBudgetBytes / (sizeof(DecodedEvent) * depth * streams.size()), 256, 4096);
    DecodePipeline pipeline(std::move(streams), workers, blockEvents, depth);
    Merger merger(path, l, table, builder, options);
    core::Status status = merger.run(pipeline);
    if (status && !l.cutSection.empty())
      return core::Error(locate(path, l.cutSectionOffset, -1,
                                "the file is cut inside " + l.cutSection + " (it ends at byte " +
                                    std::to_string(file.value()->size()) + ")"));
    if (status && l.recoveredByScan)
      return core::Error(locate(path, file.value()->size(), -1,
                                "the file is cut: the options listing the CPU data are missing (every CPU's "
                                "data was found by walking the flyrecord section)"));
    return status;
  } catch (const std::bad_alloc&) {
    return core::Error(path + ": out of memory");
  }
}

}  // namespace
}  // namespace tracedat

std::unique_ptr<Importer> makeTraceDatImporter() { return std::make_unique<tracedat::TraceDatImporter>(); }

}  // namespace importers
