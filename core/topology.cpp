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

std::optional<std::vector<int>> parseCpuList(std::string_view text, int limit) {
  std::vector<int> out;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) return out;  // an empty list (an offline node) is a list
  auto number = [&](std::string_view& s, int& n) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || n < 0 || n >= limit) return false;
    s.remove_prefix(static_cast<size_t>(p - s.data()));
    return true;
  };
  while (true) {
    int a = 0;
    if (!number(text, a)) return std::nullopt;
    int b = a;
    if (!text.empty() && text.front() == '-') {
      text.remove_prefix(1);
      if (!number(text, b) || b < a) return std::nullopt;
    }
    for (int c = a; c <= b; ++c) out.push_back(c);
    if (text.empty()) break;
    if (text.front() != ',') return std::nullopt;
    text.remove_prefix(1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Topology::Topology(std::vector<std::vector<int>> cores, std::vector<int> corePackage, std::string source)
    : m_cores(std::move(cores)), m_corePackage(std::move(corePackage)), m_source(std::move(source)) {
  m_corePackage.resize(m_cores.size(), 0);
  rebuildIndex();
}

namespace {
int given(const std::vector<int>& perCpu, int cpu) {
  return static_cast<size_t>(cpu) < perCpu.size() ? perCpu[static_cast<size_t>(cpu)] : -1;
}
void put(std::vector<int>& perCpu, int cpu, int value) {
  if (cpu < 0) return;
  if (perCpu.size() <= static_cast<size_t>(cpu)) perCpu.resize(static_cast<size_t>(cpu) + 1, -1);
  perCpu[static_cast<size_t>(cpu)] = value;
}
// Groups CPUs by key, ordered by each group's first CPU; `cpus` is sorted by CPU number.
template <typename Key>
std::vector<std::vector<int>> groupBy(const std::vector<Topology::Cpu>& cpus, Key key) {
  std::map<int, size_t> slot;
  std::vector<std::vector<int>> out;
  for (const auto& c : cpus) {
    const auto [it, fresh] = slot.emplace(key(c), out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(c.cpu);
  }
  return out;
}
}  // namespace

void Topology::rebuildIndex() {
  m_cpus.clear();
  for (size_t c = 0; c < m_cores.size(); ++c)
    for (size_t t = 0; t < m_cores[c].size(); ++t) {
      Cpu cpu{m_cores[c][t], static_cast<int>(c), static_cast<int>(t), m_corePackage[c]};
      cpu.die = std::max(0, given(m_dieOf, cpu.cpu));
      cpu.node = std::max(0, given(m_nodeOf, cpu.cpu));
      m_cpus.push_back(cpu);
    }
  std::sort(m_cpus.begin(), m_cpus.end(), [](const Cpu& a, const Cpu& b) { return a.cpu < b.cpu; });
  m_cpuLimit = m_cpus.empty() ? 0 : m_cpus.back().cpu + 1;
  m_cpuToIndex.assign(static_cast<size_t>(m_cpuLimit), -1);
  for (size_t i = 0; i < m_cpus.size(); ++i) m_cpuToIndex[static_cast<size_t>(m_cpus[i].cpu)] = static_cast<int>(i);
  // An LLC the source named, else the die's: given LLCs get keys below every die key.
  std::map<std::pair<int, int>, int> dieKey;
  for (const auto& c : m_cpus) dieKey.emplace(std::pair{c.package, c.die}, static_cast<int>(dieKey.size()));
  const int dieBase = m_cpuLimit + 1;
  m_llcs = groupBy(m_cpus, [&](const Cpu& c) {
    const int llc = given(m_llcOf, c.cpu);
    return llc >= 0 ? llc : dieBase + dieKey[{c.package, c.die}];
  });
  for (size_t l = 0; l < m_llcs.size(); ++l)
    for (int cpu : m_llcs[l]) m_cpus[static_cast<size_t>(m_cpuToIndex[static_cast<size_t>(cpu)])].llc = static_cast<int>(l);
}

void Topology::setLlcs(const std::vector<std::vector<int>>& llcs) {
  for (size_t l = 0; l < llcs.size(); ++l)
    for (int cpu : llcs[l])
      if (given(m_llcOf, cpu) < 0) put(m_llcOf, cpu, static_cast<int>(l));
  rebuildIndex();
}

void Topology::setLlcsFromCaches(const std::vector<Cache>& caches) {
  std::vector<std::vector<int>> llcs;
  for (const Cpu& c : m_cpus) {
    const Cache* last = nullptr;
    for (const Cache& cache : caches)
      if ((!last || cache.level >= last->level) && std::binary_search(cache.cpus.begin(), cache.cpus.end(), c.cpu))
        last = &cache;
    if (last && std::find(llcs.begin(), llcs.end(), last->cpus) == llcs.end()) llcs.push_back(last->cpus);
  }
  if (!llcs.empty()) setLlcs(llcs);
}

void Topology::setNodes(const std::vector<std::vector<int>>& cpusOfNode) {
  for (size_t n = 0; n < cpusOfNode.size(); ++n)
    for (int cpu : cpusOfNode[n]) put(m_nodeOf, cpu, static_cast<int>(n));
  rebuildIndex();
}

void Topology::setDies(const std::vector<std::pair<int, int>>& cpuDies) {
  for (const auto& [cpu, die] : cpuDies) put(m_dieOf, cpu, die);
  rebuildIndex();
}

int Topology::groupKey(const Cpu& c, Level level) const {
  switch (level) {
    case Level::Core: return c.core;
    case Level::Llc: return c.llc;
    case Level::Die: return c.package * 4096 + c.die;
    case Level::Package: return c.package;
    case Level::Node: return c.node;
  }
  return 0;
}

std::vector<std::vector<int>> Topology::groups(Level level) const {
  return groupBy(m_cpus, [&](const Cpu& c) { return groupKey(c, level); });
}

int Topology::count(Level level) const { return static_cast<int>(groups(level).size()); }

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
  const std::string quoted = "'" + std::string(spec) + "'";
  if (spec.find(':') == std::string_view::npos) {
    int cores = 0;
    int threads = 1;
    const auto x = spec.find_first_of("xX");
    const bool ok = x == std::string_view::npos ? parseInt(spec, cores)
                                                : parseInt(spec.substr(0, x), cores) && parseInt(spec.substr(x + 1), threads);
    if (!ok) return Error("invalid topology " + quoted + ": expected CORESxTHREADS (4x2) or fields such as 2s:8c:2t");
    if (cores < 1 || threads < 1 || cores > 1024 || threads > 8 || cores * threads > 4096)
      return Error("impossible topology " + quoted + ": need 1..1024 cores, 1..8 threads per core");
    return uniform(cores, threads, "user");
  }
  // s sockets, c cores per socket, t threads per core, d dies per socket, n nodes, l LLCs.
  std::map<char, int> f;
  for (std::string_view rest = spec; !rest.empty();) {
    const size_t colon = rest.find(':');
    const std::string_view field = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (colon != std::string_view::npos && rest.empty()) return Error("invalid topology " + quoted + ": empty field at the end");
    int n = 0;
    const char unit = field.empty() ? '\0' : field.back();
    if (field.size() < 2 || std::string_view("sctdnl").find(unit) == std::string_view::npos ||
        !parseInt(field.substr(0, field.size() - 1), n))
      return Error("invalid topology " + quoted + ": field '" + std::string(field) +
                   "' is not COUNT followed by s (sockets), c (cores per socket), t (threads per core), d (dies per "
                   "socket), n (NUMA nodes) or l (LLCs)");
    if (!f.emplace(unit, n).second) return Error("invalid topology " + quoted + ": '" + std::string(1, unit) + "' given twice");
    if (n < 1) return Error("impossible topology " + quoted + ": every count must be at least 1");
  }
  if (!f.count('c')) return Error("invalid topology " + quoted + ": the cores per socket (c) are missing, e.g. 2s:8c:2t");
  const int sockets = f.count('s') ? f['s'] : 1;
  const int perSocket = f['c'];
  const int threads = f.count('t') ? f['t'] : 1;
  const int dies = f.count('d') ? f['d'] : 1;
  const int64_t cores = int64_t{sockets} * perSocket;
  const int nodes = f.count('n') ? f['n'] : sockets;
  const int llcs = f.count('l') ? f['l'] : sockets * dies;
  auto impossible = [&](const std::string& why) { return Error("impossible topology " + quoted + ": " + why); };
  if (threads > 8 || cores > 4096 || cores * threads > 4096) return impossible("need at most 4096 CPUs and 8 threads per core");
  if (perSocket % dies) return impossible("the cores of a socket do not split evenly into its dies");
  if (cores % nodes || (nodes >= sockets ? nodes % sockets : sockets % nodes))
    return impossible("the nodes must split the cores evenly, each inside one socket or made of whole sockets");
  if (cores % llcs || llcs % (sockets * dies) || llcs % nodes)
    return impossible("the LLCs must split the cores evenly, each inside one die and one node");
  std::vector<std::vector<int>> coreCpus;
  std::vector<int> corePackage;
  std::vector<std::pair<int, int>> dieOf;
  std::vector<std::vector<int>> llcCpus(static_cast<size_t>(llcs));
  std::vector<std::vector<int>> nodeCpus(static_cast<size_t>(nodes));
  for (int k = 0; k < cores; ++k) {
    std::vector<int> cpus;
    for (int t = 0; t < threads; ++t) cpus.push_back(k * threads + t);
    for (int cpu : cpus) {
      dieOf.emplace_back(cpu, (k % perSocket) / (perSocket / dies));
      llcCpus[static_cast<size_t>(k / (cores / llcs))].push_back(cpu);
      nodeCpus[static_cast<size_t>(k / (cores / nodes))].push_back(cpu);
    }
    coreCpus.push_back(std::move(cpus));
    corePackage.push_back(k / perSocket);
  }
  Topology topo(std::move(coreCpus), std::move(corePackage), "user");
  topo.setDies(dieOf);
  topo.setLlcs(llcCpus);
  topo.setNodes(nodeCpus);
  return topo;
}

Result<Topology> Topology::fromSysfs(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path root(path);
  if (fs::is_regular_file(root, ec)) return readTopologySnapshot(path);
  if (!fs::is_directory(root, ec)) return Error(path + ": not a folder or a topology snapshot file");
  if (fs::is_directory(root / "devices/system/cpu", ec)) root /= "devices/system";
  fs::path cpuDir = root;
  fs::path nodeDir = root.parent_path() / "node";
  if (fs::is_directory(root / "cpu", ec) && !fs::exists(root / "cpu0", ec)) {
    cpuDir = root / "cpu";
    nodeDir = root / "node";
  }
  auto text = captureCpuFolders(cpuDir.string(), nodeDir.string());
  if (!text) return Error(path + ": no cpuN/topology folders found");
  auto topo = parseTopologySnapshot(*text, path);
  if (topo) topo->setSource("sysfs");
  return topo;
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
  Topology topo(std::move(cores), std::move(packages), std::move(source));
  std::vector<std::pair<int, int>> dies;
  for (const Placement& p : placements)
    if (p.die != 0) dies.emplace_back(p.cpu, p.die);
  if (!dies.empty()) topo.setDies(dies);
  return topo;
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
  const int packages = count(Level::Package);
  const int llcs = static_cast<int>(m_llcs.size());
  const int nodes = count(Level::Node);
  const auto plural = [](int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  if (uniformCores && packages > 1 && m_cores.size() % static_cast<size_t>(packages) == 0)
    out << plural(packages, "package", "packages") << " x "
        << plural(static_cast<int>(m_cores.size()) / packages, "core", "cores") << " x " << plural(t, "thread", "threads");
  else if (uniformCores)
    out << plural(static_cast<int>(m_cores.size()), "core", "cores") << " x " << plural(t, "thread", "threads");
  else
    out << m_cpus.size() << " CPUs in " << plural(static_cast<int>(m_cores.size()), "core", "cores");
  if (llcs > packages) out << ", " << llcs << " LLCs";
  if (nodes > 1) out << ", " << nodes << " NUMA nodes";
  out << " (" << m_source << ")";
  return out.str();
}

}  // namespace core
