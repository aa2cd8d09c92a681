// The scheduler models a replay can use, by name, with where each comes from.
// Called by replay::runReplay and the CLI's help.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "replay/sim/params.h"
#include "replay/sim/policy.h"

namespace replay {

struct PolicyInfo {
  std::string_view name;    ///< "cfs", "eevdf", "bfs", "gc", "vrq"
  std::string_view title;   ///< one line: what it models
  std::string_view source;  ///< where the rules come from (SPEC.md section, kernel source)
  void (*defineParams)(Params& params);
  std::unique_ptr<Policy> (*make)(const Params& params, int cpuCount);
};

const std::vector<PolicyInfo>& allPolicies();
const PolicyInfo* findPolicy(std::string_view name);
/// "cfs, eevdf, bfs, gc, vrq"
std::string policyNames();

}  // namespace replay
