#include "core/timeline_index.h"

#include <algorithm>
#include <cmath>

namespace core {

TrackKind trackKindOf(SliceKind kind) {
  switch (kind) {
    case SliceKind::Task: return TrackKind::Running;
    case SliceKind::Idle: return TrackKind::Empty;
    case SliceKind::ForcedIdle: return TrackKind::ForcedIdle;
    case SliceKind::Lost: return TrackKind::Loss;
  }
  return TrackKind::Empty;
}

TrackKind trackKindOf(TaskState state) {
  switch (classify(state)) {
    case StateClass::Running: return TrackKind::Running;
    case StateClass::Runnable: return TrackKind::Runnable;
    case StateClass::Sleep: return TrackKind::Sleeping;
    case StateClass::Blocked: return TrackKind::Blocked;
    case StateClass::Dead:
    case StateClass::Unknown: return TrackKind::Empty;
  }
  return TrackKind::Empty;
}

namespace {
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

DrawKind drawKindOf(TrackKind k) {
  switch (k) {
    case TrackKind::Running: return DrawKind::Running;
    case TrackKind::Runnable: return DrawKind::Runnable;
    case TrackKind::Sleeping: return DrawKind::Sleeping;
    case TrackKind::Blocked: return DrawKind::Blocked;
    case TrackKind::ForcedIdle: return DrawKind::ForcedIdle;
    case TrackKind::Loss: return DrawKind::Loss;
    case TrackKind::Empty: break;
  }
  return DrawKind::Folded;
}
}  // namespace

TimelineTrack TimelineTrack::fromCpu(const TraceModel& model, int cpu) {
  TimelineTrack t;
  if (cpu < 0 || cpu >= model.cpuCount()) return t;
  const CpuSliceTable& s = model.cpuSlices[static_cast<size_t>(cpu)];
  t.m_modelTs = &s.ts;
  if (std::any_of(s.dur.begin(), s.dur.end(), [](int64_t d) { return d < 0; })) {
    // Open slices (dur -1) only exist before finalize(); clamp rather than draw backwards.
    t.m_ownDur.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) t.m_ownDur.push_back(std::max<int64_t>(0, s.dur[i]));
  } else {
    t.m_modelDur = &s.dur;
  }
  t.m_kind.resize(s.size());
  for (size_t i = 0; i < s.size(); ++i) t.m_kind[i] = trackKindOf(s.kind[i]);
  t.buildIndex();
  return t;
}

TimelineTrack TimelineTrack::fromCpuFiltered(const TraceModel& model, int cpu, const std::function<bool(Utid)>& keep) {
  TimelineTrack t;
  if (cpu < 0 || cpu >= model.cpuCount()) return t;
  const CpuSliceTable& s = model.cpuSlices[static_cast<size_t>(cpu)];
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != SliceKind::Task || !keep(s.utid[i])) continue;
    t.m_ownTs.push_back(s.ts[i]);
    t.m_ownDur.push_back(std::max<int64_t>(0, s.dur[i]));
    t.m_kind.push_back(TrackKind::Running);
    t.m_rowMap.push_back(static_cast<uint32_t>(i));
  }
  t.buildIndex();
  return t;
}

TimelineTrack TimelineTrack::fromThread(const TraceModel& model, Utid utid) {
  TimelineTrack t;
  if (!utid.isValid() || utid.value + 1 >= model.threadStates.rowsBegin.size()) return t;
  const auto [a, b] = model.stateRowsOf(utid);
  const auto& st = model.threadStates;
  t.m_rowOffset = a;
  t.m_modelTs = &st.ts;
  t.m_tsOffset = a;
  t.m_ownDur.reserve(b - a);
  t.m_kind.resize(b - a);
  const int64_t threadEnd = model.threads.endTs[utid.value];
  for (uint32_t r = a; r < b; ++r) {
    const int64_t end = r + 1 < b ? st.ts[r + 1] : std::max(st.ts[r], threadEnd);
    t.m_ownDur.push_back(std::max<int64_t>(0, end - st.ts[r]));
    t.m_kind[r - a] = trackKindOf(st.state[r]);
  }
  t.buildIndex();
  return t;
}

