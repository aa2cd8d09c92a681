// Unit tests of the trace.dat decoding pieces: the ring-buffer page decoder
// (against kbuffer on hand-built pages), the event format parser, the
// prev_state decoder on the print fmts of real kernels, the decompressors.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <vector>

#include "core/sched_builder.h"
#include "importers/tracedat/event_format.h"
#include "importers/tracedat/ring_buffer_page.h"
#include "importers/tracedat/sched_event_decoder.h"
#include "importers/tracedat/tracedat_compress.h"
#include "tracecmd_oracle.h"

namespace {

using namespace importers::tracedat;

// A little-endian 64-bit ring-buffer page under construction.
class PageBuilder {
 public:
  explicit PageBuilder(uint64_t ts) : m_page(4096, 0) { std::memcpy(m_page.data(), &ts, 8); }
  PageBuilder& data(uint32_t delta, const std::vector<uint8_t>& payload) {
    // type_len = payload words (1..28), or 0 with the length in array[0].
    const size_t words = (payload.size() + 3) / 4;
    if (words <= 28 && !payload.empty()) {
      put32(static_cast<uint32_t>(words) | delta << 5);
    } else {
      put32(delta << 5);
      put32(static_cast<uint32_t>(payload.size() + 4));
    }
    for (size_t i = 0; i < words * 4; ++i) m_page[16 + m_len++] = i < payload.size() ? payload[i] : 0;
    return *this;
  }
  PageBuilder& timeExtend(uint64_t delta) {
    put32(kTypeTimeExtend | static_cast<uint32_t>(delta & ((1u << 27) - 1)) << 5);
    put32(static_cast<uint32_t>(delta >> 27));
    return *this;
  }
  PageBuilder& absolute(uint64_t ts) {
    put32(kTypeTimeStamp | static_cast<uint32_t>(ts & ((1u << 27) - 1)) << 5);
    put32(static_cast<uint32_t>(ts >> 27));
    return *this;
  }
  // A discarded event: array[0] counts itself and the data (kernel rb_event_discard()).
  PageBuilder& discarded(uint32_t delta, uint32_t dataBytes) {
    put32(kTypePadding | delta << 5);
    put32(dataBytes + 4);
    m_len += dataBytes;
    return *this;
  }
  PageBuilder& raw32(uint32_t v) {
    put32(v);
    return *this;
  }
  std::vector<uint8_t> build(uint64_t flags = 0, int64_t storedMissed = -1) {
    uint64_t commit = m_len | flags;
    if (storedMissed >= 0) std::memcpy(m_page.data() + 16 + m_len, &storedMissed, 8);
    std::memcpy(m_page.data() + 8, &commit, 8);
    return m_page;
  }
  std::vector<uint8_t> buildWithCommit(uint64_t commit) {
    std::memcpy(m_page.data() + 8, &commit, 8);
    return m_page;
  }

