#include "core/topology_snapshot.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace core {

namespace {

namespace fs = std::filesystem;

// sysfs files hold one value and a newline; a snapshot line holds the value alone.
bool readValue(const fs::path& p, std::string& out) {
  std::ifstream in(p);
  if (!in) return false;
  std::getline(in, out);
  return !in.bad();
}

// "cpu12" -> 12; -1 for anything else ("cpufreq", "cpuidle").
int numberedEntry(const std::string& name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return -1;
  int n = -1;
  const auto [p, ec] = std::from_chars(name.data() + prefix.size(), name.data() + name.size(), n);
  return ec == std::errc() && p == name.data() + name.size() ? n : -1;
}

// The numbered children of `dir` ("cpu0", "cpu1", ... or "index0"...), in numeric order.
std::vector<std::pair<int, std::string>> numberedChildren(const fs::path& dir, std::string_view prefix) {
  std::vector<std::pair<int, std::string>> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (const int n = numberedEntry(name, prefix); n >= 0) out.emplace_back(n, name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Result<std::string> captureTopologySnapshot(const std::string& sysDevicesSystem) {
  const fs::path root(sysDevicesSystem);
  auto text = captureCpuFolders((root / "cpu").string(), (root / "node").string());
  if (!text) return Error(sysDevicesSystem + "/cpu: no cpuN/topology folders found");
  return "# SchedLab topology snapshot: files of " + sysDevicesSystem +
         " as PATH:CONTENT, saved with the trace beside it\n" + *text;
}

Result<std::string> captureCpuFolders(const std::string& cpuDir, const std::string& nodeDir) {
  std::ostringstream out;
  auto line = [&](const fs::path& dir, const std::string& prefix, const std::string& rel) {
    std::string value;
    if (readValue(dir / rel, value)) out << prefix << rel << ':' << value << '\n';
  };
  line(cpuDir, "cpu/", "online");
  int cpusWithTopology = 0;
  for (const auto& [cpu, name] : numberedChildren(cpuDir, "cpu")) {
    std::error_code ec;
    if (!fs::is_directory(fs::path(cpuDir) / name / "topology", ec)) continue;  // offline CPUs have none
    ++cpusWithTopology;
    for (const char* f : {"core_id", "physical_package_id", "die_id", "thread_siblings_list"})
      line(cpuDir, "cpu/", name + "/topology/" + f);
    for (const auto& [index, indexName] : numberedChildren(fs::path(cpuDir) / name / "cache", "index"))
      for (const char* f : {"level", "type", "shared_cpu_list"}) line(cpuDir, "cpu/", name + "/cache/" + indexName + "/" + f);
  }
  if (cpusWithTopology == 0) return Error(cpuDir + ": no cpuN/topology folders found");
  for (const auto& [node, name] : numberedChildren(nodeDir, "node")) line(nodeDir, "node/", name + "/cpulist");
  return out.str();
}

namespace {
struct CacheSeen {
  int level = 0;
  bool instruction = false;
  std::optional<std::vector<int>> cpus;
};
struct CpuSeen {
  std::optional<int> coreId;
  int package = 0;
  int die = 0;
  std::map<int, CacheSeen> caches;  // by index
};
}  // namespace

Result<Topology> parseTopologySnapshot(std::string_view text, const std::string& file) {
  std::map<int, CpuSeen> cpus;
  std::map<int, std::vector<int>> nodes;
  size_t lineNo = 0;
  while (!text.empty()) {
    ++lineNo;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const auto where = [&] { return file + ": line " + std::to_string(lineNo) + ": "; };
    const size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos || line.substr(0, colon).find(' ') != std::string_view::npos)
      return Error(where() + "expected PATH:CONTENT (a sysfs path relative to /sys/devices/system)");
    const std::string_view path = line.substr(0, colon);
    const std::string_view value = line.substr(colon + 1);
    const auto number = [&]() -> Result<int> {
      int n = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || p != value.data() + value.size())
        return Error(where() + std::string(path) + " holds \"" + std::string(value) + "\", not a number");
      return n;
    };
    const auto cpuList = [&]() -> Result<std::vector<int>> {
      auto list = parseCpuList(value);
      if (!list) return Error(where() + std::string(path) + " holds \"" + std::string(value) + "\", not a CPU list");
      return *list;
    };
    if (path.starts_with("node/node") && path.ends_with("/cpulist")) {
      const int node = numberedEntry(std::string(path.substr(5, path.size() - 5 - 8)), "node");
      if (node < 0) continue;
      auto list = cpuList();
      if (!list) return list.error();
      nodes[node] = std::move(*list);
      continue;
    }
    if (!path.starts_with("cpu/cpu")) continue;
    const size_t slash = path.find('/', 4);
    if (slash == std::string_view::npos) continue;
    const int cpu = numberedEntry(std::string(path.substr(4, slash - 4)), "cpu");
    if (cpu < 0) continue;
    const std::string_view leaf = path.substr(slash + 1);
    if (leaf == "topology/core_id" || leaf == "topology/physical_package_id" || leaf == "topology/die_id") {
      auto n = number();
      if (!n) return n.error();
      CpuSeen& seen = cpus[cpu];
      if (leaf == "topology/core_id")
        seen.coreId = *n;
      else if (leaf == "topology/die_id")
        seen.die = *n;
      else
        seen.package = *n;
      continue;
    }
    if (!leaf.starts_with("cache/index")) continue;
    const size_t leafSlash = leaf.find('/', 6);
    if (leafSlash == std::string_view::npos) continue;
    const int index = numberedEntry(std::string(leaf.substr(6, leafSlash - 6)), "index");
    if (index < 0) continue;
    const std::string_view attr = leaf.substr(leafSlash + 1);
    CacheSeen& cache = cpus[cpu].caches[index];
    if (attr == "level") {
      auto n = number();
      if (!n) return n.error();
      cache.level = *n;
    } else if (attr == "type") {
      cache.instruction = value == "Instruction";
    } else if (attr == "shared_cpu_list") {
      auto list = cpuList();
      if (!list) return list.error();
      cache.cpus = std::move(*list);
    }
  }
  std::vector<Topology::Placement> placements;
  for (const auto& [cpu, seen] : cpus) {
    if (!seen.coreId) return Error(file + ": cpu" + std::to_string(cpu) + " has no topology/core_id line");
    placements.push_back({cpu, *seen.coreId, seen.package, seen.die});
  }
  if (placements.empty()) return Error(file + ": no cpu/cpuN/topology/core_id lines: not a topology snapshot");
  Topology topo = Topology::fromPlacements(placements, fs::path(file).filename().string());
  // The data and unified caches in each CPU's index order (a snapshot without
  // level lines then ranks them by index, as sysfs numbers them).
  std::vector<Topology::Cache> caches;
  for (const auto& [cpu, seen] : cpus)
    for (const auto& [index, cache] : seen.caches)
      if (!cache.instruction && cache.cpus) caches.push_back({cache.level, *cache.cpus});
  topo.setLlcsFromCaches(caches);
  if (!nodes.empty()) {
    std::vector<std::vector<int>> byId(static_cast<size_t>(nodes.rbegin()->first) + 1);
    for (auto& [id, list] : nodes) byId[static_cast<size_t>(id)] = std::move(list);
    topo.setNodes(byId);
  }
  return topo;
}

Result<Topology> readTopologySnapshot(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error(file + ": cannot open for reading");
  std::ostringstream text;
  text << in.rdbuf();
  return parseTopologySnapshot(text.str(), file);
}

std::string topologySnapshotPath(const std::string& tracePath) { return tracePath + ".topology"; }

}  // namespace core
