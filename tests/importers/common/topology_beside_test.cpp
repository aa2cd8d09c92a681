// A topology snapshot beside a trace (`schedlab-cli record` writes TRACE.topology)
// is used when the trace is imported, whatever the format; a topology given by
// the user still wins; a snapshot that cannot be read is reported and ignored.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/topology_snapshot.h"
#include "importers/importer.h"
#include "support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using test_support::ScratchDir;

// The demo was recorded on 2 CPUs; this snapshot makes them SMT siblings of one core.
const char* const kOneCoreTwoThreads =
    "cpu/cpu0/topology/core_id:0\ncpu/cpu0/topology/physical_package_id:0\n"
    "cpu/cpu1/topology/core_id:0\ncpu/cpu1/topology/physical_package_id:0\n";

std::string demoCopy(const ScratchDir& dir) {
  const std::string path = dir.file("demo.txt");
  fs::copy_file(fs::path(SCHEDLAB_TEST_DATA) / "../../resources/demo/pipe-and-hogs.txt", path);
  return path;
}

TEST(TopologyBeside, TheSnapshotBesideTheTraceIsItsTopology) {
  ScratchDir dir("topology-beside");
  const std::string trace = demoCopy(dir);
  auto plain = importers::importTrace(trace);
  ASSERT_TRUE(plain) << plain.error().message();
  EXPECT_EQ(plain->model->topology.cores().size(), 2u);  // the default: one thread per core

  std::ofstream(core::topologySnapshotPath(trace)) << kOneCoreTwoThreads;
  auto r = importers::importTrace(trace);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->model->topology.cores().size(), 1u);
  EXPECT_EQ(r->model->topology.cores()[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(r->model->topology.source(), "demo.txt.topology");

  importers::ImportOptions user;
  user.topology = core::Topology::uniform(2, 1);
  auto overridden = importers::importTrace(trace, user);
  ASSERT_TRUE(overridden);
  EXPECT_EQ(overridden->model->topology.cores().size(), 2u);
  EXPECT_EQ(overridden->model->topology.source(), "user");
}

TEST(TopologyBeside, AnUnreadableSnapshotIsReportedAndIgnored) {
  ScratchDir dir("topology-beside-bad");
  const std::string trace = demoCopy(dir);
  std::ofstream(core::topologySnapshotPath(trace)) << "cpu/cpu0/topology/core_id:0\nthis is no snapshot line\n";
  auto r = importers::importTrace(trace);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_FALSE(r->error);
  EXPECT_EQ(r->model->topology.cores().size(), 2u);
  EXPECT_EQ(r->model->diagnostics.count(core::DiagCode::topology_snapshot_unreadable), 1u);
  bool found = false;
  for (const auto& rec : r->model->diagnostics.records())
    if (rec.code == core::DiagCode::topology_snapshot_unreadable) {
      found = true;
      EXPECT_EQ(rec.format(), core::topologySnapshotPath(trace) + ": line 2: expected PATH:CONTENT (a sysfs path "
                                                                  "relative to /sys/devices/system)");
    }
  EXPECT_TRUE(found);
}

}  // namespace
