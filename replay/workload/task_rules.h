// Per-task replay attributes chosen by selectors, as a user would apply them
// with prctl(PR_SCHED_CORE) or sched_setattr(): core-scheduling cookies,
// uclamp requests and SMT interference factors. Parsed from the replay
// parameters (coresched.cookie, uclamp.clamp, smt.task_factor) by
// replay::runReplay and resolved once per workload; the engine and policies
// read the result through EngineConfig::taskAttrs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "replay/workload/workload.h"

namespace replay {

/// Which tasks a rule applies to. Text forms: `comm:REGEX` (ECMAScript regex,
/// searched in the comm: anchor it with ^...$ for an exact name), `tgid:N`,
/// `tid:N`, `all`, `rt` (FIFO/RR tasks), `fair` (every other task).
struct TaskSelector {
  enum class Kind : uint8_t { Comm, Tgid, Tid, All, Rt, Fair };
  Kind kind = Kind::All;
  std::string pattern;  ///< Comm
  int32_t id = 0;       ///< Tgid, Tid
  std::string text;     ///< as the user wrote it

  static core::Result<TaskSelector> parse(std::string_view text);
  /// Indices of the workload's tasks it matches.
  std::vector<TaskId> match(const Workload& workload) const;
};

/// What the engine and policies need to know of each task beyond the workload.
struct TaskAttributes {
  uint32_t cookie = 0;         ///< core-scheduling cookie, 0 = untagged
  int16_t uclampMin = -1;      ///< requested uclamp.min (0..1024), -1 = not set (policy default)
  int16_t uclampMax = -1;      ///< requested uclamp.max, -1 = not set
  double smtFactor = -1;       ///< own work rate while an SMT sibling is busy, -1 = smt.factor
  int64_t sliceNs = 0;         ///< EEVDF custom slice (sched_attr.sched_runtime), 0 = the base slice
};

/// Cookies from `coresched.cookie`: rules separated by ';', each one of
/// `per-process` (each tgid its own cookie), `per-thread` (each task its own),
/// `none`, or `SELECTOR=NAME` (tasks with the same NAME share one cookie).
/// Later rules override earlier ones for the tasks they match; a task no rule
/// matches inherits its parent's cookie (cookies survive fork), else 0.
/// `names` receives one name per cookie value (index = cookie, [0] = "untagged").
core::Status resolveCookies(const Workload& workload, std::string_view rules, std::vector<TaskAttributes>& attrs,
                            std::vector<std::string>* names = nullptr);

/// uclamp requests from `uclamp.clamp`: `SELECTOR=MIN:MAX` rules separated by
/// ';' (either side may be empty: not set); later rules win; children inherit
/// (sched_reset_on_fork aside, clamps are inherited across fork).
core::Status resolveUclamp(const Workload& workload, std::string_view rules, std::vector<TaskAttributes>& attrs);

/// EEVDF custom slices from `task_slice`: `SELECTOR=NS` rules separated by ';',
/// NS in [100000, 100000000] (sched_setattr() clamps sched_runtime to 0.1..100 ms);
/// later rules win; children inherit (sched_fork() copies custom_slice).
core::Status resolveSlices(const Workload& workload, std::string_view rules, std::vector<TaskAttributes>& attrs);

/// SMT factors from `smt.task_factor`: `SELECTOR=F` rules separated by ';',
/// F in (0, 1]; later rules win; not inherited (it describes the code a task runs).
core::Status resolveSmtFactors(const Workload& workload, std::string_view rules, std::vector<TaskAttributes>& attrs);

}  // namespace replay
