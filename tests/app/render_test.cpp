// The shared renderer under the offscreen platform: SMT rows sit together and
// are labelled, forced idle is hatched and lost data marked at the right pixels,
// task colours are stable, the time axis picks readable units, and the
// primitives of a frame stay bounded by its width.
#include <gtest/gtest.h>

#include <QGuiApplication>
#include <QImage>
#include <QPainter>

#include "app/render/colors.h"
#include "app/render/time_axis.h"
#include "app/render/timeline_image.h"
#include "app/render/timeline_renderer.h"
#include "test_models.h"

namespace {

using namespace app::render;

void ensureApp() {
  if (QCoreApplication::instance()) return;
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  static int argc = 1;
  static char arg0[] = "render_test";
  static char* argv[] = {arg0, nullptr};
  new QGuiApplication(argc, argv);  // lives until exit, like a real application's
}

TEST(RenderRows, SmtSiblingsAreAdjacentAndLabelled) {
  const auto m = apptest::smtModel();
  const auto rows = cpuRows(*m, 20);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].cpu, 0);
  EXPECT_EQ(rows[1].cpu, 1);
  EXPECT_EQ(rows[2].cpu, 2);
  EXPECT_EQ(rows[3].cpu, 3);
  EXPECT_TRUE(rows[0].firstOfCore);
  EXPECT_FALSE(rows[1].firstOfCore);
  EXPECT_TRUE(rows[2].firstOfCore);
  EXPECT_EQ(rows[1].sublabel, QStringLiteral("core 0 \u00b7 thread 1"));
  EXPECT_EQ(rows[2].sublabel, QStringLiteral("core 1 \u00b7 thread 0"));
  EXPECT_EQ(rowsHeight(rows), 80);
}

