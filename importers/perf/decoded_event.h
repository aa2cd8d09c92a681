// One perf.data record decoded into a small fixed-size value (comms copied in),
// made while the record is in cache during the scan. The round sorter orders
// these, and the builder feed applies them — no second trip to the file.
// Used by perf_data_reader.cpp, round_sorter.h and builder_feed.*.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/decoded_event.h"
#include "core/sched_builder.h"
#include "core/task_state.h"

namespace importers::perf {

enum class EventOp : uint8_t {
  // sched tracepoint samples
  Switch,    ///< a prev tid, b next tid, halves prev/next prio, state, text 0/1 prev/next comm
  Waking,    ///< a tid, halves prio/target cpu, text 0 comm
  Wakeup,    ///< as Waking; kFlagNew for sched_wakeup_new
  Migrate,   ///< a tid, b dest cpu, halves prio/orig cpu, text 0 comm
  Fork,      ///< a parent, b child, c child tgid (set on delivery), text 0/1 parent/child comm
  Exit,      ///< a tid, halves prio, text 0 comm
  Exec,      ///< a tid, b old tid, long text: file name
  Power,     ///< power:* and PELT samples: a core::DecodedEvent (toCore/fromCore)
  Other,     ///< any other sample with a CPU and a time: only marks the CPU busy
  Uncounted,  ///< a sample that could not be placed (counted, nothing else)
  // perf's own records
  Comm,      ///< a tgid, b tid, kFlagExec, text 0 comm; on the way to the builder: a rename
  TaskIds,   ///< FORK/EXIT records: a tgid, b tid
  Lost,      ///< value: events lost (PERF_RECORD_LOST)
  LostSamples,  ///< value: samples lost (PERF_RECORD_LOST_SAMPLES)
  // only on the way to the builder
  TaskInfo,    ///< a tid, b tgid, text 0 comm
  DataLoss,    ///< cpu, ts, value
  Diagnostic,  ///< countType: DiagCode; kFlagKeep: a message index
  Progress,    ///< value: fraction * 1e6
};

inline constexpr uint8_t kFlagNew = 1;
inline constexpr uint8_t kFlagExec = 2;
inline constexpr uint8_t kFlagLongText = 4;  // text 0 holds a pointer and a length into the mapped file
inline constexpr uint8_t kFlagKeep = 8;
inline constexpr uint16_t kNoCount16 = UINT16_MAX;

struct DecodedEvent {
  uint64_t ts = 0;
  uint64_t off = 0;  ///< file offset of the record: ties in ts keep file order, as perf does
  EventOp op = EventOp::Other;
  uint8_t flags = 0;
  core::TaskState state = core::TaskState::Unknown;
  uint8_t irq = 0;
  uint16_t countType = kNoCount16;
  int16_t cpu = -1;
  int32_t ctxTid = -1;
  int32_t a = 0;
  int32_t b = 0;
  int32_t c = -1;  ///< a third id, or two 16-bit halves (prios, CPU numbers)
  char text[2][16];

  bool operator<(const DecodedEvent& o) const { return ts != o.ts ? ts < o.ts : off < o.off; }

  void setHalves(int32_t lo, int32_t hi) {
    c = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(lo)) |
                             static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16);
  }
  int32_t lo() const { return static_cast<int16_t>(static_cast<uint32_t>(c) & 0xffff); }
  int32_t hi() const { return static_cast<int16_t>(static_cast<uint32_t>(c) >> 16); }

  /// Comms are at most 15 characters (TASK_COMM_LEN); longer text is cut.
  void setText(int k, std::string_view v) {
    const size_t n = std::min<size_t>(v.size(), 16);
    if (n > 0) std::memcpy(text[k], v.data(), n);
    if (n < 16) text[k][n] = 0;
  }
  std::string_view textAt(int k) const {
    const void* nul = std::memchr(text[k], 0, 16);
    return {text[k], nul ? static_cast<size_t>(static_cast<const char*>(nul) - text[k]) : 16};
  }
  void setLongText(std::string_view v) {
    const char* p = v.data();
    const uint64_t n = v.size();
    std::memcpy(text[0], &p, sizeof p);
    std::memcpy(text[0] + 8, &n, 8);
    flags |= kFlagLongText;
  }
  std::string_view longText() const {
    const char* p;
    uint64_t n;
    std::memcpy(&p, text[0], sizeof p);
    std::memcpy(&n, text[0] + 8, 8);
    return {p, static_cast<size_t>(n)};
  }
  void setValue(int64_t v) { std::memcpy(text[1], &v, 8); }
  int64_t value() const {
    int64_t v;
    std::memcpy(&v, text[1], 8);
    return v;
  }
  core::EventContext context() const { return {static_cast<int64_t>(ts), cpu, ctxTid, irq}; }

  // Power: a = the core op, b = cpuA, c = otherTid, value = aux, text 0 = comm,
  // the 4 bytes after the value = tid.
  static DecodedEvent fromCore(const core::DecodedEvent& p, uint64_t off) {
    DecodedEvent e;
    e.op = EventOp::Power;
    e.ts = static_cast<uint64_t>(p.ts);
    e.off = off;
    e.cpu = static_cast<int16_t>(p.cpu);
    e.ctxTid = p.ctxTid;
    e.irq = p.irq;
    e.a = static_cast<int32_t>(p.op);
    e.b = p.cpuA;
    e.c = p.otherTid;
    e.setText(0, p.textAt(0));
    e.setValue(p.aux);
    std::memcpy(e.text[1] + 8, &p.tid, 4);
    return e;
  }
  core::DecodedEvent toCore() const {
    core::DecodedEvent p;
    p.op = static_cast<core::EventOp>(a);
    p.ts = static_cast<int64_t>(ts);
    p.cpu = cpu;
    p.ctxTid = ctxTid;
    p.irq = irq;
    p.cpuA = b;
    p.otherTid = c;
    p.aux = value();
    p.setText(0, textAt(0));
    p.tid = powerTid();
    return p;
  }
  int32_t powerTid() const {
    int32_t tid;
    std::memcpy(&tid, text[1] + 8, 4);
    return tid;
  }
};
static_assert(sizeof(DecodedEvent) == 72);

}  // namespace importers::perf
