// The rows of one timeline pane, grouped: CPU rows by package, NUMA node, LLC
// and (optionally) core, coarse to fine, as far as the topology splits the
// machine; task rows by process. A collapsed group shows two summary rows
// (busy share and runnable-but-waiting count over time) instead of its
// members. Generic over row kinds: a row that has a CPU sits in that CPU's
// groups, a row that has a task in its process's. Used by the GUI panes and
// `schedlab-cli render --group-by` (reports still draw plain cpuRows());
// QtGui only.
#pragma once

#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "app/render/timeline_renderer.h"

namespace app::render {

enum class GroupLevel : uint8_t { Package, Node, Llc, Core, Process };

/// "package,node,llc,core" (any of them, comma-separated) or "none" (no
/// groups); nullopt when a word is none of these.
std::optional<std::vector<GroupLevel>> parseGroupLevels(const QString& text);

struct RowGroup {
  GroupLevel level = GroupLevel::Package;
  QString label;     ///< "package 1", "node 0", "LLC 3", "core 12", "hackbench (tgid 812)"
  QString sublabel;  ///< "128 CPUs", "4 threads"
  int key = 0;  ///< the topology's group key, or the tgid for Process
  int parent = -1;
  int depth = 0;
  bool collapsed = false;
  std::shared_ptr<const std::vector<uint32_t>> members;  ///< CPU numbers, or utids for Process
};

class TimelineLayout {
 public:
  struct Options {
    int rowHeight = 20;
    /// CPU grouping levels to use; those that do not split the machine, or
    /// repeat a coarser level, or cut across one, are left out.
    std::vector<GroupLevel> cpuLevels;
    bool collapsed = false;  ///< start with every CPU group collapsed
  };
  /// Package, node and LLC for machines of more than 16 CPUs, none below.
  static std::vector<GroupLevel> defaultLevels(const core::TraceModel& model);
  /// 30 px rows for up to 4 CPUs, 24 up to 16, 22 up to 64, 4 (compact) above.
  static int defaultRowHeight(int cpuCount);
  /// The busy-share overview heat map above 64 CPUs (where rows turn compact), none below.
  static std::optional<HeatMetric> defaultHeatmap(const core::TraceModel& model);

  TimelineLayout() = default;
  TimelineLayout(const core::TraceModel& model, Options options);

  /// The rows to draw, top to bottom, with collapsed groups folded.
  const std::vector<TimelineRow>& rows() const { return m_rows; }
  const std::vector<RowGroup>& groups() const { return m_groups; }
  const Options& options() const { return m_options; }
  void setCollapsed(int group, bool collapsed);
  void toggle(int group) { setCollapsed(group, !m_groups[static_cast<size_t>(group)].collapsed); }
  /// Collapses (or expands) every group.
  void setAllCollapsed(bool collapsed);
  void setRowHeight(int rowHeight);
  bool hasTask(core::Utid utid) const;
  /// Task rows in the order added, shown or inside a collapsed process group.
  const std::vector<core::Utid>& tasks() const { return m_tasks; }
  void addTask(core::Utid utid);
  void removeTask(core::Utid utid);
  /// CPU numbers in row order (the heat map's order).
  std::vector<int> cpuOrder() const;

 private:
  void buildCpuGroups();
  void rebuildTaskGroups();
  void flatten();
  const core::TraceModel* m_model = nullptr;
  Options m_options;
  std::vector<TimelineRow> m_cpuLeaves;
  std::vector<std::vector<int>> m_cpuPaths;  // group indices per CPU leaf, outermost first
  int m_cpuGroupCount = 0;                   // groups [0, m_cpuGroupCount) are CPU groups
  std::vector<core::Utid> m_tasks;           // task rows in the order added
  std::vector<RowGroup> m_groups;
  std::vector<TimelineRow> m_rows;
};

}  // namespace app::render