void TimelineTrack::buildIndex() {
  const auto n = static_cast<uint32_t>(size());
  const uint32_t blocks = (n + kBlock - 1) / kBlock;
  m_cum.assign((static_cast<size_t>(blocks) + 1) * kFoldCategories, 0);
  std::array<int64_t, kFoldCategories> run{};
  for (uint32_t b = 0; b < blocks; ++b) {
    std::copy(run.begin(), run.end(), m_cum.begin() + static_cast<ptrdiff_t>(b) * kFoldCategories);
    const uint32_t e = std::min(n, (b + 1) * kBlock);
    for (uint32_t i = b * kBlock; i < e; ++i) {
      const int c = foldCategory(m_kind[i]);
      if (c >= 0 && c < kFoldCategories) run[static_cast<size_t>(c)] += dur(i);
    }
  }
  std::copy(run.begin(), run.end(), m_cum.begin() + static_cast<ptrdiff_t>(blocks) * kFoldCategories);

  m_maxWide.clear();
  m_argRunning.clear();
  if (blocks == 0) return;
  {
    std::vector<int64_t> wide(blocks, INT64_MIN);
    std::vector<uint32_t> arg(blocks, kNoRow);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t b = i >> kBlockShift;
      wide[b] = std::max(wide[b], wideKey(i));
      if (m_kind[i] == TrackKind::Running) arg[b] = betterRunning(arg[b], i);
    }
    m_maxWide.push_back(std::move(wide));
    m_argRunning.push_back(std::move(arg));
  }
  while (m_maxWide.back().size() > 1) {
    const auto& pw = m_maxWide.back();
    const auto& pa = m_argRunning.back();
    const size_t entries = (pw.size() + kBlock - 1) / kBlock;
    std::vector<int64_t> wide(entries, INT64_MIN);
    std::vector<uint32_t> arg(entries, kNoRow);
    for (size_t j = 0; j < pw.size(); ++j) {
      wide[j >> kBlockShift] = std::max(wide[j >> kBlockShift], pw[j]);
      arg[j >> kBlockShift] = betterRunning(arg[j >> kBlockShift], pa[j]);
    }
    m_maxWide.push_back(std::move(wide));
    m_argRunning.push_back(std::move(arg));
  }
  buildPyramid();
}

uint32_t TimelineTrack::betterRunning(uint32_t a, uint32_t b) const {
  if (b == kNoRow) return a;
  if (a == kNoRow) return b;
  return runningKey(b) > runningKey(a) ? b : a;
}

int64_t TimelineTrack::prefix(int c, uint32_t x) const {
  int64_t s = m_cum[static_cast<size_t>(x >> kBlockShift) * kFoldCategories + static_cast<size_t>(c)];
  for (uint32_t i = x & ~(kBlock - 1); i < x; ++i)
    if (foldCategory(m_kind[i]) == c) s += dur(i);
  return s;
}

int64_t TimelineTrack::categoryTime(int c, uint32_t a, uint32_t b) const {
  if (c < 0 || c >= kFoldCategories || b <= a) return 0;
  if (b - a <= kBlock) {
    int64_t s = 0;
    for (uint32_t i = a; i < b; ++i)
      if (foldCategory(m_kind[i]) == c) s += dur(i);
    return s;
  }
  return prefix(c, b) - prefix(c, a);
}

uint32_t TimelineTrack::upperBound(uint32_t from, uint32_t to, int64_t t) const {
  const auto first = rowStarts();
  return static_cast<uint32_t>(std::upper_bound(first + from, first + to, t) - first);
}

