// The shared renderer under the offscreen platform: SMT rows sit together and
// are labelled, forced idle is hatched and lost data marked at the right pixels,
// task colours are stable, the time axis picks readable units, and the
// primitives of a frame stay bounded by its width.
#include <gtest/gtest.h>

#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <cmath>
#include <set>

#include "app/render/colors.h"
#include "app/render/cpu_categories.h"
#include "app/render/time_axis.h"
#include "app/render/timeline_image.h"
#include "app/render/timeline_layout.h"
#include "app/render/timeline_renderer.h"
#include "support/trace_builder.h"
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

TEST(RenderTimeAxis, ALabelAtTheRightEndSitsLeftOfItsTickNotClipped) {
  ensureApp();
  // 1 s over 1010 px: the major tick at 1 s is 10 px from the end, too close for its label on its right.
  const Viewport v{0, 1e6, 1010};
  const TimeTicks ticks = computeTicks(v);
  double lastMajor = -1;
  for (const Tick& t : ticks.ticks)
    if (t.major) lastMajor = t.x;
  ASSERT_NEAR(lastMajor, 1000, 0.5);
  QImage img(v.width, 28, QImage::Format_ARGB32);
  img.fill(Qt::white);
  {
    QPainter p(&img);
    paintRuler(p, img.rect(), 0, v);
  }
  // The label's text: dark pixels in the text band, left of the tick and right of the label before it.
  int textPixels = 0;
  for (int y = 0; y < 12; ++y)
    for (int x = 970; x < 998; ++x) textPixels += qGray(img.pixel(x, y)) < 128;
  EXPECT_GT(textPixels, 10);
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

// smtModel: CPU 2 runs t103 for 250 us, 500 px wide at this zoom: labelled at
// 20 px, not at 8 px, where the text would overflow the row; the slice stays.
TEST(RenderPane, ShortRowsCarryNoText) {
  ensureApp();
  const auto m = apptest::smtModel();
  const auto data = RunRenderData::create(m);
  const Viewport v{0, 500.0, 1000};
  TimelineRow row = cpuRows(*m, 20)[2];
  const RowDrawList tall = computeRow(*data, row, v, nullptr);
  EXPECT_FALSE(tall.labels.empty());
  for (int height : {8, 4, 2}) {
    row.height = height;
    const RowDrawList shortRow = computeRow(*data, row, v, nullptr);
    EXPECT_TRUE(shortRow.labels.empty()) << height;
    EXPECT_EQ(shortRow.prims.size(), tall.prims.size()) << height;
  }
}

// bigMachineModel ("2s:8c:2t:4l", 32 CPUs): package and LLC groups; the node
// level repeats the packages and is left out. Headers come before their members.
TEST(RenderLayout, BigMachineGroupsByPackageAndLlc) {
  const auto m = apptest::bigMachineModel();
  const auto levels = TimelineLayout::defaultLevels(*m);
  TimelineLayout layout(*m, {4, levels, false});
  const auto& groups = layout.groups();
  ASSERT_EQ(groups.size(), 6u);
  const QString labels[] = {"package 0", "LLC 0", "LLC 1", "package 1", "LLC 2", "LLC 3"};
  for (size_t g = 0; g < groups.size(); ++g) EXPECT_EQ(groups[g].label, labels[g]) << g;
  EXPECT_EQ(groups[0].sublabel, QStringLiteral("16 CPUs"));
  EXPECT_EQ(groups[2].sublabel, QStringLiteral("8 CPUs"));
  EXPECT_EQ(groups[2].parent, 0);
  EXPECT_EQ(*groups[4].members, (std::vector<uint32_t>{16, 17, 18, 19, 20, 21, 22, 23}));
  const auto& rows = layout.rows();
  ASSERT_EQ(rows.size(), 32u + 6u);
  EXPECT_EQ(rows[0].type, RowType::Group);
  EXPECT_EQ(rows[1].type, RowType::Group);
  EXPECT_EQ(rows[2].cpu, 0);
  EXPECT_EQ(rows[2].height, 4);
  EXPECT_EQ(rows[10].type, RowType::Group);  // LLC 1 after CPUs 0-7
  EXPECT_EQ(rows[11].cpu, 8);

  // Collapsing package 0 leaves its two summary rows in place of 16 CPUs and 3 headers.
  layout.setCollapsed(0, true);
  ASSERT_EQ(layout.rows().size(), 38u - 19u + 2u);
  EXPECT_EQ(layout.rows()[0].type, RowType::Summary);
  EXPECT_EQ(layout.rows()[0].summary, SummaryKind::Busy);
  EXPECT_EQ(layout.rows()[1].summary, SummaryKind::Waiting);
  EXPECT_EQ(layout.rows()[1].members->size(), 16u);
  EXPECT_EQ(layout.rows()[2].label, QStringLiteral("package 1"));
  layout.setAllCollapsed(true);
  EXPECT_EQ(layout.rows().size(), 4u);  // package 0's and 1's summaries
  EXPECT_EQ(layout.cpuOrder().size(), 32u);
}

TEST(RenderLayout, GroupLevelsFromTheirNames) {
  EXPECT_EQ(parseGroupLevels(QStringLiteral("package, LLC")), (std::vector<GroupLevel>{GroupLevel::Package, GroupLevel::Llc}));
  EXPECT_EQ(parseGroupLevels(QStringLiteral("node,core")), (std::vector<GroupLevel>{GroupLevel::Node, GroupLevel::Core}));
  EXPECT_EQ(parseGroupLevels(QStringLiteral("none")), std::vector<GroupLevel>{});
  EXPECT_FALSE(parseGroupLevels(QStringLiteral("package,socket")));
}

// x86 numbering puts a core's siblings apart (c and c+4 here): grouped by
// package, each package's CPUs still sit together, siblings adjacent.
TEST(RenderLayout, GroupsKeepSiblingsNumberedApartTogether) {
  testing_support::TraceBuilder tb;
  tb.builder().setTopology(core::Topology({{0, 4}, {1, 5}, {2, 6}, {3, 7}}, {0, 0, 1, 1}, "test"));
  tb.builder().setFormat("synthetic");
  for (int c = 0; c < 8; ++c) tb.other(1000, c, 0);
  const auto m = tb.build();
  TimelineLayout layout(*m, {20, {GroupLevel::Package}, false});
  std::vector<int> order;
  for (const auto& r : layout.rows())
    if (r.type == RowType::Cpu) order.push_back(r.cpu);
  EXPECT_EQ(order, (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(layout.rows().size(), 10u);
  EXPECT_TRUE(TimelineLayout::defaultLevels(*m).empty());  // 8 CPUs need no groups
}

// A collapsed group's busy row: LLC 1 (CPUs 8-15) is fully busy for the first
// 500 us and idle after; package 0 (CPUs 0-15) is then half busy; t2000 waits
// on CPU 0 from 200 us, 1/8 of LLC 0's full height.
TEST(RenderLayout, SummaryRowsShowBusyShareAndWaitingCount) {
  ensureApp();
  const auto m = apptest::bigMachineModel();
  const auto data = RunRenderData::create(m);
  TimelineLayout layout(*m, {4, TimelineLayout::defaultLevels(*m), true});
  layout.setCollapsed(0, false);  // package 0 open, its LLCs collapsed
  const Viewport v{0, 1000.0, 1000};  // 1 us per pixel over the 1000 us trace
  auto rowOf = [&](const QString& label, SummaryKind kind) {
    for (const auto& r : layout.rows())
      if (r.type == RowType::Summary && r.summary == kind && layout.groups()[static_cast<size_t>(r.group)].label == label) return r;
    ADD_FAILURE() << label.toStdString();
    return TimelineRow{};
  };
  auto heightAt = [&](const TimelineRow& row, float x) {
    const RowDrawList list = computeRow(*data, row, v, nullptr);
    for (const Prim& p : list.prims)
      if (p.x0 <= x && x < p.x1) return 1.0f - p.y0;
    return 0.0f;
  };
  const TimelineRow llc1 = rowOf("LLC 1", SummaryKind::Busy);
  EXPECT_FLOAT_EQ(heightAt(llc1, 100), 1.0f);
  EXPECT_FLOAT_EQ(heightAt(llc1, 497), 1.0f);  // bins are 2 us, aligned: 500-502 us is half busy
  EXPECT_FLOAT_EQ(heightAt(llc1, 700), 0.0f);
  // One task waiting on LLC 0's 8 CPUs: 1/8 per CPU, sqrt(1/8 / 4) = 0.177 of
  // the heat scale, 11/64 once quantised, in the heat map's colour for it.
  const TimelineRow waiting0 = rowOf("LLC 0", SummaryKind::Waiting);
  EXPECT_FLOAT_EQ(heightAt(waiting0, 100), 0.0f);
  EXPECT_FLOAT_EQ(heightAt(waiting0, 600), 11.0f / 64.0f);
  for (const Prim& p : computeRow(*data, waiting0, v, nullptr).prims) {
    if (p.x0 <= 600 && 600 < p.x1) {
      EXPECT_EQ(p.color, heatColor(11.0 / 64.0));
    }
  }
  layout.setCollapsed(0, true);
  const TimelineRow pkg0 = rowOf("package 0", SummaryKind::Busy);
  EXPECT_FLOAT_EQ(heightAt(pkg0, 300), 1.0f);
  EXPECT_FLOAT_EQ(heightAt(pkg0, 800), 0.5f);
  // Package 0's 16 CPUs: 1/16 per CPU is sqrt(1/64) = 8/64; the 2 us bin at
  // 199-201 us holds half of that wait, sqrt(1/128) = 5.7/64, kept at the 8/64
  // floor so that a little waiting never rounds away.
  const TimelineRow pkgWaiting = rowOf("package 0", SummaryKind::Waiting);
  EXPECT_FLOAT_EQ(heightAt(pkgWaiting, 600), 8.0f / 64.0f);
  EXPECT_FLOAT_EQ(heightAt(pkgWaiting, 200), 8.0f / 64.0f);
  EXPECT_FLOAT_EQ(heightAt(pkgWaiting, 150), 0.0f);
}

// Headers keep 2 px over a compact row, down to 9 px; above that they are 14
// px. With core groups on this 32-CPU machine at 4 px: 22 headers of 9 px
// (2 packages, 4 LLCs, 16 cores) and 32 rows of 4 px.
TEST(RenderLayout, GroupHeadersShrinkWithCompactRows) {
  const auto m = apptest::bigMachineModel();
  const std::vector<GroupLevel> levels{GroupLevel::Package, GroupLevel::Llc, GroupLevel::Core};
  const auto headerHeights = [&](int rowHeight) {
    std::set<int> heights;
    const TimelineLayout layout(*m, {rowHeight, levels, false});
    for (const auto& r : layout.rows())
      if (r.type == RowType::Group) heights.insert(r.height);
    return heights;
  };
  EXPECT_EQ(headerHeights(22), std::set<int>{14});
  EXPECT_EQ(headerHeights(12), std::set<int>{14});
  EXPECT_EQ(headerHeights(8), std::set<int>{10});
  EXPECT_EQ(headerHeights(4), std::set<int>{9});
  EXPECT_EQ(headerHeights(2), std::set<int>{9});
  TimelineLayout layout(*m, {22, levels, false});
  layout.setRowHeight(4);  // the GUI's CPU rows menu
  EXPECT_EQ(rowsHeight(layout.rows()), 22 * 9 + 32 * 4);
  // A process's header follows its task rows, which never turn compact.
  layout.addTask(apptest::utidOfTid(*m, 2000));
  EXPECT_EQ(layout.rows()[layout.rows().size() - 2].type, RowType::Group);
  EXPECT_EQ(layout.rows()[layout.rows().size() - 2].height, 14);
}

// One pixel row per CPU, one column per 100 us: CPU 0 busy throughout, CPU 8
// for the first five columns, CPU 20 never; CPU 0's waiting task is 1/4 of the
// waiting scale's saturation (4 tasks) from column 2 on.
TEST(RenderHeatmap, BusyShareAndWaitingPerCpuAndBin) {
  ensureApp();
  const auto m = apptest::bigMachineModel();
  const auto data = RunRenderData::create(m);
  const QImage busy = computeHeatmap(*data, {0, 8, 20}, 0, 1000000, QSize(10, 3), HeatMetric::Busy);
  ASSERT_EQ(busy.size(), QSize(10, 3));
  for (int x = 0; x < 10; ++x) {
    EXPECT_EQ(busy.pixel(x, 0), heatColor(1.0)) << x;
    EXPECT_EQ(busy.pixel(x, 1), heatColor(x < 5 ? 1.0 : 0.0)) << x;
    EXPECT_EQ(busy.pixel(x, 2), heatColor(0.0)) << x;
  }
  // One waiting task is sqrt(1/4) = half-way up the waiting scale.
  const QImage waiting = computeHeatmap(*data, {0}, 0, 1000000, QSize(10, 1), HeatMetric::Waiting);
  EXPECT_EQ(waiting.pixel(1, 0), heatColor(0.0));
  EXPECT_EQ(waiting.pixel(5, 0), heatColor(0.5));
  EXPECT_NE(heatColor(0.0), heatColor(1.0));
}

// WCAG relative luminance and contrast ratio.
double luminance(QRgb c) {
  auto lin = [](int v) {
    const double s = v / 255.0;
    return s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * lin(qRed(c)) + 0.7152 * lin(qGreen(c)) + 0.0722 * lin(qBlue(c));
}
double contrast(QRgb a, QRgb b) {
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// 1-3 waiting tasks were pale yellow on white. The scales: busy share as it
// is, waiting per CPU as sqrt(n / 4), full from 4. The ramp's lightest colour
// (anything above 0) stands off white rows and the idle grey by a contrast of
// 1.7 and 1.5 (the old ramp's 1 waiting task, 0.25: 1.15 on white), and
// darkens all the way to 1.
TEST(RenderHeatmap, LowValuesShowAndTheScaleDarkensSteadily) {
  EXPECT_DOUBLE_EQ(heatFraction(HeatMetric::Busy, 0.3), 0.3);
  EXPECT_DOUBLE_EQ(heatFraction(HeatMetric::Busy, 1.5), 1.0);
  EXPECT_DOUBLE_EQ(heatFraction(HeatMetric::Waiting, 0), 0.0);
  EXPECT_DOUBLE_EQ(heatFraction(HeatMetric::Waiting, 1), 0.5);
  EXPECT_DOUBLE_EQ(heatFraction(HeatMetric::Waiting, 2), std::sqrt(0.5));
  EXPECT_DOUBLE_EQ(heatFraction(HeatMetric::Waiting, 3), std::sqrt(0.75));
  EXPECT_DOUBLE_EQ(heatFraction(HeatMetric::Waiting, 9), 1.0);
  const QRgb white = qRgb(0xff, 0xff, 0xff);
  EXPECT_EQ(heatColor(0), qRgb(0xf2, 0xf2, 0xf2));
  for (double t : {0.001, 0.01, heatFraction(HeatMetric::Waiting, 1), heatFraction(HeatMetric::Busy, 0.1)}) {
    EXPECT_GE(contrast(heatColor(t), white), 1.7) << t;
    EXPECT_GE(contrast(heatColor(t), heatColor(0)), 1.5) << t;
  }
  double previous = luminance(heatColor(0));
  for (int i = 1; i <= 100; ++i) {
    const double l = luminance(heatColor(i / 100.0));
    EXPECT_LT(l, previous) << i;
    previous = l;
  }
  // 1, 2 and 3 waiting tasks are told apart.
  EXPECT_GE(contrast(heatColor(heatFraction(HeatMetric::Waiting, 1)), heatColor(heatFraction(HeatMetric::Waiting, 2))), 1.2);
  EXPECT_GE(contrast(heatColor(heatFraction(HeatMetric::Waiting, 2)), heatColor(heatFraction(HeatMetric::Waiting, 3))), 1.2);
}

// The overview's legend in its label cell: a grey swatch for 0, a bar whose
// column x has the colour of fraction (x + 0.5) / width, ticks where the
// scale puts 1, 2 and >=4 waiting tasks, and labels under them.
void expectHeatLegend(const QImage& img, const QRect& cell) {
  const QRect bar = heatLegendBar(cell);
  ASSERT_TRUE(img.rect().contains(bar)) << bar.x() << "," << bar.y();
  EXPECT_GE(bar.width(), 100);
  const int y = bar.center().y();
  const int w = bar.width();
  EXPECT_EQ(img.pixel(bar.left() - 8, y), heatColor(0));
  for (int x : {0, w / 4, w / 2, w - 1}) EXPECT_EQ(img.pixel(bar.left() + x, y), heatColor((x + 0.5) / w)) << x;
  int ink = 0;  // tick labels: dark text under the bar
  for (int yy = bar.bottom() + 4; yy < cell.bottom(); ++yy)
    for (int x = cell.left(); x < cell.right(); ++x) ink += luminance(img.pixel(x, yy)) < 0.3 ? 1 : 0;
  EXPECT_GT(ink, 10);
}

TEST(RenderHeatmap, OverviewShowsItsColourScale) {
  ensureApp();
  const auto ticks = heatLegendTicks(HeatMetric::Waiting);
  ASSERT_EQ(ticks.size(), 3u);
  EXPECT_DOUBLE_EQ(ticks[0].fraction, 0.5);
  EXPECT_EQ(ticks[0].label, QStringLiteral("1"));
  EXPECT_DOUBLE_EQ(ticks[1].fraction, std::sqrt(0.5));
  EXPECT_EQ(ticks[2].label, QStringLiteral("\u22654"));
  EXPECT_EQ(heatLegendTicks(HeatMetric::Busy).back().label, QStringLiteral("100%"));

  const auto m = apptest::bigMachineModel();
  const auto data = RunRenderData::create(m);
  QImage img(600, kHeatmapHeight, QImage::Format_RGB32);
  img.fill(Qt::white);
  const QImage heat = computeHeatmap(*data, {0, 8, 20}, 0, 1000000, QSize(410, kHeatmapHeight), HeatMetric::Waiting);
  {
    QPainter p(&img);
    paintHeatOverview(p, img.rect(), 190, HeatMetric::Waiting, heat, 0.0, 0.5);
  }
  expectHeatLegend(img, QRect(0, 0, 190, kHeatmapHeight));
  EXPECT_EQ(img.pixel(190 + 300, 10), heat.pixel(300, 10));  // the heat map beside it, outside the frame

  // `render --heatmap` and the GUI's: a metric, "off" (no map), or a word neither knows.
  EXPECT_EQ(parseHeatMetric(QStringLiteral("Waiting")), std::optional<std::optional<HeatMetric>>(HeatMetric::Waiting));
  EXPECT_EQ(parseHeatMetric(QStringLiteral("off")), std::optional<std::optional<HeatMetric>>(std::optional<HeatMetric>()));
  EXPECT_FALSE(parseHeatMetric(QStringLiteral("hot")));
  // The same band between a pane's header and its rows.
  ImageOptions options;
  options.width = 800;
  options.heatmap = HeatMetric::Waiting;
  const QImage withMap = renderTimelineImage({ImageRun{data, {}, {}, {}, {}}}, options);
  options.heatmap.reset();
  const QImage without = renderTimelineImage({ImageRun{data, {}, {}, {}, {}}}, options);
  EXPECT_EQ(withMap.height(), without.height() + kHeatmapHeight);
  expectHeatLegend(withMap, QRect(0, kRulerHeight + kPaneHeaderHeight, options.gutterWidth, kHeatmapHeight));
}

}  // namespace

TEST(RenderPane, UserSlicesNestInLanesBelowTheTaskStates) {
  ensureApp();
  const auto m = apptest::powerAndMarksModel();
  const auto data = RunRenderData::create(m);
  const core::Utid t10 = apptest::utidOfTid(*m, 10);
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
  for (const Prim& p : list.prims) {
    if (p.y0 < top) {
      EXPECT_LE(p.y1, top + 1e-6);
    }
  }

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

// Per-CPU charts and tables of a big machine summarise topology groups; the
// expected groups follow from the spec's numbering (core by core, siblings
// adjacent, LLCs and nodes splitting the cores evenly in order).
TEST(RenderCpuCategories, SmallMachinesKeepOneCategoryPerCpu) {
  const auto c = app::render::cpuCategories(core::Topology::uniform(2, 2), 4);
  EXPECT_FALSE(c.grouped());
  ASSERT_EQ(c.labels.size(), 4u);
  EXPECT_EQ(c.labels[3], QStringLiteral("CPU 3"));
  EXPECT_EQ(c.cpus[3], std::vector<int>{3});
}

TEST(RenderCpuCategories, BigMachinesGroupByTheFinestLevelWithFewEnoughGroups) {
  // 2 x 64 cores x 2 threads: 128 cores are too many, 8 LLCs of 16 cores (32 CPUs) are not.
  const auto topo = core::Topology::parseSpec("2s:64c:2t:8l");
  ASSERT_TRUE(topo.has_value()) << topo.error().message();
  const auto c = app::render::cpuCategories(topo.value(), 256);
  EXPECT_EQ(c.level, QStringLiteral("LLC"));
  ASSERT_EQ(c.cpus.size(), 8u);
  EXPECT_EQ(c.labels[7], QStringLiteral("LLC 7"));
  EXPECT_EQ(c.cpus[1].front(), 32);
  EXPECT_EQ(c.cpus[1].back(), 63);
  EXPECT_EQ(app::render::cpuListText(c.cpus[1]), QStringLiteral("32-63"));
  // 16 cores x 2 threads = 32 CPUs: still one category each.
  EXPECT_FALSE(app::render::cpuCategories(core::Topology::uniform(16, 2), 32).grouped());
  // 24 cores x 2 threads: 24 cores (2 CPUs each) are the finest few-enough groups.
  const auto cores = app::render::cpuCategories(core::Topology::uniform(24, 2), 48);
  EXPECT_EQ(cores.level, QStringLiteral("core"));
  EXPECT_EQ(cores.cpus.size(), 24u);
  EXPECT_EQ(cores.cpus[5], (std::vector<int>{10, 11}));
}

TEST(RenderCpuCategories, OneGroupForEverythingFallsBackToRangesOfCpuNumbers) {
  // 40 single-thread cores on one LLC, node and package: ceil(40 / 32) = 2 CPUs per range.
  const auto c = app::render::cpuCategories(core::Topology::flat(40), 40);
  EXPECT_EQ(c.level, QStringLiteral("CPUs"));
  ASSERT_EQ(c.cpus.size(), 20u);
  EXPECT_EQ(c.labels[19], QStringLiteral("CPU 38\u201339"));
  EXPECT_EQ(c.cpus[19], (std::vector<int>{38, 39}));
}

TEST(RenderCpuCategories, SpreadIsTheFiveNumberSummaryOfTheCpusThatHaveStatistics) {
  // Sorted 1 2 3 4: q1 at position 0.75 -> 1.75, median 2.5, q3 at 2.25 -> 3.25.
  const auto s = app::render::spreadOf({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);

  app::render::CpuCategories groups;
  groups.level = QStringLiteral("core");
  groups.cpus = {{0, 1}, {2, 3}};
  std::vector<core::analysis::CpuStats> cpus(3);
  cpus[0].cpu = 0;
  cpus[0].switches = 10;
  cpus[1].cpu = 1;
  cpus[1].switches = 30;
  cpus[2].cpu = 3;  // CPU 2 has no statistics: the second group holds one value
  cpus[2].switches = 7;
  const auto spreads = app::render::spreadsByCategory(
      groups, cpus, [](const core::analysis::CpuStats& c) { return static_cast<double>(c.switches); });
  ASSERT_EQ(spreads.size(), 2u);
  EXPECT_EQ(spreads[0].count, 2);
  EXPECT_DOUBLE_EQ(spreads[0].median, 20);
  EXPECT_EQ(spreads[1].count, 1);
  EXPECT_DOUBLE_EQ(spreads[1].max, 7);
  EXPECT_EQ(app::render::cpuListText({0, 1, 2, 5, 7, 8}), QStringLiteral("0-2,5,7-8"));
}

TEST(RenderPane, TaskSignalsAreLinesUnderTheirTaskFromZeroToTheirPeak) {
  ensureApp();
  const auto m = apptest::taskPeltModel();
  const auto data = RunRenderData::create(m);
  const core::Utid t10 = apptest::utidOfTid(*m, 10);
  ASSERT_TRUE(t10.isValid());
  std::vector<TimelineRow> rows = cpuRows(*m, 20);
  rows.push_back(taskRow(*m, t10, 20));
  // The CPU counters alone leave the task row bare: its signals are its own option.
  const auto counters = withStrips(rows, *m, {false, false, true, false});
  ASSERT_EQ(counters.size(), 3u);
  EXPECT_EQ(counters[1].type, RowType::Counter);
  EXPECT_FALSE(counters[1].utid.isValid());
  EXPECT_EQ(counters[2].type, RowType::Task);
  // Task signals: load then util (the order sched_load_se prints them), right under t10's row.
  const auto lines = withStrips(rows, *m, {false, false, false, true});
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1].type, RowType::Task);
  for (size_t i : {size_t{2}, size_t{3}}) {
    EXPECT_EQ(lines[i].type, RowType::Counter);
    EXPECT_EQ(lines[i].utid, t10);
  }
  EXPECT_EQ(lines[2].label.trimmed(), QStringLiteral("load"));
  EXPECT_EQ(lines[2].sublabel, QStringLiteral("max 1024"));
  EXPECT_EQ(lines[3].label.trimmed(), QStringLiteral("util"));
  EXPECT_EQ(lines[3].sublabel, QStringLiteral("max 300"));

  // util 100 over [0, 400) us, 300 over [400, 800), 200 to the end at 1000 us,
  // one pixel per us. Scaled from 0 (not from its smallest, 100) to its peak
  // 300, the line sits at y = 0.9 - 0.8 v / 300 of the row: 0.633333, 0.1,
  // 0.366667, each drawn 0.06 either side, with a one-pixel riser at each step.
  const Viewport view{0, 1000.0, 1000};
  const RowDrawList util = computeRow(*data, lines[3], view);
  std::vector<Prim> flats;
  for (const Prim& p : util.prims)
    if (p.x1 - p.x0 > 1.5f) flats.push_back(p);
  ASSERT_EQ(flats.size(), 3u);
  EXPECT_EQ(util.prims.size(), 5u);  // and two risers
  const double expectedY[] = {0.9 - 0.8 / 3, 0.1, 0.9 - 1.6 / 3};
  const double expectedX[][2] = {{0, 400}, {400, 800}, {800, 1000}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(flats[i].x0, expectedX[i][0], 0.01);
    EXPECT_NEAR(flats[i].x1, expectedX[i][1], 0.01);
    EXPECT_NEAR((flats[i].y0 + flats[i].y1) / 2, expectedY[i], 1e-5);
  }
  // load 512 then 1024, its peak: y 0.5, then 0.1.
  const RowDrawList load = computeRow(*data, lines[2], view);
  ASSERT_GE(load.prims.size(), 2u);
  EXPECT_NEAR((load.prims[0].y0 + load.prims[0].y1) / 2, 0.5, 1e-5);
  EXPECT_NEAR((load.prims[1].y0 + load.prims[1].y1) / 2, 0.1, 1e-5);
}
