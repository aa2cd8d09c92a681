#include "core/kernel_runtime_check.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace core {

void checkKernelRuntime(TraceModel& m) {
  const auto& threads = m.threads;
  std::vector<int64_t> sliced(threads.size(), 0);
  bool any = false;
  for (size_t u = 1; u < threads.size(); ++u) any |= threads.kernelRuntimeNs[u] >= 0;
  if (!any) return;
  for (const auto& t : m.cpuSlices)
    for (size_t i = 0; i < t.size(); ++i) {
      const size_t u = t.utid[i].value;
      if (t.kind[i] != SliceKind::Task || threads.kernelRuntimeNs[u] < 0) continue;
      const int64_t from = std::max(t.ts[i], threads.kernelRuntimeFromTs[u]);
      const int64_t to = std::min(t.end(i), threads.kernelRuntimeUntilTs[u]);
      if (to > from) sliced[u] += to - from;
    }
  const std::string file = m.sourceFiles.empty() ? std::string() : m.sourceFiles.front();
  for (size_t u = 1; u < threads.size(); ++u) {
    const int64_t kernel = threads.kernelRuntimeNs[u];
    if (kernel < 0) continue;
    const int64_t diff = sliced[u] - kernel;
    if (std::llabs(diff) <= kRuntimeCheckTickNs) continue;
    char buf[200];
    std::snprintf(buf, sizeof buf, "tid %d (%s): run slices %.3f ms, sched_stat_runtime %.3f ms (%+.3f ms) up to %lld",
                  threads.tid[u], std::string(m.comm(Utid(static_cast<uint32_t>(u)))).c_str(),
                  static_cast<double>(sliced[u]) / 1e6, static_cast<double>(kernel) / 1e6,
                  static_cast<double>(diff) / 1e6, static_cast<long long>(threads.kernelRuntimeUntilTs[u]));
    m.diagnostics.record({DiagCode::runtime_differs_from_kernel, file, std::nullopt, std::nullopt, std::nullopt,
                          threads.kernelRuntimeUntilTs[u], buf});
  }
}

}  // namespace core
