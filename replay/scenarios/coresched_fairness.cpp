#include "replay/scenarios/coresched_fairness.h"

#include <cmath>

#include "core/trace_model.h"
#include "replay/replay.h"

namespace replay::scenario {

namespace {

constexpr int32_t kCpuTid = 1001, kMemTid = 1002;

// Two always-runnable tasks, each pinned to one thread of core 0 (sysbench
// was pinned so in the experiment); `together` pins both to CPU 0 (its nosmt).
Workload fairnessWorkload(int64_t durationNs, int64_t cpuStart, int64_t memStart, bool withMem, bool together) {
  Workload w;
  w.source = "scenario coresched-fairness";
  w.kind = "scenario";
  w.durationNs = durationNs;
  auto hog = [&](int32_t tid, const char* comm, int cpu, int64_t start) {
    Task t;
    t.tid = tid;
    t.tgid = tid;
    t.comm = comm;
    t.affinity = {cpu};
    t.startTs = start;
    t.bursts.push_back(Burst{.work = 2 * durationNs});  // never finishes: throughput is work done by the end
    w.tasks.push_back(std::move(t));
  };
  hog(kCpuTid, "sysbench-cpu", 0, cpuStart);
  if (withMem) hog(kMemTid, "sysbench-mem", together ? 0 : 1, memStart);
  return w;
}

std::string cookieRules(const std::string& tagging) {
  if (tagging == "cpu-tagged") return "tid:1001=cpu";
  if (tagging == "mem-tagged") return "tid:1002=mem";
  if (tagging == "both-tagged") return "tid:1001=cpu;tid:1002=mem";
  return "";
}

void summarise(FairnessRow& row) {
  const double n = static_cast<double>(row.values.size());
  double sum = 0;
  for (double v : row.values) sum += v;
  row.mean = n > 0 ? sum / n : 0;
  double ss = 0;
  for (double v : row.values) ss += (v - row.mean) * (v - row.mean);
  row.stddev = n > 1 ? std::sqrt(ss / (n - 1)) : 0;
}

}  // namespace

const std::vector<std::string>& coreschedVariants() {
  static const std::vector<std::string> k = {"v3", "v3-corevrt", "v3-fiaccount", "v3-allowance", "v3-coresched-idle",
                                             "mainline"};
  return k;
}

core::Result<std::vector<FairnessRow>> runCoreschedFairness(const FairnessOptions& o) {
  if (o.runs < 1 || o.runs > 1000) return core::Error("--runs must be 1..1000");
  if (!(o.seconds > 0) || o.seconds > 3600) return core::Error("--seconds must be in (0, 3600]");
  if (o.base != "cfs" && o.base != "eevdf") return core::Error("--base must be cfs or eevdf (not '" + o.base + "')");
  const auto duration = static_cast<int64_t>(o.seconds * 1e9);

  // One run: the CPU-bound task's work over the time it existed, and its runs
  // on CPU 0 (count, total time) for the granularity of the sharing.
  struct Measured {
    double relative;
    int64_t runs, runNs;
  };
  auto measure = [&](const std::string& model, std::vector<std::string> params, int run, bool withMem,
                     bool together) -> core::Result<Measured> {
    ReplayOptions ro;
    ro.model = model;
    ro.topology = core::Topology::uniform(1, 2, "scenario: one core, two SMT threads");
    ro.params = o.params;
    ro.params.insert(ro.params.end(), params.begin(), params.end());
    ro.stop = o.stop;
    // Start phases spread over one tick period, the two tasks taking turns to start first.
    int64_t tickNs = 4'000'000;
    for (const auto& p : ro.params)
      if (p.rfind("hz=", 0) == 0) tickNs = 1'000'000'000LL / std::max(1, std::atoi(p.c_str() + 3));
    const int64_t phase = tickNs * run / o.runs + 137'000 * run;
    const int64_t cpuStart = run % 2 ? phase : 0, memStart = run % 2 ? 0 : phase;
    const Workload w = fairnessWorkload(duration, cpuStart, memStart, withMem, together);
    auto r = runReplay(w, ro);
    if (!r) return r.error();
    Measured m{static_cast<double>(r->outcomes[0].workDone) / static_cast<double>(duration - cpuStart), 0, 0};
    const auto& slices = r->model->cpuSlices[0];
    for (size_t i = 0; i < slices.size(); ++i)
      if (slices.kind[i] == core::SliceKind::Task && r->model->threads.tid[slices.utid[i].value] == kCpuTid)
        ++m.runs, m.runNs += slices.dur[i];
    return m;
  };

  std::vector<FairnessRow> rows;
  auto addRow = [&](FairnessRow row, const std::string& model, const std::vector<std::string>& params, bool withMem,
                    bool together) -> core::Status {
    int64_t runs = 0, runNs = 0;
    for (int run = 0; run < o.runs; ++run) {
      auto v = measure(model, params, run, withMem, together);
      if (!v) return core::Error(v.error().message());
      row.values.push_back(v->relative);
      runs += v->runs, runNs += v->runNs;
    }
    summarise(row);
    row.runMs = runs ? static_cast<double>(runNs) / static_cast<double>(runs) / 1e6 : 0;
    rows.push_back(std::move(row));
    return {};
  };
  if (auto st = addRow({.variant = "alone", .tagging = "-", .values = {}}, o.base, {}, false, false); !st) return core::Error(st.message());
  if (auto st = addRow({.variant = "nosmt", .tagging = "-", .values = {}}, o.base, {}, true, true); !st) return core::Error(st.message());
  for (const std::string& variant : coreschedVariants()) {
    for (const std::string& tagging : fairnessTaggings()) {
      std::vector<std::string> params = {"coresched.variant=" + variant};
      if (const std::string rules = cookieRules(tagging); !rules.empty()) params.push_back("coresched.cookie=" + rules);
      if (auto st = addRow({.variant = variant, .tagging = tagging, .values = {}}, o.base + "+coresched", params, true, false); !st)
        return core::Error(st.message());
    }
  }
  return rows;
}

}  // namespace replay::scenario
