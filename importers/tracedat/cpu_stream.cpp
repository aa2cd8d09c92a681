#include "importers/tracedat/cpu_stream.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>

namespace importers::tracedat {

namespace {
constexpr size_t kWindowBytes = 256 << 10;       // the file is read 256 KB at a time
constexpr uint32_t kMaxChunkBytes = 64u << 20;    // one decompressed chunk (trace-cmd writes 10 pages)
constexpr uint32_t kMaxPackedBytes = 64u << 20;

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

CpuStreamDecoder::CpuStreamDecoder(const TraceFile& file, const TraceLayout& layout, const EventDecoderTable& table,
                                   CpuDataRef ref)
    : m_file(file), m_table(table), m_ref(ref), m_compression(layout.compression) {
  m_fmt.pageSize = layout.pageSize;
  m_fmt.commitSize = layout.headerPage.commitSize;
  m_fmt.dataOffset = layout.headerPage.dataOffset;
  m_fmt.swap = layout.swap;
  m_fmt.bigEndian = layout.bigEndian;
  m_next = ref.offset;
  m_end = ref.offset + ref.size;
  if (m_end < ref.offset) m_end = UINT64_MAX;  // overflowing sizes: the file end decides
  if (m_compression != Compression::None) m_decompressor = std::make_unique<Decompressor>(m_compression);
  if (ref.size == 0) m_done = true;
  if (m_compression == Compression::None)
    m_pageEstimate = std::min(ref.size, file.size() - std::min(file.size(), ref.offset)) / layout.pageSize;
}

void CpuStreamDecoder::fail(EventBlock& block, uint64_t offset, std::string message, bool truncated) {
  block.error = StreamError{offset, std::move(message), truncated};
  block.last = true;
  m_done = true;
}

const uint8_t* CpuStreamDecoder::windowAt(uint64_t offset, size_t len) {
  if (offset >= m_windowOffset && offset - m_windowOffset + len <= m_windowLen)
    return m_window.data() + (offset - m_windowOffset);
  const size_t want = std::max<size_t>(len, kWindowBytes);
  if (m_window.size() < want) m_window.resize(want);
  m_windowOffset = offset;
  m_windowLen = m_file.readSome(offset, m_window.data(), want);
  return m_windowLen >= len ? m_window.data() : nullptr;
}

bool CpuStreamDecoder::loadChunk(EventBlock& block) {
  const uint64_t fileSize = m_file.size();
  if (!m_tableRead) {
    m_tableRead = true;
    const uint8_t* p = windowAt(m_next, 4);
    if (!p) {
      fail(block, m_next, "the file ends before this CPU's chunk table", true);
      return false;
    }
    uint32_t count;
    std::memcpy(&count, p, 4);
    m_chunksLeft = m_fmt.swap ? __builtin_bswap32(count) : count;
    m_next += 4;
    if (m_chunksLeft > (fileSize - std::min(fileSize, m_next)) / 8 + 1) {
      fail(block, m_next - 4, "implausible chunk count " + std::to_string(m_chunksLeft));
      return false;
    }
  }
  if (m_chunksLeft == 0) {
    block.last = true;
    m_done = true;
    return false;
  }
  const uint8_t* head = windowAt(m_next, 8);
  if (!head) {
    fail(block, m_next, "the file ends inside this CPU's compressed data (chunk " + std::to_string(m_chunkIndex) +
                            " of " + std::to_string(m_chunkIndex + m_chunksLeft) + ")",
         true);
    return false;
  }
  uint32_t header[2];
  std::memcpy(header, head, sizeof header);
  const uint32_t csize = m_fmt.swap ? __builtin_bswap32(header[0]) : header[0];
  const uint32_t usize = m_fmt.swap ? __builtin_bswap32(header[1]) : header[1];
  m_chunkOffset = m_next;
  if (usize > kMaxChunkBytes || csize > kMaxPackedBytes || usize % m_fmt.pageSize != 0) {
    fail(block, m_chunkOffset,
         "compressed chunk with implausible sizes (" + std::to_string(csize) + " -> " + std::to_string(usize) +
             " bytes)");
    return false;
  }
  if (m_chunkOffset + 8 + csize > fileSize) {
    fail(block, m_chunkOffset,
         "the file ends inside a compressed chunk (chunk " + std::to_string(m_chunkIndex) + " needs " +
             std::to_string(csize) + " bytes)",
         true);
    return false;
  }
  const uint8_t* packed = windowAt(m_chunkOffset + 8, csize);
  if (!packed) {
    fail(block, m_chunkOffset, "cannot read a compressed chunk");
    return false;
  }
  if (m_chunk.size() < usize) m_chunk.resize(usize);
  if (!m_decompressor->decompress(packed, csize, m_chunk.data(), usize)) {
    fail(block, m_chunkOffset, "compressed chunk " + std::to_string(m_chunkIndex) + " does not decompress");
    return false;
  }
  if (m_chunkIndex == 0) m_pageEstimate = (uint64_t{m_chunksLeft} * usize) / m_fmt.pageSize;
  m_chunkLen = usize;
  m_chunkPos = 0;
  m_pageInChunk = 0;
  m_next = m_chunkOffset + 8 + csize;
  --m_chunksLeft;
  ++m_chunkIndex;
  block.bytesDone = m_next - m_ref.offset;
  return true;
}

bool CpuStreamDecoder::nextPage(EventBlock& block) {
  if (m_done) {
    block.last = true;
    return false;
  }
  const uint32_t page = m_fmt.pageSize;
  if (m_compression != Compression::None) {
    while (m_chunkPos + page > m_chunkLen) {
      if (!loadChunk(block)) return false;
    }
    m_page = m_chunk.data() + m_chunkPos;
    m_pageOffset = m_chunkOffset;
    m_chunkPos += page;
    ++m_pageInChunk;
    block.pagesDone = ++m_pagesDone;
    return true;
  }
  // Plain pages.
  if (m_next >= m_end || m_end - m_next < page) {
    // The declared size ends here (a tail shorter than a page carries no page).
    block.last = true;
    m_done = true;
    return false;
  }
  // Whole pages of the declared region only, so the window never holds a cut page.
  const size_t span = static_cast<size_t>(std::min<uint64_t>(kWindowBytes, (m_end - m_next) / page * page));
  if (m_next < m_windowOffset || m_next + page > m_windowOffset + m_windowLen) {
    if (m_window.size() < kWindowBytes) m_window.resize(kWindowBytes);
    m_windowOffset = m_next;
    m_windowLen = m_file.readSome(m_next, m_window.data(), span) / page * page;
  }
  if (m_windowLen == 0) {
    fail(block, m_next,
         "the file ends inside this CPU's ring-buffer data (" + std::to_string(m_next - m_ref.offset) + " of " +
             std::to_string(m_ref.size) + " bytes present)",
         true);
    return false;
  }
  m_page = m_window.data() + (m_next - m_windowOffset);
  m_pageOffset = m_next;
  m_next += page;
  block.bytesDone = m_next - m_ref.offset;
  block.pagesDone = ++m_pagesDone;
  return true;
}

void CpuStreamDecoder::decodeCurrentPage(EventBlock& block) {
  const bool compressed = m_compression != Compression::None;
  const int64_t missed = pageMissedEvents(m_page, m_fmt);
  if (missed != 0) {
    DecodedEvent& e = block.append();
    e.op = EventOp::DataLoss;
    e.ts = m_table.convertTs(pageTimestamp(m_page, m_fmt));
    e.aux = missed;
    e.position = m_pageOffset;
    e.cpu = m_ref.cpu;
    e.countKey = DecodedEvent::kNoCount;
    e.externalText = 0;
    block.maxTs = std::max(block.maxTs, e.ts);
  }
  const uint64_t base = m_pageOffset;
  const int cpu = m_ref.cpu;
  int64_t maxTs = block.maxTs;
  const PageResult r = decodePage(m_page, m_fmt, [&](uint64_t ts, const uint8_t* data, uint32_t len, uint32_t off) {
    DecodedEvent& e = block.append();
    m_table.decode(data, len, ts, e, block.strings);
    e.position = compressed ? base : base + off;
    e.cpu = cpu;
    maxTs = std::max(maxTs, e.ts);
    if (e.op == EventOp::Exec || (e.op == EventOp::Private && e.cpuA == kPowerRecord)) [[unlikely]]
      block.outsideTexts.push_back(static_cast<uint32_t>(block.count - 1));
  });
  block.maxTs = maxTs;
  if (!r.ok) {
    if (compressed) {
      fail(block, m_chunkOffset,
           std::string(r.error) + " (page " + std::to_string(m_pageInChunk - 1) + " of the chunk, offset " +
               hex(r.errorOffset) + " in the page)");
    } else {
      fail(block, m_pageOffset + r.errorOffset, r.error);
    }
  }
}

void CpuStreamDecoder::fill(EventBlock& block, size_t maxEvents) {
  block.count = 0;
  block.strings.clear();
  block.outsideTexts.clear();
  block.maxTs = INT64_MIN;
  block.cpu = m_ref.cpu;
  block.last = false;
  block.error.reset();
  // A page holds at most pageSize/8 records (4-byte header + 4 bytes of data) plus a loss marker.
  const size_t capacity = maxEvents + m_fmt.pageSize / 8 + 2;
  try {
    if (block.storage.size() < capacity) block.storage.resize(capacity);
    while (block.count < maxEvents && !block.last) {
      if (!nextPage(block)) break;
      decodeCurrentPage(block);
    }
  } catch (const std::bad_alloc&) {
    fail(block, m_pageOffset, "out of memory while decoding");
  } catch (...) {
    // Nothing here throws by design; a worker thread must still never terminate the process.
    fail(block, m_pageOffset, "internal error while decoding");
  }
  for (uint32_t i : block.outsideTexts) {
    DecodedEvent& e = block.storage[i];
    e.setText(0, std::string_view(block.strings).substr(static_cast<size_t>(e.aux), static_cast<size_t>(e.cpuB)));
    e.aux = -1;
    e.cpuB = -1;
  }
}

// --- DecodePipeline ---

DecodePipeline::DecodePipeline(std::vector<std::unique_ptr<CpuStreamDecoder>> streams, int workers,
                               size_t blockEvents, size_t depth)
    : m_streams(std::move(streams)), m_channels(m_streams.size()), m_blockEvents(blockEvents) {
  for (auto& ch : m_channels) {
    for (size_t i = 0; i < depth; ++i) {
      ch.blocks.push_back(std::make_unique<EventBlock>());
      ch.free.push_back(ch.blocks.back().get());
    }
  }
  const size_t n = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(workers, 1)), m_streams.size()));
  for (size_t w = 0; w < n; ++w) m_threads.emplace_back([this, w, n] { work(w, n); });
}

