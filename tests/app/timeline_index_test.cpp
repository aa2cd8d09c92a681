// The level-of-detail index: its range queries agree with brute force, draw
// items stay bounded by pixels, folds report exact time shares, the far-zoom
// pyramid agrees with the rows, and synthetic SMT models show forced idle and
// lost data where they are.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>

#include "core/timeline_index.h"
#include "test_models.h"

namespace {

using core::DrawItem;
using core::DrawKind;
using core::TimelineTrack;
using core::TrackKind;

int64_t bruteCategory(const TimelineTrack& t, int c, uint32_t a, uint32_t b) {
  int64_t s = 0;
  for (uint32_t i = a; i < b; ++i)
    if (core::foldCategory(t.kind(i)) == c) s += t.dur(i);
  return s;
}

/// Time of category c inside [from, to), rows clipped.
int64_t bruteClipped(const TimelineTrack& t, int c, int64_t from, int64_t to) {
  int64_t s = 0;
  for (uint32_t i = 0; i < t.size(); ++i)
    if (core::foldCategory(t.kind(i)) == c) s += std::max<int64_t>(0, std::min(to, t.end(i)) - std::max(from, t.ts(i)));
  return s;
}

class DenseTrack : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { s_model = apptest::denseModel(40000, 1); }
  static void TearDownTestSuite() { s_model.reset(); }
  static std::shared_ptr<core::TraceModel> s_model;
};
std::shared_ptr<core::TraceModel> DenseTrack::s_model;

TEST_F(DenseTrack, RangeQueriesAgreeWithBruteForce) {
  const TimelineTrack t = TimelineTrack::fromCpu(*s_model, 0);
  ASSERT_GT(t.size(), 30000u);
  std::mt19937 rng(42);
  for (int k = 0; k < 300; ++k) {
    auto a = static_cast<uint32_t>(rng() % t.size());
    auto b = static_cast<uint32_t>(rng() % t.size());
    if (a > b) std::swap(a, b);
    if (k % 3 == 0) b = std::min<uint32_t>(static_cast<uint32_t>(t.size()), a + static_cast<uint32_t>(rng() % 40));
    const int64_t thr = std::vector<int64_t>{1, 1500, 2500, 2999, 100000}[static_cast<size_t>(k % 5)];
    uint32_t brute = b;
    for (uint32_t i = a; i < b; ++i)
      if (t.dur(i) >= thr) {
        brute = i;
        break;
      }
    ASSERT_EQ(t.findFirstWide(a, b, thr), brute) << "a=" << a << " b=" << b << " thr=" << thr;

    int64_t best = -1;
    for (uint32_t i = a; i < b; ++i)
      if (t.kind(i) == TrackKind::Running) best = std::max(best, t.dur(i));
    const uint32_t got = t.longestRunning(a, b);
    if (best < 0) {
      EXPECT_EQ(got, TimelineTrack::kNoRow);
    } else {
      ASSERT_NE(got, TimelineTrack::kNoRow);
      EXPECT_GE(got, a);
      EXPECT_LT(got, b);
      EXPECT_EQ(t.dur(got), best);
    }
    for (int c = 0; c < core::kFoldCategories; ++c) ASSERT_EQ(t.categoryTime(c, a, b), bruteCategory(t, c, a, b));
  }
}

TEST_F(DenseTrack, ItemsAreBoundedByPixelsAndAccountForAllRunningTime) {
  const TimelineTrack t = TimelineTrack::fromCpu(*s_model, 0);
  const int64_t t0 = t.ts(0);
  const int64_t t1 = t.end(static_cast<uint32_t>(t.size() - 1));
  const int run = core::foldCategory(TrackKind::Running);
  for (int width : {200, 1000, 1920}) {
    for (int64_t span : {t1 - t0, (t1 - t0) / 10, (t1 - t0) / 1000, int64_t{20000}}) {
      const int64_t from = t0 + (t1 - t0) / 3;
      const int64_t to = std::min(t1, from + span);
      const double nsPerPx = static_cast<double>(to - from) / width;
      const auto items = t.query(from, to, nsPerPx);
      // Folds are >= 1 px, singles >= 3 px: a few items per pixel at most.
      EXPECT_LE(items.size(), static_cast<size_t>(width) * 2 + 8) << "width " << width << " span " << span;
      // Running time of the items, clipped to the window, equals the truth within a few pixels' worth.
      double got = 0;
      for (const DrawItem& it : items) {
        const double clip = static_cast<double>(std::max<int64_t>(0, std::min(to, it.end) - std::max(from, it.ts)));
        if (it.kind == DrawKind::Running) got += clip;
        if (it.kind == DrawKind::Folded) got += clip * it.share[static_cast<size_t>(run)];
      }
      // In pyramid mode singles are drawn over bins that already count them: subtract the overlap.
      bool pyramid = false;
      for (size_t i = 1; i < items.size(); ++i) pyramid = pyramid || items[i].ts < items[i - 1].ts;
      if (pyramid) continue;
      const double truth = static_cast<double>(bruteClipped(t, run, from, to));
      EXPECT_NEAR(got, truth, 6 * nsPerPx + 1e-6 * truth) << "width " << width << " span " << span;
    }
  }
}

