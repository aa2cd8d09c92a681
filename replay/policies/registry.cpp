#include "replay/policies/registry.h"

#include "replay/policies/bfs_policy.h"
#include "replay/policies/fair_policy.h"
#include "replay/policies/uclamp_policy.h"
#include "replay/sim/engine.h"

namespace replay {

const std::vector<PolicyInfo>& allPolicies() {
  static const std::vector<PolicyInfo> kPolicies = {
      {"cfs", "CFS (Linux <= 6.5): vruntime, slices from the latency period, wakeup granularity, buddies",
       "docs/models.md §5.1-5.2 (fair.c up to 6.5); RT class and load balancing simplified as in §5.4-5.5",
       [](Params& p) { fair::defineParams(p, fair::Variant::Cfs); },
       [](const Params& p, int cpus) { return fair::make(p, fair::Variant::Cfs, cpus); }},
      {"eevdf", "EEVDF (Linux 6.6 to 6.18.y, by release): lag, eligibility, virtual deadlines, delayed dequeue",
       "docs/models.md §5.1, §5.3 (kernel/sched/fair.c of 6.6, 6.12 and 6.18.y); RT class and load balancing as for cfs",
       [](Params& p) { fair::defineParams(p, fair::Variant::Eevdf); },
       [](const Params& p, int cpus) { return fair::make(p, fair::Variant::Eevdf, cpus); }},
      {"bfs", "BFS v0.463 (Con Kolivas): one global queue, virtual deadlines, sticky tasks, SMT nice, ISO",
       "docs/models.md §1; kernelOfTruth/linux kernel/sched/bfs.c (BFS 0.463)",
       [](Params& p) { bfs::defineParams(p, bfs::Variant::Bfs); },
       [](const Params& p, int) { return bfs::make(p, bfs::Variant::Bfs); }},
      {"gc", "-gc v4.1_0463_1 (Alfred Chen): BFS 0.463 with priodl keys and level-ordered idle CPU choice",
       "docs/models.md §2.2; mcdope/pf-kernel kernel/sched/bfs.c",
       [](Params& p) { bfs::defineParams(p, bfs::Variant::Gc); },
       [](const Params& p, int) { return bfs::make(p, bfs::Variant::Gc); }},
      {"vrq", "VRQ 0.89 (Alfred Chen): per-CPU queues ordered by priodl, idle CPUs pull queue heads",
       "docs/models.md §2.3; cchalpha/linux-gc kernel/sched/bfs.c (VRQ 0.89, commit 2aa9d8c8)",
       [](Params& p) { bfs::defineParams(p, bfs::Variant::Vrq); },
       [](const Params& p, int) { return bfs::make(p, bfs::Variant::Vrq); }},
  };
  return kPolicies;
}

const PolicyInfo* findPolicy(std::string_view name) {
  for (const PolicyInfo& p : allPolicies())
    if (p.name == name) return &p;
  return nullptr;
}

std::string ModelSpec::title() const {
  std::string t(base->title);
  if (coresched) t += "; with core scheduling (cookies, core-wide pick, forced idle)";
  if (uclamp) t += "; with uclamp, schedutil frequencies and an energy estimate";
  return t;
}

std::string ModelSpec::source() const {
  std::string s(base->source);
  if (coresched)
    s += "; core scheduling: docs/models.md §3 (RFC v3 thread, kernel/sched/core.c, fair.c, core_sched.c)";
  if (uclamp) s += "; uclamp: docs/models.md §4 (kernel/sched/core.c, cpufreq_schedutil.c)";
  return s;
}

std::string resolveBaseline(std::string_view model, std::string_view kernelRelease) {
  constexpr std::string_view kBaseline = "baseline";
  if (model.substr(0, kBaseline.size()) != kBaseline ||
      (model.size() > kBaseline.size() && model[kBaseline.size()] != '+'))
    return std::string(model);
  const auto release = fair::parseKernelVersion(kernelRelease);
  const bool cfs = release && *release < fair::KernelVersion{6, 6, 0};
  return std::string(cfs ? "cfs" : "eevdf") + std::string(model.substr(kBaseline.size()));
}

core::Result<ModelSpec> parseModel(std::string_view name) {
  ModelSpec spec;
  size_t pos = 0;
  bool first = true;
  while (pos <= name.size()) {
    const size_t plus = std::min(name.find('+', pos), name.size());
    const std::string_view part = name.substr(pos, plus - pos);
    pos = plus + 1;
    if (first) {
      spec.base = findPolicy(part);
      if (!spec.base)
        return core::Error("unknown model '" + std::string(name) + "' (known: " + policyNames() +
                           ", and cfs or eevdf followed by +coresched and/or +uclamp)");
      first = false;
      continue;
    }
    const bool fair = spec.base->name == "cfs" || spec.base->name == "eevdf";
    if (part == "coresched" || part == "uclamp") {
      if (!fair)
        return core::Error("model '" + std::string(name) + "': +" + std::string(part) +
                           " is modelled over cfs and eevdf only (the mainline scheduler it belongs to)");
      (part == "coresched" ? spec.coresched : spec.uclamp) = true;
    } else {
      return core::Error("model '" + std::string(name) + "': unknown feature '+" + std::string(part) +
                         "' (known: +coresched, +uclamp)");
    }
  }
  spec.name = std::string(spec.base->name) + (spec.coresched ? "+coresched" : "") + (spec.uclamp ? "+uclamp" : "");
  return spec;
}

void defineModelParams(const ModelSpec& spec, Params& params) {
  defineEngineParams(params);
  spec.base->defineParams(params);
  if (spec.coresched) fair::defineCoreschedParams(params);
  if (spec.uclamp) uclamp::defineParams(params);
}

std::unique_ptr<Policy> makeModel(const ModelSpec& spec, const Params& params, int cpuCount) {
  auto base = spec.base->make(params, cpuCount);
  if (spec.uclamp) return uclamp::wrap(std::move(base), params, cpuCount);
  return base;
}

std::string policyNames() {
  std::string out;
  for (const PolicyInfo& p : allPolicies()) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

}  // namespace replay
