#include "app/render/timeline_renderer.h"

#include <QPainter>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <tuple>

#include "app/render/colors.h"

namespace app::render {

namespace {
constexpr double kLabelMinPx = 24;  // narrower slices get no text (the style's 5 px floor, plus room for glyphs)
constexpr float kCookieStrip = 0.2f;

QRgb withAlpha(QRgb c, int alpha) { return qRgba(qRed(c), qGreen(c), qBlue(c), alpha); }

QString taskLabel(const core::TraceModel& m, core::Utid u) {
  return QString::fromUtf8(m.comm(u).data(), static_cast<qsizetype>(m.comm(u).size())) + QLatin1Char(' ') +
         QString::number(m.threads.tid[u.value]);
}

struct RowBuilder {
  const RunRenderData& run;
  const core::TimelineTrack* track;  // null for counter rows
  const Viewport& view;
  int64_t origin;  // absolute ts of relative 0
  RowDrawList& out;
  bool compact = false;  // rows under kCompactRowHeight: folds at full height

  float px(int64_t absTs) const { return static_cast<float>(view.xOf(absTs - origin)); }
  void add(float x0, float x1, float y0, float y1, QRgb color, PrimStyle style, float minW = 1.0f) {
    x0 = std::max(x0, -2.0f);
    x1 = std::min(x1, static_cast<float>(view.width) + 2.0f);
    if (x1 - x0 < minW) x1 = x0 + minW;
    out.prims.push_back(Prim{x0, x1, y0, y1, color, style});
  }
  QRgb taskRgb(core::Utid u) const {
    return u.value < run.taskColors.size() ? run.taskColors[u.value] : qRgb(0x88, 0x88, 0x88);
  }
};

void buildCpuRow(RowBuilder& b, int cpu, const HighlightSet* hl) {
  const core::TraceModel& m = b.run.model();
  const auto& slices = m.cpuSlices[static_cast<size_t>(cpu)];
  const int64_t t0 = b.origin + b.view.start;
  const int64_t t1 = b.origin + b.view.end();
  std::vector<core::DrawItem> items;
  b.track->query(t0, t1, b.view.nsPerPx, items);
  b.out.drawItems += items.size();
  const bool dim = hl && hl->active();
  const Palette& pal = palette();
  for (const core::DrawItem& it : items) {
    const float x0 = b.px(it.ts);
    const float x1 = b.px(it.end);
    switch (it.kind) {
      case core::DrawKind::Running: {
        const uint32_t row = b.track->sourceRow(it.firstIdx);
        const core::Utid u = slices.utid[row];
        QRgb c = b.taskRgb(u);
        if (dim) c = withAlpha(c, 70);
        b.add(x0, x1, 0.0f, 1.0f, c, PrimStyle::Solid);
        const uint32_t cookie = m.threads.cookie[u.value];
        if (cookie) b.add(x0, x1, 0.0f, kCookieStrip, cookieColor(cookie).rgba(), PrimStyle::Solid);
        if (x1 - x0 >= kLabelMinPx)
          b.out.labels.push_back(PrimLabel{x0, x1, textColorOn(QColor::fromRgba(c)).rgba(), taskLabel(m, u)});
        break;
      }
      case core::DrawKind::ForcedIdle: b.add(x0, x1, 0.0f, 1.0f, pal.forcedIdle.rgb(), PrimStyle::Hatched); break;
      case core::DrawKind::Loss: b.add(x0, x1, 0.0f, 1.0f, pal.loss.rgb(), PrimStyle::Loss, 2.0f); break;
      case core::DrawKind::Folded: {
        const float run = it.share[static_cast<size_t>(core::foldCategory(core::TrackKind::Running))];
        const float fi = it.share[static_cast<size_t>(core::foldCategory(core::TrackKind::ForcedIdle))];
        if (run > 0) {
          const float h = std::max(run, 0.12f);
          QRgb c = it.dominantIdx != core::TimelineTrack::kNoRow
                       ? b.taskRgb(slices.utid[b.track->sourceRow(it.dominantIdx)])
                       : qRgb(0x90, 0x90, 0x90);
          if (dim) c = withAlpha(c, 70);
          // Two to seven pixels cannot show a share as a height: show it as opacity.
          if (b.compact)
            b.add(x0, x1, 0.0f, 1.0f, withAlpha(c, static_cast<int>(std::lround(qAlpha(c) * (0.25 + 0.75 * h)))), PrimStyle::Solid);
          else
            b.add(x0, x1, 1.0f - h, 1.0f, c, PrimStyle::Solid);
        }
        if (fi > 0) {
          const float top = 1.0f - std::max(run, 0.0f);
          b.add(x0, x1, std::max(0.0f, top - std::max(fi, 0.12f)), top, pal.forcedIdle.rgb(), PrimStyle::Hatched);
        }
        break;
      }
      default: break;
    }
  }
  // Losses the tracer could not attribute to a CPU cover every CPU.
  const auto& dl = m.dataLoss;
  for (size_t i = 0; i < dl.size(); ++i)
    if (dl.cpu[i] < 0 && dl.tsEnd[i] >= t0 && dl.tsBegin[i] <= t1)
      b.add(b.px(dl.tsBegin[i]), b.px(dl.tsEnd[i]), 0.0f, 1.0f, pal.loss.rgb(), PrimStyle::Loss, 2.0f);

  if (dim && static_cast<size_t>(cpu) < hl->cpuTracks.size()) {
    const core::TimelineTrack& ht = hl->cpuTracks[static_cast<size_t>(cpu)];
    items.clear();
    ht.query(t0, t1, b.view.nsPerPx, items);
    for (const core::DrawItem& it : items) {
      const float x0 = b.px(it.ts);
      const float x1 = b.px(it.end);
      if (it.kind == core::DrawKind::Running) {
        const core::Utid u = slices.utid[ht.sourceRow(it.firstIdx)];
        b.add(x0, x1, 0.0f, 1.0f, b.taskRgb(u), PrimStyle::Highlight, 2.0f);
        if (x1 - x0 >= kLabelMinPx)
          b.out.labels.push_back(PrimLabel{x0, x1, textColorOn(QColor::fromRgb(b.taskRgb(u))).rgba(), taskLabel(m, u)});
      } else if (it.kind == core::DrawKind::Folded) {
        const float run = it.share[0];
        const QRgb c = it.dominantIdx != core::TimelineTrack::kNoRow
                           ? b.taskRgb(slices.utid[ht.sourceRow(it.dominantIdx)])
                           : pal.highlight.rgb();
        b.add(x0, x1, 1.0f - std::max(run, 0.25f), 1.0f, c, PrimStyle::Highlight, 2.0f);
      }
    }
  }
}

// The lane of a user-space slice on its task row: sync slices by depth, async
// ones from row.asyncLane; the deepest go in the last lane.
int userLaneOf(const TimelineRow& row, const core::UserSliceTable& us, uint32_t r) {
  const bool async = us.kind[r] == core::UserSliceKind::Async;
  return std::min(row.userLanes - 1, (async ? row.asyncLane : 0) + us.depth[r]);
}

// The first of a task's user-space slice rows that may still run at `t`.
uint32_t firstUserSliceReaching(const RunRenderData& run, const TimelineRow& row, int64_t t) {
  const core::UserSliceTable& us = run.model().userSlices;
  const auto [rb, re] = us.rowsOf(row.utid);
  const int64_t reach = row.utid.value < run.userSliceMaxDur.size() ? run.userSliceMaxDur[row.utid.value] : 0;
  return static_cast<uint32_t>(std::lower_bound(us.ts.begin() + rb, us.ts.begin() + re, t - reach) - us.ts.begin());
}

// The user-space slices of a task in lanes from `top` (a fraction of the row)
// down. Slices narrower than a pixel merge with the previous one of their
// lane; names go on the wide ones.
void buildUserSlices(RowBuilder& b, const TimelineRow& row, float top) {
  const core::TraceModel& m = b.run.model();
  const core::UserSliceTable& us = m.userSlices;
  const auto [rb, re] = us.rowsOf(row.utid);
  if (rb == re || row.userLanes == 0) return;
  const int64_t t0 = b.origin + b.view.start;
  const int64_t t1 = b.origin + b.view.end();
  const float lane = (1.0f - top) / static_cast<float>(row.userLanes);
  std::vector<int> lastPrim(static_cast<size_t>(row.userLanes), -1);
  for (uint32_t r = firstUserSliceReaching(b.run, row, t0); r < re && us.ts[r] < t1; ++r) {
    if (us.ts[r] + us.dur[r] < t0) continue;
    const bool async = us.kind[r] == core::UserSliceKind::Async;
    const int l = userLaneOf(row, us, r);
    const float y0 = top + lane * static_cast<float>(l);
    const float y1 = y0 + lane * 0.9f;
    const float x0 = b.px(us.ts[r]);
    const float x1 = b.px(us.ts[r] + us.dur[r]);
    if (us.kind[r] == core::UserSliceKind::Instant) {
      b.add(x0 - 1.0f, x0 + 1.0f, top, 1.0f, qRgb(0x30, 0x30, 0x30), PrimStyle::Solid, 2.0f);
      continue;
    }
    int& last = lastPrim[static_cast<size_t>(l)];
    if (last >= 0 && x1 - x0 < 1.0f && x0 <= b.out.prims[static_cast<size_t>(last)].x1 + 1.0f) {
      b.out.prims[static_cast<size_t>(last)].x1 = std::max(b.out.prims[static_cast<size_t>(last)].x1, x1);
      continue;
    }
    const std::string_view name = m.strings.get(us.name[r]);
    const QRgb c = taskColor(name, 0).rgb();
    b.add(x0, x1, y0, y1, c, async ? PrimStyle::Frame : PrimStyle::Solid);
    last = static_cast<int>(b.out.prims.size()) - 1;
    if (x1 - x0 >= kLabelMinPx)
      b.out.labels.push_back(PrimLabel{x0, x1, textColorOn(QColor::fromRgb(c)).rgba(),
                                       QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())), y0, y1});
  }
}

