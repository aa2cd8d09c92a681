// The cross-check of run slices against sched_stat_runtime (core/kernel_runtime_check.h),
// on small traces whose expected figures are worked out by hand below.
#include <gtest/gtest.h>

#include "core/kernel_runtime_check.h"
#include "tests/support/trace_builder.h"

namespace {

using testing_support::TraceBuilder;
constexpr int64_t kMs = 1'000'000;

std::vector<std::string> messages(const core::TraceModel& m) {
  std::vector<std::string> out;
  for (const auto& r : m.diagnostics.records())
    if (r.code == core::DiagCode::runtime_differs_from_kernel) out.push_back(r.message);
  return out;
}

// t100 runs on CPU 0 from 1 to 11 ms and the kernel accounts those 10 ms: no
// diagnostic. t200 runs on CPU 1 from 1 to 31 ms, but the kernel accounts 10 ms
// (up to 11 ms) and then only 5 ms more up to 31 ms (the host stole the rest):
// from 1 ms (where the first accounting began) to 31 ms, 30 ms of slices
// against 15 ms, +15 ms.
TEST(KernelRuntimeCheck, ReportsTasksWhoseSlicesDifferByMoreThanATick) {
  TraceBuilder tb;
  tb.sw(1 * kMs, 0, 0, "R", 100).sw(1 * kMs, 1, 0, "R", 200);
  tb.runtimeStat(11 * kMs, 0, 100, 100, 10 * kMs).sw(11 * kMs, 0, 100, "S", 0);
  tb.runtimeStat(11 * kMs, 1, 200, 200, 10 * kMs).runtimeStat(31 * kMs, 1, 200, 200, 5 * kMs).sw(31 * kMs, 1, 200, "S", 0);
  auto m = tb.build();
  const auto u100 = 1u, u200 = 2u;
  ASSERT_EQ(m->threads.tid[u100], 100);
  ASSERT_EQ(m->threads.tid[u200], 200);
  EXPECT_EQ(m->threads.kernelRuntimeNs[u100], 10 * kMs);
  EXPECT_EQ(m->threads.kernelRuntimeFromTs[u200], 1 * kMs);
  EXPECT_EQ(m->threads.kernelRuntimeNs[u200], 15 * kMs);
  EXPECT_EQ(m->threads.kernelRuntimeUntilTs[u200], 31 * kMs);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::runtime_differs_from_kernel), 1u);
  EXPECT_EQ(messages(*m), std::vector<std::string>{
                              "tid 200 (t200): run slices 30.000 ms, sched_stat_runtime 15.000 ms (+15.000 ms) up to 31000000"});
}

// A difference of exactly a tick is accounting granularity; a nanosecond more is not.
TEST(KernelRuntimeCheck, ATickIsTheThreshold) {
  for (const int64_t extra : {int64_t{0}, int64_t{1}}) {
    TraceBuilder tb;
    tb.sw(1 * kMs, 0, 0, "R", 100);
    // Accounted 1 ms at 2 ms, then the rest minus a tick (minus `extra`) at 21 ms.
    tb.runtimeStat(2 * kMs, 0, 100, 100, 1 * kMs)
        .runtimeStat(21 * kMs, 0, 100, 100, 19 * kMs - core::kRuntimeCheckTickNs - extra)
        .sw(21 * kMs, 0, 100, "S", 0);
    auto m = tb.build();
    EXPECT_EQ(m->diagnostics.count(core::DiagCode::runtime_differs_from_kernel), extra ? 1u : 0u) << extra;
  }
}

// The first accounting may reach back before the trace's first event: only the
// part inside the trace counts (the slice cannot start earlier). And a remote
// update (a wakeup on CPU 1 accounting CPU 0's current task) counts like any.
TEST(KernelRuntimeCheck, ClipsToTheTraceAndTakesRemoteUpdates) {
  TraceBuilder tb;
  tb.other(1 * kMs, 0, 100);  // the trace begins with t100 current on CPU 0
  tb.runtimeStat(2 * kMs, 0, 100, 100, 5 * kMs);    // 4 ms of it before the trace
  tb.runtimeStat(12 * kMs, 1, 300, 100, 10 * kMs);  // from CPU 1, in t300's context
  tb.sw(12 * kMs, 0, 100, "S", 0);
  auto m = tb.build();
  const uint32_t u100 = 1;
  ASSERT_EQ(m->threads.tid[u100], 100);
  EXPECT_EQ(m->threads.kernelRuntimeFromTs[u100], 1 * kMs);
  EXPECT_EQ(m->threads.kernelRuntimeNs[u100], 11 * kMs);  // 1 ms inside the trace, then 10
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::runtime_differs_from_kernel), 0u);
}

// Without sched_stat_runtime nothing is compared.
TEST(KernelRuntimeCheck, NothingWithoutTheEvent) {
  TraceBuilder tb;
  tb.sw(1 * kMs, 0, 0, "R", 100).sw(50 * kMs, 0, 100, "S", 0);
  auto m = tb.build();
  EXPECT_EQ(m->threads.kernelRuntimeNs[1], -1);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::runtime_differs_from_kernel), 0u);
}

}  // namespace
