// Decodes one ftrace ring-buffer sub-buffer ("page"), the unit trace.dat stores
// per CPU: a page header (timestamp, commit word with the missed-events flags)
// and the packed event records with their 27-bit time deltas. Called by the
// per-CPU stream decoder for every page; it is the innermost loop of the import.
//
// Why not libtraceevent's kbuffer: kbuffer (1.7.1) trusts the commit size and
// the lengths inside the page. A corrupt commit makes it read up to 128 MB past
// the page, and a discarded-event record whose length reads as -4 points back at
// itself: kbuffer_load_subbuffer() then never returns (8 bytes suffice; the unit
// test keeps that page). This decoder checks every length against the
// commit size and always moves forward; its record semantics follow kbuffer's
// (kbuffer-parse.c: translate_data/update_pointers) so that timestamps match
// `trace-cmd report` exactly. The tracedat tests compare it with kbuffer on every
// page of the real traces.
#pragma once

#include <cstdint>
#include <cstring>

namespace importers::tracedat {

struct PageFormat {
  uint32_t pageSize = 4096;
  uint32_t commitSize = 8;  ///< header_page "commit" (the kernel's long)
  uint32_t dataOffset = 16;
  bool swap = false;       ///< file endianness differs from the host's
  bool bigEndian = false;  ///< the file's: decides where type_len sits in the event header
};

struct PageResult {
  bool ok = true;
  uint32_t errorOffset = 0;  ///< offset in the page of the bad record
  const char* error = nullptr;
  int64_t missedEvents = 0;  ///< events lost before this page: 0 none, -1 lost but not counted
  uint32_t records = 0;
};

namespace detail {
inline uint32_t load32(const uint8_t* p, bool swap) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return swap ? __builtin_bswap32(v) : v;
}
inline uint64_t load64(const uint8_t* p, bool swap) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return swap ? __builtin_bswap64(v) : v;
}
inline uint64_t loadLong(const uint8_t* p, uint32_t size, bool swap) {
  return size == 8 ? load64(p, swap) : load32(p, swap);
}
}  // namespace detail

// Ring-buffer event types (include/linux/ring_buffer.h, enum ring_buffer_type).
inline constexpr uint32_t kTypePadding = 29;
inline constexpr uint32_t kTypeTimeExtend = 30;
inline constexpr uint32_t kTypeTimeStamp = 31;
inline constexpr uint64_t kMissedEvents = 1ULL << 31;  // RB_MISSED_EVENTS in the commit word
inline constexpr uint64_t kMissedStored = 1ULL << 30;  // RB_MISSED_STORED: the count follows the data
inline constexpr uint64_t kCommitMask = (1ULL << 27) - 1;
// Absolute time stamps carry no 5 top bits; they come from the running time (kbuffer's TS_MSB).
inline constexpr uint64_t kTsMsb = 0xf8ULL << 56;

/// Events lost just before `page`: 0 none, -1 lost but not counted, else the count.
inline int64_t pageMissedEvents(const uint8_t* page, const PageFormat& fmt) {
  const uint64_t commit = detail::loadLong(page + 8, fmt.commitSize, fmt.swap);
  if (!(commit & kMissedEvents)) return 0;
  const uint32_t size = static_cast<uint32_t>(commit & kCommitMask);
  const uint32_t room = fmt.pageSize - fmt.dataOffset;
  if (!(commit & kMissedStored) || size + fmt.commitSize > room) return -1;
  const uint64_t n = detail::loadLong(page + fmt.dataOffset + size, fmt.commitSize, fmt.swap);
  return n > 0 && n < (1ULL << 62) ? static_cast<int64_t>(n) : -1;
}

inline uint64_t pageTimestamp(const uint8_t* page, const PageFormat& fmt) { return detail::load64(page, fmt.swap); }

/// Calls onRecord(uint64_t ts, const uint8_t* data, uint32_t length, uint32_t offsetInPage)
/// for each data record of `page` (pageSize bytes). Returns the missed-events count
/// and, for a corrupt page, where decoding stopped; records before it were delivered.
template <typename OnRecord>
PageResult decodePage(const uint8_t* page, const PageFormat& fmt, OnRecord&& onRecord) {
  using detail::load32;
  PageResult r;
  const bool swap = fmt.swap;
  uint64_t ts = detail::load64(page, swap);
  const uint64_t commit = detail::loadLong(page + 8, fmt.commitSize, swap);
  const uint32_t size = static_cast<uint32_t>(commit & kCommitMask);
  const uint32_t room = fmt.pageSize - fmt.dataOffset;
  if (size > room) {
    r.ok = false;
    r.errorOffset = 8;
    r.error = "page commit size larger than the page";
    return r;
  }
  const uint8_t* data = page + fmt.dataOffset;
  r.missedEvents = pageMissedEvents(page, fmt);
  uint32_t pos = 0;
  while (pos < size) {
    if (size - pos < 4) {
      r.ok = false;
      r.error = "event header cut by the end of the page";
      break;
    }
    const uint32_t header = load32(data + pos, swap);
    const uint32_t typeLen = fmt.bigEndian ? header >> 27 : header & 31;
    const uint64_t delta = fmt.bigEndian ? header & ((1u << 27) - 1) : header >> 5;
    if (typeLen >= kTypePadding) {
      if (size - pos < 8) {
        // A null padding event (type 29, delta 0) may end the page with only its header.
        if (typeLen == kTypePadding && delta == 0) break;
        r.ok = false;
        r.error = "time or padding event cut by the end of the page";
        break;
      }
      const uint32_t arg = load32(data + pos + 4, swap);
      if (typeLen == kTypePadding) {
        // Null padding ends the data; a discarded event keeps its length in array[0].
        if (delta == 0) break;
        ts += delta;
        const uint64_t next = uint64_t{pos} + 4 + arg;
        if (next >= size) break;  // padding to the end of the data
        pos = static_cast<uint32_t>(next);
      } else if (typeLen == kTypeTimeExtend) {
        ts += (uint64_t{arg} << 27) + delta;
        pos += 8;
      } else {
        ts = ((uint64_t{arg} << 27) + delta) | (ts & kTsMsb);
        pos += 8;
      }
      continue;
    }
    uint32_t length;
    uint32_t start;
    if (typeLen == 0) {
      if (size - pos < 8) {
        r.ok = false;
        r.error = "event length cut by the end of the page";
        break;
      }
      const uint32_t len = load32(data + pos + 4, swap);
      if (len < 4 || len > room) {
        r.ok = false;
        r.error = "event of impossible length";
        break;
      }
      length = (len - 4 + 3) & ~3u;
      start = pos + 8;
    } else {
      length = typeLen * 4;
      start = pos + 4;
    }
    if (length > size - start || start > size) {
      r.ok = false;
      r.error = "event runs past the page's commit size";
      break;
    }
    ts += delta;
    onRecord(ts, data + start, length, fmt.dataOffset + pos);
    ++r.records;
    pos = start + length;
  }
  if (!r.ok) r.errorOffset = fmt.dataOffset + pos;
  return r;
}

}  // namespace importers::tracedat