void buildTaskRow(RowBuilder& b, const TimelineRow& row) {
  const int64_t t0 = b.origin + b.view.start;
  const int64_t t1 = b.origin + b.view.end();
  std::vector<core::DrawItem> items;
  b.track->query(t0, t1, b.view.nsPerPx, items);
  b.out.drawItems += items.size();
  const size_t stateBegin = b.out.prims.size();
  using core::TrackKind;
  auto full = [&](TrackKind k, float x0, float x1) {
    if (k == TrackKind::Sleeping)
      b.add(x0, x1, 0.38f, 0.62f, stateColor(k).rgb(), PrimStyle::Solid);
    else
      b.add(x0, x1, 0.0f, 1.0f, stateColor(k).rgb(), PrimStyle::Solid);
  };
  for (const core::DrawItem& it : items) {
    const float x0 = b.px(it.ts);
    const float x1 = b.px(it.end);
    switch (it.kind) {
      case core::DrawKind::Running: full(TrackKind::Running, x0, x1); break;
      case core::DrawKind::Runnable: full(TrackKind::Runnable, x0, x1); break;
      case core::DrawKind::Sleeping: full(TrackKind::Sleeping, x0, x1); break;
      case core::DrawKind::Blocked: full(TrackKind::Blocked, x0, x1); break;
      case core::DrawKind::Loss: b.add(x0, x1, 0.0f, 1.0f, palette().loss.rgb(), PrimStyle::Loss, 2.0f); break;
      case core::DrawKind::Folded: {
        // Stacked shares from the bottom: running, runnable, blocked, sleeping.
        float y = 1.0f;
        for (TrackKind k : {TrackKind::Running, TrackKind::Runnable, TrackKind::Blocked, TrackKind::Sleeping}) {
          const float s = it.share[static_cast<size_t>(core::foldCategory(k))];
          if (s <= 0.005f) continue;
          b.add(x0, x1, std::max(0.0f, y - s), y, stateColor(k).rgb(), PrimStyle::Solid);
          y -= s;
        }
        break;
      }
      default: break;
    }
    if (it.kind == core::DrawKind::Running && x1 - x0 >= kLabelMinPx) {
      const uint32_t stateRow = b.track->sourceRow(it.firstIdx);
      b.out.labels.push_back(PrimLabel{x0, x1, qRgb(0xff, 0xff, 0xff),
                                       QStringLiteral("CPU ") + QString::number(b.run.model().threadStates.cpu[stateRow])});
    }
  }
  if (row.userLanes == 0) return;
  // The state bar keeps the row's top; user-space slices take the lanes below.
  const float stateShare = userLanesTop(row);
  for (size_t i = stateBegin; i < b.out.prims.size(); ++i) b.out.prims[i].y0 *= stateShare, b.out.prims[i].y1 *= stateShare;
  for (PrimLabel& l : b.out.labels) l.y1 = stateShare;
  buildUserSlices(b, row, stateShare);
}

