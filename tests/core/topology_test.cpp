#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "core/topology.h"
#include "core/topology_snapshot.h"

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

// A snapshot as `schedlab-cli record` saves it: x86 numbering (siblings c and
// c+2), two packages' worth of cache lines that the model does not use.
const char* const kSnapshot =
    "# SchedLab topology snapshot: files of /sys/devices/system as PATH:CONTENT, saved with the trace beside it\n"
    "cpu/online:0-3\n"
    "cpu/cpu0/topology/core_id:0\n"
    "cpu/cpu0/topology/physical_package_id:0\n"
    "cpu/cpu0/topology/thread_siblings_list:0,2\n"
    "cpu/cpu0/cache/index3/shared_cpu_list:0-3\n"
    "cpu/cpu1/topology/core_id:1\n"
    "cpu/cpu1/topology/physical_package_id:0\n"
    "cpu/cpu2/topology/core_id:0\n"
    "cpu/cpu2/topology/physical_package_id:0\n"
    "cpu/cpu3/topology/core_id:1\n"
    "cpu/cpu3/topology/physical_package_id:0\n"
    "node/node0/cpulist:0-3\n";

TEST(TopologySnapshot, CoresAndSiblingsFromCoreIds) {
  auto t = core::parseTopologySnapshot(kSnapshot, "run.dat.topology");
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_EQ(t->cores().size(), 2u);
  EXPECT_EQ(t->cores()[0], (std::vector<int>{0, 2}));
  EXPECT_EQ(t->cores()[1], (std::vector<int>{1, 3}));
  EXPECT_EQ(t->describe(), "2 cores x 2 threads (run.dat.topology)");
}

TEST(TopologySnapshot, BadLinesNameTheFileAndLine) {
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"cpu/cpu0/topology/core_id:0\nno colon here\n", "f.topology: line 2: expected PATH:CONTENT"},
      {"\ncpu/cpu0/topology/core_id:zero\n", "f.topology: line 2: cpu/cpu0/topology/core_id holds \"zero\", not a number"},
      {"cpu/cpu1/topology/physical_package_id:0\n", "f.topology: cpu1 has no topology/core_id line"},
      {"node/node0/cpulist:0-3\n", "f.topology: no cpu/cpuN/topology/core_id lines: not a topology snapshot"},
  };
  for (const auto& c : cases) {
    auto t = core::parseTopologySnapshot(c.text, "f.topology");
    ASSERT_FALSE(t) << c.text;
    EXPECT_TRUE(t.error().message().starts_with(c.message)) << t.error().message();
  }
}

