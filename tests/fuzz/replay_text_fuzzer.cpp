// libFuzzer target for the text a user types to steer a replay and to pick a
// time, outside the GUI: --from/--to times (app::cli::parseTime and
// relativeTime), and a replay request as `schedlab-cli replay` builds it from
// --model, --topology and --param (replay::parseModel, core::Topology::parseSpec,
// Params::setAssignment, and through the coresched.cookie, uclamp.clamp and
// smt.task_factor parameters the task selector rules of replay/workload/
// task_rules), replayed over a fixed three-task rt-app workload.
// Input: the first byte picks the target (even: a time; odd: a replay request),
// the rest is the text. A replay request is lines: the model, the topology
// spec (empty: the workload's own), then one KEY=VALUE per line.
// Seeds: tests/fuzz/corpus/replay_text; dictionary tests/fuzz/dict/replay_text.dict.
//   build/fuzz/tests/fuzz/replay_text_fuzzer -max_len=512 -dict=tests/fuzz/dict/replay_text.dict CORPUS_DIR
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli/cli.h"
#include "core/topology.h"
#include "replay/replay.h"
#include "replay/workload/rtapp_reader.h"

namespace {

// Two fair tasks of two programs and an RT task on two CPUs, 5 ms: every
// selector kind (comm, tid, tgid, all, rt, fair) has something to match.
const replay::Workload& workload() {
  static const replay::Workload w = *replay::readRtAppWorkload(R"({
    "global": {"duration": 0.005},
    "tasks": {
      "hog": {"instance": 2, "loop": -1, "run": 3000, "sleep": 500},
      "pipe": {"loop": -1, "priority": 5, "run": 200, "sleep": 300, "cpus": [0, 1]},
      "rt": {"policy": "SCHED_FIFO", "priority": 50, "loop": -1, "run": 500, "timer": {"ref": "t", "period": 2000}}
    }
  })", "replay_text_fuzzer");
  return w;
}

std::vector<std::string> lines(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    out.emplace_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    // A recorded trace's first timestamp is boot-relative nanoseconds, ~10^13.
    constexpr int64_t kFirstTs = 12'345'678'901'234;
    (void)app::cli::parseTime(std::string(text), kFirstTs);
    (void)app::cli::relativeTime(std::string(text), kFirstTs);
    return 0;
  }
  std::vector<std::string> request = lines(text);
  if (request.empty()) return 0;
  replay::ReplayOptions options;
  options.model = request[0];
  if (request.size() > 1 && !request[1].empty()) {
    auto topology = core::Topology::parseSpec(request[1]);
    // Replays on large machines only take longer, they reach no other code.
    if (!topology || topology->cpuCount() > 16) return 0;
    options.topology = *topology;
  }
  for (size_t i = 2; i < request.size(); ++i) options.params.push_back(request[i]);
  options.discardEvents = true;
  (void)replay::runReplay(workload(), options);
  return 0;
}