// Calls step(x0, x1, lo, hi) over a counter track's samples in the view: a
// sample holds until the next (the last until the trace ends); samples that
// fall within one pixel come as one call with their values' range, and so do
// repeats of one value (devlib's start frequency, then the same from the kernel).
template <typename Step>
void forEachStep(const RowBuilder& b, size_t track, Step&& step) {
  const core::TraceModel& m = b.run.model();
  const core::CounterTable& ct = m.counters;
  const auto [rb, re] = ct.rowsOf(track);
  const int64_t t0 = b.origin + b.view.start;
  const int64_t t1 = b.origin + b.view.end();
  auto first = std::upper_bound(ct.ts.begin() + rb, ct.ts.begin() + re, t0) - ct.ts.begin();
  if (first > rb) --first;
  bool pending = false;
  float px0 = 0, px1 = 0;
  double lo = 0, hi = 0;
  for (auto r = static_cast<uint32_t>(first); r < re && ct.ts[r] < t1; ++r) {
    const int64_t until = r + 1 < re ? ct.ts[r + 1] : std::max(m.lastTs, ct.ts[r]);
    if (until <= t0) continue;
    const float x0 = b.px(std::max(ct.ts[r], t0));
    const float x1 = b.px(std::min(until, t1));
    const double v = ct.value[r];
    if (pending && (x1 - px0 < 1.0f || (v == lo && v == hi))) {
      px1 = std::max(px1, x1);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      continue;
    }
    if (pending) step(px0, px1, lo, hi);
    pending = true;
    px0 = x0, px1 = x1, lo = hi = v;
  }
  if (pending) step(px0, px1, lo, hi);
}

double normalised(const RunRenderData& run, size_t track, double v) {
  if (track >= run.counterRange.size()) return 0;
  const auto [lo, hi] = run.counterRange[track];
  return hi > lo ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : 1.0;
}

// Frequency: the bar's height and hue (blue slow, red fast) scaled to the CPU's own range.
void buildFrequencyRow(RowBuilder& b, size_t track) {
  forEachStep(b, track, [&](float x0, float x1, double, double hi) {
    const double f = normalised(b.run, track, hi);
    const QColor c = QColor::fromHsvF(0.66 * (1.0 - f), 0.7, 0.9);
    b.add(x0, x1, static_cast<float>(1.0 - (0.3 + 0.7 * f)), 1.0f, c.rgb(), PrimStyle::Solid);
    if (x1 - x0 >= kLabelMinPx * 2)
      b.out.labels.push_back(PrimLabel{x0, x1, qRgb(0x10, 0x10, 0x10), QStringLiteral("%1 MHz").arg(std::llround(hi / 1000))});
  });
}

// Idle state: nothing while the CPU runs, greys darker with the state's depth.
void buildIdleRow(RowBuilder& b, size_t track) {
  const double deepest = track < b.run.counterRange.size() ? std::max(0.0, b.run.counterRange[track].second) : 0;
  forEachStep(b, track, [&](float x0, float x1, double lo, double hi) {
    if (hi < 0) {
      b.add(x0, x1, 0.8f, 1.0f, qRgb(0x4c, 0xaf, 0x50), PrimStyle::Solid);  // left idle: running
      return;
    }
    const int grey = 200 - static_cast<int>(140.0 * (hi + 1) / (deepest + 1));
    b.add(x0, x1, lo < 0 ? 0.3f : 0.0f, 1.0f, qRgb(grey, grey, grey + 10), PrimStyle::Solid);
    if (x1 - x0 >= kLabelMinPx)
      b.out.labels.push_back(PrimLabel{x0, x1, textColorOn(QColor(grey, grey, grey + 10)).rgba(),
                                       QStringLiteral("C%1").arg(std::llround(hi))});
  });
}

// Any other counter: a step line scaled to the track's range.
void buildCounterRow(RowBuilder& b, size_t track) {
  const QRgb c = qRgb(0x1f, 0x5f, 0xa8);
  float lastY = -1;
  forEachStep(b, track, [&](float x0, float x1, double lo, double hi) {
    const auto y = [&](double v) { return static_cast<float>(0.9 - 0.8 * normalised(b.run, track, v)); };
    const float yHi = y(hi), yLo = y(lo);
    b.add(x0, x1, yHi - 0.06f, yLo + 0.06f, c, PrimStyle::Solid);
    if (lastY >= 0) b.add(x0, x0 + 1.0f, std::min(lastY, yHi), std::max(lastY, yLo), c, PrimStyle::Solid);
    lastY = y((lo + hi) / 2);
  });
}

bool isStrip(RowType t) { return t == RowType::CpuFrequency || t == RowType::CpuIdle; }

// PELT averages (util, load, runnable, util_est) are non-negative and their 0
// means "no demand", so their lines start at 0.
bool isPeltSignal(core::CounterKind kind) {
  switch (kind) {
    case core::CounterKind::Utilisation:
    case core::CounterKind::PeltLoad:
    case core::CounterKind::PeltRunnable:
    case core::CounterKind::UtilEstEnqueued:
    case core::CounterKind::UtilEstEwma:
    case core::CounterKind::UtilRt:
    case core::CounterKind::UtilDl:
    case core::CounterKind::UtilIrq: return true;
    default: return false;
  }
}

// Where a task's signal goes among its lines: the PELT averages in the order the
// sched_pelt_se / sched_load_se events print them, then util_est.
int signalOrder(core::CounterKind kind) {
  switch (kind) {
    case core::CounterKind::PeltLoad: return 0;
    case core::CounterKind::PeltRunnable: return 1;
    case core::CounterKind::Utilisation: return 2;
    case core::CounterKind::UtilEstEnqueued: return 3;
    case core::CounterKind::UtilEstEwma: return 4;
    default: return 5;
  }
}

constexpr double kSummaryBinPx = 2.0;
constexpr int kMinSummaryLevel = 8;  // of 64: two pixels of an 18 px summary row

// Bin edges over the viewport at kSummaryBinPx, aligned to absolute multiples
// of the bin width so that panning keeps the same bins.
std::vector<int64_t> binEdges(const Viewport& view, int64_t origin, int64_t* binNs) {
  *binNs = std::max<int64_t>(1, static_cast<int64_t>(std::llround(view.nsPerPx * kSummaryBinPx)));
  const int64_t t0 = origin + view.start;
  const int64_t t1 = origin + view.end();
  const int64_t first = (t0 >= 0 ? t0 / *binNs : (t0 - *binNs + 1) / *binNs) * *binNs;
  std::vector<int64_t> edges;
  for (int64_t e = first; e <= t1 + *binNs; e += *binNs) edges.push_back(e);
  return edges;
}