uint32_t TimelineTrack::lowerBound(uint32_t from, uint32_t to, int64_t t) const {
  const auto first = rowStarts();
  return static_cast<uint32_t>(std::lower_bound(first + from, first + to, t) - first);
}

namespace {
// First index in [from, n) with first[index] >= e, galloping from `from`: edges
// come in order, so consecutive searches start where the last one ended.
template <typename It>
uint32_t gallop(It first, uint32_t n, uint32_t from, int64_t e) {
  uint32_t lo = from;
  uint32_t step = 1;
  uint32_t hi = from;
  while (hi < n && first[hi] < e) {
    lo = hi + 1;
    hi = step > n - hi ? n : hi + step;
    step *= 2;
  }
  return static_cast<uint32_t>(std::lower_bound(first + lo, first + std::min(hi, n), e) - first);
}
}  // namespace

void TimelineTrack::categoryIntegral(int c, std::span<const int64_t> edges, std::span<int64_t> out) const {
  uint32_t pos = 0;
  for (size_t i = 0; i < edges.size() && i < out.size(); ++i) {
    pos = gallop(rowStarts(), static_cast<uint32_t>(size()), pos, edges[i]);
    int64_t v = pos ? prefix(c, pos) : 0;
    // Rows do not overlap: only the last one starting before the edge can reach past it.
    if (pos > 0 && foldCategory(m_kind[pos - 1]) == c) v -= std::max<int64_t>(0, end(pos - 1) - edges[i]);
    out[i] = v;
  }
}

CountIntegral CountIntegral::fromIntervals(std::vector<std::pair<int64_t, int64_t>> intervals) {
  std::vector<std::pair<int64_t, int>> changes;
  changes.reserve(intervals.size() * 2);
  for (const auto& [a, b] : intervals)
    if (b > a) {
      changes.emplace_back(a, 1);
      changes.emplace_back(b, -1);
    }
  std::sort(changes.begin(), changes.end());
  CountIntegral ci;
  int32_t level = 0;
  int64_t cum = 0;
  for (const auto& [t, d] : changes) {
    if (!ci.m_t.empty() && ci.m_t.back() == t) {
      level += d;
      ci.m_level.back() = level;
      continue;
    }
    if (!ci.m_t.empty()) cum += (t - ci.m_t.back()) * ci.m_level.back();
    level += d;
    ci.m_t.push_back(t);
    ci.m_cum.push_back(cum);
    ci.m_level.push_back(level);
  }
  return ci;
}

void CountIntegral::integral(std::span<const int64_t> edges, std::span<int64_t> out) const {
  uint32_t pos = 0;
  for (size_t i = 0; i < edges.size() && i < out.size(); ++i) {
    // The last change at or before the edge.
    pos = gallop(m_t.begin(), static_cast<uint32_t>(m_t.size()), pos, edges[i] + 1);
    out[i] = pos == 0 ? 0 : m_cum[pos - 1] + (edges[i] - m_t[pos - 1]) * m_level[pos - 1];
    if (pos > 0) --pos;  // the next edge may fall in the same step
  }
}

uint32_t TimelineTrack::findFirstWide(uint32_t a, uint32_t b, int64_t minDur) const {
  uint32_t i = a;
  const auto levels = static_cast<int>(m_maxWide.size());
  while (i < b) {
    if ((i & (kBlock - 1)) != 0 || static_cast<uint64_t>(i) + kBlock > b) {
      if (wideKey(i) >= minDur) return i;
      ++i;
      continue;
    }
    // The largest mipmap block that starts at i and lies inside [i, b).
    int l = 0;
    uint64_t blockRows = kBlock;
    while (l + 1 < levels && i % (blockRows * kBlock) == 0 && i + blockRows * kBlock <= b) {
      ++l;
      blockRows *= kBlock;
    }
    if (m_maxWide[static_cast<size_t>(l)][i / blockRows] < minDur) {
      i = static_cast<uint32_t>(i + blockRows);
      continue;
    }
    // The block holds a wide row: descend to the first sub-block that does.
    while (l > 0) {
      const uint64_t sub = blockRows / kBlock;
      auto j = static_cast<size_t>(i / sub);
      const auto& lower = m_maxWide[static_cast<size_t>(l - 1)];
      while (lower[j] < minDur) ++j;
      i = static_cast<uint32_t>(j * sub);
      blockRows = sub;
      --l;
    }
    for (uint32_t r = i; r < i + kBlock; ++r)
      if (wideKey(r) >= minDur) return r;
    i += kBlock;  // unreachable when the mipmap is consistent
  }
  return b;
}

