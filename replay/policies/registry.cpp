#include "replay/policies/registry.h"

#include "replay/policies/bfs_policy.h"
#include "replay/policies/fair_policy.h"

namespace replay {

const std::vector<PolicyInfo>& allPolicies() {
  static const std::vector<PolicyInfo> kPolicies = {
      {"cfs", "CFS (Linux <= 6.5): vruntime, slices from the latency period, wakeup granularity, buddies",
       "SPEC.md §5.1-5.2 (fair.c up to 6.5); RT class and load balancing simplified as documented",
       [](Params& p) { fair::defineParams(p, fair::Variant::Cfs); },
       [](const Params& p, int cpus) { return fair::make(p, fair::Variant::Cfs, cpus); }},
      {"eevdf", "EEVDF (Linux 6.6+): eligibility from lag, earliest virtual deadline, run to parity",
       "SPEC.md §5.1, §5.3 (fair.c ~6.8-6.10); RT class and load balancing as for cfs",
       [](Params& p) { fair::defineParams(p, fair::Variant::Eevdf); },
       [](const Params& p, int cpus) { return fair::make(p, fair::Variant::Eevdf, cpus); }},
      {"bfs", "BFS v0.463 (Con Kolivas): one global queue, virtual deadlines, sticky tasks, SMT nice, ISO",
       "SPEC.md §1; kernelOfTruth/linux kernel/sched/bfs.c (BFS 0.463)",
       [](Params& p) { bfs::defineParams(p, bfs::Variant::Bfs); },
       [](const Params& p, int) { return bfs::make(p, bfs::Variant::Bfs); }},
      {"gc", "-gc v4.1_0463_1 (Alfred Chen): BFS 0.463 with priodl keys and level-ordered idle CPU choice",
       "SPEC.md §2.2; mcdope/pf-kernel kernel/sched/bfs.c",
       [](Params& p) { bfs::defineParams(p, bfs::Variant::Gc); },
       [](const Params& p, int) { return bfs::make(p, bfs::Variant::Gc); }},
      {"vrq", "VRQ 0.89 (Alfred Chen): per-CPU queues ordered by priodl, idle CPUs pull queue heads",
       "SPEC.md §2.3; cchalpha/linux-gc kernel/sched/bfs.c (VRQ 0.89, commit 2aa9d8c8)",
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

std::string policyNames() {
  std::string out;
  for (const PolicyInfo& p : allPolicies()) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

}  // namespace replay