 private:
  void put32(uint32_t v) {
    std::memcpy(m_page.data() + 16 + m_len, &v, 4);
    m_len += 4;
  }
  std::vector<uint8_t> m_page;
  uint32_t m_len = 0;
};

struct Rec {
  uint64_t ts;
  uint32_t length;
  uint32_t offset;
};

std::vector<Rec> decode(const std::vector<uint8_t>& page, PageResult* result = nullptr) {
  std::vector<Rec> out;
  const PageResult r =
      decodePage(page.data(), PageFormat{},
                 [&](uint64_t ts, const uint8_t*, uint32_t len, uint32_t off) { out.push_back({ts, len, off}); });
  if (result) *result = r;
  return out;
}

std::vector<Rec> decodeWithKbuffer(std::vector<uint8_t> page, long long* missed) {
  std::vector<oracle_kbuf_record> recs(1024);
  const int n = oracle_kbuffer_page(page.data(), 8, 0, recs.data(), static_cast<int>(recs.size()), missed);
  std::vector<Rec> out;
  for (int i = 0; i < n; ++i)
    out.push_back({recs[static_cast<size_t>(i)].ts, static_cast<uint32_t>(recs[static_cast<size_t>(i)].size),
                   static_cast<uint32_t>(recs[static_cast<size_t>(i)].offset)});
  return out;
}

TEST(RingBufferPage, RecordsAndTimestampsMatchKbuffer) {
  auto page = PageBuilder(1000)
                  .data(5, std::vector<uint8_t>(12, 0xaa))     // ts 1005, type_len 3
                  .timeExtend(uint64_t{1} << 30)              // +2^30
                  .data(7, std::vector<uint8_t>(120, 0xbb))    // type_len 0: the length word
                  .discarded(3, 8)                             // kbuffer adds the delta of discarded events
                  .absolute(5'000'000'000)                     // absolute time stamp
                  .data(2, {1, 2, 3, 4})
                  .build();
  PageResult r;
  const auto mine = decode(page, &r);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(mine.size(), 3u);
  EXPECT_EQ(mine[0].ts, 1005u);
  EXPECT_EQ(mine[0].length, 12u);
  EXPECT_EQ(mine[1].ts, 1005u + (uint64_t{1} << 30) + 7);
  EXPECT_EQ(mine[1].length, 120u);
  EXPECT_EQ(mine[2].ts, 5'000'000'002u);
  EXPECT_EQ(r.missedEvents, 0);

  long long missed = 99;
  const auto ref = decodeWithKbuffer(page, &missed);
  ASSERT_EQ(ref.size(), mine.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_EQ(mine[i].ts, ref[i].ts) << i;
    EXPECT_EQ(mine[i].length, ref[i].length) << i;
    EXPECT_EQ(mine[i].offset, ref[i].offset) << i;
  }
  EXPECT_EQ(missed, 0);
}

TEST(RingBufferPage, MissedEventsFromTheCommitWord) {
  auto counted = PageBuilder(10).data(1, {1, 2, 3, 4}).build(kMissedEvents | kMissedStored, 42);
  PageResult r;
  decode(counted, &r);
  EXPECT_EQ(r.missedEvents, 42);
  long long missed = 0;
  decodeWithKbuffer(counted, &missed);
  EXPECT_EQ(missed, 42);

  auto uncounted = PageBuilder(10).data(1, {1, 2, 3, 4}).build(kMissedEvents);
  decode(uncounted, &r);
  EXPECT_EQ(r.missedEvents, -1);
  decodeWithKbuffer(uncounted, &missed);
  EXPECT_EQ(missed, -1);
}

TEST(RingBufferPage, CorruptPagesStopWithoutReadingOutside) {
  PageResult r;
  // Commit larger than the page: kbuffer would walk 128 MB past it.
  auto big = PageBuilder(0).data(1, {1, 2, 3, 4}).buildWithCommit((1u << 27) - 1);
  EXPECT_TRUE(decode(big, &r).empty());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.errorOffset, 8u);

  // A record whose length runs past the commit size.
  auto overrun = PageBuilder(0).raw32(0).raw32(4000).build();
  decode(overrun, &r);
  EXPECT_FALSE(r.ok);
  EXPECT_STREQ(r.error, "event runs past the page's commit size");

  // Length word smaller than itself (kbuffer computes a negative length).
  auto negative = PageBuilder(0).raw32(0).raw32(2).build();
  decode(negative, &r);
  EXPECT_FALSE(r.ok);

  // A discarded event whose length reads as negative in kbuffer (int) and sends
  // its cursor backwards forever; here it is a jump past the data: the page ends.
  auto backwards = PageBuilder(0).data(1, {1, 2, 3, 4}).raw32(kTypePadding | 1u << 5).raw32(0xfffffff8u).build();
  const auto recs = decode(backwards, &r);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(recs.size(), 1u);

  // The 8 bytes that make kbuffer_load_subbuffer() loop forever (libtraceevent
  // 1.7.1): a discarded event whose length, read as int, is -4 points back at itself.
  auto selfLoop = PageBuilder(0).raw32(kTypePadding | 1u << 5).raw32(0xfffffffcu).build();
  EXPECT_TRUE(decode(selfLoop, &r).empty());
  EXPECT_TRUE(r.ok);

  // A header cut by the commit size.
  auto cut = PageBuilder(0).data(1, {1, 2, 3, 4}).build();
  uint64_t commit = 10;
  std::memcpy(cut.data() + 8, &commit, 8);
  decode(cut, &r);
  EXPECT_FALSE(r.ok);
}

TEST(RingBufferPage, FourByteCommitWordOf32BitKernels) {
  // header_page of a 32-bit kernel: commit is 4 bytes, data starts at 12.
  std::vector<uint8_t> page(4096, 0);
  const uint64_t ts = 777;
  std::memcpy(page.data(), &ts, 8);
  const uint32_t header = 2u | 9u << 5;  // type_len 2 (8 bytes), delta 9
  std::memcpy(page.data() + 12, &header, 4);
  const uint32_t commit = 12u | static_cast<uint32_t>(kMissedEvents);
  std::memcpy(page.data() + 8, &commit, 4);
  PageFormat fmt;
  fmt.commitSize = 4;
  fmt.dataOffset = 12;
  std::vector<Rec> mine;
  const PageResult r = decodePage(page.data(), fmt, [&](uint64_t t, const uint8_t*, uint32_t len, uint32_t off) {
    mine.push_back({t, len, off});
  });
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].ts, 786u);
  EXPECT_EQ(mine[0].length, 8u);
  EXPECT_EQ(r.missedEvents, -1);
  std::vector<oracle_kbuf_record> ref(8);
  long long missed = 0;
  ASSERT_EQ(oracle_kbuffer_page(page.data(), 4, 0, ref.data(), 8, &missed), 1);
  EXPECT_EQ(ref[0].ts, 786u);
  EXPECT_EQ(ref[0].size, 8);
  EXPECT_EQ(static_cast<uint32_t>(ref[0].offset), mine[0].offset);
  EXPECT_EQ(missed, -1);
}

