// CPU topology: which CPUs are SMT siblings of one core, and which cores share a
// package. Read from the trace where it records it (perf.data header, LTTng
// statedump), from a sysfs-style folder, from a "CxT" spec, or one thread per core.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace core {

class Topology {
 public:
  struct Cpu {
    int cpu = 0;
    int core = 0;     ///< index into cores()
    int thread = 0;   ///< position among the core's siblings (0-based)
    int package = 0;
  };

  Topology() = default;
  /// `cores` lists, per core, its CPUs (SMT siblings) in thread order.
  Topology(std::vector<std::vector<int>> cores, std::vector<int> corePackage, std::string source);

  /// One thread per core, CPUs 0..n-1.
  static Topology flat(int cpuCount, std::string source = "default");
  /// `coreCount` cores with `threadsPerCore` siblings each; core c holds CPUs
  /// c*T .. c*T+T-1 (numbering is ours: replays do not keep recorded CPU numbers).
  static Topology uniform(int coreCount, int threadsPerCore, std::string source = "user");
  /// "CxT" (e.g. "4x2") or "N" (N single-thread cores).
  static Result<Topology> parseSpec(std::string_view spec);
  /// A folder laid out like /sys/devices/system/cpu (cpuN/topology/{core_id,
  /// physical_package_id,thread_siblings_list}), or one whose children are cpuN;
  /// or a topology snapshot file (core/topology_snapshot.h) saved beside a recording.
  static Result<Topology> fromSysfs(const std::string& path);
  /// Where sysfs places each CPU: CPUs of one (package, core_id) are SMT siblings.
  struct Placement {
    int cpu = 0;
    int coreId = 0;
    int package = 0;
  };
  /// Cores ordered by their first CPU, siblings by CPU number.
  static Topology fromPlacements(const std::vector<Placement>& placements, std::string source);

  bool empty() const { return m_cpus.empty(); }
  int cpuCount() const { return static_cast<int>(m_cpus.size()); }
  /// Highest CPU number + 1 (CPU numbers may have holes).
  int cpuLimit() const { return m_cpuLimit; }
  const std::vector<std::vector<int>>& cores() const { return m_cores; }
  const std::vector<Cpu>& cpus() const { return m_cpus; }
  const Cpu* cpu(int cpu) const;
  /// The other CPUs of the same core.
  std::vector<int> siblingsOf(int cpu) const;
  int threadsPerCore() const;
  bool hasSmt() const { return threadsPerCore() > 1; }
  const std::string& source() const { return m_source; }
  void setSource(std::string source) { m_source = std::move(source); }
  /// Adds single-thread cores for CPUs a trace used but the topology lacks.
  void extendTo(int cpuLimit);
  std::string describe() const;  ///< "2 cores x 2 threads (perf.data header)"

 private:
  void rebuildIndex();
  std::vector<std::vector<int>> m_cores;
  std::vector<int> m_corePackage;
  std::vector<Cpu> m_cpus;          // sorted by cpu number
  std::vector<int> m_cpuToIndex;    // cpu number -> index in m_cpus, -1 if absent
  int m_cpuLimit = 0;
  std::string m_source = "default";
};

}  // namespace core