uint32_t TimelineTrack::longestRunning(uint32_t a, uint32_t b) const {
  uint32_t best = kNoRow;
  uint32_t i = a;
  const auto levels = static_cast<int>(m_argRunning.size());
  while (i < b) {
    if ((i & (kBlock - 1)) != 0 || static_cast<uint64_t>(i) + kBlock > b) {
      if (m_kind[i] == TrackKind::Running) best = betterRunning(best, i);
      ++i;
      continue;
    }
    int l = 0;
    uint64_t blockRows = kBlock;
    while (l + 1 < levels && i % (blockRows * kBlock) == 0 && i + blockRows * kBlock <= b) {
      ++l;
      blockRows *= kBlock;
    }
    best = betterRunning(best, m_argRunning[static_cast<size_t>(l)][i / blockRows]);
    i = static_cast<uint32_t>(i + blockRows);
  }
  return best;
}

std::vector<DrawItem> TimelineTrack::query(int64_t t0, int64_t t1, double nsPerPx) const {
  std::vector<DrawItem> out;
  query(t0, t1, nsPerPx, out);
  return out;
}

void TimelineTrack::query(int64_t t0, int64_t t1, double nsPerPx, std::vector<DrawItem>& out) const {
  if (empty() || t1 <= t0 || !(nsPerPx > 0)) return;
  const int64_t minVis = std::max<int64_t>(1, std::llround(kMinVisiblePx * nsPerPx));
  const double binNs = kFoldPx * nsPerPx;
  if (!m_pyramid.empty() && binNs >= static_cast<double>(m_pyramid.front().width)) {
    // The coarsest level whose bins are at most one fold bin wide: 1 to 2 px each.
    size_t level = 0;
    while (level + 1 < m_pyramid.size() && static_cast<double>(m_pyramid[level + 1].width) <= binNs) ++level;
    queryPyramid(level, t0, t1, minVis, out);
    return;
  }
  queryRows(t0, t1, minVis, std::max<int64_t>(1, std::llround(binNs)), out);
}

void TimelineTrack::queryPyramid(size_t level, int64_t t0, int64_t t1, int64_t minVis, std::vector<DrawItem>& out) const {
  const PyramidLevel& L = m_pyramid[level];
  const auto n = static_cast<uint32_t>(size());
  const int64_t first = std::max<int64_t>(floorDiv(t0, L.width), L.base);
  const int64_t last = std::min<int64_t>(floorDiv(t1 - 1, L.width), L.base + static_cast<int64_t>(L.bins.size()) - 1);
  for (int64_t a = first; a <= last; ++a) {
    const auto j = static_cast<size_t>(a - L.base);
    const FoldBin& bin = L.bins[j];
    bool any = false;
    DrawItem item;
    for (int c = 0; c < kFoldCategories; ++c) {
      const auto v = bin.share[static_cast<size_t>(c)];
      item.share[static_cast<size_t>(c)] = static_cast<float>(v) / 65535.0f;
      any = any || v > 0;
    }
    if (!any) continue;
    item.kind = DrawKind::Folded;
    item.ts = a * L.width;
    item.end = item.ts + L.width;
    item.firstIdx = bin.firstRow;
    const uint32_t next = j + 1 < L.bins.size() ? L.bins[j + 1].firstRow : n;
    item.count = next > bin.firstRow ? next - bin.firstRow : 1;
    item.dominantIdx = bin.dominant;
    out.push_back(item);
  }
  // Rows wide enough to stand alone are drawn over the bins, with their labels.
  uint32_t a = upperBound(0, n, t0);
  if (a > 0) --a;
  const uint32_t b = lowerBound(a, n, t1);
  for (uint32_t i = findFirstWide(a, b, minVis); i < b; i = findFirstWide(i + 1, b, minVis)) {
    if (m_kind[i] == TrackKind::Empty || end(i) <= t0) continue;
    DrawItem item;
    item.kind = drawKindOf(m_kind[i]);
    item.firstIdx = i;
    item.count = 1;
    item.ts = ts(i);
    item.end = end(i);
    out.push_back(item);
  }
}