TEST(EventFormat, ParsesTheSchedSwitchFormatOfLinux618) {
  const std::string text =
      "name: sched_switch\nID: 372\nformat:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
      "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
      "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
      "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
      "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
      "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
      "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
      "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
      "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
      "print fmt: \"prev_comm=%s\", REC->prev_comm\n";
  auto f = parseEventFormat(text, "sched");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->name, "sched_switch");
  EXPECT_EQ(f->id, 372);
  ASSERT_EQ(f->fields.size(), 11u);
  const FormatField* comm = f->field("prev_comm");
  ASSERT_TRUE(comm);
  EXPECT_TRUE(comm->isArray);
  EXPECT_EQ(comm->offset, 8u);
  EXPECT_EQ(comm->size, 16u);
  const FormatField* state = f->field("prev_state");
  ASSERT_TRUE(state);
  EXPECT_EQ(state->offset, 32u);
  EXPECT_EQ(state->size, 8u);
  EXPECT_TRUE(state->isSigned);
  EXPECT_EQ(f->printFmt, "\"prev_comm=%s\", REC->prev_comm");
  auto id = parseEventIdentity(text);
  ASSERT_TRUE(id);
  EXPECT_EQ(id->name, "sched_switch");
  EXPECT_EQ(id->id, 372);

  // __data_loc fields put the brackets before the name.
  auto exec = parseEventFormat(
      "name: sched_process_exec\nID: 5\nformat:\n"
      "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n",
      "sched");
  ASSERT_TRUE(exec);
  ASSERT_TRUE(exec->field("filename"));
  EXPECT_TRUE(exec->field("filename")->isDataLoc);
  EXPECT_FALSE(exec->field("filename")->isArray);

  // A field line without its size is malformed; a format without ID is not a format.
  EXPECT_FALSE(parseEventFormat("name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0;\n", "s"));
  EXPECT_FALSE(parseEventIdentity("name: x\nformat:\n"));
  EXPECT_FALSE(parseEventIdentity("name: x\nID: 99999999\n"));
}

TEST(EventFormat, HeaderPage) {
  const std::string text =
      "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
      "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
      "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
      "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
  auto h = parseHeaderPage(text);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->commitSize, 8u);
  EXPECT_EQ(h->dataOffset, 16u);
  EXPECT_EQ(h->dataSize, 4080u);
  EXPECT_FALSE(parseHeaderPage("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"));
}

// The sched_switch print fmts of the public LISA traces (arm64, Linux 4.x) and of
// the recordings here (Linux 6.18): where the preempt "+" sits and what each bit
// prints changed between them.
constexpr const char* kFmt4xMask1024 =
    "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", "
    "REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->prev_state & (1024-1) ? __print_flags(REC->prev_state & "
    "(1024-1), \"|\", { 1, \"S\"} , { 2, \"D\" }, { 4, \"T\" }, { 8, \"t\" }, { 16, \"Z\" }, { 32, \"X\" }, { 64, "
    "\"x\" }, { 128, \"K\" }, { 256, \"W\" }, { 512, \"P\" }) : \"R\", REC->prev_state & 1024 ? \"+\" : \"\", "
    "REC->next_comm, REC->next_pid, REC->next_prio";
