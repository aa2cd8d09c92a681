#include "core/topology.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/topology_snapshot.h"

namespace core {

Topology::Topology(std::vector<std::vector<int>> cores, std::vector<int> corePackage, std::string source)
    : m_cores(std::move(cores)), m_corePackage(std::move(corePackage)), m_source(std::move(source)) {
  m_corePackage.resize(m_cores.size(), 0);
  rebuildIndex();
}

void Topology::rebuildIndex() {
  m_cpus.clear();
  for (size_t c = 0; c < m_cores.size(); ++c)
    for (size_t t = 0; t < m_cores[c].size(); ++t)
      m_cpus.push_back({m_cores[c][t], static_cast<int>(c), static_cast<int>(t), m_corePackage[c]});
  std::sort(m_cpus.begin(), m_cpus.end(), [](const Cpu& a, const Cpu& b) { return a.cpu < b.cpu; });
  m_cpuLimit = m_cpus.empty() ? 0 : m_cpus.back().cpu + 1;
  m_cpuToIndex.assign(static_cast<size_t>(m_cpuLimit), -1);
  for (size_t i = 0; i < m_cpus.size(); ++i) m_cpuToIndex[static_cast<size_t>(m_cpus[i].cpu)] = static_cast<int>(i);
}

Topology Topology::flat(int cpuCount, std::string source) { return uniform(cpuCount, 1, std::move(source)); }

Topology Topology::uniform(int coreCount, int threadsPerCore, std::string source) {
  std::vector<std::vector<int>> cores(static_cast<size_t>(coreCount));
  for (int c = 0; c < coreCount; ++c)
    for (int t = 0; t < threadsPerCore; ++t) cores[static_cast<size_t>(c)].push_back(c * threadsPerCore + t);
  return Topology(std::move(cores), {}, std::move(source));
}

Result<Topology> Topology::parseSpec(std::string_view spec) {
  auto parseInt = [](std::string_view s, int& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  int cores = 0;
  int threads = 1;
  const auto x = spec.find_first_of("xX");
  const bool ok = x == std::string_view::npos ? parseInt(spec, cores)
                                              : parseInt(spec.substr(0, x), cores) && parseInt(spec.substr(x + 1), threads);
  if (!ok) return Error("invalid topology '" + std::string(spec) + "': expected CORESxTHREADS, e.g. 4x2");
  if (cores < 1 || threads < 1 || cores > 1024 || threads > 8 || cores * threads > 4096)
    return Error("impossible topology '" + std::string(spec) + "': need 1..1024 cores, 1..8 threads per core");
  return uniform(cores, threads, "user");
}

namespace {
bool readIntFile(const std::filesystem::path& p, int& out) {
  std::ifstream in(p);
  return static_cast<bool>(in >> out);
}
}  // namespace

Result<Topology> Topology::fromSysfs(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path root(path);
  if (fs::is_regular_file(root, ec)) return readTopologySnapshot(path);
  if (!fs::is_directory(root, ec)) return Error(path + ": not a folder or a topology snapshot file");
  if (fs::is_directory(root / "devices/system/cpu", ec)) root /= "devices/system/cpu";
  if (fs::is_directory(root / "cpu", ec) && !fs::exists(root / "cpu0", ec)) root /= "cpu";
  std::vector<Placement> placements;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0) continue;
    int cpu = 0;
    auto [p, e] = std::from_chars(name.data() + 3, name.data() + name.size(), cpu);
    if (e != std::errc() || p != name.data() + name.size()) continue;
    Placement placement{cpu, cpu, 0};
    const auto topo = entry.path() / "topology";
    if (!readIntFile(topo / "core_id", placement.coreId)) return Error(topo.string() + "/core_id: missing or unreadable");
    readIntFile(topo / "physical_package_id", placement.package);
    placements.push_back(placement);
  }
  if (placements.empty()) return Error(path + ": no cpuN/topology folders found");
  return fromPlacements(placements, "sysfs");
}

Topology Topology::fromPlacements(const std::vector<Placement>& placements, std::string source) {
  // (package, core_id) -> cpus; ordered so cores come out in a stable order.
  std::map<std::pair<int, int>, std::set<int>> byCore;
  for (const Placement& p : placements) byCore[{p.package, p.coreId}].insert(p.cpu);
  // Order cores by their first CPU, keeping each core's package with it.
  std::vector<std::pair<std::vector<int>, int>> ordered;
  for (const auto& [key, cpus] : byCore) ordered.emplace_back(std::vector<int>(cpus.begin(), cpus.end()), key.first);
  std::sort(ordered.begin(), ordered.end());
  std::vector<std::vector<int>> cores;
  std::vector<int> packages;
  for (auto& [cpus, package] : ordered) {
    cores.push_back(std::move(cpus));
    packages.push_back(package);
  }
  return Topology(std::move(cores), std::move(packages), std::move(source));
}

const Topology::Cpu* Topology::cpu(int cpu) const {
  if (cpu < 0 || cpu >= m_cpuLimit) return nullptr;
  const int idx = m_cpuToIndex[static_cast<size_t>(cpu)];
  return idx < 0 ? nullptr : &m_cpus[static_cast<size_t>(idx)];
}

std::vector<int> Topology::siblingsOf(int cpuNumber) const {
  std::vector<int> out;
  if (const Cpu* c = cpu(cpuNumber))
    for (int other : m_cores[static_cast<size_t>(c->core)])
      if (other != cpuNumber) out.push_back(other);
  return out;
}

int Topology::threadsPerCore() const {
  size_t most = 0;
  for (const auto& c : m_cores) most = std::max(most, c.size());
  return static_cast<int>(most);
}

void Topology::extendTo(int cpuLimit) {
  bool changed = false;
  for (int c = 0; c < cpuLimit; ++c)
    if (!cpu(c)) {
      m_cores.push_back({c});
      m_corePackage.push_back(0);
      changed = true;
    }
  if (changed) rebuildIndex();
}

std::string Topology::describe() const {
  std::ostringstream out;
  const int t = threadsPerCore();
  bool uniformCores = true;
  for (const auto& c : m_cores) uniformCores &= static_cast<int>(c.size()) == t;
  if (uniformCores)
    out << m_cores.size() << (m_cores.size() == 1 ? " core" : " cores") << " x " << t << (t == 1 ? " thread" : " threads");
  else
    out << m_cpus.size() << " CPUs in " << m_cores.size() << " cores";
  out << " (" << m_source << ")";
  return out.str();
}

}  // namespace core
