// Helpers for the replay tests: run an rt-app JSON workload through a model
// on a given topology and read per-task CPU time back.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/topology.h"
#include "replay/replay.h"
#include "replay/workload/rtapp_reader.h"

namespace replay_test {

inline replay::Workload rtapp(const std::string& json) {
  auto w = replay::readRtAppWorkload(json, "test.json");
  EXPECT_TRUE(w.has_value()) << (w ? "" : w.error().message());
  return w ? std::move(*w) : replay::Workload();
}

inline replay::ReplayResult replayOn(const replay::Workload& w, const std::string& model, int cpus,
                                     std::vector<std::string> params = {}, int threads = 1) {
  replay::ReplayOptions o;
  o.model = model;
  o.topology = core::Topology::uniform(cpus, threads, "test");
  o.params = std::move(params);
  auto r = replay::runReplay(w, o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
  return r ? std::move(*r) : replay::ReplayResult();
}

/// A task of a hand-built workload that exits after `bursts`, arriving on `startCpu`.
inline replay::Task exitingTask(int32_t tid, std::string comm, int startCpu, std::vector<replay::Burst> bursts) {
  replay::Task t;
  t.tid = t.tgid = tid;
  t.comm = std::move(comm);
  t.startCpu = startCpu;
  t.exits = true;
  t.bursts = std::move(bursts);
  return t;
}

/// Share of run time of task `i` among all tasks.
inline double share(const replay::ReplayResult& r, size_t i) {
  int64_t total = 0;
  for (const auto& o : r.outcomes) total += o.runtimeNs;
  return total ? static_cast<double>(r.outcomes.at(i).runtimeNs) / static_cast<double>(total) : 0.0;
}

/// Two CPU hogs (nice a and nice b) for `seconds` on whatever topology the caller picks.
inline std::string twoHogs(int niceA, int niceB, double seconds, const std::string& policy = "SCHED_OTHER") {
  return R"({"global": {"duration": )" + std::to_string(seconds) + R"(},
    "tasks": {
      "a": {"loop": -1, "policy": ")" + policy + R"(", "priority": )" + std::to_string(niceA) + R"(, "run": 100000},
      "b": {"loop": -1, "policy": ")" + policy + R"(", "priority": )" + std::to_string(niceB) + R"(, "run": 100000}}})";
}

}  // namespace replay_test
