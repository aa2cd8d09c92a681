#include "replay/replay.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <future>
#include <optional>

#include "core/duration_text.h"
#include "replay/policies/fair_policy.h"
#include "replay/policies/registry.h"
#include "replay/policies/uclamp_policy.h"
#include "replay/sim/pipelined_sink.h"

namespace replay {

namespace {

class NullSink final : public EventSink {
 public:
  void onSwitch(int64_t, int, TaskId, core::TaskState, TaskId, bool) override {}
  void onIdleKind(int64_t, int, bool) override {}
  void onCounter(int64_t, core::CounterKind, int32_t, double) override {}
  void onWaking(int64_t, int, TaskId, bool, TaskId, int) override {}
  void onWakeup(int64_t, int, TaskId, bool, TaskId, int, bool) override {}
  void onMigrate(int64_t, int, TaskId, TaskId, int, int) override {}
  void onFork(int64_t, int, TaskId, TaskId) override {}
  void onExit(int64_t, int, TaskId) override {}
  void onEnd(int64_t) override {}
};

// FNV-1a over raw column bytes.
class Hasher {
 public:
  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      m_h ^= p[i];
      m_h *= 1099511628211ULL;
    }
  }
  template <typename T>
  void column(const std::vector<T>& v) {
    const uint64_t n = v.size();
    bytes(&n, sizeof n);
    if (!v.empty()) bytes(v.data(), v.size() * sizeof(T));
  }
  // Hashed as the int64 vector it stands for, so a hash does not depend on the storage.
  void column(const core::TimeColumn& c) {
    const uint64_t n = c.size();
    bytes(&n, sizeof n);
    for (const int64_t v : c) bytes(&v, sizeof v);
  }
  uint64_t value() const { return m_h; }

 private:
  uint64_t m_h = 1469598103934665603ULL;
};

core::Topology defaultTopology(const Workload& w) {
  if (w.recordedTopology && !w.recordedTopology->empty()) return *w.recordedTopology;
  int maxCpu = 0;
  for (const Task& t : w.tasks)
    for (int c : t.affinity) maxCpu = std::max(maxCpu, c);
  return core::Topology::flat(maxCpu + 1, "default: one CPU per CPU the workload names");
}

// The first eight tasks a measured rule names in its origin, " (a, b, ...)".
class TaskNames {
 public:
  void add(std::string name) {
    if (++m_count <= 8) m_text += (m_text.empty() ? " (" : ", ") + name;
  }
  size_t count() const { return m_count; }
  std::string text() const { return m_count == 0 ? "" : m_text + (m_count > 8 ? ", ...)" : ")"); }

 private:
  std::string m_text;
  size_t m_count = 0;
};

// How irq_wakeup_time=measured judged the workload's tasks, for its origin.
std::string timerSleepsOrigin(const Workload& w) {
  if (w.kind != "trace") return "no recording: every sleep is relative";
  TaskNames absolute;
  for (const Task& t : w.tasks)
    if (t.absoluteTimers) absolute.add(t.comm + " " + std::to_string(t.tid));
  return "measured from the recording: absolute timers for " + std::to_string(absolute.count()) + " of the " +
         std::to_string(w.timerTasksJudged) + " user tasks with at least 8 timer cycles" + absolute.text();
}

// How irq_wake_pack=measured found the workload's tasks, for its origin.
std::string irqWakePackOrigin(const Workload& w) {
  if (w.kind != "trace") return "no recording: fair.c's placement";
  TaskNames kept;
  size_t judged = 0;
  for (const Task& t : w.tasks) {
    if (t.irqWakeupsBesideIdle < kMinIrqWakeupsBesideIdle) continue;
    ++judged;
    if (t.irqWakeupsKeptBusy > 0)
      kept.add(t.comm + " " + std::to_string(t.tid) + ": " + std::to_string(t.irqWakeupsKeptBusy) + " of " +
               std::to_string(t.irqWakeupsBesideIdle));
  }
  return "measured from the recording: " + std::to_string(kept.count()) + " of the " + std::to_string(judged) +
         " tasks with at least " + std::to_string(kMinIrqWakeupsBesideIdle) +
         " interrupt wakeups on a busy CPU beside their idle one kept some there" + kept.text();
}

}  // namespace

core::Result<Params> defaultParams(const std::string& model) {
  auto spec = parseModel(model);
  if (!spec) return spec.error();
  Params params;
  defineModelParams(*spec, params);
  return params;
}