TEST_F(DenseTrack, PyramidBinsMatchTheRows) {
  const TimelineTrack t = TimelineTrack::fromCpu(*s_model, 0);
  const int64_t t0 = t.ts(0);
  const int64_t t1 = t.end(static_cast<uint32_t>(t.size() - 1));
  const double nsPerPx = static_cast<double>(t1 - t0) / 800;  // far out: the pyramid answers
  const auto items = t.query(t0, t1, nsPerPx);
  size_t folds = 0;
  const int run = core::foldCategory(TrackKind::Running);
  for (const DrawItem& it : items) {
    if (it.kind != DrawKind::Folded) continue;
    ++folds;
    const double width = static_cast<double>(it.end - it.ts);
    EXPECT_LE(width, 2 * nsPerPx + 1);
    EXPECT_GE(width, 0.5 * nsPerPx);
    const double truth = static_cast<double>(bruteClipped(t, run, it.ts, it.end)) / width;
    EXPECT_NEAR(it.share[static_cast<size_t>(run)], truth, 0.002);
    if (it.dominantIdx != TimelineTrack::kNoRow) {
      EXPECT_EQ(t.kind(it.dominantIdx), TrackKind::Running);
      EXPECT_LT(t.ts(it.dominantIdx), it.end);
      EXPECT_GT(t.end(it.dominantIdx), it.ts);
    }
    if (folds > 120) break;  // brute force is slow; a sample is enough
  }
  EXPECT_GT(folds, 100u);
  // The 2 ms slices are wide enough at this zoom to stand alone, with their rows.
  const auto wide = std::count_if(items.begin(), items.end(), [&](const DrawItem& it) {
    return it.kind == DrawKind::Running && it.count == 1 && t.dur(it.firstIdx) >= 2000000;
  });
  EXPECT_GE(wide, 1);
}

TEST_F(DenseTrack, PanningAtOneZoomReusesTheSameBins) {
  const TimelineTrack t = TimelineTrack::fromCpu(*s_model, 0);
  const int64_t t0 = t.ts(0);
  for (double nsPerPx : {3.0, 40.0, 700.0, 5000.0}) {
    const auto span = static_cast<int64_t>(nsPerPx * 1000);
    const int64_t shift = static_cast<int64_t>(nsPerPx * 137);
    const auto a = t.query(t0 + span, t0 + 2 * span, nsPerPx);
    const auto b = t.query(t0 + span + shift, t0 + 2 * span + shift, nsPerPx);
    // Items that lie fully inside both windows must be identical.
    auto inside = [&](const DrawItem& it) { return it.ts >= t0 + span + shift + span / 10 && it.end <= t0 + 2 * span - span / 10; };
    std::vector<DrawItem> ia, ib;
    std::copy_if(a.begin(), a.end(), std::back_inserter(ia), inside);
    std::copy_if(b.begin(), b.end(), std::back_inserter(ib), inside);
    ASSERT_EQ(ia.size(), ib.size()) << nsPerPx;
    for (size_t i = 0; i < ia.size(); ++i) {
      EXPECT_EQ(ia[i].ts, ib[i].ts);
      EXPECT_EQ(ia[i].end, ib[i].end);
      EXPECT_EQ(ia[i].kind, ib[i].kind);
      EXPECT_EQ(ia[i].share, ib[i].share);
    }
  }
}

