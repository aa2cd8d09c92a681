#include "app/render/timeline_layout.h"

#include <algorithm>
#include <map>

namespace app::render {

namespace {
core::Topology::Level topologyLevel(GroupLevel l) {
  switch (l) {
    case GroupLevel::Package: return core::Topology::Level::Package;
    case GroupLevel::Node: return core::Topology::Level::Node;
    case GroupLevel::Llc: return core::Topology::Level::Llc;
    default: return core::Topology::Level::Core;
  }
}

QString levelName(GroupLevel l) {
  switch (l) {
    case GroupLevel::Package: return QStringLiteral("package");
    case GroupLevel::Node: return QStringLiteral("node");
    case GroupLevel::Llc: return QStringLiteral("LLC");
    case GroupLevel::Core: return QStringLiteral("core");
    case GroupLevel::Process: return QStringLiteral("process");
  }
  return {};
}

constexpr int kHeaderHeight = 14;
constexpr int kSummaryHeight = 18;
// Headers over compact rows: 14 px over a core's two 4 px CPUs left a 512-CPU
// view mostly headers. They keep 2 px over a row, down to 9 px: a bold 8 px
// label still reads there and a click still finds it.
constexpr int kMinHeaderHeight = 9;
int headerHeight(int rowHeight) { return std::clamp(rowHeight + 2, kMinHeaderHeight, kHeaderHeight); }
}  // namespace

std::optional<std::vector<GroupLevel>> parseGroupLevels(const QString& text) {
  std::vector<GroupLevel> out;
  for (const QString& word : text.toLower().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    const QString w = word.trimmed();
    if (w == QLatin1String("none")) continue;
    if (w == QLatin1String("package")) out.push_back(GroupLevel::Package);
    else if (w == QLatin1String("node")) out.push_back(GroupLevel::Node);
    else if (w == QLatin1String("llc")) out.push_back(GroupLevel::Llc);
    else if (w == QLatin1String("core")) out.push_back(GroupLevel::Core);
    else return std::nullopt;
  }
  return out;
}

std::vector<GroupLevel> TimelineLayout::defaultLevels(const core::TraceModel& model) {
  if (model.topology.cpuCount() <= 16) return {};
  return {GroupLevel::Package, GroupLevel::Node, GroupLevel::Llc};
}

int TimelineLayout::defaultRowHeight(int cpuCount) {
  return cpuCount <= 4 ? 30 : cpuCount <= 16 ? 24 : cpuCount <= 64 ? 22 : 4;
}

std::optional<HeatMetric> TimelineLayout::defaultHeatmap(const core::TraceModel& model) {
  if (model.cpuCount() <= 64) return std::nullopt;
  return HeatMetric::Busy;
}

TimelineLayout::TimelineLayout(const core::TraceModel& model, Options options)
    : m_model(&model), m_options(std::move(options)) {
  m_cpuLeaves = cpuRows(model, m_options.rowHeight);
  buildCpuGroups();
  if (m_options.collapsed)
    for (auto& g : m_groups) g.collapsed = true;
  flatten();
}

void TimelineLayout::buildCpuGroups() {
  const core::Topology& topo = m_model->topology;
  // The levels that split the machine, coarse to fine, each nested in the one before.
  struct Used {
    GroupLevel level;
    std::map<int, int> keyOfCpu;  // cpu -> group key
    int count;
  };
  std::vector<Used> used;
  std::vector<GroupLevel> wanted = m_options.cpuLevels;
  std::vector<std::pair<int, GroupLevel>> byCount;
  for (GroupLevel l : wanted)
    if (l != GroupLevel::Process) byCount.emplace_back(topo.count(topologyLevel(l)), l);
  std::stable_sort(byCount.begin(), byCount.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [count, level] : byCount) {
    if (count <= 1 || count >= topo.cpuCount()) continue;  // one group, or one CPU per group
    Used u{level, {}, count};
    for (const auto& c : topo.cpus()) u.keyOfCpu[c.cpu] = topo.groupKey(c, topologyLevel(level));
    bool nested = true;
    bool repeats = !used.empty();
    if (!used.empty()) {
      std::map<int, int> parentOf;  // this level's key -> the coarser level's
      for (const auto& [cpu, key] : u.keyOfCpu) {
        const int parent = used.back().keyOfCpu.at(cpu);
        const auto [it, fresh] = parentOf.emplace(key, parent);
        nested = nested && it->second == parent;
      }
      repeats = count == used.back().count;
    }
    if (nested && !repeats) used.push_back(std::move(u));
  }
  // CPU rows ordered so every group's members are adjacent (stable: core order inside).
  std::stable_sort(m_cpuLeaves.begin(), m_cpuLeaves.end(), [&](const TimelineRow& a, const TimelineRow& b) {
    for (const Used& u : used) {
      const auto ka = u.keyOfCpu.find(a.cpu);
      const auto kb = u.keyOfCpu.find(b.cpu);
      const int va = ka == u.keyOfCpu.end() ? INT32_MAX : ka->second;
      const int vb = kb == u.keyOfCpu.end() ? INT32_MAX : kb->second;
      if (va != vb) return va < vb;
    }
    return false;
  });
  m_groups.clear();
  m_cpuPaths.assign(m_cpuLeaves.size(), {});
  std::vector<int> open(used.size(), -1);
  std::vector<int> openKey(used.size(), INT32_MIN);
  std::vector<std::vector<uint32_t>> members;
  for (size_t i = 0; i < m_cpuLeaves.size(); ++i) {
    const int cpu = m_cpuLeaves[i].cpu;
    bool changed = false;
    for (size_t d = 0; d < used.size(); ++d) {
      const auto k = used[d].keyOfCpu.find(cpu);
      const int key = k == used[d].keyOfCpu.end() ? INT32_MAX : k->second;
      if (changed || key != openKey[d]) {
        changed = true;
        RowGroup g;
        g.level = used[d].level;
        g.key = key;
        g.label = levelName(g.level) + QLatin1Char(' ') + QString::number(key == INT32_MAX ? -1 : key);
        g.parent = d == 0 ? -1 : open[d - 1];
        g.depth = static_cast<int>(d);
        open[d] = static_cast<int>(m_groups.size());
        openKey[d] = key;
        m_groups.push_back(std::move(g));
        members.emplace_back();
      }
      m_cpuPaths[i].push_back(open[d]);
      members[static_cast<size_t>(open[d])].push_back(static_cast<uint32_t>(cpu));
    }
  }
  for (size_t g = 0; g < m_groups.size(); ++g) {
    m_groups[g].sublabel = QStringLiteral("%1 CPUs").arg(members[g].size());
    m_groups[g].members = std::make_shared<const std::vector<uint32_t>>(std::move(members[g]));
  }
  m_cpuGroupCount = static_cast<int>(m_groups.size());
}

void TimelineLayout::rebuildTaskGroups() {
  // Process groups follow the CPU groups; keep the collapsed state of each tgid.
  std::map<int32_t, bool> wasCollapsed;
  for (size_t g = static_cast<size_t>(m_cpuGroupCount); g < m_groups.size(); ++g)
    wasCollapsed[m_groups[g].key] = m_groups[g].collapsed;
  m_groups.resize(static_cast<size_t>(m_cpuGroupCount));
  std::map<int32_t, std::vector<uint32_t>> byProcess;
  std::vector<int32_t> order;
  for (core::Utid u : m_tasks) {
    const int32_t tgid = m_model->threads.tgid[u.value] >= 0 ? m_model->threads.tgid[u.value] : m_model->threads.tid[u.value];
    if (!byProcess.count(tgid)) order.push_back(tgid);
    byProcess[tgid].push_back(u.value);
  }
  for (int32_t tgid : order) {
    auto& utids = byProcess[tgid];
    RowGroup g;
    g.level = GroupLevel::Process;
    g.key = tgid;
    // The process's name: its main thread's comm where that thread is shown, else the first shown.
    core::Utid named(utids.front());
    for (uint32_t u : utids)
      if (m_model->threads.tid[u] == tgid) named = core::Utid(u);
    const auto comm = m_model->comm(named);
    g.label = QStringLiteral("%1 (tgid %2)").arg(QString::fromUtf8(comm.data(), static_cast<qsizetype>(comm.size()))).arg(tgid);
    g.sublabel = utids.size() == 1 ? QStringLiteral("1 thread") : QStringLiteral("%1 threads").arg(utids.size());
    g.collapsed = wasCollapsed.count(tgid) && wasCollapsed[tgid];
    g.members = std::make_shared<const std::vector<uint32_t>>(utids);
    m_groups.push_back(std::move(g));
  }
}

void TimelineLayout::flatten() {
  m_rows.clear();
  // Task rows are never compact: their state colours need the height.
  const int taskHeight = m_options.rowHeight < kCompactRowHeight ? 20 : m_options.rowHeight;
  auto header = [&](int gi) {
    const RowGroup& g = m_groups[static_cast<size_t>(gi)];
    TimelineRow r;
    r.group = gi;
    r.depth = g.depth;
    r.memberCpus = g.level != GroupLevel::Process;
    r.members = g.members;
    r.label = g.label;
    r.sublabel = g.sublabel;
    if (!g.collapsed) {
      r.type = RowType::Group;
      r.height = headerHeight(g.level == GroupLevel::Process ? taskHeight : m_options.rowHeight);
      m_rows.push_back(std::move(r));
      return;
    }
    r.type = RowType::Summary;
    r.height = kSummaryHeight;
    r.summary = SummaryKind::Busy;
    TimelineRow waiting = r;
    waiting.summary = SummaryKind::Waiting;
    waiting.label = QStringLiteral("waiting");
    waiting.sublabel = r.memberCpus ? QStringLiteral("\u221a, full = %1 per CPU").arg(kHeatWaitingSaturation)
                                     : QStringLiteral("\u221a, full = all threads");
    m_rows.push_back(std::move(r));
    m_rows.push_back(std::move(waiting));
  };
  std::vector<int> prev;
  for (size_t i = 0; i < m_cpuLeaves.size(); ++i) {
    const auto& path = m_cpuPaths[i];
    bool hidden = false;
    for (size_t d = 0; d < path.size() && !hidden; ++d) {
      if (d >= prev.size() || prev[d] != path[d]) header(path[d]);
      hidden = m_groups[static_cast<size_t>(path[d])].collapsed;
    }
    prev = path;
    if (hidden) continue;
    TimelineRow r = m_cpuLeaves[i];
    r.depth = static_cast<int>(path.size());
    m_rows.push_back(std::move(r));
  }
  for (size_t g = static_cast<size_t>(m_cpuGroupCount); g < m_groups.size(); ++g) {
    header(static_cast<int>(g));
    if (m_groups[g].collapsed) continue;
    for (uint32_t u : *m_groups[g].members) {
      TimelineRow r = taskRow(*m_model, core::Utid(u), taskHeight);
      r.depth = 1;
      m_rows.push_back(std::move(r));
    }
  }
}

void TimelineLayout::setCollapsed(int group, bool collapsed) {
  if (group < 0 || static_cast<size_t>(group) >= m_groups.size()) return;
  m_groups[static_cast<size_t>(group)].collapsed = collapsed;
  flatten();
}

void TimelineLayout::setAllCollapsed(bool collapsed) {
  for (auto& g : m_groups) g.collapsed = collapsed;
  flatten();
}

void TimelineLayout::setRowHeight(int rowHeight) {
  m_options.rowHeight = rowHeight;
  for (auto& r : m_cpuLeaves) r.height = rowHeight;
  flatten();
}

bool TimelineLayout::hasTask(core::Utid utid) const { return std::find(m_tasks.begin(), m_tasks.end(), utid) != m_tasks.end(); }

void TimelineLayout::addTask(core::Utid utid) {
  if (hasTask(utid) || !utid.isValid() || utid.value >= m_model->threadCount()) return;
  m_tasks.push_back(utid);
  rebuildTaskGroups();
  flatten();
}

void TimelineLayout::removeTask(core::Utid utid) {
  const auto it = std::find(m_tasks.begin(), m_tasks.end(), utid);
  if (it == m_tasks.end()) return;
  m_tasks.erase(it);
  rebuildTaskGroups();
  flatten();
}

std::vector<int> TimelineLayout::cpuOrder() const {
  std::vector<int> out;
  for (const auto& r : m_cpuLeaves) out.push_back(r.cpu);
  return out;
}

}  // namespace app::render
