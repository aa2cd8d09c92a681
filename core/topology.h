// CPU topology: which CPUs are SMT siblings of one core, which cores share a
// last-level cache (LLC), a die and a package, and which NUMA node each CPU is
// on. Read from the trace where it records it (perf.data header, LTTng
// statedump), from a sysfs-style folder or snapshot, from a spec such as
// "2s:8c:2t" or "4x2", or one thread per core. Replay builds its scheduling
// domains from it (replay/sim/engine), the timeline its CPU groups (app/render).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace core {

/// "0-3,8,10-11" (the kernel's cpulist format) -> {0,1,2,3,8,10,11}; nullopt
/// for anything else. CPU numbers must be below `limit`.
std::optional<std::vector<int>> parseCpuList(std::string_view text, int limit = 4096);

class Topology {
 public:
  /// The levels a CPU belongs to, innermost first.
  enum class Level { Core, Llc, Die, Package, Node };

  struct Cpu {
    int cpu = 0;
    int core = 0;     ///< index into cores()
    int thread = 0;   ///< position among the core's siblings (0-based)
    int package = 0;  ///< physical package (socket) id, as the source numbers it
    int die = 0;      ///< die id within the package (0 where the source has no dies)
    int llc = 0;      ///< index into llcs()
    int node = 0;     ///< NUMA node id (0 where the source has no NUMA information)
  };

  Topology() = default;
  /// `cores` lists, per core, its CPUs (SMT siblings) in thread order. Each
  /// package's dies share one LLC and every CPU is on node 0 until
  /// setLlcs()/setNodes()/setDies() say otherwise.
  Topology(std::vector<std::vector<int>> cores, std::vector<int> corePackage, std::string source);

  /// One thread per core, CPUs 0..n-1.
  static Topology flat(int cpuCount, std::string source = "default");
  /// `coreCount` cores with `threadsPerCore` siblings each; core c holds CPUs
  /// c*T .. c*T+T-1 (numbering is ours: replays do not keep recorded CPU numbers).
  static Topology uniform(int coreCount, int threadsPerCore, std::string source = "user");
  /// "CxT" (e.g. "4x2"), "N" (N single-thread cores), or colon-separated
  /// fields COUNT+UNIT as lscpu counts them: s sockets, c cores per socket,
  /// t threads per core, d dies per socket, n NUMA nodes and l LLCs in the whole
  /// machine ("2s:8c:2t", "2s:32c:2t:8l", "1s:64c:4n"). Defaults: 1 socket,
  /// 1 thread, 1 die, one node per socket, one LLC per die. Nodes and LLCs split
  /// the cores evenly in order and must nest (an LLC inside one node and one
  /// die). CPU numbers run core by core, siblings adjacent, as uniform().
  static Result<Topology> parseSpec(std::string_view spec);
  /// A folder laid out like /sys/devices/system (or its cpu/ folder, or a copy
  /// holding cpuN/ folders): cpuN/topology/{core_id,physical_package_id,die_id},
  /// cpuN/cache/indexK/{level,type,shared_cpu_list} for the LLC, and
  /// node/nodeN/cpulist beside cpu/ for NUMA; or a topology snapshot file
  /// (core/topology_snapshot.h) saved beside a recording. Errors name the path.
  static Result<Topology> fromSysfs(const std::string& path);
  /// Where sysfs places each CPU: CPUs of one (package, core_id) are SMT siblings.
  struct Placement {
    int cpu = 0;
    int coreId = 0;
    int package = 0;
    int die = 0;
  };
  /// Cores ordered by their first CPU, siblings by CPU number.
  static Topology fromPlacements(const std::vector<Placement>& placements, std::string source);

  /// CPUs of each LLC (e.g. from cache/index3/shared_cpu_list). CPUs no list
  /// names keep their die's default LLC; a CPU named twice keeps its first.
  void setLlcs(const std::vector<std::vector<int>>& llcs);
  /// A data or unified cache and the CPUs sharing it, ascending (sysfs's
  /// shared_cpu_list, perf.data's CACHE map).
  struct Cache {
    int level = 0;
    std::vector<int> cpus;
  };
  /// Each CPU's LLC: the highest-level cache of `caches` that holds it (on a
  /// tie the later one, as sysfs numbers a CPU's caches upwards); CPUs that no
  /// cache holds keep their die's.
  void setLlcsFromCaches(const std::vector<Cache>& caches);
  /// CPUs of each NUMA node, indexed by node id (empty lists for absent ids).
  void setNodes(const std::vector<std::vector<int>>& cpusOfNode);
  /// Die id (within its package) of each CPU listed: {cpu, die}.
  void setDies(const std::vector<std::pair<int, int>>& cpuDies);

  bool empty() const { return m_cpus.empty(); }
  int cpuCount() const { return static_cast<int>(m_cpus.size()); }
  /// Highest CPU number + 1 (CPU numbers may have holes).
  int cpuLimit() const { return m_cpuLimit; }
  const std::vector<std::vector<int>>& cores() const { return m_cores; }
  /// CPUs sharing each last-level cache, ordered by their first CPU.
  const std::vector<std::vector<int>>& llcs() const { return m_llcs; }
  const std::vector<Cpu>& cpus() const { return m_cpus; }
  const Cpu* cpu(int cpu) const;
  /// The other CPUs of the same core.
  std::vector<int> siblingsOf(int cpu) const;
  int threadsPerCore() const;
  bool hasSmt() const { return threadsPerCore() > 1; }
  /// Distinct groups at `level` (packages, dies of all packages, nodes, ...).
  int count(Level level) const;
  /// The CPUs of each group at `level`, ordered by their first CPU.
  std::vector<std::vector<int>> groups(Level level) const;
  /// A key that is equal for two CPUs exactly when they share the `level` group.
  int groupKey(const Cpu& c, Level level) const;
  const std::string& source() const { return m_source; }
  void setSource(std::string source) { m_source = std::move(source); }
  /// Adds single-thread cores for CPUs a trace used but the topology lacks.
  void extendTo(int cpuLimit);
  /// "2 cores x 2 threads (perf.data header)"; with more than one package, LLC
  /// or node: "2 packages x 64 cores x 2 threads, 4 LLCs, 2 NUMA nodes (...)".
  std::string describe() const;

 private:
  void rebuildIndex();
  std::vector<std::vector<int>> m_cores;
  std::vector<int> m_corePackage;
  // Per CPU number (-1: not set): what setDies/setLlcs/setNodes gave.
  std::vector<int> m_dieOf, m_llcOf, m_nodeOf;
  std::vector<std::vector<int>> m_llcs;
  std::vector<Cpu> m_cpus;          // sorted by cpu number
  std::vector<int> m_cpuToIndex;    // cpu number -> index in m_cpus, -1 if absent
  int m_cpuLimit = 0;
  std::string m_source = "default";
};

}  // namespace core
