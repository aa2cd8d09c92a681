// The scheduler models a replay can use, by name, with where each comes from.
// Called by replay::runReplay and the CLI's help.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "replay/sim/params.h"
#include "replay/sim/policy.h"

namespace replay {

struct PolicyInfo {
  std::string_view name;    ///< "cfs", "eevdf", "bfs", "gc", "vrq"
  std::string_view title;   ///< one line: what it models
  std::string_view source;  ///< where the rules come from (docs/models.md section, kernel source)
  void (*defineParams)(Params& params);
  std::unique_ptr<Policy> (*make)(const Params& params, int cpuCount);
};

const std::vector<PolicyInfo>& allPolicies();
const PolicyInfo* findPolicy(std::string_view name);
/// "cfs, eevdf, bfs, gc, vrq"
std::string policyNames();

/// A model name as the user writes it: a base policy and optional features,
/// "cfs", "eevdf+coresched", "cfs+uclamp", "cfs+coresched+uclamp".
struct ModelSpec {
  const PolicyInfo* base = nullptr;
  bool coresched = false;  ///< core scheduling (docs/models.md §3): cfs and eevdf only
  bool uclamp = false;     ///< uclamp + schedutil + energy (docs/models.md §4): cfs and eevdf only
  std::string name;        ///< normalised: base, then +coresched, then +uclamp
  std::string title() const;
  std::string source() const;
};
/// Errors name the unknown part and list what exists.
core::Result<ModelSpec> parseModel(std::string_view name);
/// "baseline" (optionally with features, "baseline+coresched") is the model of
/// the kernel that recorded the trace: cfs before Linux 6.6, eevdf from 6.6 on
/// (eevdf's release=auto then follows the release), eevdf when the trace does
/// not say. Any other name is returned unchanged.
std::string resolveBaseline(std::string_view model, std::string_view kernelRelease);
/// Every parameter of the model: the engine's, the base policy's, the features'.
void defineModelParams(const ModelSpec& spec, Params& params);
std::unique_ptr<Policy> makeModel(const ModelSpec& spec, const Params& params, int cpuCount);

}  // namespace replay