void buildSummaryRow(RowBuilder& b, const TimelineRow& row) {
  if (!row.members || row.members->empty()) return;
  int64_t binNs = 1;
  const std::vector<int64_t> edges = binEdges(b.view, b.origin, &binNs);
  if (edges.size() < 2) return;
  std::vector<double> sum(edges.size() - 1, 0.0);
  std::vector<int64_t> at(edges.size());
  auto accumulate = [&] {
    for (size_t i = 0; i + 1 < at.size(); ++i) sum[i] += static_cast<double>(at[i + 1] - at[i]);
  };
  const core::TimelineIndex& index = *b.run.index;
  const int running = core::foldCategory(core::TrackKind::Running);
  const int runnable = core::foldCategory(core::TrackKind::Runnable);
  for (uint32_t m : *row.members) {
    if (row.memberCpus) {
      if (row.summary == SummaryKind::Busy)
        index.cpuTrack(static_cast<int>(m)).categoryIntegral(running, edges, at);
      else
        index.waitingOn(static_cast<int>(m)).integral(edges, at);
    } else {
      index.threadTrack(core::Utid(m))->categoryIntegral(row.summary == SummaryKind::Busy ? running : runnable, edges, at);
    }
    accumulate();
  }
  b.out.drawItems += sum.size() * row.members->size();
  const double full = static_cast<double>(binNs) * static_cast<double>(row.members->size());
  // Height and colour are one fraction of the heat map's scale (so the legend
  // reads for both): the busy share; the tasks waiting per CPU; for threads,
  // the share of them runnable on the same square-root scale, full at all.
  // Quantised to 1/64, and at least kMinSummaryLevel when anything is there:
  // one task waiting among 128 CPUs must not round away.
  auto level = [&](double s) {
    if (s <= 0) return 0;
    const double f = s / full;
    const double t = row.summary == SummaryKind::Busy ? heatFraction(HeatMetric::Busy, f)
                     : row.memberCpus                 ? heatFraction(HeatMetric::Waiting, f)
                                                      : std::sqrt(std::clamp(f, 0.0, 1.0));
    return std::max(kMinSummaryLevel, static_cast<int>(std::lround(t * 64)));
  };
  // One bar per run of bins of equal height, from the bottom.
  size_t i = 0;
  while (i < sum.size()) {
    const int q = level(sum[i]);
    size_t j = i + 1;
    while (j < sum.size() && level(sum[j]) == q) ++j;
    if (q > 0) {
      const float h = static_cast<float>(q) / 64.0f;
      b.add(b.px(edges[i]), b.px(edges[j]), 1.0f - h, 1.0f, heatColor(h), PrimStyle::Solid, 0.0f);
    }
    i = j;
  }
}
}  // namespace

std::optional<std::optional<HeatMetric>> parseHeatMetric(const QString& text) {
  const QString word = text.trimmed().toLower();
  std::optional<std::optional<HeatMetric>> out;
  if (word == QLatin1String("busy")) out.emplace(HeatMetric::Busy);
  else if (word == QLatin1String("waiting")) out.emplace(HeatMetric::Waiting);
  else if (word == QLatin1String("off")) out.emplace(std::nullopt);
  return out;
}

double heatFraction(HeatMetric metric, double value) {
  if (metric == HeatMetric::Busy) return std::clamp(value, 0.0, 1.0);
  return std::sqrt(std::clamp(value / kHeatWaitingSaturation, 0.0, 1.0));
}