TEST(TopologySnapshot, CapturedFromASysfsTreeAndReadBackByFromSysfs) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "schedlab-topology-capture";
  fs::remove_all(root);
  auto put = [&](const std::string& rel, const std::string& value) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << value << "\n";
  };
  put("cpu/online", "0-1");
  put("cpu/cpu0/topology/core_id", "0");
  put("cpu/cpu0/topology/physical_package_id", "0");
  put("cpu/cpu0/topology/thread_siblings_list", "0-1");
  put("cpu/cpu0/cache/index0/level", "1");
  put("cpu/cpu0/cache/index0/type", "Data");
  put("cpu/cpu0/cache/index0/shared_cpu_list", "0-1");
  put("cpu/cpu1/topology/core_id", "0");
  put("cpu/cpu1/topology/physical_package_id", "0");
  put("cpu/cpu1/topology/thread_siblings_list", "0-1");
  fs::create_directories(root / "cpu/cpu2");  // offline: no topology folder
  fs::create_directories(root / "cpu/cpufreq");
  put("node/node0/cpulist", "0-1");
  auto text = core::captureTopologySnapshot(root.string());
  ASSERT_TRUE(text) << text.error().message();
  const std::string expected = "# SchedLab topology snapshot: files of " + root.string() +
                               " as PATH:CONTENT, saved with the trace beside it\n"
                               "cpu/online:0-1\n"
                               "cpu/cpu0/topology/core_id:0\n"
                               "cpu/cpu0/topology/physical_package_id:0\n"
                               "cpu/cpu0/topology/thread_siblings_list:0-1\n"
                               "cpu/cpu0/cache/index0/level:1\n"
                               "cpu/cpu0/cache/index0/type:Data\n"
                               "cpu/cpu0/cache/index0/shared_cpu_list:0-1\n"
                               "cpu/cpu1/topology/core_id:0\n"
                               "cpu/cpu1/topology/physical_package_id:0\n"
                               "cpu/cpu1/topology/thread_siblings_list:0-1\n"
                               "node/node0/cpulist:0-1\n";
  EXPECT_EQ(*text, expected);
  const fs::path file = root / "t.dat.topology";
  std::ofstream(file) << *text;
  auto t = core::Topology::fromSysfs(file.string());  // what --topology-from does with a file
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_EQ(t->cores().size(), 1u);
  EXPECT_EQ(t->cores()[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(t->source(), "t.dat.topology");
  fs::remove_all(root);
  EXPECT_FALSE(core::captureTopologySnapshot(root.string()));
}

TEST(Topology, CpuLists) {
  EXPECT_EQ(core::parseCpuList("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(core::parseCpuList(""), std::vector<int>{});  // an offline node's cpulist
  for (const char* bad : {"0-", "3-1", "a", "1,,2", "-1", "0-5000"}) EXPECT_FALSE(core::parseCpuList(bad)) << bad;
}

// lscpu-style fields, worked out by hand: 2 sockets x 64 cores x 2 threads.
TEST(Topology, SpecFieldsBuildPackagesNodesAndLlcs) {
  auto t = core::Topology::parseSpec("2s:64c:2t");
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->cpuCount(), 256);
  EXPECT_EQ(t->siblingsOf(0), std::vector<int>{1});
  EXPECT_EQ(t->cpu(127)->package, 0);
  EXPECT_EQ(t->cpu(128)->package, 1);
  EXPECT_EQ(t->cpu(128)->core, 64);
  EXPECT_EQ(t->cpu(255)->node, 1);
  EXPECT_EQ(t->llcs().size(), 2u);
  EXPECT_EQ(t->llcs()[1].front(), 128);
  EXPECT_EQ(t->describe(), "2 packages x 64 cores x 2 threads, 2 NUMA nodes (user)");

  auto epyc = core::Topology::parseSpec("1s:64c:2t:8l");
  ASSERT_TRUE(epyc);
  ASSERT_EQ(epyc->llcs().size(), 8u);
  EXPECT_EQ(epyc->llcs()[1], (std::vector<int>{16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31}));
  EXPECT_EQ(epyc->cpu(16)->llc, 1);
  EXPECT_EQ(epyc->count(core::Topology::Level::Node), 1);
  EXPECT_EQ(epyc->describe(), "64 cores x 2 threads, 8 LLCs (user)");

  auto oneNode = core::Topology::parseSpec("2s:8c:1n");
  ASSERT_TRUE(oneNode);
  EXPECT_EQ(oneNode->count(core::Topology::Level::Node), 1);
  EXPECT_EQ(oneNode->count(core::Topology::Level::Package), 2);

  auto dies = core::Topology::parseSpec("32c:2d");
  ASSERT_TRUE(dies);
  EXPECT_EQ(dies->cpu(15)->die, 0);
  EXPECT_EQ(dies->cpu(16)->die, 1);
  EXPECT_EQ(dies->llcs().size(), 2u);  // one per die by default
  EXPECT_EQ(dies->count(core::Topology::Level::Die), 2);

  auto quarters = core::Topology::parseSpec("1s:16c:4n:4l");
  ASSERT_TRUE(quarters);
  EXPECT_EQ(quarters->cpu(4)->node, 1);
  EXPECT_EQ(quarters->cpu(4)->llc, 1);
}

TEST(Topology, BadSpecFieldsSayWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"2s:8c:3n", "nodes must split"},   {"2s:7c:2d", "dies"},           {"2s:8c:3l", "LLCs must split"},
      {"2s:8c:2n:1l", "LLCs must split"}, {"2s:8c:2c", "given twice"},    {"8q:2s", "not COUNT followed by"},
      {"2s:", "empty field"},             {"2s:2t", "cores per socket"}, {"0s:4c", "at least 1"},
      {"2s:4096c", "4096 CPUs"},          {"1s:4c:9t", "8 threads"},      {"3s:4c:2n", "nodes must split"},
  };
  for (const auto& [spec, why] : cases) {
    auto t = core::Topology::parseSpec(spec);
    ASSERT_FALSE(t) << spec;
    EXPECT_NE(t.error().message().find(why), std::string::npos) << spec << ": " << t.error().message();
    EXPECT_NE(t.error().message().find(std::string("'") + spec + "'"), std::string::npos) << t.error().message();
  }
}

