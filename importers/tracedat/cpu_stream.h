// One CPU's ring-buffer data in a trace.dat (plain pages, or v7 compressed
// chunks streamed one at a time) decoded into blocks of DecodedEvent, and the
// pipeline of worker threads that runs these decoders ahead of the importer's
// merge. Called by tracedat_importer.cpp; memory stays bounded by the blocks in
// flight, never by the file size.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "importers/tracedat/ring_buffer_page.h"
#include "importers/tracedat/sched_event_decoder.h"
#include "importers/tracedat/tracedat_compress.h"
#include "importers/tracedat/tracedat_layout.h"

namespace importers::tracedat {

struct StreamError {
  uint64_t fileOffset = 0;
  std::string message;
  bool truncated = false;  ///< the file ends inside the data (else: corrupt data)
};

struct EventBlock {
  /// Sized once and reused: decoding writes into the slots, with no per-event
  /// construction (value-initialising 96 bytes per event cost ~10% of decoding).
  std::vector<DecodedEvent> storage;
  size_t count = 0;
  std::span<DecodedEvent> events() { return {storage.data(), count}; }
  DecodedEvent& append() { return storage[count++]; }  // room ensured by CpuStreamDecoder::fill()
  std::string strings;  ///< exec filenames and power records the events point into
  /// Which events have their text 0 in `strings` (set once `strings` stops growing).
  std::vector<uint32_t> outsideTexts;
  int64_t maxTs = INT64_MIN;    ///< the latest timestamp of the block's events
  int cpu = 0;
  bool last = false;    ///< the stream ends after this block
  std::optional<StreamError> error;  ///< set on the last block of a stream that ended early
  uint64_t bytesDone = 0;            ///< bytes of this CPU's data consumed so far
  uint64_t pagesDone = 0;            ///< ring-buffer pages decoded so far (this block included)
};

class CpuStreamDecoder {
 public:
  CpuStreamDecoder(const TraceFile& file, const TraceLayout& layout, const EventDecoderTable& table, CpuDataRef ref);
  int cpu() const { return m_ref.cpu; }
  uint64_t totalBytes() const { return m_ref.size; }
  /// Pages this CPU's data holds (v7 compressed: estimated from the chunk table
  /// and the first chunk's size); known once the first block was filled.
  uint64_t pageEstimate() const { return m_pageEstimate; }
  /// Clears `block` and fills it with about `maxEvents` events (whole pages).
  /// Sets block.last when the stream ends, with block.error if it ended early.
  void fill(EventBlock& block, size_t maxEvents);

 private:
  bool nextPage(EventBlock& block);  // m_page/m_pageOffset; false at the end (block.last set)
  bool loadChunk(EventBlock& block);
  /// Bytes [offset, offset + len) of the file through the read window (one
  /// pread per 256 KB rather than two per chunk); nullptr past the end of the file.
  const uint8_t* windowAt(uint64_t offset, size_t len);
  void fail(EventBlock& block, uint64_t offset, std::string message, bool truncated = false);
  void decodeCurrentPage(EventBlock& block);

  const TraceFile& m_file;
  const EventDecoderTable& m_table;
  CpuDataRef m_ref;
  PageFormat m_fmt;
  Compression m_compression;
  std::unique_ptr<Decompressor> m_decompressor;
  bool m_done = false;

  // A window of the file read with pread (plain pages, or compressed chunks).
  std::vector<uint8_t> m_window;
  uint64_t m_windowOffset = 0;
  size_t m_windowLen = 0;
  uint64_t m_next = 0;  // file offset of the next page (plain) / next chunk header (compressed)
  uint64_t m_end = 0;   // end of the region as declared

  // Compressed chunks.
  bool m_tableRead = false;
  uint32_t m_chunksLeft = 0;
  uint32_t m_chunkIndex = 0;
  uint64_t m_chunkOffset = 0;
  std::vector<uint8_t> m_chunk;
  size_t m_chunkLen = 0;
  size_t m_chunkPos = 0;

  const uint8_t* m_page = nullptr;
  uint64_t m_pageOffset = 0;  // file offset of the page (plain), or of its chunk
  uint32_t m_pageInChunk = 0;
  uint64_t m_pagesDone = 0;
  uint64_t m_pageEstimate = 0;
};

/// Worker threads that keep each stream a few blocks ahead of the consumer.
/// The consumer (the importer's merge, one thread) takes a stream's blocks in
/// order with next() and hands each back with release().
class DecodePipeline {
 public:
  DecodePipeline(std::vector<std::unique_ptr<CpuStreamDecoder>> streams, int workers, size_t blockEvents,
                 size_t depth);
  ~DecodePipeline();
  DecodePipeline(const DecodePipeline&) = delete;
  DecodePipeline& operator=(const DecodePipeline&) = delete;

  size_t streamCount() const { return m_streams.size(); }
  const CpuStreamDecoder& stream(size_t s) const { return *m_streams[s]; }
  /// The stream's next block, waiting for it if needed. Never null: the last
  /// block of a stream has `last` set, and next() must not be called after it.
  EventBlock* next(size_t s);
  void release(size_t s, EventBlock* block);
  /// Stops the workers (cancel); blocks already made stay readable.
  void stop();

 private:
  void work(size_t worker, size_t workers);

  struct Channel {
    std::vector<std::unique_ptr<EventBlock>> blocks;
    std::vector<EventBlock*> free;
    std::deque<EventBlock*> full;
    bool finished = false;  // the last block was produced
    bool busy = false;      // a worker is filling a block of it
  };
  std::vector<std::unique_ptr<CpuStreamDecoder>> m_streams;
  std::vector<Channel> m_channels;
  size_t m_blockEvents;
  std::mutex m_mutex;
  std::condition_variable m_dataReady;
  std::condition_variable m_spaceFree;
  bool m_stopping = false;
  std::vector<std::thread> m_threads;
};

}  // namespace importers::tracedat