namespace {
std::optional<int64_t> medianInPlace(std::vector<int64_t>& v) {
  if (v.empty()) return std::nullopt;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}
}  // namespace

std::optional<WakerDrift> wakerDrift(std::vector<int64_t>& pastNs, std::vector<int64_t>& shortNs) {
  if (pastNs.empty() && shortNs.empty()) return std::nullopt;
  return WakerDrift{.medianPastNs = medianInPlace(pastNs), .medianShortNs = medianInPlace(shortNs)};
}

std::string describeBlocks(const EngineStats& st, const std::optional<WakerDrift>& drift, const Workload& workload) {
  std::string s = std::to_string(st.taskBlocks) + " of " + std::to_string(st.taskBlocks + st.taskBlocksSkipped) +
                  " recorded blocks on a task's wakeup replayed (the others' waker had already passed its point)";
  if (workload.dataflowGates)
    s += "; " + std::to_string(st.gateBlocks) + " of " + std::to_string(st.gateBlocks + st.gatesPassed) +
         " dataflow gates blocked";
  if (drift) {  // wakerDrift() gives one only with a median on some side
    s += "; the waker when its wakee ended the burst: a median ";
    if (drift->medianPastNs)
      s += core::formatDuration(*drift->medianPastNs) + " of its work past its recorded point (block lost)";
    if (drift->medianPastNs && drift->medianShortNs) s += ", ";
    if (drift->medianShortNs) s += core::formatDuration(*drift->medianShortNs) + " short of it (kept)";
  }
  return s;
}