DecodePipeline::~DecodePipeline() {
  stop();
  for (auto& t : m_threads) t.join();
}

void DecodePipeline::stop() {
  std::lock_guard lock(m_mutex);
  m_stopping = true;
  m_spaceFree.notify_all();
  m_dataReady.notify_all();
}

void DecodePipeline::work(size_t worker, size_t workers) {
  char name[16];
  std::snprintf(name, sizeof name, "tracedat-dec%zu", worker);
  pthread_setname_np(pthread_self(), name);  // for perf and debuggers
  size_t cursor = worker;
  for (;;) {
    size_t chosen = SIZE_MAX;
    EventBlock* block = nullptr;
    {
      std::unique_lock lock(m_mutex);
      for (;;) {
        if (m_stopping) return;
        bool anyLeft = false;
        // Streams s with s % workers == worker belong to this worker; serve them round-robin.
        for (size_t k = 0; k < m_channels.size(); ++k) {
          const size_t s = (cursor + k * workers) % m_channels.size();
          if (s % workers != worker) continue;
          Channel& ch = m_channels[s];
          if (ch.finished) continue;
          anyLeft = true;
          if (!ch.free.empty() && !ch.busy) {
            chosen = s;
            break;
          }
        }
        if (chosen != SIZE_MAX) break;
        if (!anyLeft) return;
        m_spaceFree.wait(lock);
      }
      Channel& ch = m_channels[chosen];
      block = ch.free.back();
      ch.free.pop_back();
      ch.busy = true;
    }
    m_streams[chosen]->fill(*block, m_blockEvents);
    {
      std::lock_guard lock(m_mutex);
      Channel& ch = m_channels[chosen];
      ch.busy = false;
      ch.full.push_back(block);
      if (block->last) ch.finished = true;
      m_dataReady.notify_all();
    }
    cursor = chosen + workers;
  }
}

EventBlock* DecodePipeline::next(size_t s) {
  std::unique_lock lock(m_mutex);
  Channel& ch = m_channels[s];
  m_dataReady.wait(lock, [&] { return !ch.full.empty() || (m_stopping && !ch.busy); });
  if (ch.full.empty()) {
    // Stopped before this stream produced more: an empty last block (release() ignores it).
    static thread_local EventBlock stopped;
    stopped.count = 0;
    stopped.last = true;
    stopped.error.reset();
    return &stopped;
  }
  EventBlock* b = ch.full.front();
  ch.full.pop_front();
  return b;
}

void DecodePipeline::release(size_t s, EventBlock* block) {
  std::lock_guard lock(m_mutex);
  Channel& ch = m_channels[s];
  for (const auto& owned : ch.blocks) {
    if (owned.get() == block) {
      ch.free.push_back(block);
      m_spaceFree.notify_all();
      return;
    }
  }
}

}  // namespace importers::tracedat