constexpr const char* kFmt4xMask4096 =
    "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", "
    "REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->prev_state & (4096-1) ? __print_flags(REC->prev_state & "
    "(4096-1), \"|\", { 1, \"S\"} , { 2, \"D\" }, { 4, \"T\" }, { 8, \"t\" }, { 16, \"Z\" }, { 32, \"X\" }, { 64, "
    "\"x\" }, { 128, \"K\" }, { 256, \"W\" }, { 512, \"P\" }, { 1024, \"N\" }) : \"R\", REC->prev_state & 4096 ? "
    "\"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio";
constexpr const char* kFmt618 =
    "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", "
    "REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | "
    "0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? "
    "__print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
    "0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, "
    "{ 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, "
    "\"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | "
    "0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, "
    "REC->next_pid, REC->next_prio";

TEST(PrevState, Linux4xWithThePreemptBitAt1024) {
  PrevStateDecoder d;
  d.configure(kFmt4xMask1024, "");
  ASSERT_TRUE(d.usesPrintFmt());
  EXPECT_EQ(d.encoding(), core::PrevStateEncoding::Legacy);
  EXPECT_EQ(d.letters(0), "R");
  EXPECT_EQ(d.letters(1), "S");
  EXPECT_EQ(d.letters(64), "x");
  EXPECT_EQ(d.letters(130), "D|K");
  EXPECT_EQ(d.letters(1024), "R+");
  EXPECT_EQ(d.decode(0), core::TaskState::RunnablePreempted);
  EXPECT_EQ(d.decode(1), core::TaskState::Sleeping);
  EXPECT_EQ(d.decode(64), core::TaskState::Dead);
  EXPECT_EQ(d.decode(130), core::TaskState::Blocked);
  EXPECT_EQ(d.decode(1024), core::TaskState::RunnablePreempted);
}

TEST(PrevState, Linux4xWithThePreemptBitAt4096) {
  PrevStateDecoder d;
  d.configure(kFmt4xMask4096, "");
  ASSERT_TRUE(d.usesPrintFmt());
  EXPECT_EQ(d.letters(4096), "R+");
  EXPECT_EQ(d.letters(1026), "D|N");  // TASK_IDLE before 4.14 prints as D|N
  EXPECT_EQ(d.letters(16), "Z");
  EXPECT_EQ(d.decode(16), core::TaskState::Dead);
  EXPECT_EQ(d.decode(4096 | 1), core::TaskState::Sleeping);  // "S+": the letter decides
}

TEST(PrevState, Linux618ReportBits) {
  PrevStateDecoder d;
  d.configure(kFmt618, "Linux vm 6.18.44 x86_64");
  ASSERT_TRUE(d.usesPrintFmt());
  EXPECT_EQ(d.encoding(), core::PrevStateEncoding::Report414);
  EXPECT_EQ(d.letters(0), "R");
  EXPECT_EQ(d.letters(0x80), "I");
  EXPECT_EQ(d.letters(0x100), "R+");
  EXPECT_EQ(d.letters(0x10), "X");
  EXPECT_EQ(d.letters(0x102), "D+");
  EXPECT_EQ(d.letters(0x200), "R");  // outside the mask, as libtraceevent prints it
  EXPECT_EQ(d.decode(0x80), core::TaskState::Idle);
  EXPECT_EQ(d.decode(0x40), core::TaskState::Parked);
  EXPECT_EQ(d.decode(0x10), core::TaskState::Dead);
  EXPECT_EQ(d.decode(0x2), core::TaskState::Blocked);
  EXPECT_EQ(d.decode(uint64_t{1} << 40), core::TaskState::RunnablePreempted);
}

// States are decoded as values show up and kept: a new format (the next
// file) must not read them from the one before. 0x40 is "x" (dead) before
// 4.14 and "P" (parked) in 6.18.
TEST(PrevState, AnotherFormatForgetsTheStatesOfTheLast) {
  PrevStateDecoder d;
  d.configure(kFmt4xMask1024, "");
  EXPECT_EQ(d.decode(0x40), core::TaskState::Dead);
  EXPECT_EQ(d.decode(0x40), core::TaskState::Dead);
  d.configure(kFmt618, "Linux vm 6.18.44 x86_64");
  EXPECT_EQ(d.decode(0x40), core::TaskState::Parked);
}

TEST(PrevState, UnreadablePrintFmtFallsBackToTheKernelVersion) {
  PrevStateDecoder d;
  d.configure("\"prev_state=%lx\", REC->prev_state", "Linux juno 4.4.0 aarch64");
  EXPECT_FALSE(d.usesPrintFmt());
  EXPECT_EQ(d.encoding(), core::PrevStateEncoding::Legacy);
  d.configure("garbage (((", "Linux host 5.10.0 x86_64");
  EXPECT_EQ(d.encoding(), core::PrevStateEncoding::Report414);
  EXPECT_EQ(d.decode(0x80), core::TaskState::Idle);
}

