// The perf.data reader builds the same model whether it reads on a worker
// thread (decoding and building overlapping) or on the importing thread alone —
// on good files, on files that turn bad part-way, and when cancelled.
#include <gtest/gtest.h>

#include <stop_token>

#include "importers/perf/perf_data_reader.h"
#include "perf_test_support.h"

namespace {

using namespace perf_test;
using importers::perf::Threading;

std::vector<std::string> files() {
  // Each layout: file, zstd-compressed records, the folder of perf record --threads.
  std::vector<std::string> out = {testData("perf/sleep-0.1.perf.data"), testData("perf/hackbench-sched-z.perf.data"),
                                  testData("perf/hackbench-sched-threads.perf.data")};
  const fs::path root = fs::path(SCHEDLAB_SHARED_TRACES) / "recorded";
  std::error_code ec;
  if (fs::is_directory(root, ec))
    for (const auto& e : fs::directory_iterator(root, ec))
      for (const char* name : {"perf.data", "perf.data.old"})
        if (fs::exists(e.path() / name)) out.push_back((e.path() / name).string());
  return out;
}

TEST(PerfDataThreading, SameModelEitherWay) {
  for (const auto& f : files()) {
    SCOPED_TRACE(f);
    const Built direct = build(f, Threading::Never);
    const Built threaded = build(f, Threading::Always);
    EXPECT_TRUE(direct.status.isOk()) << direct.status.message();
    expectSameModel(direct, threaded);
  }
}

TEST(PerfDataThreading, SameModelWhenTheFileTurnsBad) {
  auto bytes = readBytes(testData("perf/sleep-0.1.perf.data"));
  PerfDataFile f(bytes);
  size_t sample = 0;
  for (size_t i = 0, n = 0; i < f.records.size(); ++i)
    if (f.records[i].type == 9 && n++ == 150) sample = f.originalOffset(i);
  const uint16_t bad = 4;
  std::memcpy(bytes.data() + sample + 6, &bad, 2);
  TempDir dir;
  const std::string path = dir.write("bad.data", bytes);
  const Built direct = build(path, Threading::Never);
  const Built threaded = build(path, Threading::Always);
  EXPECT_FALSE(direct.status.isOk());
  EXPECT_GT(direct.model->eventCount, 100u);
  expectSameModel(direct, threaded);
}

TEST(PerfDataThreading, Cancelled) {
  std::stop_source stop;
  stop.request_stop();
  importers::ImportOptions options;
  options.stop = stop.get_token();
  for (Threading t : {Threading::Never, Threading::Always}) {
    const Built b = build(testData("perf/sleep-0.1.perf.data"), t, options);
    EXPECT_NE(b.status.message().find("import cancelled"), std::string::npos) << b.status.message();
  }
  // Through the registry: an error, no model.
  auto r = importers::importTrace(testData("perf/sleep-0.1.perf.data"), options);
  EXPECT_FALSE(r.has_value());
}

}  // namespace