// A two-node machine as sysfs shows it: 4 cores x 2 threads, x86 numbering
// (siblings c and c+4), an L3 per node, and an L4-level instruction cache over
// everything that must not count as the LLC.
const char* const kTwoNodeSnapshot =
    "cpu/online:0-7\n"
    "cpu/cpu0/topology/core_id:0\ncpu/cpu0/topology/physical_package_id:0\n"
    "cpu/cpu0/cache/index0/level:1\ncpu/cpu0/cache/index0/type:Data\ncpu/cpu0/cache/index0/shared_cpu_list:0,4\n"
    "cpu/cpu0/cache/index3/level:3\ncpu/cpu0/cache/index3/type:Unified\ncpu/cpu0/cache/index3/shared_cpu_list:0-1,4-5\n"
    "cpu/cpu0/cache/index4/level:4\ncpu/cpu0/cache/index4/type:Instruction\ncpu/cpu0/cache/index4/shared_cpu_list:0-7\n"
    "cpu/cpu1/topology/core_id:1\ncpu/cpu1/topology/physical_package_id:0\n"
    "cpu/cpu1/cache/index3/level:3\ncpu/cpu1/cache/index3/type:Unified\ncpu/cpu1/cache/index3/shared_cpu_list:0-1,4-5\n"
    "cpu/cpu2/topology/core_id:0\ncpu/cpu2/topology/physical_package_id:1\n"
    "cpu/cpu2/cache/index3/level:3\ncpu/cpu2/cache/index3/type:Unified\ncpu/cpu2/cache/index3/shared_cpu_list:2-3,6-7\n"
    "cpu/cpu3/topology/core_id:1\ncpu/cpu3/topology/physical_package_id:1\n"
    "cpu/cpu4/topology/core_id:0\ncpu/cpu4/topology/physical_package_id:0\n"
    "cpu/cpu5/topology/core_id:1\ncpu/cpu5/topology/physical_package_id:0\n"
    "cpu/cpu6/topology/core_id:0\ncpu/cpu6/topology/physical_package_id:1\n"
    "cpu/cpu7/topology/core_id:1\ncpu/cpu7/topology/physical_package_id:1\n"
    "node/node0/cpulist:0-1,4-5\n"
    "node/node1/cpulist:2-3,6-7\n";

TEST(TopologySnapshot, LlcsFromTheHighestDataOrUnifiedCacheAndNodesFromCpulist) {
  auto t = core::parseTopologySnapshot(kTwoNodeSnapshot, "two.topology");
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->llcs(), (std::vector<std::vector<int>>{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(t->cpu(6)->node, 1);
  EXPECT_EQ(t->cpu(5)->node, 0);
  EXPECT_EQ(t->cpu(3)->llc, 1);  // cpu3 lists no cache: its LLC comes from its siblings' lists
  EXPECT_EQ(t->describe(), "2 packages x 2 cores x 2 threads, 2 NUMA nodes (two.topology)");
  auto bad = core::parseTopologySnapshot(std::string(kTwoNodeSnapshot) + "node/node2/cpulist:0-x\n", "two.topology");
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().message().starts_with("two.topology: line 35: node/node2/cpulist holds \"0-x\", not a CPU list"))
      << bad.error().message();
}

TEST(Topology, SysfsFolderWithNodesBesideCpus) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "schedlab-topology-nodes";
  fs::remove_all(root);
  auto put = [&](const std::string& rel, const std::string& value) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << value << "\n";
  };
  for (int cpu = 0; cpu < 4; ++cpu) {
    const std::string base = "cpu/cpu" + std::to_string(cpu);
    put(base + "/topology/core_id", std::to_string(cpu));
    put(base + "/topology/physical_package_id", "0");
    put(base + "/cache/index3/level", "3");
    put(base + "/cache/index3/type", "Unified");
    put(base + "/cache/index3/shared_cpu_list", cpu < 2 ? "0-1" : "2-3");
  }
  put("node/node0/cpulist", "0-1");
  put("node/node1/cpulist", "2-3");
  for (const fs::path& from : {root, root / "cpu"}) {
    auto t = core::Topology::fromSysfs(from.string());
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->source(), "sysfs");
    EXPECT_EQ(t->llcs().size(), 2u) << from;
    EXPECT_EQ(t->cpu(2)->node, 1) << from;
  }
  fs::remove_all(root);
}