TEST(Decompressor, ZstdAndZlibRoundTrip) {
  std::vector<uint8_t> plain(40960);
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<uint8_t>(i * 7 % 251);
  std::vector<uint8_t> packed(ZSTD_compressBound(plain.size()));
  packed.resize(ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), 3));
  std::vector<uint8_t> out(plain.size());
  Decompressor zstd(Compression::Zstd);
  ASSERT_TRUE(zstd.decompress(packed.data(), packed.size(), out.data(), out.size()));
  EXPECT_EQ(out, plain);
  EXPECT_FALSE(zstd.decompress(packed.data(), packed.size() / 2, out.data(), out.size()));
  EXPECT_FALSE(zstd.decompress(packed.data(), packed.size(), out.data(), out.size() - 1));

  // trace-cmd's zlib protocol: compress2() per block (this trace-cmd build lacks
  // zlib, so no zlib trace.dat could be recorded; the block format is the same).
  uLongf zlen = compressBound(static_cast<uLong>(plain.size()));
  std::vector<uint8_t> zpacked(zlen);
  ASSERT_EQ(compress2(zpacked.data(), &zlen, plain.data(), static_cast<uLong>(plain.size()), 9), Z_OK);
  zpacked.resize(zlen);
  Decompressor zlib(Compression::Zlib);
  std::fill(out.begin(), out.end(), 0);
  ASSERT_TRUE(zlib.decompress(zpacked.data(), zpacked.size(), out.data(), out.size()));
  EXPECT_EQ(out, plain);
  zpacked[zpacked.size() / 2] ^= 0xff;
  EXPECT_FALSE(zlib.decompress(zpacked.data(), zpacked.size(), out.data(), out.size()));

  Compression c;
  EXPECT_TRUE(compressionFromName("zstd", c));
  EXPECT_EQ(c, Compression::Zstd);
  EXPECT_FALSE(compressionFromName("lz4", c));
}

// finalize() groups the thread-state rows by task in place (core/sched_builder.cpp,
// partitionInPlace, changed with this importer for its memory target): over 65536
// rows it works in several sweeps. Every task's rows must come out complete and
// in time order, as the single-sweep scatter gave them.
TEST(SchedBuilderFinalize, ManyStateRowsStayGroupedAndOrdered) {
  core::SchedBuilder b;
  constexpr int kTasks = 300;
  constexpr int kSwitches = 200000;
  std::vector<uint32_t> expected(kTasks + 1, 0);
  uint32_t rng = 1;
  int current = 0;  // the idle task runs first
  for (int i = 0; i < kSwitches; ++i) {
    rng = rng * 1103515245u + 12345u;
    int next = 1 + static_cast<int>((rng >> 8) % kTasks);
    if (next == current) next = next % kTasks + 1;
    core::SwitchArgs a;
    a.prevTid = current;
    a.prevComm = current ? "task" : "swapper/0";
    a.prevState = (rng >> 4) & 1 ? core::TaskState::Sleeping : core::TaskState::RunnablePreempted;
    a.nextTid = next;
    a.nextComm = "task";
    b.onSwitch(core::EventContext{1000 + int64_t{i} * 10, 0, current, 0}, a);
    if (current) ++expected[static_cast<size_t>(current)];
    ++expected[static_cast<size_t>(next)];
    current = next;
  }
  auto m = b.finalize();
  uint64_t total = 0;
  for (uint32_t u = 1; u < m->threads.size(); ++u) {
    const auto [first, last] = m->stateRowsOf(core::Utid(u));
    ASSERT_LE(first, last);
    EXPECT_EQ(last - first, expected[static_cast<size_t>(m->threads.tid[u])]) << "tid " << m->threads.tid[u];
    for (uint32_t r = first + 1; r < last; ++r) ASSERT_LT(m->threadStates.ts[r - 1], m->threadStates.ts[r]);
    for (uint32_t r = first; r < last; ++r) ASSERT_EQ(m->threadOfStateRow(r), core::Utid(u));
    total += last - first;
  }
  EXPECT_EQ(total, m->threadStates.ts.size());
  EXPECT_GT(total, 65536u * 3);
}

}  // namespace
