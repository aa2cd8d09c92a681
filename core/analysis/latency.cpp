#include "core/analysis/latency.h"

#include <algorithm>

namespace core::analysis {

std::vector<LatencySample> latencySamples(const TraceModel& m, TimeRange range) {
  std::vector<LatencySample> out;
  const auto& st = m.threadStates;
  for (uint32_t u = 1; u < m.threads.size(); ++u) {
    const auto [b, e] = m.stateRowsOf(Utid(u));
    auto r = static_cast<uint32_t>(std::lower_bound(st.ts.begin() + b, st.ts.begin() + e, range.from) - st.ts.begin());
    for (; r + 1 < e && st.ts[r] < range.to; ++r)
      if (isRunnable(st.state[r]) && st.state[r + 1] == TaskState::Running)
        out.push_back({st.ts[r], st.ts[r + 1] - st.ts[r], Utid(u), st.state[r] == TaskState::Runnable});
  }
  std::sort(out.begin(), out.end(), [](const LatencySample& a, const LatencySample& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.utid < b.utid;
  });
  return out;
}

std::vector<TaskLatency> taskLatencies(const TraceModel& m, const std::vector<LatencySample>& samples) {
  std::vector<std::vector<int64_t>> woken(m.threads.size()), delay(m.threads.size());
  std::vector<LatencySample> worstWoken(m.threads.size()), worstDelay(m.threads.size());
  for (const LatencySample& s : samples) {
    const size_t u = s.utid.value;
    delay[u].push_back(s.ns);
    if (s.ns > worstDelay[u].ns) worstDelay[u] = s;
    if (!s.woken) continue;
    woken[u].push_back(s.ns);
    if (s.ns > worstWoken[u].ns) worstWoken[u] = s;
  }
  std::vector<TaskLatency> out;
  for (size_t u = 1; u < m.threads.size(); ++u) {
    if (delay[u].empty()) continue;
    out.push_back({Utid(static_cast<uint32_t>(u)), Distribution::of(std::move(woken[u])),
                   Distribution::of(std::move(delay[u])), worstWoken[u], worstDelay[u]});
  }
  return out;
}

}  // namespace core::analysis