QRgb heatColor(double v) {
  // Zero keeps a grey of its own: "idle" must not look like "a little".
  if (!(v > 0)) return qRgb(0xf2, 0xf2, 0xf2);
  // YlOrRd from its 4th class: the paler ones (the old ramp's start) vanished
  // on the white rows, so one waiting task or a 10% busy CPU did not show.
  static const QRgb stops[] = {qRgb(0xfe, 0xb2, 0x4c), qRgb(0xfd, 0x8d, 0x3c), qRgb(0xfc, 0x4e, 0x2a),
                               qRgb(0xe3, 0x1a, 0x1c), qRgb(0xbd, 0x00, 0x26), qRgb(0x80, 0x00, 0x26)};
  constexpr int n = static_cast<int>(std::size(stops)) - 1;
  const double x = std::min(v, 1.0) * n;
  const int k = std::min(n - 1, static_cast<int>(x));
  const double f = x - k;
  auto mix = [&](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return qRgb(mix(qRed(stops[k]), qRed(stops[k + 1])), mix(qGreen(stops[k]), qGreen(stops[k + 1])),
              mix(qBlue(stops[k]), qBlue(stops[k + 1])));
}

QImage computeHeatmap(const RunRenderData& run, const std::vector<int>& cpus, int64_t from, int64_t to, QSize size,
                      HeatMetric metric) {
  const int columns = std::max(1, size.width());
  const int rows = static_cast<int>(cpus.size());
  if (rows == 0 || to <= from) return {};
  QImage img(columns, rows, QImage::Format_RGB32);
  std::vector<int64_t> edges(static_cast<size_t>(columns) + 1);
  const double binNs = static_cast<double>(to - from) / columns;
  for (int i = 0; i <= columns; ++i) edges[static_cast<size_t>(i)] = run.origin + from + static_cast<int64_t>(std::llround(i * binNs));
  std::vector<int64_t> at(edges.size());
  const int running = core::foldCategory(core::TrackKind::Running);
  for (int r = 0; r < rows; ++r) {
    const int cpu = cpus[static_cast<size_t>(r)];
    if (metric == HeatMetric::Busy)
      run.index->cpuTrack(cpu).categoryIntegral(running, edges, at);
    else
      run.index->waitingOn(cpu).integral(edges, at);
    auto* line = reinterpret_cast<QRgb*>(img.scanLine(r));
    for (int i = 0; i < columns; ++i) {
      const double width = static_cast<double>(edges[static_cast<size_t>(i) + 1] - edges[static_cast<size_t>(i)]);
      const double v = width > 0 ? static_cast<double>(at[static_cast<size_t>(i) + 1] - at[static_cast<size_t>(i)]) / width : 0;
      line[i] = heatColor(heatFraction(metric, v));
    }
  }
  if (size.height() > 0 && size.height() != rows) return img.scaled(columns, size.height(), Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
  return img;
}

std::vector<HeatTick> heatLegendTicks(HeatMetric metric) {
  if (metric == HeatMetric::Busy) return {{0.0, QStringLiteral("0%")}, {0.5, QStringLiteral("50%")}, {1.0, QStringLiteral("100%")}};
  return {{heatFraction(metric, 1), QStringLiteral("1")},
          {heatFraction(metric, 2), QStringLiteral("2")},
          {1.0, QStringLiteral("\u2265%1").arg(kHeatWaitingSaturation)}};
}

namespace {
constexpr int kLegendBarHeight = 10;
constexpr int kLegendLabelHeight = 14;
constexpr int kLegendZeroWidth = 10;
// The label cell less the gutter's margins.
QRect legendInner(const QRect& cell) { return cell.adjusted(6, 4, -10, -2); }
}  // namespace

QRect heatLegendBar(const QRect& cell) {
  const QRect inner = legendInner(cell);
  const int top = inner.bottom() + 1 - kLegendLabelHeight - 3 - kLegendBarHeight;
  const int left = inner.left() + kLegendZeroWidth + 4;
  return QRect(left, top, std::max(1, inner.right() + 1 - left), kLegendBarHeight);
}

namespace {
void paintHeatLabel(QPainter& p, const QRect& cell, HeatMetric metric) {
  const Palette& pal = palette();
  p.fillRect(cell, pal.gutter);
  const QRect bar = heatLegendBar(cell);
  const QRect inner = legendInner(cell);
  p.setPen(pal.gutterText);
  p.drawText(QRect(inner.left(), inner.top(), inner.width(), bar.top() - 4 - inner.top()),
             Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap,
             metric == HeatMetric::Busy ? QStringLiteral("Overview: busy share per CPU (rows) over the whole trace")
                                        : QStringLiteral("Overview: runnable tasks waiting per CPU (rows) over the "
                                                         "whole trace, \u221a scale"));
  // The bar as a one-line image: exact colours on screen, one smooth object in a PDF.
  QImage ramp(bar.width(), 1, QImage::Format_RGB32);
  for (int x = 0; x < bar.width(); ++x)
    ramp.setPixel(x, 0, heatColor((x + 0.5) / bar.width()));  // column centres: 0 has the swatch
  p.drawImage(bar, ramp);
  const QRect zero(inner.left(), bar.top(), kLegendZeroWidth, bar.height());
  p.fillRect(zero, QColor::fromRgb(heatColor(0)));
  p.setPen(pal.gutterSubText);
  p.setBrush(Qt::NoBrush);
  p.drawRect(zero.adjusted(0, 0, -1, -1));
  QFont small = p.font();
  if (small.pixelSize() > 0) small.setPixelSize(std::max(8, small.pixelSize() * 9 / 10));
  else small.setPointSizeF(std::max(6.5, small.pointSizeF() * 0.85));
  p.setFont(small);
  const QFontMetrics fm(small);
  const int labelTop = bar.bottom() + 4;
  auto label = [&](int x, const QString& text) {
    const int w = fm.horizontalAdvance(text) + 2;
    const int left = std::clamp(x - w / 2, cell.left() + 1, cell.right() - w);
    p.drawText(QRect(left, labelTop, w, kLegendLabelHeight), Qt::AlignHCenter | Qt::AlignTop, text);
  };
  label(zero.center().x(), QStringLiteral("0"));
  for (const HeatTick& t : heatLegendTicks(metric)) {
    const int x = std::min(bar.right(), bar.left() + static_cast<int>(std::lround(t.fraction * bar.width())));
    p.drawLine(x, bar.bottom() + 1, x, bar.bottom() + 3);
    if (t.fraction > 0) label(x, t.label);
  }
}
}  // namespace

void paintHeatOverview(QPainter& p, const QRect& rect, int gutterWidth, HeatMetric metric, const QImage& image,
                       double x0, double x1) {
  p.save();
  paintHeatLabel(p, QRect(rect.left(), rect.top(), gutterWidth, rect.height()), metric);
  const QRect heat(rect.left() + gutterWidth, rect.top(), std::max(1, rect.width() - gutterWidth), rect.height());
  if (image.isNull()) {
    p.fillRect(heat, palette().background);
  } else {
    p.drawImage(heat, image);
    const double left = heat.left() + std::max(0.0, x0) * heat.width();
    const double right = heat.left() + std::min(1.0, x1) * heat.width();
    p.setPen(QPen(QColor(0x10, 0x30, 0x70), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(left, heat.top() + 1, std::max(2.0, right - left), heat.height() - 2));
  }
  p.restore();
}

std::shared_ptr<RunRenderData> RunRenderData::create(std::shared_ptr<const core::TraceModel> model,
                                                     std::optional<int64_t> origin) {
  auto data = std::make_shared<RunRenderData>();
  data->origin = origin.value_or(model->firstTs);
  data->index = std::make_shared<core::TimelineIndex>(std::move(model));
  const core::TraceModel& m = data->model();
  data->taskColors.resize(m.threadCount());
  for (size_t u = 0; u < m.threadCount(); ++u)
    data->taskColors[u] = taskColor(m.comm(core::Utid(static_cast<uint32_t>(u))), m.threads.tid[u]).rgb();
  const core::UserSliceTable& us = m.userSlices;
  if (us.size()) {
    data->userSliceMaxDur.assign(m.threadCount(), 0);
    for (size_t r = 0; r < us.size(); ++r)
      data->userSliceMaxDur[us.utid[r].value] = std::max(data->userSliceMaxDur[us.utid[r].value], us.dur[r]);
  }
  for (size_t k = 0; k < m.counters.tracks.size(); ++k) data->counterRange.push_back(counterScale(m, k));
  return data;
}

std::pair<double, double> counterScale(const core::TraceModel& model, size_t track) {
  const core::CounterTable& ct = model.counters;
  const auto [b, e] = ct.rowsOf(track);
  if (b == e) return {0.0, 0.0};
  const auto [lo, hi] = std::minmax_element(ct.value.begin() + b, ct.value.begin() + e);
  // A signal that stays 0 is drawn at the bottom: [0, 1] rather than the empty range a flat line takes as its top.
  if (isPeltSignal(ct.tracks[track].kind)) return {0.0, std::max(*hi, 1.0)};
  return {*lo, *hi};
}

std::vector<TimelineRow> cpuRows(const core::TraceModel& model, int rowHeight) {
  std::vector<TimelineRow> rows;
  const core::Topology& topo = model.topology;
  const bool smt = topo.hasSmt();
  std::vector<char> placed(static_cast<size_t>(std::max(model.cpuCount(), topo.cpuLimit())), 0);
  for (size_t c = 0; c < topo.cores().size(); ++c) {
    const auto& cpus = topo.cores()[c];
    for (size_t k = 0; k < cpus.size(); ++k) {
      TimelineRow r;
      r.type = RowType::Cpu;
      r.cpu = cpus[k];
      r.core = static_cast<int>(c);
      r.thread = static_cast<int>(k);
      r.smt = smt;
      r.firstOfCore = k == 0;
      r.label = QStringLiteral("CPU %1").arg(r.cpu);
      if (smt) r.sublabel = QStringLiteral("core %1 \u00b7 thread %2").arg(c).arg(k);
      r.height = rowHeight;
      rows.push_back(std::move(r));
      if (static_cast<size_t>(cpus[k]) < placed.size()) placed[static_cast<size_t>(cpus[k])] = 1;
    }
  }
  // CPUs with slices that the topology does not name (should not happen after finalize).
  for (int cpu = 0; cpu < model.cpuCount(); ++cpu) {
    if (placed[static_cast<size_t>(cpu)] || model.cpuSlices[static_cast<size_t>(cpu)].size() == 0) continue;
    TimelineRow r;
    r.cpu = cpu;
    r.core = static_cast<int>(rows.size());
    r.label = QStringLiteral("CPU %1").arg(cpu);
    r.height = rowHeight;
    rows.push_back(std::move(r));
  }
  return rows;
}

TimelineRow taskRow(const core::TraceModel& model, core::Utid utid, int rowHeight) {
  TimelineRow r;
  r.type = RowType::Task;
  r.utid = utid;
  const auto comm = model.comm(utid);
  r.label = QString::fromUtf8(comm.data(), static_cast<qsizetype>(comm.size()));
  r.sublabel = QStringLiteral("tid %1").arg(model.threads.tid[utid.value]);
  int syncLanes = 0, asyncLanes = 0;
  const core::UserSliceTable& us = model.userSlices;
  const auto [b, e] = us.rowsOf(utid);
  for (uint32_t i = b; i < e; ++i) {
    int& lanes = us.kind[i] == core::UserSliceKind::Async ? asyncLanes : syncLanes;
    lanes = std::max(lanes, us.depth[i] + 1);
  }
  r.asyncLane = std::min(syncLanes, kMaxUserLanes);
  r.userLanes = std::min(syncLanes + asyncLanes, kMaxUserLanes);
  r.height = rowHeight + r.userLanes * kUserLaneHeight;
  return r;
}

QString counterName(const core::TraceModel& model, size_t track) {
  const core::CounterTrack& t = model.counters.tracks[track];
  if (t.kind == core::CounterKind::User) {
    const auto name = model.strings.get(t.name);
    return QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
  }
  const auto kind = core::toString(t.kind);
  return QString::fromUtf8(kind.data(), static_cast<qsizetype>(kind.size()));
}

float userLanesTop(const TimelineRow& row) {
  return row.height > 0 ? static_cast<float>(row.height - row.userLanes * kUserLaneHeight) / static_cast<float>(row.height)
                        : 1.0f;
}

std::optional<uint32_t> userSliceAt(const RunRenderData& run, const TimelineRow& row, double yFraction, int64_t absTs,
                                    int64_t slackNs) {
  if (row.type != RowType::Task || row.userLanes == 0) return std::nullopt;
  const double top = userLanesTop(row);
  if (yFraction < top || yFraction >= 1.0) return std::nullopt;
  const int lane = std::min(row.userLanes - 1, static_cast<int>((yFraction - top) / ((1.0 - top) / row.userLanes)));
  const core::UserSliceTable& us = run.model().userSlices;
  const auto [rb, re] = us.rowsOf(row.utid);
  std::optional<uint32_t> hit;
  // The latest-begun slice of the lane under the point: the innermost where they nest.
  for (uint32_t r = firstUserSliceReaching(run, row, absTs - slackNs); r < re && us.ts[r] <= absTs + slackNs; ++r) {
    const bool instant = us.kind[r] == core::UserSliceKind::Instant;
    if (us.ts[r] + us.dur[r] + slackNs < absTs || (!instant && userLaneOf(row, us, r) != lane)) continue;
    hit = r;
  }
  return hit;
}

std::vector<TimelineRow> withStrips(std::vector<TimelineRow> rows, const core::TraceModel& model,
                                    const StripOptions& options) {
  if (!options.any()) return rows;
  const core::CounterTable& ct = model.counters;
  std::vector<TimelineRow> out;
  const auto strip = [&](RowType type, int cpu, size_t track, QString label) {
    TimelineRow s;
    s.type = type;
    s.cpu = cpu;
    s.counter = static_cast<int>(track);
    s.label = std::move(label);
    s.height = kStripHeight;
    return s;
  };
  // Per utid, the tracks of its own signals, in signalOrder.
  std::map<uint32_t, std::vector<size_t>> signalsOf;
  if (options.taskSignals) {
    for (size_t k = 0; k < ct.tracks.size(); ++k)
      if (ct.tracks[k].scope == core::CounterScope::Task) signalsOf[static_cast<uint32_t>(ct.tracks[k].index)].push_back(k);
    for (auto& [utid, tracks] : signalsOf)
      std::stable_sort(tracks.begin(), tracks.end(), [&](size_t a, size_t b) {
        return signalOrder(ct.tracks[a].kind) < signalOrder(ct.tracks[b].kind);
      });
  }
  size_t afterLastCpu = 0;
  for (TimelineRow& r : rows) {
    const bool cpu = r.type == RowType::Cpu;
    const int c = r.cpu;
    const core::Utid utid = r.type == RowType::Task ? r.utid : core::Utid();
    const int depth = r.depth;
    out.push_back(std::move(r));
    if (utid.isValid()) {
      const auto it = signalsOf.find(utid.value);
      if (it == signalsOf.end()) continue;
      for (size_t k : it->second) {
        TimelineRow line = strip(RowType::Counter, -1, k, QStringLiteral("  ") + counterName(model, k));
        line.utid = utid;
        line.depth = depth;
        // The line spans 0 to the task's own peak: a quiet task's shape stays visible, its size is written.
        line.sublabel = QStringLiteral("max %1").arg(counterScale(model, k).second);
        line.height = kStripHeight + 4;
        out.push_back(std::move(line));
      }
      continue;
    }
    if (!cpu) continue;
    if (const size_t k = ct.find(core::CounterKind::CpuFrequencyKhz, c); options.frequency && k != SIZE_MAX)
      out.push_back(strip(RowType::CpuFrequency, c, k, QStringLiteral("  freq")));
    if (const size_t k = ct.find(core::CounterKind::CpuIdleState, c); options.idle && k != SIZE_MAX)
      out.push_back(strip(RowType::CpuIdle, c, k, QStringLiteral("  idle")));
    afterLastCpu = out.size();
  }
  if (options.counters) {
    // Per-task signals belong to their tasks: they are not shown as rows of their own.
    std::vector<TimelineRow> lines;
    for (size_t k = 0; k < ct.tracks.size(); ++k) {
      const core::CounterTrack& t = ct.tracks[k];
      if (t.scope == core::CounterScope::Task || t.kind == core::CounterKind::CpuFrequencyKhz ||
          t.kind == core::CounterKind::CpuIdleState)
        continue;
      TimelineRow line = strip(RowType::Counter, t.scope == core::CounterScope::Cpu ? t.index : -1, k,
                               counterName(model, k));
      line.sublabel = t.scope == core::CounterScope::Cpu ? QStringLiteral("CPU %1").arg(t.index)
                                                         : QStringLiteral("tgid %1").arg(t.index);
      line.height = kStripHeight + 4;
      lines.push_back(std::move(line));
    }
    // CPU by CPU, then the processes' counters: tracks come in the order the trace first sampled them.
    std::stable_sort(lines.begin(), lines.end(), [&](const TimelineRow& a, const TimelineRow& b) {
      const core::CounterTrack& x = ct.tracks[static_cast<size_t>(a.counter)];
      const core::CounterTrack& y = ct.tracks[static_cast<size_t>(b.counter)];
      return std::tie(x.scope, x.index, x.kind) < std::tie(y.scope, y.index, y.kind);
    });
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(afterLastCpu), lines.begin(), lines.end());
  }
  return out;
}

int rowsHeight(const std::vector<TimelineRow>& rows) {
  int h = 0;
  for (const auto& r : rows) h += r.height;
  return h;
}

std::shared_ptr<HighlightSet> HighlightSet::build(const core::TraceModel& model, const QString& text) {
  auto hl = std::make_shared<HighlightSet>();
  const QString needle = text.trimmed();
  if (needle.isEmpty()) return hl;
  bool isNumber = false;
  const int tid = needle.toInt(&isNumber);
  hl->utidMatch.assign(model.threadCount(), 0);
  bool any = false;
  for (size_t u = 1; u < model.threadCount(); ++u) {
    const auto comm = model.comm(core::Utid(static_cast<uint32_t>(u)));
    const bool match = (isNumber && model.threads.tid[u] == tid) ||
                       QString::fromUtf8(comm.data(), static_cast<qsizetype>(comm.size())).contains(needle, Qt::CaseInsensitive);
    hl->utidMatch[u] = match ? 1 : 0;
    any = any || match;
  }
  if (!any) {
    // Keep active() true so the panes dim everything: "no match" is visible.
    hl->cpuTracks.resize(static_cast<size_t>(model.cpuCount()));
    return hl;
  }
  for (int cpu = 0; cpu < model.cpuCount(); ++cpu)
    hl->cpuTracks.push_back(core::TimelineTrack::fromCpuFiltered(model, cpu, [&](core::Utid u) { return hl->matches(u); }));
  return hl;
}

size_t PaneDrawList::drawItems() const {
  size_t n = 0;
  for (const auto& r : rows) n += r.drawItems;
  return n;
}

RowDrawList computeRow(const RunRenderData& run, const TimelineRow& row, const Viewport& view,
                       const HighlightSet* highlight) {
  RowDrawList out;
  const core::TraceModel& m = run.model();
  if (view.width <= 0) return out;
  const bool compact = row.height < kCompactRowHeight;
  switch (row.type) {
    case RowType::Cpu: {
      if (row.cpu < 0 || row.cpu >= m.cpuCount()) return out;
      RowBuilder b{run, &run.index->cpuTrack(row.cpu), view, run.origin, out, compact};
      buildCpuRow(b, row.cpu, highlight);
      break;
    }
    case RowType::Task: {
      const auto track = run.index->threadTrack(row.utid);
      RowBuilder b{run, track.get(), view, run.origin, out, compact};
      buildTaskRow(b, row);
      break;
    }
    case RowType::CpuFrequency:
    case RowType::CpuIdle:
    case RowType::Counter: {
      if (row.counter < 0 || static_cast<size_t>(row.counter) >= m.counters.tracks.size()) return out;
      RowBuilder b{run, nullptr, view, run.origin, out, compact};
      const auto track = static_cast<size_t>(row.counter);
      if (row.type == RowType::CpuFrequency) buildFrequencyRow(b, track);
      else if (row.type == RowType::CpuIdle) buildIdleRow(b, track);
      else buildCounterRow(b, track);
      break;
    }
    case RowType::Summary: {
      RowBuilder b{run, &run.index->cpuTrack(-1), view, run.origin, out, compact};
      buildSummaryRow(b, row);
      break;
    }
    case RowType::Group: break;
  }
  if (row.height < kLabelMinRowHeight) out.labels.clear();
  return out;
}

PaneDrawList computePane(const RunRenderData& run, const std::vector<TimelineRow>& rows, const Viewport& view,
                         const HighlightSet* highlight) {
  PaneDrawList list;
  list.view = view;
  list.dimmed = highlight && highlight->active();
  list.rows.reserve(rows.size());
  for (const auto& r : rows) list.rows.push_back(computeRow(run, r, view, highlight));
  return list;
}

namespace {
// Row i's top, and whether it meets the exposed rectangle (all rows when it is empty).
bool exposedRow(const QRect& exposed, int top, int height) {
  return exposed.isNull() || (top + height > exposed.top() && top <= exposed.bottom());
}
}  // namespace

void paintRowBackgrounds(QPainter& p, const QRect& area, const std::vector<TimelineRow>& rows, const QRect& exposed) {
  const Palette& pal = palette();
  int y = area.top();
  int coreParity = 0;
  const TimelineRow* previous = nullptr;  // the last row that is not a CPU's strip: strips share their CPU's band
  for (size_t i = 0; i < rows.size(); ++i) {
    const TimelineRow& r = rows[i];
    if (!isStrip(r.type)) {
      if (previous && (r.type != previous->type || r.firstOfCore)) coreParity ^= 1;
      previous = &r;
    }
    const int top = y;
    y += r.height;
    if (!exposedRow(exposed, top, r.height)) continue;
    QColor back = coreParity ? pal.coreBandA : pal.coreBandB;
    if (r.type == RowType::Task || r.type == RowType::Counter || r.type == RowType::Summary) back = pal.background;
    if (r.type == RowType::Group) back = pal.groupHeader;
    p.fillRect(QRect(area.left(), top, area.width(), r.height), back);
    if (r.height < kCompactRowHeight && r.type == RowType::Cpu) continue;  // no room for separators
    const bool coreEdge = i + 1 < rows.size() && rows[i + 1].firstOfCore && rows[i + 1].type == RowType::Cpu;
    p.setPen(coreEdge && r.smt ? pal.coreSeparator : pal.separator);
    p.drawLine(area.left(), top + r.height - 1, area.right(), top + r.height - 1);
  }
}

void paintPane(QPainter& p, const QRect& area, const std::vector<TimelineRow>& rows, const PaneDrawList& list,
               const Viewport& view, const QRect& exposed) {
  p.save();
  p.setClipRect(area);
  p.setRenderHint(QPainter::Antialiasing, false);
  const Palette& pal = palette();
  // Map the list's pixels to the current viewport.
  const double scale = list.view.nsPerPx / view.nsPerPx;
  const double shift = static_cast<double>(list.view.start - view.start) / view.nsPerPx;
  auto mapX = [&](float x) { return area.left() + shift + static_cast<double>(x) * scale; };

  QBrush hatch(pal.forcedIdle, Qt::BDiagPattern);
  QBrush lossBrush(pal.loss, Qt::DiagCrossPattern);
  const QFontMetrics fm(p.font());
  int y = area.top();
  const size_t n = std::min(rows.size(), list.rows.size());
  for (size_t i = 0; i < n; ++i) {
    const int air = rows[i].height < kCompactRowHeight ? 0 : 1;  // above and below, where there is room
    const int h = rows[i].height - 2 * air;
    const int top = y + air;
    y += rows[i].height;
    if (y < area.top() || top > area.bottom() || !exposedRow(exposed, top - air, rows[i].height)) continue;
    for (const Prim& pr : list.rows[i].prims) {
      const double x0 = mapX(pr.x0);
      double x1 = mapX(pr.x1);
      if (x1 < area.left() || x0 > area.right()) continue;
      if (x1 - x0 < 1.0) x1 = x0 + 1.0;
      const QRectF r(x0, top + static_cast<double>(pr.y0) * h, x1 - x0, static_cast<double>(pr.y1 - pr.y0) * h);
      switch (pr.style) {
        case PrimStyle::Solid: p.fillRect(r, QColor::fromRgba(pr.color)); break;
        case PrimStyle::Hatched:
          p.fillRect(r, pal.forcedIdleBack);
          p.fillRect(r, hatch);
          break;
        case PrimStyle::Loss:
          p.fillRect(r, pal.lossBack);
          p.fillRect(r, lossBrush);
          p.fillRect(QRectF(r.left(), r.top(), std::min(2.0, r.width()), r.height()), pal.loss);
          break;
        case PrimStyle::Highlight:
          p.fillRect(r, QColor::fromRgba(pr.color));
          p.fillRect(QRectF(r.left(), r.top(), r.width(), 2), pal.highlight);
          p.fillRect(QRectF(r.left(), r.bottom() - 2, r.width(), 2), pal.highlight);
          break;
        case PrimStyle::Frame:
          p.setPen(QPen(QColor::fromRgba(pr.color), 2));
          p.setBrush(Qt::NoBrush);
          p.drawRect(r);
          break;
      }
    }
    for (const PrimLabel& l : list.rows[i].labels) {
      const double x0 = std::max<double>(mapX(l.x0), area.left());
      const double x1 = std::min<double>(mapX(l.x1), area.right());
      if (x1 - x0 < kLabelMinPx) continue;
      const QString text = fm.elidedText(l.text, Qt::ElideRight, static_cast<int>(x1 - x0) - 6);
      if (text.size() < 2) continue;
      p.setPen(QColor::fromRgba(l.color));
      const double ly = top + static_cast<double>(l.y0) * h;
      p.drawText(QRectF(x0 + 3, ly, x1 - x0 - 6, static_cast<double>(l.y1 - l.y0) * h), Qt::AlignVCenter | Qt::AlignLeft,
                 text);
    }
  }
  p.restore();
}

namespace {
void paintGroupLabel(QPainter& p, const QRect& gutter, const QRect& cell, const TimelineRow& r, const QFont& f,
                     const QFont& small) {
  const Palette& pal = palette();
  if (r.type == RowType::Group) p.fillRect(QRect(gutter.left(), cell.top(), gutter.width(), r.height), pal.groupHeader);
  const bool head = r.type == RowType::Group || r.summary == SummaryKind::Busy;
  QFont font = head ? f : small;
  font.setBold(head);
  if (r.height < 16) font.setPointSizeF(std::max(6.0, small.pointSizeF()));
  // Headers over compact rows are as short as 9 px: a font that fits, not clipped glyphs.
  if (QFontMetrics(font).height() > r.height + 1) font.setPixelSize(std::max(8, r.height - 1));
  p.setFont(font);
  const QFontMetrics fm(font);
  p.setPen(head ? pal.gutterText : pal.gutterSubText);
  const QString mark = !head ? QStringLiteral("  ") : r.type == RowType::Group ? QStringLiteral("\u25be ") : QStringLiteral("\u25b8 ");
  const QString main = fm.elidedText(mark + r.label, Qt::ElideRight, cell.width());
  p.drawText(cell, Qt::AlignVCenter | Qt::AlignLeft, main);
  if (!r.sublabel.isEmpty()) {
    QFont sub = small;
    if (r.height < 16) sub.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.9));
    if (QFontMetrics(sub).height() > r.height + 1) sub.setPixelSize(std::max(7, r.height - 2));
    p.setFont(sub);
    p.setPen(pal.gutterSubText);
    const QRect rest = cell.adjusted(fm.horizontalAdvance(main) + 6, 0, 0, 0);
    p.drawText(rest, Qt::AlignVCenter | Qt::AlignLeft, QFontMetrics(sub).elidedText(r.sublabel, Qt::ElideRight, rest.width()));
  }
  p.setPen(pal.separator);
  p.drawLine(gutter.left(), cell.top() + r.height - 1, gutter.right(), cell.top() + r.height - 1);
}
}  // namespace

