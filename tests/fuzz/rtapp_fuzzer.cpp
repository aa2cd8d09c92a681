// libFuzzer target for the rt-app JSON workload reader (replay/workload/
// rtapp_reader, over json_reader): what a user hands `schedlab-cli replay
// FILE.json`. A workload it accepts must be one the simulator takes: small
// ones (the reader bounds nothing, so large ones would only measure the
// simulator) are replayed through cfs.
// Seeds: tests/fuzz/corpus/rtapp (minimised from tests/data/rtapp and the
// workloads of the replay tests); dictionary tests/fuzz/dict/rtapp.dict.
//   build/fuzz/tests/fuzz/rtapp_fuzzer -max_len=2048 -dict=tests/fuzz/dict/rtapp.dict CORPUS_DIR
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "replay/replay.h"
#include "replay/workload/rtapp_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto workload = replay::readRtAppWorkload(text, "fuzz.json");
  if (!workload) return 0;
  // At most 200 bursts in at most 20 ms of simulated time: a replay of well
  // under a millisecond, so the fuzzer keeps its pace.
  constexpr int64_t kSmallDurationNs = 20'000'000;
  if (workload->durationNs <= 0 || workload->durationNs > kSmallDurationNs || workload->burstCount() > 200) return 0;
  replay::ReplayOptions options;
  options.model = "cfs";
  options.discardEvents = true;
  (void)replay::runReplay(*workload, options);
  return 0;
}
