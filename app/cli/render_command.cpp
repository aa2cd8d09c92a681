// `schedlab-cli render`: the timeline of a trace as a PNG, through the very
// renderer the GUI uses (app/render), under Qt's offscreen platform. With
// --bench it times repeated frames of the requested range (the renderer's
// benchmark: a frame must cost pixels, not events).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <vector>

#include "app/cli/cli.h"
#include "app/cli/drawing_commands.h"
#include "core/json_writer.h"

#ifdef SCHEDLAB_HAVE_RENDER
#include <QImage>
#include <QString>

#include "app/cli/offscreen_gui.h"
#include "app/render/timeline_image.h"
#include "app/render/timeline_layout.h"
#endif

namespace app::cli {

namespace {
constexpr const char* kRenderUsage =
    "usage: schedlab-cli render FILE -o OUT.png [--width N] [--from T] [--to T] [--highlight TEXT]\n"
    "                          [--topology TOPO | --topology-from DIR] [--strips] [--tasks TEXT] [--no-legend]\n"
    "                          [--bench [--frames N]] [--json]\n"
    "                          [--group-by package,node,llc,core|none] [--collapse-groups] [--row-height PX]\n"
    "                          [--heatmap busy|waiting|off]\n"
    "Draws the trace's timeline (one row per CPU, grouped by core, SMT siblings adjacent) as a PNG\n"
    "through the GUI's renderer. --from/--to select a time range (default: the whole trace);\n"
    "--highlight marks the slices of tasks whose comm contains TEXT (or whose tid is TEXT).\n"
    "--strips adds each CPU's frequency and idle-state strips (where the trace has cpu_frequency /\n"
    "cpu_idle), the other counters as lines and, under each task row, the task's own PELT and\n"
    "util_est signals (sched_pelt_se / sched_load_se, sched_util_est_se) as lines; --tasks adds a row\n"
    "for each task whose comm contains TEXT (or whose tid is TEXT), with its user-space (atrace)\n"
    "slices below its states.\n"
    "--bench repeats the frame (draw lists + painting, default 20 times) and prints the median\n"
    "frame time; with --json as {\"frame_ms_median\": ..., ...}. -o is optional with --bench.\n"
    "--group-by, --collapse-groups and --row-height lay the CPU rows out as the GUI does for big\n"
    "machines (groups with header rows, collapsed groups as summary rows, compact rows).\n"
    "--heatmap draws the GUI's overview above the rows: per CPU over the whole trace, the busy share or\n"
    "the runnable tasks waiting, with its colour scale; the image's time range is framed.\n";

#ifdef SCHEDLAB_HAVE_RENDER
double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
#endif
}  // namespace

int renderCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv,
                          {"-o", "--output", "--width", "--from", "--to", "--highlight", "--frames", "--topology",
                           "--topology-from", "--tasks", "--group-by", "--row-height", "--heatmap"},
                          {"--bench", "--json", "--help", "--no-legend", "--strips", "--collapse-groups"}, error);
  if (!args || args->flag("--help") || args->positional().size() != 1 ||
      (!args->has("-o") && !args->has("--output") && !args->flag("--bench"))) {
    const bool help = args && args->flag("--help");
    (help ? out : err) << (args ? std::string() : "schedlab-cli render: " + error + "\n") << kRenderUsage;
    return help ? kExitOk : kExitUsage;
  }
#ifndef SCHEDLAB_HAVE_RENDER
  (void)out;
  err << "schedlab-cli render: this build has no renderer (configure with -DSCHEDLAB_ENABLE_GUI=ON)\n";
  return kExitFailure;