TEST(TimelineIndexCost, ItemsDoNotGrowWithEvents) {
  const auto small = apptest::denseModel(20000, 1);
  const auto big = apptest::denseModel(200000, 1);
  const TimelineTrack ts = TimelineTrack::fromCpu(*small, 0);
  const TimelineTrack tb = TimelineTrack::fromCpu(*big, 0);
  auto whole = [](const TimelineTrack& t) {
    const int64_t a = t.ts(0), b = t.end(static_cast<uint32_t>(t.size() - 1));
    return t.query(a, b, static_cast<double>(b - a) / 1920).size();
  };
  const size_t ns = whole(ts), nb = whole(tb);
  EXPECT_LE(nb, 1920u * 2);
  EXPECT_LE(ns, 1920u * 2);
  // Ten times the events, about the same work: both are a couple of items per pixel.
  EXPECT_LT(static_cast<double>(nb), 1.5 * std::max<double>(static_cast<double>(ns), 1920));
}

TEST(TimelineIndexSmt, ForcedIdleLossAndStatesAreWhereTheyHappened) {
  const auto m = apptest::smtModel();
  const core::TimelineIndex index(m);
  // CPU 1: forced idle [100 us, 200 us).
  {
    const auto items = index.cpuTrack(1).query(m->firstTs, m->lastTs, 100.0);
    auto it = std::find_if(items.begin(), items.end(), [](const DrawItem& d) { return d.kind == DrawKind::ForcedIdle; });
    ASSERT_NE(it, items.end());
    EXPECT_EQ(it->ts, 100000);
    EXPECT_EQ(it->end, 200000);
    EXPECT_EQ(m->cpuSlices[1].kind[index.cpuTrack(1).sourceRow(it->firstIdx)], core::SliceKind::ForcedIdle);
  }
  // CPU 3: lost events from its last event (299 us) to the loss report (400 us).
  {
    const auto items = index.cpuTrack(3).query(m->firstTs, m->lastTs, 1000.0);
    auto it = std::find_if(items.begin(), items.end(), [](const DrawItem& d) { return d.kind == DrawKind::Loss; });
    ASSERT_NE(it, items.end());
    EXPECT_EQ(it->ts, 299000);
    EXPECT_EQ(it->end, 400000);
  }
  // Even far out, a narrow loss is never folded away.
  {
    const auto items = index.cpuTrack(3).query(m->firstTs, m->lastTs, 1e5);
    EXPECT_TRUE(std::any_of(items.begin(), items.end(), [](const DrawItem& d) { return d.kind == DrawKind::Loss; }));
  }
  // t102's states: running, sleeping at 100 us, runnable at 190 us (woken by t101), running at 200 us.
  core::Utid t102;
  for (uint32_t u = 0; u < m->threadCount(); ++u)
    if (m->threads.tid[u] == 102) t102 = core::Utid(u);
  ASSERT_TRUE(t102.isValid());
  const auto track = index.threadTrack(t102);
  EXPECT_EQ(track.get(), index.threadTrack(t102).get());  // cached
  const auto items = track->query(m->firstTs, m->lastTs, 100.0);
  std::vector<DrawKind> kinds;
  for (const auto& it : items) kinds.push_back(it.kind);
  EXPECT_EQ(kinds, (std::vector<DrawKind>{DrawKind::Running, DrawKind::Sleeping, DrawKind::Runnable, DrawKind::Running}));
  const auto r = track->rowAt(195000);
  ASSERT_TRUE(r);
  EXPECT_EQ(m->threadStates.state[track->sourceRow(*r)], core::TaskState::Runnable);
  // A click 50 ns past a 1 px sliver still finds it.
  EXPECT_TRUE(index.cpuTrack(1).rowNear(200000 - 50, 100).has_value());
}

TEST(TimelineIndexSmt, FilteredTrackKeepsOnlyMatchesAndMapsRowsBack) {
  const auto m = apptest::smtModel();
  core::Utid t105;
  for (uint32_t u = 0; u < m->threadCount(); ++u)
    if (m->threads.tid[u] == 105) t105 = core::Utid(u);
  const auto t = TimelineTrack::fromCpuFiltered(*m, 2, [&](core::Utid u) { return u == t105; });
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(m->cpuSlices[2].utid[t.sourceRow(0)], t105);
  EXPECT_EQ(t.ts(0), 250000);
  EXPECT_EQ(t.end(0), 450000);
}

