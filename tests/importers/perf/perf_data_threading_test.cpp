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

struct Built {
  core::Status status;
  std::shared_ptr<core::TraceModel> model;
};

Built build(const std::string& path, Threading threading, const importers::ImportOptions& options = {}) {
  core::SchedBuilder b;
  b.addSourceFile(path);
  b.setFormat("perf.data");
  Built out;
  out.status = importers::perf::readPerfData(path, b, options, threading);
  out.model = b.finalize();
  return out;
}

void expectSameModel(const Built& a, const Built& b) {
  EXPECT_EQ(a.status.isOk(), b.status.isOk());
  EXPECT_EQ(a.status.message(), b.status.message());
  EXPECT_EQ(modelCounts(*a.model), modelCounts(*b.model));
  EXPECT_EQ(a.model->threads.size(), b.model->threads.size());
  EXPECT_EQ(a.model->threads.tgid, b.model->threads.tgid);
  EXPECT_EQ(a.model->dataLoss.count, b.model->dataLoss.count);
  for (size_t i = 0; i < core::kDiagCount; ++i)
    EXPECT_EQ(a.model->diagnostics.count(static_cast<core::DiagCode>(i)), b.model->diagnostics.count(static_cast<core::DiagCode>(i)))
        << core::diagName(static_cast<core::DiagCode>(i));
  ASSERT_EQ(a.model->diagnostics.records().size(), b.model->diagnostics.records().size());
  for (size_t i = 0; i < a.model->diagnostics.records().size(); ++i)
    EXPECT_EQ(a.model->diagnostics.records()[i].format(), b.model->diagnostics.records()[i].format());
  ASSERT_EQ(a.model->cpuSlices.size(), b.model->cpuSlices.size());
  for (size_t c = 0; c < a.model->cpuSlices.size(); ++c) {
    EXPECT_EQ(a.model->cpuSlices[c].ts, b.model->cpuSlices[c].ts);
    EXPECT_EQ(a.model->cpuSlices[c].dur, b.model->cpuSlices[c].dur);
    EXPECT_EQ(a.model->cpuSlices[c].utid, b.model->cpuSlices[c].utid);
  }
  EXPECT_EQ(a.model->threadStates.ts, b.model->threadStates.ts);
  EXPECT_EQ(a.model->wakeups.ts, b.model->wakeups.ts);
}

std::vector<std::string> files() {
  std::vector<std::string> out = {testData("perf/sleep-0.1.perf.data")};
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