#else
  const std::string outPath = args->value("-o").value_or(args->value("--output").value_or(""));
  render::ImageOptions options;
  if (auto w = args->value("--width")) {
    options.width = std::atoi(w->c_str());
    if (options.width < options.gutterWidth + 50 || options.width > 32768) {
      err << "schedlab-cli render: --width must be between " << options.gutterWidth + 50 << " and 32768\n";
      return kExitUsage;
    }
  }
  options.legend = !args->flag("--no-legend");
  if (auto h = args->value("--row-height")) {
    options.rowHeight = std::atoi(h->c_str());
    if (options.rowHeight < 2 || options.rowHeight > 40) {
      err << "schedlab-cli render: --row-height must be between 2 and 40\n";
      return kExitUsage;
    }
  }
  std::optional<std::vector<render::GroupLevel>> groupBy;
  if (auto g = args->value("--group-by")) {
    groupBy = render::parseGroupLevels(QString::fromStdString(*g));
    if (!groupBy) {
      err << "schedlab-cli render: --group-by '" << *g << "': name package, node, llc, core (comma-separated) or none\n";
      return kExitUsage;
    }
  }
  if (auto h = args->value("--heatmap")) {
    const auto metric = render::parseHeatMetric(QString::fromStdString(*h));
    if (!metric) {
      err << "schedlab-cli render: --heatmap '" << *h << "': need busy, waiting or off\n";
      return kExitUsage;
    }
    options.heatmap = *metric;
  }
  int frames = 20;
  if (auto f = args->value("--frames")) frames = std::clamp(std::atoi(f->c_str()), 1, 10000);

  // The renderer needs a QGuiApplication (fonts, image formats) but never a display.
  const auto app = makeOffscreenGuiApp();

  const auto importStart = std::chrono::steady_clock::now();
  bool failed = false;
  auto model = loadTrace(args->positional()[0], *args, err, failed);
  if (!model) return kExitFailure;
  const double importMs = msSince(importStart);

  const auto indexStart = std::chrono::steady_clock::now();
  auto data = render::RunRenderData::create(model);
  const double indexMs = msSince(indexStart);

  render::ImageRun run;
  run.data = data;
  if (auto h = args->value("--highlight")) run.highlight = render::HighlightSet::build(*model, QString::fromStdString(*h));
  const bool grouped = groupBy || args->flag("--collapse-groups");
  render::TimelineLayout layout(*model, {options.rowHeight, groupBy.value_or(render::TimelineLayout::defaultLevels(*model)),
                                         args->flag("--collapse-groups")});
  run.rows = grouped ? layout.rows() : render::cpuRows(*model, options.rowHeight);
  if (grouped) run.heatCpus = layout.cpuOrder();
  if (auto t = args->value("--tasks")) {
    const auto tasks = render::HighlightSet::build(*model, QString::fromStdString(*t));
    for (size_t u = 1; u < model->threadCount(); ++u)
      if (tasks->matches(core::Utid(static_cast<uint32_t>(u))))
        run.rows.push_back(render::taskRow(*model, core::Utid(static_cast<uint32_t>(u)), options.rowHeight));
  }
  if (args->flag("--strips")) run.rows = render::withStrips(std::move(run.rows), *model, {true, true, true, true});
  std::vector<render::ImageRun> runs{run};

  if (auto f = args->value("--from")) {
    options.from = relativeTime(*f, model->firstTs);
    if (!options.from) {
      err << "schedlab-cli render: cannot read time '" << *f << "'\n";
      return kExitUsage;
    }
  }
  if (auto t = args->value("--to")) {
    options.to = relativeTime(*t, model->firstTs);
    if (!options.to) {
      err << "schedlab-cli render: cannot read time '" << *t << "'\n";
      return kExitUsage;
    }
  }
  const int64_t from = options.from.value_or(0);
  const int64_t to = options.to.value_or(render::longestSpan(runs));
  if (to <= from) {
    err << "schedlab-cli render: --to must be after --from\n";
    return kExitUsage;
  }
  const render::Viewport view = render::viewportFor(from, to, options.width - options.gutterWidth);
  const auto& rows = runs[0].rows;

  QImage image;
  if (args->flag("--bench")) {
    std::vector<double> frameMs, computeMs, paintMs;
    size_t items = 0;
    for (int i = 0; i < frames; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<render::PaneDrawList> lists{render::computePane(*data, rows, view, run.highlight.get())};
      const double c = msSince(t0);
      const auto t1 = std::chrono::steady_clock::now();
      image = render::paintTimelineImage(runs, lists, options, view);
      paintMs.push_back(msSince(t1));
      computeMs.push_back(c);
      frameMs.push_back(msSince(t0));
      items = lists[0].drawItems();
    }
    if (args->flag("--json")) {
      core::JsonWriter j;
      j.beginObject();
      j.field("frame_ms_median", median(frameMs));
      j.field("frame_ms_min", *std::min_element(frameMs.begin(), frameMs.end()));
      j.field("frame_ms_max", *std::max_element(frameMs.begin(), frameMs.end()));
      j.field("draw_lists_ms_median", median(computeMs));
      j.field("paint_ms_median", median(paintMs));
      j.field("frames", frames);
      j.field("width_px", options.width);
      j.field("rows", static_cast<uint64_t>(rows.size()));
      j.field("draw_items", static_cast<uint64_t>(items));
      j.field("events", model->eventCount);
      j.field("slices", model->sliceCount());
      j.field("import_ms", importMs);
      j.field("index_build_ms", indexMs);
      j.field("index_bytes", static_cast<uint64_t>(data->index->memoryBytes()));
      j.field("range_ns", to - from);
      j.endObject();
      out << j.str() << "\n";
    } else {
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "frames %d at %d px, %zu rows, %zu draw items, %llu slices\n"
                    "frame median %.3f ms (min %.3f, max %.3f): draw lists %.3f ms + paint %.3f ms\n"
                    "import %.1f ms, index build %.1f ms (%.1f MB)\n",
                    frames, options.width, rows.size(), items, static_cast<unsigned long long>(model->sliceCount()),
                    median(frameMs), *std::min_element(frameMs.begin(), frameMs.end()),
                    *std::max_element(frameMs.begin(), frameMs.end()), median(computeMs), median(paintMs), importMs,
                    indexMs, static_cast<double>(data->index->memoryBytes()) / 1e6);
      out << buf;
    }
  } else {
    image = render::renderTimelineImage(runs, options);
  }
  if (!outPath.empty()) {
    if (!image.save(QString::fromStdString(outPath), "PNG")) {
      err << "schedlab-cli render: cannot write " << outPath << "\n";
      return kExitFailure;
    }
    if (!args->flag("--json")) out << "wrote " << outPath << " (" << image.width() << "x" << image.height() << ")\n";
  }
  return kExitOk;
#endif
}

}  // namespace app::cli