void paintGutter(QPainter& p, const QRect& gutter, const std::vector<TimelineRow>& rows, const QRect& exposed) {
  const Palette& pal = palette();
  p.save();
  p.fillRect(gutter, pal.gutter);
  QFont f = p.font();
  QFont small = f;
  small.setPointSizeF(std::max(6.5, f.pointSizeF() * 0.8));
  const QFontMetrics fm(f);
  const QFontMetrics sfm(small);
  int y = gutter.top();
  for (size_t i = 0; i < rows.size(); ++i) {
    const TimelineRow& r = rows[i];
    const int indent = 8 * r.depth;
    // A task's label stays beside its state bar, above its user-space lanes.
    const int labelHeight = r.type == RowType::Task ? r.height - r.userLanes * kUserLaneHeight : r.height;
    const QRect cell(gutter.left() + 6 + indent, y, gutter.width() - 10 - indent, labelHeight);
    if (!exposedRow(exposed, y, r.height)) {
      y += r.height;
      continue;
    }
    if (r.type == RowType::Group || r.type == RowType::Summary) {
      paintGroupLabel(p, gutter, cell, r, f, small);
      y += r.height;
      continue;
    }
    if (r.height < kLabelMinRowHeight) {  // the group headers carry the labels
      y += r.height;
      continue;
    }
    if (r.type == RowType::Cpu && r.smt && r.firstOfCore) {
      // A bracket that ties the siblings of one core together.
      int span = 0;
      for (size_t j = i; j < rows.size() && (j == i || !rows[j].firstOfCore) && rows[j].type == RowType::Cpu; ++j)
        span += rows[j].height;
      p.setPen(QPen(pal.coreSeparator, 2));
      p.drawLine(gutter.left() + 2, y + 3, gutter.left() + 2, y + span - 3);
    }
    const bool counterRow = isStrip(r.type) || r.type == RowType::Counter;
    p.setFont(counterRow ? small : f);
    p.setPen(r.type == RowType::Task ? QColor(0x1a, 0x4f, 0x8a) : counterRow ? pal.gutterSubText : pal.gutterText);
    const int labelW = std::min(cell.width() / 2 + 10, fm.horizontalAdvance(r.label) + 8);
    const QString main = fm.elidedText(r.label, Qt::ElideRight, r.sublabel.isEmpty() ? cell.width() : labelW);
    p.drawText(cell, Qt::AlignVCenter | Qt::AlignLeft, main);
    if (!r.sublabel.isEmpty()) {
      p.setFont(small);
      p.setPen(pal.gutterSubText);
      const QRect sub = cell.adjusted(fm.horizontalAdvance(main) + 6, 0, 0, 0);
      p.drawText(sub, Qt::AlignVCenter | Qt::AlignLeft, sfm.elidedText(r.sublabel, Qt::ElideRight, sub.width()));
    }
    p.setPen(pal.separator);
    p.drawLine(gutter.left(), y + r.height - 1, gutter.right(), y + r.height - 1);
    y += r.height;
  }
  p.setPen(pal.separator);
  p.drawLine(gutter.right(), gutter.top(), gutter.right(), gutter.bottom());
  p.restore();
}

}  // namespace app::render
