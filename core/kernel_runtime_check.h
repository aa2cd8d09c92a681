// The cross-check of a model's run slices against the kernel's own accounting
// (sched_stat_runtime, which `perf sched record` records): called by
// SchedBuilder::finalize() once the slices are final (inferred switch-ins placed).
#pragma once

#include <cstdint>

#include "core/trace_model.h"

namespace core {

/// A tick at CONFIG_HZ=250 (Debian's kernels and the recording machines'): the
/// kernel accounts a running task at every tick and every switch, so a
/// difference below it is accounting granularity, not a wrong slice.
inline constexpr int64_t kRuntimeCheckTickNs = 4'000'000;

/// For every task the kernel accounted (threads.kernelRuntimeNs >= 0), compares
/// the time its run slices cover over the span the kernel's accounting covers
/// (a task running when the trace began has a slice from the CPU's first event:
/// only a lower bound of its start) with what the kernel accounted, and records a
/// runtime_differs_from_kernel diagnostic (Info) for each task where the two
/// differ by more than a tick. Never fails.
void checkKernelRuntime(TraceModel& model);

}  // namespace core
