// Import speed and memory of the trace.dat importer. Two ways to run it:
//  - as a Google Benchmark: BM_ImportTraceDat (probe + read + finalize, the
//    whole importTrace) and BM_DecodeTraceDat (layout + page decoding on the
//    worker threads, no model), over $SCHEDLAB_BENCH_TRACEDAT (default
//    /tmp/bench-tracedat/trace.dat, recorded by run-import-bench.sh);
//  - with --once FILE: one import in this fresh process, printed as one JSON
//    line with wall time and peak RSS, so run-import-bench.sh can compare it
//    with kshark_load_anchor process against process.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/huge_pages.h"
#include "importers/importer.h"
#include "importers/tracedat/cpu_stream.h"

namespace {

std::string benchTrace() {
  const char* env = std::getenv("SCHEDLAB_BENCH_TRACEDAT");
  return env && *env ? env : "/tmp/bench-tracedat/trace.dat";
}

long peakRssKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

void BM_ImportTraceDat(benchmark::State& state) {
  const std::string path = benchTrace();
  if (!std::filesystem::exists(path)) {
    state.SkipWithError(("no trace at " + path + " (set SCHEDLAB_BENCH_TRACEDAT)").c_str());
    return;
  }
  uint64_t events = 0;
  size_t modelBytes = 0;
  for (auto _ : state) {
    auto result = importers::importTrace(path);
    if (!result) {
      state.SkipWithError(result.error().message().c_str());
      return;
    }
    events = result->model->eventCount;
    modelBytes = result->model->memoryBytes();
    benchmark::DoNotOptimize(result->model.get());
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["model B/event"] = events ? static_cast<double>(modelBytes) / static_cast<double>(events) : 0;
  state.counters["peak RSS MB"] = static_cast<double>(peakRssKb()) / 1024.0;
}
BENCHMARK(BM_ImportTraceDat)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_DecodeTraceDat(benchmark::State& state) {
  using namespace importers::tracedat;
  const std::string path = benchTrace();
  if (!std::filesystem::exists(path)) {
    state.SkipWithError(("no trace at " + path).c_str());
    return;
  }
  uint64_t events = 0;
  for (auto _ : state) {
    auto file = TraceFile::open(path);
    auto layout = file ? readLayout(**file) : core::Result<TraceLayout>(core::Error("open failed"));
    if (!layout) {
      state.SkipWithError(layout.error().message().c_str());
      return;
    }
    EventDecoderTable table;
    std::string error;
    DecodeConfig config;
    config.swap = layout->swap;
    table.build(layout->formats, layout->uname, config, error);
    std::vector<std::unique_ptr<CpuStreamDecoder>> streams;
    for (const auto& ref : layout->cpuData)
      if (ref.size) streams.push_back(std::make_unique<CpuStreamDecoder>(**file, *layout, table, ref));
    DecodePipeline pipeline(std::move(streams), 2, 4096, 3);
    events = 0;
    for (size_t s = 0; s < pipeline.streamCount(); ++s) {
      for (;;) {
        EventBlock* b = pipeline.next(s);
        events += b->count;
        const bool last = b->last;
        pipeline.release(s, b);
        if (last) break;
      }
    }
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DecodeTraceDat)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

int runOnce(const char* path) {
  const auto t0 = std::chrono::steady_clock::now();
  auto result = importers::importTrace(path);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!result) {
    std::fprintf(stderr, "%s\n", result.error().message().c_str());
    return 1;
  }
  std::printf("{\"reader\": \"schedlab\", \"events\": %llu, \"seconds\": %.4f, \"peak_rss_kb\": %ld, "
              "\"model_bytes\": %zu}\n",
              static_cast<unsigned long long>(result->model->eventCount), seconds, peakRssKb(),
              result->model->memoryBytes());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // As schedlab-cli does, so that the import is measured as users run it.
  core::rerunWithHugePageMalloc(argv);
  if (argc == 3 && std::strcmp(argv[1], "--once") == 0) return runOnce(argv[2]);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