core::Result<ReplayResult> runReplay(const Workload& workload, const ReplayOptions& options) {
  auto specOr = parseModel(options.model);
  if (!specOr) return specOr.error();
  const ModelSpec& spec = *specOr;
  Params params;
  defineModelParams(spec, params);
  for (const std::string& assignment : options.params)
    if (auto st = params.setAssignment(assignment); !st) return core::Error(st.message());
  if (options.hz)
    if (auto st = params.set("hz", std::to_string(*options.hz)); !st) return core::Error(st.message());
  if (workload.tasks.empty()) return core::Error("the workload has no tasks");
  if (auto st = fair::resolveEevdfRelease(params, workload.kernelRelease); !st) return core::Error(st.message());
  fair::resolveWakePack(params, workload.schedSettingsKnown, workload.vcpuPackSetting);
  fair::resolveAutogroup(params, workload.kind == "trace", workload.schedSettingsKnown, workload.autogroupSetting);
  resolvePreempt(params, workload.kind == "trace", workload.schedSettingsKnown, workload.preemptSetting);
  Unmodelled unmodelled = workload.unmodelled;
  if (params.has("autogroup") && params.get("autogroup") == "on") unmodelled.recordedWithAutogroup = 0;
  // Delays "from the recording" are resolved here so that what is stored is what was used.
  constexpr const char* kDelayParams[kWakeupPaths] = {"idle_wakeup_ns", "idle_irq_wakeup_ns", "preempt_ipi_ns",
                                                       "preempt_wakeup_ns"};
  std::array<bool, kWakeupPaths> sampled{};
  const bool drawEach = params.get("wakeup_delay_sampling") == "distribution";
  for (size_t p = 0; p < kWakeupPaths; ++p) {
    if (params.getInt(kDelayParams[p]) >= 0) continue;
    const DelayDistribution& d = workload.wakeupDelays[p];
    if (d.samples == 0) {
      (void)params.resolve(kDelayParams[p], "0",
                           workload.kind == "trace" ? "measured: the recording has no such wakeup" : "no recording: 0");
      continue;
    }
    sampled[p] = drawEach;
    (void)params.resolve(kDelayParams[p], std::to_string(d.median()),
                         "measured from the recording: median of " + std::to_string(d.samples) + " wakeups" +
                             (drawEach ? "; each wakeup draws from their distribution" : ""));
  }

  // What a switch or a migration costs the kernel is in the recorded run
  // times already: a sched trace cannot tell it from the work of the task it
  // interrupts (docs/models.md 8.2). Said with the value, as the measured costs are.
  if (workload.kind == "trace")
    for (const char* cost : {"context_switch_ns", "migration_ns"})
      if (params.origin(cost) == "default" && params.getInt(cost) == 0)
        (void)params.resolve(cost, "0", "inside the recorded run times: a sched trace cannot tell it from the task's work");

  if (params.get("irq_wakeup_time") == "measured")
    (void)params.resolve("irq_wakeup_time", "measured", timerSleepsOrigin(workload));
  if (params.has("irq_wake_pack") && params.get("irq_wake_pack") == "measured")
    (void)params.resolve("irq_wake_pack", "measured", irqWakePackOrigin(workload));
  DelayDistribution tickDelays;
  if (params.getInt("tick_delay_ns") < 0) {
    const int hz = static_cast<int>(params.getInt("hz"));
    tickDelays = tickSwitchDelays(workload.tickPreemptions, 1'000'000'000LL / std::max(1, hz));
    if (tickDelays.samples == 0) {
      (void)params.resolve("tick_delay_ns", "0",
                           workload.kind != "trace" ? "no recording: 0"
                                                    : "measured: " + std::to_string(workload.tickPreemptions.size()) +
                                                          " preemptions without a wakeup, not on a grid of hz=" +
                                                          std::to_string(hz));
    } else {
      (void)params.resolve("tick_delay_ns", std::to_string(tickDelays.median()),
                           "measured from the recording: median of " + std::to_string(tickDelays.samples) +
                               " tick preemptions' offsets from the hz=" + std::to_string(hz) + " grid" +
                               (drawEach ? "; each tick draws from their distribution" : ""));
      if (!drawEach) tickDelays = {};
    }
  }

  ReplayResult result;
  result.topology = options.topology ? *options.topology : defaultTopology(workload);
  if (result.topology.empty()) return core::Error("the replay topology has no CPUs");
  // A recording's pins are guesses (per-CPU kernel threads by name): on a
  // smaller replay topology, a thread pinned to a CPU that is not there runs
  // unpinned. A hand-written workload's pins are the user's and must fit.
  std::optional<Workload> adjusted;
  if (workload.kind == "trace") {
    for (size_t t = 0; t < workload.tasks.size(); ++t) {
      const auto& aff = workload.tasks[t].affinity;
      const bool fits =
          std::all_of(aff.begin(), aff.end(), [&](int cpu) { return result.topology.cpu(cpu) != nullptr; });
      if (fits) continue;
      if (!adjusted) adjusted = workload;
      auto& a = adjusted->tasks[t].affinity;
      a.erase(std::remove_if(a.begin(), a.end(), [&](int cpu) { return result.topology.cpu(cpu) == nullptr; }),
              a.end());
    }
  }
  const Workload& w = adjusted ? *adjusted : workload;
  auto config = engineConfigFrom(params, result.topology.cpuLimit());
  if (!config) return config.error();
  for (size_t p = 0; p < kWakeupPaths; ++p)
    if (sampled[p]) config->wakeupDelay[p].distribution = &workload.wakeupDelays[p];
  if (tickDelays.samples > 0) config->tickDelay.distribution = &tickDelays;
  std::vector<TaskAttributes>& attrs = config->taskAttrs;
  if (auto st = resolveSmtFactors(w, params.get("smt.task_factor"), attrs); !st) return core::Error(st.message());
  if (spec.coresched)
    if (auto st = resolveCookies(w, params.get("coresched.cookie"), attrs, &result.cookieNames); !st)
      return core::Error(st.message());
  if (spec.uclamp)
    if (auto st = resolveUclamp(w, params.get("uclamp.clamp"), attrs); !st) return core::Error(st.message());
  if (params.has("task_slice"))
    if (auto st = resolveSlices(w, params.get("task_slice"), attrs); !st) return core::Error(st.message());
  if (spec.uclamp)
    if (auto st = uclamp::validateParams(params); !st) return core::Error(st.message());
  attrs.resize(w.tasks.size());

  auto policy = makeModel(spec, params, result.topology.cpuCount());
  result.params = params.describe();

  core::SchedBuilder builder;
  builder.setFormat("replay (" + spec.name + ")");
  if (!workload.source.empty()) builder.addSourceFile(workload.source);
  builder.setTopology(result.topology);
  builder.setMetadata("replay.model", spec.name);
  builder.setMetadata("replay.model_title", spec.title());
  builder.setMetadata("replay.model_source", spec.source());
  builder.setMetadata("replay.workload", workload.kind);
  core::ReplayInfo replayInfo;
  replayInfo.model = spec.name;
  replayInfo.recordingPath = options.recordingPath.empty() ? workload.source : options.recordingPath;
  replayInfo.params = result.params;
  replayInfo.cookieNames = result.cookieNames;
  for (const auto& item : unmodelled.items()) replayInfo.unmodelled.push_back({item.key, item.what, item.count});
  builder.setReplayInfo(std::move(replayInfo));

  BuilderSink builderSink(builder, w, attrs);
  NullSink nullSink;
  EventSink* sink = options.discardEvents ? static_cast<EventSink*>(&nullSink) : &builderSink;
  std::unique_ptr<FtraceTextSink> text;
  std::unique_ptr<TeeSink> tee;
  if (!options.outTrace.empty()) {
    auto opened = FtraceTextSink::open(options.outTrace, w, result.topology.cpuLimit());
    if (!opened) return opened.error();
    text = std::move(*opened);
    tee = std::make_unique<TeeSink>(*sink, *text);
    sink = tee.get();
  }

  // The sinks run beside the simulation: the engine's thread only records.
  std::optional<PipelinedSink> pipelined;
  if (sink != &nullSink) pipelined.emplace(*sink);
  Engine engine(w, result.topology, *policy, *config, pipelined ? *pipelined : *sink);
  const auto ran = engine.run(options.stop);
  if (pipelined) pipelined->finish();
  if (!ran) return core::Error(ran.message());
  if (text)
    if (auto st = text->close(); !st) return core::Error(st.message());
  result.stats = engine.stats();
  result.wakerDrift = wakerDrift(result.stats.wakerPastNs, result.stats.wakerShortNs);
  result.outcomes = engine.outcomes();
  int64_t busyNs = 0;  // the CPUs' time running tasks: with SMT or a speed below 1 more than the work, cut by a duration less
  for (const TaskOutcome& o : result.outcomes) busyNs += o.runtimeNs;
  result.modelCounters = policy->counters(busyNs);
  if (!result.modelCounters.summary.empty())
    builder.setMetadata("replay.model_counters", result.modelCounters.summary);  // for the GUI and reports
  if (w.kind == "trace") builder.setMetadata("replay.blocks", describeBlocks(result.stats, result.wakerDrift, w));
  if (spec.uclamp) {
    result.energyJoules = uclamp::energyJoules(*policy, result.stats.endTs);
    char energy[32];
    std::snprintf(energy, sizeof energy, "%.6g", *result.energyJoules);
    builder.setMetadata("replay.energy_j", energy);  // travels with the model: GUI, stats, reports
  }
  if (!options.discardEvents) result.model = builder.finalize();

  Validation& v = result.validation;
  v.makespanRecordedNs = workload.recordedMakespanNs;
  v.makespanReplayNs = engine.makespan();
  v.unmodelled = unmodelled;
  for (size_t t = 0; t < workload.tasks.size(); ++t) {
    const TaskOutcome& o = result.outcomes[t];
    v.workRecordedNs += o.workTotal;
    v.workReplayNs += o.workDone;
    if (!o.finished) ++v.tasksUnfinished;
    if (o.workDone != o.workTotal) ++v.tasksWorkMismatch;
  }
  // (An rt-app duration cuts tasks short by design: such replays report false here.)
  v.workConserved = v.tasksUnfinished == 0 && v.tasksWorkMismatch == 0;
  v.tasks = workload.tasks.size();
  return result;
}

ExtractOptions extractOptionsFor(const ReplayOptions& options, ExtractOptions extract) {
  // Read as runReplay() will resolve the parameters (a bad assignment fails there).
  if (auto params = defaultParams(options.model)) {
    for (const std::string& assignment : options.params) (void)params->setAssignment(assignment);
    extract.dataflowGates = params->get("wakeup_dependency") == "dataflow";
    extract.tickPreemptions = params->getInt("tick_delay_ns") < 0;
  }
  return extract;
}

core::Result<RecordingReplay> replayRecording(const core::TraceModel& recording, const ReplayOptions& options,
                                              const ExtractOptions& extract,
                                              const std::function<void(double)>& progress) {
  // The recording's statistics need only the recording (the model is
  // immutable) and run on other threads. Their costliest part, the ideal fair
  // share, is swept while the workload is extracted, which leaves the second
  // core half idle; the rest starts with the simulation. (All of them with the
  // extraction were 3-6% slower: they then took new pages where they reuse the
  // tables the extraction frees, core/malloc_arena.cpp. All of them with the
  // simulation left the engine's thread two thirds of its core.)
  const auto whole = core::analysis::wholeTrace(recording);
  auto recordedShares = core::analysis::startFairShare(recording, whole);
  auto workload = extractWorkload(recording, extractOptionsFor(options, extract));
  if (!workload) return workload.error();
  auto recordedPending = std::async(std::launch::async, [&recording, whole, &recordedShares] {
    return core::analysis::computeStats(recording, whole, std::move(recordedShares));
  });
  if (options.stop.stop_requested()) return core::Error("replay cancelled");
  if (progress) progress(0.25);
  auto result = runReplay(*workload, options);
  if (!result) return result.error();
  if (progress) progress(0.8);
  RecordingReplay out{std::move(*workload), recordedPending.get(), std::move(*result)};
  judgeAgainstRecording(out.result, out.recordedStats);
  return out;
}

void judgeAgainstRecording(ReplayResult& r, const core::analysis::RunStats& recordedStats) {
  if (!r.model) return;  // discardEvents: nothing to judge
  Validation& v = r.validation;
  // Fidelity reads no fair-share figure: judged while the replay's sweep runs.
  r.runStats = core::analysis::computeStats(*r.model, core::analysis::wholeTrace(*r.model), [&](const auto& replayed) {
    v.fidelity = core::analysis::computeFidelity(
        recordedStats, replayed,
        {v.makespanRecordedNs, v.makespanReplayNs, v.workConserved, v.workRecordedNs, v.workReplayNs});
  });
  if (r.model->replay) r.model->replay->fidelity = std::make_shared<core::analysis::Fidelity>(*v.fidelity);
}

void writeValidationJson(core::JsonWriter& j, const Validation& v) {
  j.key("validation").beginObject();
  if (v.makespanRecordedNs >= 0)
    j.field("makespan_recorded_ns", v.makespanRecordedNs);
  else
    j.nullField("makespan_recorded_ns");
  j.field("makespan_replay_ns", v.makespanReplayNs);
  if (v.makespanRecordedNs > 0)
    j.field("makespan_ratio", v.makespanRatio());
  else
    j.nullField("makespan_ratio");
  j.field("work_conserved", v.workConserved);
  j.field("work_recorded_ns", v.workRecordedNs);
  j.field("work_replay_ns", v.workReplayNs);
  j.field("tasks", static_cast<uint64_t>(v.tasks));
  j.field("tasks_unfinished", v.tasksUnfinished);
  j.field("tasks_work_mismatch", v.tasksWorkMismatch);
  j.key("unmodelled").beginObject();
  for (const auto& item : v.unmodelled.items()) j.field(item.key, item.count);
  j.endObject();
  if (v.fidelity)
    core::analysis::writeFidelityJson(j, *v.fidelity);
  else
    j.nullField("fidelity");
  j.endObject();
}

uint64_t modelHash(const core::TraceModel& m) {
  Hasher h;
  for (const auto& t : m.cpuSlices) {
    h.column(t.ts), h.column(t.dur), h.column(t.prio), h.column(t.endState), h.column(t.endReason), h.column(t.kind),
        h.column(t.flags);
    for (const core::Utid u : t.utid) h.bytes(&u.value, sizeof u.value);
  }
  h.column(m.threadStates.ts), h.column(m.threadStates.state), h.column(m.threadStates.cpu),
      h.column(m.threadStates.rowsBegin);
  h.column(m.wakeups.ts), h.column(m.wakeups.targetCpu), h.column(m.wakeups.wakerCpu), h.column(m.wakeups.flags);
  for (const core::Utid u : m.wakeups.wakee) h.bytes(&u.value, sizeof u.value);
  for (const core::Utid u : m.wakeups.waker) h.bytes(&u.value, sizeof u.value);
  h.column(m.migrations.ts), h.column(m.migrations.origCpu), h.column(m.migrations.destCpu),
      h.column(m.migrations.flags);
  for (const core::Utid u : m.migrations.utid) h.bytes(&u.value, sizeof u.value);
  h.column(m.taskEvents.ts), h.column(m.taskEvents.kind);
  for (const core::Utid u : m.taskEvents.utid) h.bytes(&u.value, sizeof u.value);
  h.column(m.threads.tid), h.column(m.threads.prio), h.column(m.threads.startTs), h.column(m.threads.endTs);
  const int64_t span[2] = {m.firstTs, m.lastTs};
  h.bytes(span, sizeof span);
  return h.value();
}

}  // namespace replay