void TimelineTrack::queryRows(int64_t t0, int64_t t1, int64_t minVis, int64_t binNs, std::vector<DrawItem>& out) const {
  const auto n = static_cast<uint32_t>(size());
  uint32_t pos = upperBound(0, n, t0);
  if (pos > 0 && end(pos - 1) > t0) --pos;
  while (pos < n && ts(pos) < t1) {
    if (wideKey(pos) >= minVis) {
      if (m_kind[pos] != TrackKind::Empty) {
        DrawItem item;
        item.kind = drawKindOf(m_kind[pos]);
        item.firstIdx = pos;
        item.count = 1;
        item.ts = ts(pos);
        item.end = end(pos);
        out.push_back(item);
      }
      ++pos;
      continue;
    }
    // Narrow: fold the rows that start in this bin, stopping before a wide one.
    const int64_t binEnd = (floorDiv(ts(pos), binNs) + 1) * binNs;
    // Gallop: the next bin is usually near.
    uint32_t lo = pos + 1;
    uint32_t step = 1;
    while (lo + step < n && ts(lo + step) < binEnd) {
      lo += step;
      step *= 2;
    }
    const uint32_t hi = std::min(n, lo + step + 1);
    const uint32_t q = lowerBound(std::min(lo, n), hi, binEnd);
    const uint32_t last = std::max(pos + 1, findFirstWide(pos + 1, q, minVis));

    DrawItem item;
    item.firstIdx = pos;
    item.count = last - pos;
    item.ts = ts(pos);
    item.end = std::max(end(last - 1), item.ts);
    bool any = false;
    if (item.count == 1) {
      if (m_kind[pos] != TrackKind::Empty) {
        item.kind = drawKindOf(m_kind[pos]);
        any = true;
      }
    } else {
      item.kind = DrawKind::Folded;
      const double span = static_cast<double>(std::max<int64_t>(1, item.end - item.ts));
      for (int c = 0; c < kFoldCategories; ++c) {
        const int64_t t = categoryTime(c, pos, last);
        item.share[static_cast<size_t>(c)] = static_cast<float>(std::min(1.0, static_cast<double>(t) / span));
        any = any || t > 0;
      }
      item.dominantIdx = longestRunning(pos, last);
    }
    if (any) out.push_back(item);
    pos = last;
  }
}

