#include "app/render/cpu_categories.h"

#include <algorithm>
#include <cmath>

#include <QStringList>

namespace app::render {

CpuCategories cpuCategories(const core::Topology& topology, int cpuLimit, int maxCategories) {
  CpuCategories out;
  cpuLimit = std::max(cpuLimit, 0);
  maxCategories = std::max(maxCategories, 1);
  if (cpuLimit <= maxCategories) {
    out.level = QStringLiteral("CPU");
    for (int c = 0; c < cpuLimit; ++c) {
      out.labels.push_back(QStringLiteral("CPU %1").arg(c));
      out.cpus.push_back({c});
    }
    return out;
  }
  core::Topology topo = topology;
  topo.extendTo(cpuLimit);
  using L = core::Topology::Level;
  struct Choice {
    L level;
    const char* name;
    int core::Topology::Cpu::* id;
  };
  static constexpr Choice kFinestFirst[] = {{L::Core, "core", &core::Topology::Cpu::core},
                                            {L::Llc, "LLC", &core::Topology::Cpu::llc},
                                            {L::Node, "node", &core::Topology::Cpu::node},
                                            {L::Package, "package", &core::Topology::Cpu::package}};
  for (const Choice& choice : kFinestFirst) {
    // Only levels that group and still tell the groups apart: single-thread
    // cores are as many as the CPUs, and one LLC for all of them is one box.
    const int groups = topo.count(choice.level);
    if (groups > maxCategories || groups >= cpuLimit || groups < 2) continue;
    out.level = QString::fromLatin1(choice.name);
    for (auto& cpus : topo.groups(choice.level)) {
      std::erase_if(cpus, [&](int c) { return c >= cpuLimit; });
      if (cpus.empty()) continue;
      std::sort(cpus.begin(), cpus.end());
      out.labels.push_back(QStringLiteral("%1 %2").arg(out.level).arg(topo.cpu(cpus.front())->*choice.id));
      out.cpus.push_back(std::move(cpus));
    }
    return out;
  }
  out.level = QStringLiteral("CPUs");
  const int width = (cpuLimit + maxCategories - 1) / maxCategories;
  for (int first = 0; first < cpuLimit; first += width) {
    const int last = std::min(cpuLimit, first + width) - 1;
    out.labels.push_back(QStringLiteral("CPU %1\u2013%2").arg(first).arg(last));
    std::vector<int> cpus(static_cast<size_t>(last - first + 1));
    for (int c = first; c <= last; ++c) cpus[static_cast<size_t>(c - first)] = c;
    out.cpus.push_back(std::move(cpus));
  }
  return out;
}

CpuCategories cpuCategoriesOf(const std::vector<CpuRun>& runs, int maxCategories) {
  int cpuLimit = 0;
  const core::Topology* widest = nullptr;
  for (const CpuRun& r : runs)
    for (const auto& cs : *r.cpus)
      if (cs.cpu + 1 > cpuLimit) {
        cpuLimit = cs.cpu + 1;
        widest = r.topology;
      }
  return widest ? cpuCategories(*widest, cpuLimit, maxCategories) : CpuCategories{};
}

QString cpuListText(const std::vector<int>& cpus) {
  QStringList parts;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    parts << (j == i ? QString::number(cpus[i]) : QStringLiteral("%1-%2").arg(cpus[i]).arg(cpus[j]));
    i = j + 1;
  }
  return parts.join(QLatin1Char(','));
}

Spread spreadOf(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
  };
  s.count = static_cast<int>(values.size());
  s.min = values.front();
  s.max = values.back();
  s.q1 = quantile(0.25);
  s.median = quantile(0.5);
  s.q3 = quantile(0.75);
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  return s;
}

std::vector<Spread> spreadsByCategory(const CpuCategories& categories, const std::vector<core::analysis::CpuStats>& cpus,
                                      const std::function<double(const core::analysis::CpuStats&)>& value) {
  std::vector<const core::analysis::CpuStats*> byCpu;
  for (const auto& c : cpus) {
    if (c.cpu < 0) continue;
    if (static_cast<size_t>(c.cpu) >= byCpu.size()) byCpu.resize(static_cast<size_t>(c.cpu) + 1, nullptr);
    byCpu[static_cast<size_t>(c.cpu)] = &c;
  }
  std::vector<Spread> out;
  out.reserve(categories.cpus.size());
  for (const auto& members : categories.cpus) {
    std::vector<double> values;
    for (int c : members)
      if (static_cast<size_t>(c) < byCpu.size() && byCpu[static_cast<size_t>(c)]) values.push_back(value(*byCpu[static_cast<size_t>(c)]));
    out.push_back(spreadOf(std::move(values)));
  }
  return out;
}

}  // namespace app::render
