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
  std::ostringstream out;
  out << "# SchedLab topology snapshot: files of " << sysDevicesSystem
      << " as PATH:CONTENT, saved with the trace beside it\n";
  auto line = [&](const std::string& rel) {
    std::string value;
    if (readValue(root / rel, value)) out << rel << ':' << value << '\n';
  };
  line("cpu/online");
  int cpusWithTopology = 0;
  for (const auto& [cpu, name] : numberedChildren(root / "cpu", "cpu")) {
    const std::string base = "cpu/" + name;
    std::error_code ec;
    if (!fs::is_directory(root / base / "topology", ec)) continue;  // offline CPUs have none
    ++cpusWithTopology;
    for (const char* f : {"core_id", "physical_package_id", "thread_siblings_list"}) line(base + "/topology/" + f);
    for (const auto& [index, indexName] : numberedChildren(root / base / "cache", "index"))
      for (const char* f : {"level", "type", "shared_cpu_list"}) line(base + "/cache/" + indexName + "/" + f);
  }
  if (cpusWithTopology == 0) return Error(sysDevicesSystem + "/cpu: no cpuN/topology folders found");
  for (const auto& [node, name] : numberedChildren(root / "node", "node")) line("node/" + name + "/cpulist");
  return out.str();
}

Result<Topology> parseTopologySnapshot(std::string_view text, const std::string& file) {
  struct Seen {
    std::optional<int> coreId;
    int package = 0;
  };
  std::map<int, Seen> cpus;
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
    if (!path.starts_with("cpu/cpu")) continue;
    const size_t slash = path.find('/', 4);
    if (slash == std::string_view::npos) continue;
    const int cpu = numberedEntry(std::string(path.substr(4, slash - 4)), "cpu");
    const std::string_view leaf = path.substr(slash + 1);
    const bool isCore = leaf == "topology/core_id";
    if (cpu < 0 || (!isCore && leaf != "topology/physical_package_id")) continue;
    int n = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || p != value.data() + value.size())
      return Error(where() + std::string(path) + " holds \"" + std::string(value) + "\", not a number");
    if (isCore)
      cpus[cpu].coreId = n;
    else
      cpus[cpu].package = n;
  }
  std::vector<Topology::Placement> placements;
  for (const auto& [cpu, seen] : cpus) {
    if (!seen.coreId) return Error(file + ": cpu" + std::to_string(cpu) + " has no topology/core_id line");
    placements.push_back({cpu, *seen.coreId, seen.package});
  }
  if (placements.empty()) return Error(file + ": no cpu/cpuN/topology/core_id lines: not a topology snapshot");
  return Topology::fromPlacements(placements, fs::path(file).filename().string());
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
