// Timeline rendering cost: LOD queries and whole frames (draw lists + paint
// into a 1920 px image) for synthetic traces of growing size, and for a real
// trace given in SCHEDLAB_BENCH_TRACE. A frame must cost pixels, not events:
// compare the 10x sizes. `schedlab-cli render FILE --bench --json` measures the same.
#include <benchmark/benchmark.h>

#include <QGuiApplication>
#include <QImage>
#include <map>

#include "app/render/timeline_image.h"
#include "core/sched_builder.h"
#include "importers/importer.h"

namespace {

std::shared_ptr<core::TraceModel> synthetic(int slicesPerCpu) {
  static std::map<int, std::shared_ptr<core::TraceModel>> cache;
  if (auto it = cache.find(slicesPerCpu); it != cache.end()) return it->second;
  core::SchedBuilder b;
  b.setFormat("synthetic");
  const uint32_t sw = b.eventType("sched_switch");
  int64_t ts = 1000;
  int cur[2] = {0, 0};
  for (int i = 0; i < slicesPerCpu; ++i) {
    for (int c = 0; c < 2; ++c) {
      const int next = i % 7 == 6 ? 0 : 200 + c * 10 + (i % 3);
      core::SwitchArgs a;
      a.prevTid = cur[c];
      a.prevComm = cur[c] ? "worker" : "swapper";
      a.prevState = i % 3 ? core::TaskState::Sleeping : core::TaskState::RunnablePreempted;
      a.nextTid = next;
      a.nextComm = next ? "worker" : "swapper";
      b.countEvent(sw);
      b.onSwitch({ts, c, cur[c], 0}, a);
      cur[c] = next;
    }
    ts += 1000 + (i * 7919) % 3000;
  }
  auto m = b.finalize();
  cache[slicesPerCpu] = m;
  return m;
}

std::shared_ptr<core::TraceModel> realTrace() {
  static std::shared_ptr<core::TraceModel> model = [] {
    const char* path = std::getenv("SCHEDLAB_BENCH_TRACE");
    if (!path) return std::shared_ptr<core::TraceModel>();
    auto r = importers::importTrace(path);
    return r ? r->model : std::shared_ptr<core::TraceModel>();
  }();
  return model;
}

void frame(benchmark::State& state, const std::shared_ptr<core::TraceModel>& m) {
  if (!m) {
    state.SkipWithError("set SCHEDLAB_BENCH_TRACE to a trace file");
    return;
  }
  const auto data = app::render::RunRenderData::create(m);
  app::render::ImageRun run;
  run.data = data;
  const std::vector<app::render::ImageRun> runs{run};
  app::render::ImageOptions o;
  const auto rows = app::render::cpuRows(*m, o.rowHeight);
  const auto view = app::render::viewportFor(0, m->span(), o.width - o.gutterWidth);
  size_t items = 0;
  for (auto _ : state) {
    std::vector<app::render::PaneDrawList> lists{app::render::computePane(*data, rows, view)};
    items = lists[0].drawItems();
    QImage img = app::render::paintTimelineImage(runs, lists, o, view);
    benchmark::DoNotOptimize(img.bits());
  }
  state.counters["slices"] = static_cast<double>(m->sliceCount());
  state.counters["draw_items"] = static_cast<double>(items);
}

void query(benchmark::State& state, const std::shared_ptr<core::TraceModel>& m) {
  const core::TimelineIndex index(m);
  const auto& track = index.cpuTrack(0);
  const double nsPerPx = static_cast<double>(m->span()) / 1750;
  std::vector<core::DrawItem> items;
  for (auto _ : state) {
    items.clear();
    track.query(m->firstTs, m->lastTs, nsPerPx, items);
    benchmark::DoNotOptimize(items.data());
  }
  state.counters["rows"] = static_cast<double>(track.size());
}

void BM_WholeTraceFrame(benchmark::State& state) { frame(state, synthetic(static_cast<int>(state.range(0)))); }
void BM_WholeTraceQuery(benchmark::State& state) { query(state, synthetic(static_cast<int>(state.range(0)))); }
void BM_RealTraceFrame(benchmark::State& state) { frame(state, realTrace()); }

BENCHMARK(BM_WholeTraceQuery)->Arg(50000)->Arg(500000)->Arg(2000000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WholeTraceFrame)->Arg(50000)->Arg(500000)->Arg(2000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RealTraceFrame)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