TEST(RenderRows, SiblingsNumberedApartStillSitTogether) {
  // A machine whose siblings are CPU n and n+2 (as schedviz's SMT trace): rows follow cores.
  auto m = apptest::smtModel();
  m->topology = core::Topology({{0, 2}, {1, 3}}, {0, 0}, "sysfs");
  const auto rows = cpuRows(*m, 20);
  std::vector<int> order;
  for (const auto& r : rows) order.push_back(r.cpu);
  EXPECT_EQ(order, (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(rows[1].sublabel, QStringLiteral("core 0 \u00b7 thread 1"));
}

TEST(RenderColors, TaskColoursAreStableAndSiblingsDiffer) {
  // Stable: a function of (comm, tid) alone, the same in every run, build and
  // report (no pointer, seed or std::hash in it). The HSL values were worked out
  // from colors.cpp's formula by hand in Python, not read from the program:
  // c = murmur3_fmix32(fnv1a32(comm)); hue = (c % 360 + 137.508 * tid) mod 360;
  // h = fmix32(c ^ tid); saturation 140 + (h >> 9) % 80; lightness 118 + (h >> 17) % 50.
  const QColor hackbench = taskColor("hackbench", 1234);
  EXPECT_EQ(hackbench.hslHue(), 125);
  EXPECT_EQ(hackbench.hslSaturation(), 185);
  EXPECT_EQ(hackbench.lightness(), 118);
  const QColor next = taskColor("hackbench", 1235);
  EXPECT_EQ(next.hslHue(), 263);
  EXPECT_EQ(next.hslSaturation(), 215);
  EXPECT_EQ(next.lightness(), 132);
  // Threads of one program (same comm, neighbouring tids) get clearly different hues.
  for (int tid = 100; tid < 110; ++tid) {
    const int a = taskColor("worker", tid).hslHue();
    const int b = taskColor("worker", tid + 1).hslHue();
    const int d = std::abs(a - b) % 360;
    EXPECT_GE(std::min(d, 360 - d), 30) << tid;
  }
  EXPECT_EQ(cookieColor(0).alpha(), 0);
  EXPECT_NE(cookieColor(1), cookieColor(2));
}

TEST(RenderTimeAxis, StepsUnitsAndParsing) {
  EXPECT_EQ(niceStep(1), 1);
  EXPECT_EQ(niceStep(3), 5);
  EXPECT_EQ(niceStep(1200), 2000);
  EXPECT_EQ(formatDuration(1500), QStringLiteral("1.5 \u00b5s"));
  EXPECT_EQ(formatDuration(2500000), QStringLiteral("2.500 ms"));
  EXPECT_EQ(formatDuration(3000000000LL), QStringLiteral("3.000 s"));
  int64_t ns = 0;
  EXPECT_TRUE(parseDuration(QStringLiteral("250ms"), ns));
  EXPECT_EQ(ns, 250000000);
  EXPECT_TRUE(parseDuration(QStringLiteral("1.5 us"), ns));
  EXPECT_EQ(ns, 1500);
  EXPECT_FALSE(parseDuration(QStringLiteral("fast"), ns));

  Viewport v{0, 1e6, 1000};  // 1 s across 1000 px
  TimeTicks t = computeTicks(v);
  EXPECT_EQ(t.majorStep, 100000000);
  EXPECT_FALSE(t.anchored);
  ASSERT_FALSE(t.ticks.empty());
  EXPECT_EQ(t.ticks.front().label, QStringLiteral("0 s"));
  EXPECT_EQ(t.ticks[5].label, QStringLiteral("0.1 s"));
  // Deep zoom far from zero: labels become offsets from an anchor.
  Viewport deep{5123456789LL, 1.0, 1000};
  t = computeTicks(deep);
  EXPECT_TRUE(t.anchored);
  for (const auto& tick : t.ticks) {
    if (tick.major) {
      EXPECT_TRUE(tick.label.startsWith(QLatin1Char('+'))) << tick.label.toStdString();
    }
  }
  // Zoom keeps the time under the mouse.
  const Viewport z = v.zoomedAt(250, 0.5);
  EXPECT_EQ(z.timeAt(250), v.timeAt(250));
}

TEST(RenderPane, ForcedIdleIsHatchedAndLossMarkedAtTheirPixels) {
  ensureApp();
  const auto m = apptest::smtModel();
  const auto data = RunRenderData::create(m);
  const auto rows = cpuRows(*m, 20);
  const Viewport view{0, 500.0, 1000};  // 500 ns per px: the 500 us trace fills the width
  const PaneDrawList list = computePane(*data, rows, view);
  ASSERT_EQ(list.rows.size(), 4u);
  auto find = [](const RowDrawList& r, PrimStyle s) {
    return std::find_if(r.prims.begin(), r.prims.end(), [s](const Prim& p) { return p.style == s; });
  };
  const auto hatch = find(list.rows[1], PrimStyle::Hatched);
  ASSERT_NE(hatch, list.rows[1].prims.end());
  EXPECT_NEAR(hatch->x0, (100000 - m->firstTs) / 500.0, 0.01);
  EXPECT_NEAR(hatch->x1, (200000 - m->firstTs) / 500.0, 0.01);
  const auto loss = find(list.rows[3], PrimStyle::Loss);
  ASSERT_NE(loss, list.rows[3].prims.end());
  EXPECT_NEAR(loss->x0, (299000 - m->firstTs) / 500.0, 0.01);
  // Cookies: a strip on top of each tagged task's slices.
  const auto cookie = std::find_if(list.rows[0].prims.begin(), list.rows[0].prims.end(), [](const Prim& p) {
    return p.style == PrimStyle::Solid && p.y1 < 0.5f && p.color == cookieColor(1).rgba();
  });
  EXPECT_NE(cookie, list.rows[0].prims.end());
  // Labels name the task.
  ASSERT_FALSE(list.rows[0].labels.empty());
  EXPECT_TRUE(list.rows[0].labels.front().text.startsWith(QStringLiteral("t101")));
}

TEST(RenderImage, PixelsShowTasksForcedIdleAndLoss) {
  ensureApp();
  const auto m = apptest::smtModel();
  ImageRun run;
  run.data = RunRenderData::create(m);
  ImageOptions o;
  o.width = 1170;
  o.gutterWidth = 170;
  o.rowHeight = 20;
  o.legend = false;
  const QImage img = renderTimelineImage({run}, o);
  ASSERT_FALSE(img.isNull());
  // For people checking the look: SCHEDLAB_SCREENSHOT_DIR=/tmp/x render_test writes the picture.
  if (const QString dir = qEnvironmentVariable("SCHEDLAB_SCREENSHOT_DIR"); !dir.isEmpty()) {
    ImageOptions big = o;
    big.legend = true;
    big.rowHeight = 28;
    renderTimelineImage({run}, big).save(dir + QStringLiteral("/smt-forced-idle.png"));
  }
  EXPECT_EQ(img.width(), 1170);
  EXPECT_EQ(img.height(), kRulerHeight + kPaneHeaderHeight + 4 * 20);
  const int top = kRulerHeight + kPaneHeaderHeight;
  const double nsPerPx = static_cast<double>(m->span()) / 1000;
  auto px = [&](int64_t abs) { return 170 + static_cast<int>((abs - m->firstTs) / nsPerPx); };
  // CPU 2 at 100 us runs t103: its colour, below the cookie strip.
  const QColor t103 = taskColor("t103", 103);
  EXPECT_EQ(QColor(img.pixel(px(100000), top + 2 * 20 + 14)).rgb(), t103.rgb());
  // CPU 1 at 150 us: the hatch (its two colours only).
  const QRgb fi = img.pixel(px(150000), top + 20 + 10);
  EXPECT_TRUE(fi == palette().forcedIdleBack.rgb() || fi == palette().forcedIdle.rgb()) << std::hex << fi;
  int hatchPixels = 0;
  for (int x = px(110000); x < px(190000); ++x)
    if (img.pixel(x, top + 20 + 10) == palette().forcedIdle.rgb()) ++hatchPixels;
  EXPECT_GT(hatchPixels, 5);
  // CPU 3 at 350 us: lost data.
  const QRgb lost = img.pixel(px(350000), top + 3 * 20 + 10);
  EXPECT_TRUE(lost == palette().lossBack.rgb() || lost == palette().loss.rgb()) << std::hex << lost;
}

TEST(RenderImage, HighlightDimsOthersAndFramesMatches) {
  ensureApp();
  const auto m = apptest::smtModel();
  const auto hl = HighlightSet::build(*m, QStringLiteral("t103"));
  ASSERT_TRUE(hl->active());
  EXPECT_EQ(std::count(hl->utidMatch.begin(), hl->utidMatch.end(), 1), 1);
  const auto data = RunRenderData::create(m);
  const PaneDrawList list = computePane(*data, cpuRows(*m), Viewport{0, 500.0, 1000}, hl.get());
  EXPECT_TRUE(list.dimmed);
  const auto& cpu2 = list.rows[2].prims;
  EXPECT_TRUE(std::any_of(cpu2.begin(), cpu2.end(), [](const Prim& p) { return p.style == PrimStyle::Highlight; }));
  const auto& cpu0 = list.rows[0].prims;
  EXPECT_FALSE(std::any_of(cpu0.begin(), cpu0.end(), [](const Prim& p) { return p.style == PrimStyle::Highlight; }));
  // By tid too.
  const auto byTid = HighlightSet::build(*m, QStringLiteral("105"));
  EXPECT_EQ(std::count(byTid->utidMatch.begin(), byTid->utidMatch.end(), 1), 1);
}

TEST(RenderPane, WholeTraceFrameIsBoundedByWidth) {
  ensureApp();
  const auto m = apptest::denseModel(150000, 2);
  const auto data = RunRenderData::create(m);
  const auto rows = cpuRows(*m);
  const Viewport v = viewportFor(0, m->span(), 1750);
  const PaneDrawList list = computePane(*data, rows, v);
  for (const auto& r : list.rows) {
    EXPECT_LE(r.prims.size(), 1750u * 3);
    EXPECT_LE(r.labels.size(), 1750u / 24 + 2);
  }
}

// The pan and zoom preview paints the list of the last viewport at the new
// one's pixels until the new list is ready: each slice must land where the new
// viewport puts its time. smtModel: CPU 2 runs t103 until 250 us, then t105.
TEST(RenderPane, ListOfAnotherViewportPaintsAtTheNewPixels) {
  ensureApp();
  const auto m = apptest::smtModel();
  const auto data = RunRenderData::create(m);
  const auto rows = cpuRows(*m, 20);
  const Viewport computed{0, 500.0, 1000};  // the whole 500 us trace
  const PaneDrawList list = computePane(*data, rows, computed);
  const Viewport panned{100000, 250.0, 1000};  // from 100 us, zoomed in 2x
  QImage img(1000, rowsHeight(rows), QImage::Format_RGB32);
  img.fill(Qt::black);
  {
    QPainter p(&img);
    paintPane(p, QRect(0, 0, 1000, rowsHeight(rows)), rows, list, panned);
  }
  // Relative time t is at x = (t - 100 us) / 250 ns; y: CPU 2's row, below the
  // cookie strip. At the same x the old viewport shows the other task (x 550:
  // 275 us, t105; x 950: 475 us, t103 again), so a lost shift or scale shows.
  const int64_t t103At = 237500, t105At = 337500;  // x 550 and 950
  auto at = [&](int64_t t) { return QColor(img.pixel(static_cast<int>(panned.xOf(t)), 2 * 20 + 14)).rgb(); };
  EXPECT_EQ(at(t103At), taskColor("t103", 103).rgb());
  EXPECT_EQ(at(t105At), taskColor("t105", 105).rgb());
}

}  // namespace

TEST(RenderPane, UserSlicesNestInLanesBelowTheTaskStates) {
  ensureApp();
  const auto m = apptest::powerAndMarksModel();
  const auto data = RunRenderData::create(m);
  core::Utid t10;
  for (size_t u = 0; u < m->threadCount(); ++u)
    if (m->threads.tid[u] == 10) t10 = core::Utid(static_cast<uint32_t>(u));
  const TimelineRow row = taskRow(*m, t10, 20);
  ASSERT_EQ(row.userLanes, 2);  // outer at depth 0, inner at depth 1
  EXPECT_EQ(row.height, 20 + 2 * kUserLaneHeight);
  const Viewport view{0, 1000.0, 1000};  // 1 us per px
  const RowDrawList list = computeRow(*data, row, view);
  const float top = userLanesTop(row);
  const float lane = (1.0f - top) / 2;
  auto labelled = [&](const QString& name) {
    return std::find_if(list.labels.begin(), list.labels.end(), [&](const PrimLabel& l) { return l.text == name; });
  };
  const auto outer = labelled(QStringLiteral("outer"));
  ASSERT_NE(outer, list.labels.end());
  EXPECT_NEAR(outer->x0, 100, 0.01);
  EXPECT_NEAR(outer->x1, 600, 0.01);
  EXPECT_NEAR(outer->y0, top, 1e-6);
  const auto inner = labelled(QStringLiteral("inner"));
  ASSERT_NE(inner, list.labels.end());
  EXPECT_NEAR(inner->x0, 200, 0.01);
  EXPECT_NEAR(inner->x1, 300, 0.01);
  EXPECT_NEAR(inner->y0, top + lane, 1e-6);
  // The task's state bar keeps to the rows above the lanes.
  for (const Prim& p : list.prims)
    if (p.y0 < top) EXPECT_LE(p.y1, top + 1e-6);

  // What a click finds: the slice of the lane under the point.
  const auto& us = m->userSlices;
  const double inLane0 = top + lane / 2, inLane1 = top + 1.5 * lane;
  const auto hitOuter = userSliceAt(*data, row, inLane0, 250000, 0);
  ASSERT_TRUE(hitOuter);
  EXPECT_EQ(m->strings.get(us.name[*hitOuter]), "outer");
  const auto hitInner = userSliceAt(*data, row, inLane1, 250000, 0);
  ASSERT_TRUE(hitInner);
  EXPECT_EQ(m->strings.get(us.name[*hitInner]), "inner");
  EXPECT_FALSE(userSliceAt(*data, row, inLane1, 400000, 0));  // inner ended at 300 us
  EXPECT_FALSE(userSliceAt(*data, row, inLane0, 700000, 0));
  EXPECT_FALSE(userSliceAt(*data, row, top / 2, 250000, 0));  // the state bar
}

TEST(RenderPane, FrequencyAndIdleStripsSitUnderTheirCpu) {
  ensureApp();
  const auto m = apptest::powerAndMarksModel();
  const auto data = RunRenderData::create(m);
  EXPECT_EQ(withStrips(cpuRows(*m, 20), *m, {}).size(), 1u);  // nothing asked: the CPU row alone
  const auto rows = withStrips(cpuRows(*m, 20), *m, {true, true, false});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].type, RowType::Cpu);
  EXPECT_EQ(rows[1].type, RowType::CpuFrequency);
  EXPECT_EQ(rows[2].type, RowType::CpuIdle);
  const Viewport view{0, 1000.0, 1000};
  // Frequency: a step at 500 us (the repeat at 700 us is none), the faster one
  // drawn taller (scaled to the CPU's 1..2 GHz).
  const RowDrawList freq = computeRow(*data, rows[1], view);
  ASSERT_EQ(freq.prims.size(), 2u);
  EXPECT_NEAR(freq.prims[0].x0, 0, 0.01);
  EXPECT_NEAR(freq.prims[0].x1, 500, 0.01);
  EXPECT_NEAR(freq.prims[1].x0, 500, 0.01);
  EXPECT_NEAR(freq.prims[1].x1, 1000, 0.01);
  EXPECT_LT(freq.prims[1].y0, freq.prims[0].y0);
  // Idle: running until 800 us (a low bar), state 1 after (full height, labelled C1 when wide enough).
  const RowDrawList idle = computeRow(*data, rows[2], view);
  ASSERT_EQ(idle.prims.size(), 2u);
  EXPECT_NEAR(idle.prims[0].x1, 800, 0.01);
  EXPECT_GT(idle.prims[0].y0, 0.5f);
  EXPECT_NEAR(idle.prims[1].x0, 800, 0.01);
  EXPECT_EQ(idle.prims[1].y0, 0.0f);
}
