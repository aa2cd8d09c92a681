#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

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

// This machine's sysfs against util-linux's own reader of it: `lscpu -p`
// lists CPU,Core,Socket per CPU; the CPUs sharing a (socket, core) are one
// core, cores ordered by their lowest CPU.
TEST(Topology, ThisMachineSysfsReadsAsLscpuDoes) {
  if (!std::filesystem::exists("/sys/devices/system/cpu/cpu0/topology/core_id")) GTEST_SKIP() << "no sysfs topology";
  std::unique_ptr<FILE, int (*)(FILE*)> lscpu(popen("lscpu -p=CPU,CORE,SOCKET 2>/dev/null", "r"), pclose);
  ASSERT_TRUE(lscpu);
  std::map<std::pair<int, int>, std::vector<int>> bySocketCore;
  std::map<int, int> socketOf;
  char line[256];
  while (std::fgets(line, sizeof line, lscpu.get())) {
    int cpu = 0, coreId = 0, socket = 0;
    if (line[0] == '#' || std::sscanf(line, "%d,%d,%d", &cpu, &coreId, &socket) != 3) continue;
    bySocketCore[{socket, coreId}].push_back(cpu);
    socketOf[cpu] = socket;
  }
  if (socketOf.empty()) GTEST_SKIP() << "lscpu (util-linux) printed no CPU here";
  std::vector<std::vector<int>> expected;
  for (auto& [key, cpus] : bySocketCore) {
    std::sort(cpus.begin(), cpus.end());
    expected.push_back(cpus);
  }
  std::sort(expected.begin(), expected.end());

  auto t = core::Topology::fromSysfs("/sys/devices/system/cpu");
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->cpuCount(), static_cast<int>(socketOf.size()));
  EXPECT_EQ(t->cores(), expected);
  for (const auto& [cpu, socket] : socketOf) {
    ASSERT_NE(t->cpu(cpu), nullptr) << cpu;
    EXPECT_EQ(t->cpu(cpu)->package, socket) << cpu;
  }
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
