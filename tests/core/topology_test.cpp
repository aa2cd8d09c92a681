#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/topology.h"

TEST(Topology, Spec) {
  auto t = core::Topology::parseSpec("2x2");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->cpuCount(), 4);
  EXPECT_EQ(t->cores().size(), 2u);
  EXPECT_EQ(t->siblingsOf(0), std::vector<int>{1});
  EXPECT_EQ(t->siblingsOf(3), std::vector<int>{2});
  EXPECT_TRUE(t->hasSmt());
  EXPECT_EQ(t->describe(), "2 cores x 2 threads (user)");
  EXPECT_EQ(core::Topology::parseSpec("4")->cpuCount(), 4);
}

TEST(Topology, BadSpecsSayWhy) {
  for (const char* bad : {"", "x2", "2x", "0x2", "2x0", "axb", "2x2x2", "100000x2", "-1x1"}) {
    auto t = core::Topology::parseSpec(bad);
    ASSERT_FALSE(t) << bad;
    EXPECT_NE(t.error().message().find("topology"), std::string::npos) << t.error().message();
  }
}

TEST(Topology, FromSysfsFolder) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "schedlab-topology-test";
  fs::remove_all(dir);
  // x86 numbering: siblings are cpu c and c+2.
  for (int cpu = 0; cpu < 4; ++cpu) {
    fs::create_directories(dir / ("cpu" + std::to_string(cpu)) / "topology");
    std::ofstream(dir / ("cpu" + std::to_string(cpu)) / "topology" / "core_id") << cpu % 2 << "\n";
    std::ofstream(dir / ("cpu" + std::to_string(cpu)) / "topology" / "physical_package_id") << 0 << "\n";
  }
  auto t = core::Topology::fromSysfs(dir.string());
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_EQ(t->cores().size(), 2u);
  EXPECT_EQ(t->cores()[0], (std::vector<int>{0, 2}));
  EXPECT_EQ(t->cores()[1], (std::vector<int>{1, 3}));
  EXPECT_EQ(t->cpu(2)->core, 0);
  EXPECT_EQ(t->cpu(2)->thread, 1);
  fs::remove_all(dir);
  EXPECT_FALSE(core::Topology::fromSysfs(dir.string()));
}

TEST(Topology, ThisMachineSysfsReads) {
  if (!std::filesystem::exists("/sys/devices/system/cpu/cpu0/topology/core_id")) GTEST_SKIP() << "no sysfs topology";
  auto t = core::Topology::fromSysfs("/sys/devices/system/cpu");
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_GE(t->cpuCount(), 1);
}

TEST(Topology, SysfsKeepsEachCoresPackage) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "schedlab-topology-packages";
  fs::remove_all(dir);
  // Package 1 holds the lower CPU numbers: sorting cores must carry packages along.
  const int core[4] = {0, 0, 1, 1}, package[4] = {1, 1, 0, 0};
  for (int cpu = 0; cpu < 4; ++cpu) {
    const auto t = dir / ("cpu" + std::to_string(cpu)) / "topology";
    fs::create_directories(t);
    std::ofstream(t / "core_id") << core[cpu] << "\n";
    std::ofstream(t / "physical_package_id") << package[cpu] << "\n";
  }
  auto t = core::Topology::fromSysfs(dir.string());
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_EQ(t->cores().size(), 2u);
  EXPECT_EQ(t->cores()[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(t->cpu(0)->package, 1);
  EXPECT_EQ(t->cpu(2)->package, 0);
  fs::remove_all(dir);
}
