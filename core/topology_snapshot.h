// The machine's CPU topology as sysfs shows it, saved as one text file beside a
// trace recorded here (`schedlab-cli record`, Record… in the GUI) and read back
// when that trace is imported. One line per sysfs file, "PATH:CONTENT" with PATH
// relative to /sys/devices/system, as `grep . FILES` prints them.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "core/topology.h"

namespace core {

/// The files a snapshot holds, for each CPU and NUMA node that sysfs lists:
/// cpu/cpuN/topology/{core_id,physical_package_id,die_id,thread_siblings_list},
/// cpu/cpuN/cache/indexK/{level,type,shared_cpu_list}, node/nodeN/cpulist, and
/// cpu/online. Fails (naming the folder) when no CPU has a topology folder.
Result<std::string> captureTopologySnapshot(const std::string& sysDevicesSystem = "/sys/devices/system");
/// The snapshot's lines (no header) of a folder of cpuN/ folders and one of
/// nodeN/ folders (which may be absent); fails when no CPU has a topology folder.
Result<std::string> captureCpuFolders(const std::string& cpuDir, const std::string& nodeDir);

/// Cores, dies and packages from a snapshot's core_id, die_id and
/// physical_package_id lines; LLCs from each CPU's highest data or unified
/// cache's shared_cpu_list; NUMA nodes from node/nodeN/cpulist. Errors name
/// `file` and the line.
Result<Topology> parseTopologySnapshot(std::string_view text, const std::string& file);
Result<Topology> readTopologySnapshot(const std::string& file);

/// Where the snapshot of a trace sits: beside it, named after it ("run.dat.topology").
std::string topologySnapshotPath(const std::string& tracePath);

}  // namespace core