void TimelineTrack::buildPyramid() {
  m_pyramid.clear();
  const auto n = static_cast<uint32_t>(size());
  // Below a few hundred rows the row walk is as cheap as any bin.
  if (n < 256) return;
  int64_t spanEnd = ts(0);
  for (uint32_t i = 0; i < n; ++i) spanEnd = std::max(spanEnd, end(i));
  const int64_t span = std::max<int64_t>(1, spanEnd - ts(0));
  // Level 0: about 16 rows per bin on average; widths are powers of two ns.
  const double target = static_cast<double>(span) * 16.0 / n;
  int64_t w0 = 1;
  while (static_cast<double>(w0) < target && w0 < (int64_t{1} << 50)) w0 *= 2;

  PyramidLevel L0;
  L0.width = w0;
  L0.base = floorDiv(ts(0), w0);
  const int64_t lastBin = floorDiv(spanEnd - 1, w0);
  const auto bins = static_cast<size_t>(std::max<int64_t>(1, lastBin - L0.base + 1));
  std::vector<std::array<int64_t, kFoldCategories>> acc(bins, std::array<int64_t, kFoldCategories>{});
  L0.bins.assign(bins, FoldBin{{}, kNoRow, kNoRow});
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t s = ts(i);
    const int64_t e = end(i);
    auto j = static_cast<size_t>(floorDiv(s, w0) - L0.base);
    if (L0.bins[j].firstRow == kNoRow) L0.bins[j].firstRow = i;
    const int c = foldCategory(m_kind[i]);
    if (c < 0 || c >= kFoldCategories) continue;
    for (; j < bins; ++j) {
      const int64_t bs = (L0.base + static_cast<int64_t>(j)) * w0;
      if (bs >= e) break;
      const int64_t overlap = std::min(e, bs + w0) - std::max(s, bs);
      if (overlap <= 0) continue;
      acc[j][static_cast<size_t>(c)] += overlap;
      if (m_kind[i] == TrackKind::Running) L0.bins[j].dominant = betterRunning(L0.bins[j].dominant, i);
    }
  }
  uint32_t next = n;
  for (size_t j = bins; j-- > 0;) {
    if (L0.bins[j].firstRow == kNoRow) L0.bins[j].firstRow = next;
    next = L0.bins[j].firstRow;
    for (int c = 0; c < kFoldCategories; ++c) {
      const double f = static_cast<double>(acc[j][static_cast<size_t>(c)]) / static_cast<double>(w0);
      L0.bins[j].share[static_cast<size_t>(c)] = static_cast<uint16_t>(std::lround(std::clamp(f, 0.0, 1.0) * 65535.0));
    }
  }
  m_pyramid.push_back(std::move(L0));
  while (m_pyramid.back().bins.size() > 1) {
    const PyramidLevel& child = m_pyramid.back();
    PyramidLevel up;
    up.width = child.width * 2;
    up.base = floorDiv(child.base, 2);
    const int64_t upLast = floorDiv(child.base + static_cast<int64_t>(child.bins.size()) - 1, 2);
    up.bins.assign(static_cast<size_t>(upLast - up.base + 1), FoldBin{{}, kNoRow, kNoRow});
    std::vector<std::array<uint32_t, kFoldCategories>> sum(up.bins.size(), std::array<uint32_t, kFoldCategories>{});
    for (size_t j = 0; j < child.bins.size(); ++j) {
      const auto k = static_cast<size_t>(floorDiv(child.base + static_cast<int64_t>(j), 2) - up.base);
      FoldBin& p = up.bins[k];
      const FoldBin& ch = child.bins[j];
      for (size_t c = 0; c < kFoldCategories; ++c) sum[k][c] += ch.share[c];
      p.dominant = betterRunning(p.dominant, ch.dominant);
      p.firstRow = std::min(p.firstRow, ch.firstRow);
    }
    for (size_t k = 0; k < up.bins.size(); ++k)
      for (size_t c = 0; c < kFoldCategories; ++c) up.bins[k].share[c] = static_cast<uint16_t>((sum[k][c] + 1) / 2);
    m_pyramid.push_back(std::move(up));
  }
}

std::optional<uint32_t> TimelineTrack::rowAt(int64_t t) const {
  uint32_t i = upperBound(0, static_cast<uint32_t>(size()), t);
  if (i == 0) return std::nullopt;
  --i;
  if (t < end(i) || (dur(i) == 0 && t == ts(i))) return i;
  return std::nullopt;
}

