// Replay cost against import cost of the same trace. The budget: replaying a
// trace through one policy (workload extraction + simulation + building the
// replayed model) costs at most 3x importing it. Reference trace (~4M events):
//   BUFFER_KB=524288 tools/record-sched-trace /tmp/bench-replay tracedat -- hackbench -g 8 -l 15000
// Set SCHEDLAB_REPLAY_BENCH_TRACE to use another file. Each replay benchmark
// reports "x_import": its time per iteration over one import measured in the
// same process (also: `schedlab-cli replay FILE --model M --bench`).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "core/analysis/fair_share.h"
#include "core/analysis/stats.h"
#include "importers/importer.h"
#include "replay/replay.h"
#include "replay/workload/trace_extractor.h"

namespace {

std::string tracePath() {
  const char* env = std::getenv("SCHEDLAB_REPLAY_BENCH_TRACE");
  return env && *env ? env : "/tmp/bench-replay/trace.dat";
}

struct Imported {
  std::shared_ptr<core::TraceModel> model;
  double importSeconds = 0;
  std::string error;
};

// Imported once per process; its wall time is the ratio's denominator.
const Imported& imported() {
  static const Imported kImported = [] {
    Imported im;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = importers::importTrace(tracePath());
    im.importSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r)
      im.error = r.error().message();
    else
      im.model = r->model;
    return im;
  }();
  return kImported;
}

void BM_Import(benchmark::State& state) {
  uint64_t events = 0;
  for (auto _ : state) {
    auto r = importers::importTrace(tracePath());
    if (!r) {
      state.SkipWithError(r.error().message().c_str());
      return;
    }
    events = r->model->eventCount;
    benchmark::DoNotOptimize(r->model.get());
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
}

void replayBench(benchmark::State& state, const char* model, bool discard) {
  const Imported& im = imported();
  if (!im.model) {
    state.SkipWithError(("no trace: " + im.error).c_str());
    return;
  }
  uint64_t eventsOut = 0;
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto workload = replay::extractWorkload(*im.model);
    if (!workload) {
      state.SkipWithError(workload.error().message().c_str());
      return;
    }
    replay::ReplayOptions o;
    o.model = model;
    o.discardEvents = discard;
    auto r = replay::runReplay(*workload, o);
    if (!r) {
      state.SkipWithError(r.error().message().c_str());
      return;
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    eventsOut = r->model ? r->model->eventCount : r->stats.switches;
    benchmark::DoNotOptimize(r->model.get());
  }
  state.counters["events_in"] = static_cast<double>(im.model->eventCount);
  state.counters["events_out"] = static_cast<double>(eventsOut);
  state.counters["x_import"] = seconds / static_cast<double>(state.iterations()) / im.importSeconds;
}

void BM_Replay(benchmark::State& state, const char* model) { replayBench(state, model, false); }
void BM_SimulateOnly(benchmark::State& state, const char* model) { replayBench(state, model, true); }

void BM_Extract(benchmark::State& state) {
  const Imported& im = imported();
  if (!im.model) {
    state.SkipWithError(("no trace: " + im.error).c_str());
    return;
  }
  for (auto _ : state) {
    auto w = replay::extractWorkload(*im.model);
    benchmark::DoNotOptimize(w.has_value());
  }
}

// The statistics a replay computes for the recording (and again for the
// replay), and their costliest part, the ideal fair share, alone.
void BM_Stats(benchmark::State& state) {
  const Imported& im = imported();
  if (!im.model) {
    state.SkipWithError(("no trace: " + im.error).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(core::analysis::computeStats(*im.model).busyNs);
}

void BM_FairShare(benchmark::State& state) {
  const Imported& im = imported();
  if (!im.model) {
    state.SkipWithError(("no trace: " + im.error).c_str());
    return;
  }
  for (auto _ : state)
    benchmark::DoNotOptimize(core::analysis::computeFairShare(*im.model, core::analysis::wholeTrace(*im.model)).size());
}

}  // namespace

BENCHMARK(BM_Import)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Extract)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Stats)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_FairShare)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK_CAPTURE(BM_Replay, cfs, "cfs")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Replay, eevdf, "eevdf")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Replay, bfs, "bfs")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Replay, gc, "gc")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Replay, vrq, "vrq")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_SimulateOnly, cfs, "cfs")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_SimulateOnly, eevdf, "eevdf")->Unit(benchmark::kMillisecond)->Iterations(3);

BENCHMARK_MAIN();