TEST(TimelineIndexThreads, LazyTracksAreSafeFromManyThreads) {
  const auto m = apptest::denseModel(5000, 2);
  const core::TimelineIndex index(m);
  std::vector<std::thread> threads;
  std::vector<const TimelineTrack*> seen(8);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      for (uint32_t u = 1; u < m->threadCount(); ++u) {
        auto tr = index.threadTrack(core::Utid(u));
        if (u == 1) seen[static_cast<size_t>(i)] = tr.get();
        (void)tr->query(m->firstTs, m->lastTs, 1000.0);
      }
    });
  for (auto& th : threads) th.join();
  for (auto* p : seen) EXPECT_EQ(p, seen[0]);
}

// The integral at each bin edge, against clipping every row by hand: random
// edges, including ones before the first row, inside rows and after the last.
TEST_F(DenseTrack, CategoryIntegralAtEdgesAgreesWithClippedRows) {
  const TimelineTrack t = TimelineTrack::fromCpu(*s_model, 0);
  const int running = core::foldCategory(TrackKind::Running);
  const int64_t first = t.ts(0), last = t.end(t.size() - 1);
  std::mt19937_64 rng(17);
  std::vector<int64_t> edges{first - 5000};
  for (int i = 0; i < 300; ++i) edges.push_back(first + static_cast<int64_t>(rng() % static_cast<uint64_t>(last - first)));
  edges.push_back(last + 5000);
  std::sort(edges.begin(), edges.end());
  std::vector<int64_t> at(edges.size());
  t.categoryIntegral(running, edges, at);
  for (size_t i = 0; i < edges.size(); ++i) ASSERT_EQ(at[i], bruteClipped(t, running, first - 5000, edges[i])) << i;
}

// Hand-worked: [0,10) and [5,20) overlap in [5,10), so the count is 1, 2, 1, 0.
TEST(CountIntegral, IntegralOfOverlappingIntervals) {
  const auto ci = core::CountIntegral::fromIntervals({{5, 20}, {0, 10}, {30, 30}});
  const std::vector<int64_t> edges{-1, 0, 5, 7, 10, 15, 20, 25, 40};
  std::vector<int64_t> at(edges.size());
  ci.integral(edges, at);
  EXPECT_EQ(at, (std::vector<int64_t>{0, 0, 5, 9, 15, 20, 25, 25, 25}));
}

// bigMachineModel: t2000 waits on CPU 0 from 200 us to the end (1000 us);
// no other CPU has a waiting task.
TEST(TimelineIndexWaiting, RunnableTasksCountOnTheirCpu) {
  const auto m = apptest::bigMachineModel();
  const core::TimelineIndex index(m);
  const std::vector<int64_t> edges{1000, 101000, 201000, 601000, 1001000};
  std::vector<int64_t> at(edges.size());
  index.waitingOn(0).integral(edges, at);
  EXPECT_EQ(at, (std::vector<int64_t>{0, 0, 0, 400000, 800000}));
  index.waitingOn(8).integral(edges, at);
  EXPECT_EQ(at, (std::vector<int64_t>(edges.size(), 0)));
  index.waitingOn(999).integral(edges, at);  // no such CPU: nothing waits
  EXPECT_EQ(at.back(), 0);
}

TEST(TimelineIndexEdges, EmptyAndDegenerateInputsAreHarmless) {
  const core::TraceModel empty;
  const TimelineTrack t = TimelineTrack::fromCpu(empty, 0);
  EXPECT_TRUE(t.empty());
  EXPECT_TRUE(t.query(0, 100, 1.0).empty());
  EXPECT_FALSE(t.rowAt(5));
  const auto m = apptest::smtModel();
  const core::TimelineIndex index(m);
  EXPECT_TRUE(index.cpuTrack(99).empty());
  EXPECT_TRUE(index.cpuTrack(0).query(100, 50, 1.0).empty());      // reversed window
  EXPECT_TRUE(index.cpuTrack(0).query(0, 100000, 0.0).empty());    // no zoom
  EXPECT_FALSE(index.cpuTrack(0).query(m->firstTs, m->lastTs, 1e12).empty());  // absurdly far out
  EXPECT_TRUE(index.threadTrack(core::Utid()) ->empty());
}

}  // namespace