std::optional<uint32_t> TimelineTrack::rowNear(int64_t t, int64_t slack) const {
  if (auto r = rowAt(t); r && m_kind[*r] != TrackKind::Empty) return r;
  const auto n = static_cast<uint32_t>(size());
  uint32_t i = upperBound(0, n, t - slack);
  if (i > 0) --i;
  std::optional<uint32_t> best;
  int64_t bestDist = INT64_MAX;
  for (int guard = 0; i < n && ts(i) <= t + slack && guard < 512; ++i, ++guard) {
    if (m_kind[i] == TrackKind::Empty) continue;
    const int64_t d = t < ts(i) ? ts(i) - t : (t >= end(i) ? t - end(i) : 0);
    if (d <= slack && d < bestDist) {
      bestDist = d;
      best = i;
    }
  }
  return best;
}

size_t TimelineTrack::memoryBytes() const {
  size_t b = m_ownTs.memoryBytes() + m_ownDur.memoryBytes() + m_kind.capacity() + m_rowMap.capacity() * 4 +
             m_cum.capacity() * 8;
  for (const auto& l : m_maxWide) b += l.capacity() * 8;
  for (const auto& l : m_argRunning) b += l.capacity() * 4;
  for (const auto& l : m_pyramid) b += l.bins.capacity() * sizeof(FoldBin);
  return b;
}

TimelineIndex::TimelineIndex(std::shared_ptr<const TraceModel> model) : m_model(std::move(model)) {
  m_cpuTracks.reserve(static_cast<size_t>(m_model->cpuCount()));
  for (int cpu = 0; cpu < m_model->cpuCount(); ++cpu) m_cpuTracks.push_back(TimelineTrack::fromCpu(*m_model, cpu));
}

const TimelineTrack& TimelineIndex::cpuTrack(int cpu) const {
  if (cpu < 0 || static_cast<size_t>(cpu) >= m_cpuTracks.size()) return m_emptyTrack;
  return m_cpuTracks[static_cast<size_t>(cpu)];
}

std::shared_ptr<const TimelineTrack> TimelineIndex::threadTrack(Utid utid) const {
  {
    std::lock_guard lock(m_mutex);
    if (auto it = m_threadTracks.find(utid.value); it != m_threadTracks.end()) return it->second;
  }
  // Built outside the lock: two threads racing build the same track, one wins.
  auto track = std::make_shared<const TimelineTrack>(TimelineTrack::fromThread(*m_model, utid));
  std::lock_guard lock(m_mutex);
  return m_threadTracks.emplace(utid.value, std::move(track)).first->second;
}

const CountIntegral& TimelineIndex::waitingOn(int cpu) const {
  std::call_once(m_waitingOnce, [this] {
    const TraceModel& m = *m_model;
    std::vector<std::vector<std::pair<int64_t, int64_t>>> perCpu(static_cast<size_t>(m.cpuCount()));
    const auto& st = m.threadStates;
    for (size_t u = 0; u + 1 < st.rowsBegin.size(); ++u)
      for (uint32_t r = st.rowsBegin[u]; r < st.rowsBegin[u + 1]; ++r) {
        const int queue = st.cpu[r];
        if (classify(st.state[r]) != StateClass::Runnable || queue >= m.cpuCount()) continue;
        perCpu[static_cast<size_t>(queue)].emplace_back(st.ts[r], m.stateEnd(r));
      }
    m_waiting.reserve(perCpu.size());
    for (auto& intervals : perCpu) m_waiting.push_back(CountIntegral::fromIntervals(std::move(intervals)));
  });
  if (cpu < 0 || static_cast<size_t>(cpu) >= m_waiting.size()) return m_emptyCount;
  return m_waiting[static_cast<size_t>(cpu)];
}

size_t TimelineIndex::memoryBytes() const {
  size_t b = 0;
  for (const auto& t : m_cpuTracks) b += t.memoryBytes();
  std::lock_guard lock(m_mutex);
  for (const auto& [u, t] : m_threadTracks) b += t->memoryBytes();
  return b;
}

}  // namespace core
