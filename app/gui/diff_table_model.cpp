#include "app/gui/diff_table_model.h"

#include <QColor>
#include <QFont>
#include <algorithm>
#include <cmath>

#include "app/render/colors.h"
#include "app/render/time_axis.h"

namespace app::gui {

namespace {

const auto& kTaskMetrics = core::analysis::diffTaskMetrics();
const int kMetricCount = static_cast<int>(core::analysis::diffTaskMetrics().size());

const core::analysis::MetricDelta* findMetric(const std::vector<core::analysis::MetricDelta>& list, const char* key) {
  for (const auto& m : list)
    if (m.name == key) return &m;
  return nullptr;
}

QString relativeText(double a, double b) {
  if (a == b) return QStringLiteral("0 %");
  if (a == 0) return QObject::tr("new");
  const double r = (b - a) / std::fabs(a) * 100.0;
  return QStringLiteral("%1%2 %").arg(r > 0 ? QStringLiteral("+") : QString()).arg(r, 0, 'f', std::fabs(r) < 10 ? 1 : 0);
}

// Sort key of a relative change: "new" sorts above every finite increase.
double relativeKey(double a, double b) {
  if (a == b) return 0;
  if (a == 0) return b > 0 ? 1e12 : -1e12;
  return (b - a) / std::fabs(a);
}

QColor changeColor(double delta) { return delta > 0 ? QColor(0xff, 0xdf, 0xc0) : QColor(0xd2, 0xe4, 0xff); }

}  // namespace

QString significanceHelp() {
  return QObject::tr(
      "<b>Significant changes</b> are highlighted (orange: B is higher, blue: B is lower; a significant KS "
      "distance, which has no direction, is bold only). Differences of shares are in percentage points (pp). "
      "A change is "
      "significant when it is at least 20% of A (or A is zero) <i>and</i> above the metric's noise floor:"
      "<ul><li>times (runtime, wait, busy, GPS lag): 1 ms or 1% of the analysed range, whichever is larger;</li>"
      "<li>latencies (mean, p99): 20 \u00b5s, with at least 20 wakeups in each run;</li>"
      "<li>shares (CPU share, utilisation, involuntary fraction): 3 percentage points;</li>"
      "<li>counts (switches, migrations, tasks): 10;</li>"
      "<li>Jain's fairness index: 0.05;</li>"
      "<li>KS distance of two latency distributions: significant at the 1% level "
      "(D &gt; 1.63\u00b7\u221a((n+m)/(n\u00b7m))) and at least 0.1, with 20 samples a side.</li></ul>"
      "A task present in one run only is significant when its runtime passes the time floor. "
      "Tasks are matched by comm within their process (tids differ between runs); several tasks of one name "
      "are summed. Every figure covers the selected range (or the whole runs).");
}

QString formatMetric(MetricKind kind, double value, bool difference) {
  const QString sign = difference && value > 0 ? QStringLiteral("+") : QString();
  switch (kind) {
    case MetricKind::Time:
    case MetricKind::Latency: return sign + render::formatDuration(static_cast<int64_t>(std::llround(value)));
    // Two shares differ by percentage points; "%" would read as a change relative to A.
    case MetricKind::Share:
      return sign + QString::number(value * 100.0, 'f', 1) + (difference ? QStringLiteral(" pp") : QStringLiteral(" %"));
    case MetricKind::Count: return sign + QStringLiteral("%L1").arg(static_cast<qlonglong>(std::llround(value)));
    case MetricKind::Index: return sign + QString::number(value, 'f', 3);
  }
  return {};
}

// ---------------------------------------------------------------- tasks

DiffTaskModel::DiffTaskModel(QObject* parent) : QAbstractTableModel(parent) {}

int DiffTaskModel::metricCount() { return kMetricCount; }

QString DiffTaskModel::metricName(int metric) {
  return metric >= 0 && metric < kMetricCount ? tr(kTaskMetrics[static_cast<size_t>(metric)].label) : QString();
}

std::pair<int, DiffTaskModel::Part> DiffTaskModel::metricAt(int column) {
  if (column < FixedColumns || column >= ksColumn()) return {-1, ValueA};
  const int c = column - FixedColumns;
  return {c / PartsPerMetric, static_cast<Part>(c % PartsPerMetric)};
}

void DiffTaskModel::setDiff(std::shared_ptr<const core::analysis::RunDiff> diff) {
  beginResetModel();
  m_diff = std::move(diff);
  m_rangeNs = m_diff ? core::analysis::diffRangeNs(*m_diff) : 0;
  m_rowSignificant.assign(m_diff ? m_diff->tasks.size() : 0, 0);
  for (size_t r = 0; r < m_rowSignificant.size(); ++r)
    m_rowSignificant[r] = core::analysis::taskSignificant(m_diff->tasks[r], m_rangeNs);
  endResetModel();
}

bool DiffTaskModel::cellSignificant(int row, int metric) const {
  return core::analysis::taskMetricSignificant(m_diff->tasks[static_cast<size_t>(row)],
                                               kTaskMetrics[static_cast<size_t>(metric)], m_rangeNs);
}

bool DiffTaskModel::ksCellSignificant(int row) const {
  return core::analysis::taskLatencyShapeSignificant(m_diff->tasks[static_cast<size_t>(row)]);
}

bool DiffTaskModel::rowSignificant(int row) const {
  return row >= 0 && row < static_cast<int>(m_rowSignificant.size()) && m_rowSignificant[static_cast<size_t>(row)];
}

int DiffTaskModel::significantRows() const {
  return static_cast<int>(std::count(m_rowSignificant.begin(), m_rowSignificant.end(), 1));
}

int DiffTaskModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !m_diff ? 0 : static_cast<int>(m_diff->tasks.size());
}

int DiffTaskModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ksColumn() + 1; }

QVariant DiffTaskModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
  const int row = index.row();
  const int col = index.column();
  const auto& t = m_diff->tasks[static_cast<size_t>(row)];
  if (role == RowSignificantRole) return rowSignificant(row);
  if (col < FixedColumns) {
    if (role == SignificantRole) return rowSignificant(row);
    if (role == Qt::FontRole && rowSignificant(row) && col == CommColumn) {
      QFont f;
      f.setBold(true);
      return f;
    }
    if (role == Qt::BackgroundRole && rowSignificant(row) && col == CommColumn) return QColor(0xff, 0xf3, 0xd0);
    if (role == Qt::ToolTipRole && col == CommColumn && rowSignificant(row)) {
      QStringList changed;
      for (int m = 0; m < kMetricCount; ++m)
        if (cellSignificant(row, m)) changed << tr(kTaskMetrics[static_cast<size_t>(m)].label);
      if (ksCellSignificant(row)) changed << tr("wakeup-latency distribution");
      return tr("<b>%1</b> changed significantly: %2").arg(QString::fromStdString(t.comm).toHtmlEscaped(), changed.join(QStringLiteral(", ")));
    }
    if (role == Qt::DecorationRole && col == CommColumn) return render::taskColor(t.comm, t.a ? t.a->tid : t.b ? t.b->tid : 0);
    if (role == Qt::TextAlignmentRole && col == TasksColumn) return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && col == TasksColumn)
      return tr("%1 task(s) named %2 in A, %3 in B (summed)").arg(t.tasksA).arg(QString::fromStdString(t.comm)).arg(t.tasksB);
    if (role != Qt::DisplayRole && role != SortRole) return {};
    if (col == ProcessColumn) return QString::fromStdString(t.process);
    if (col == CommColumn) return QString::fromStdString(t.comm);
    if (role == SortRole) return static_cast<double>(t.tasksB) - static_cast<double>(t.tasksA);
    if (!t.a) return tr("new \u00d7%1").arg(t.tasksB);
    if (!t.b) return tr("gone \u00d7%1").arg(t.tasksA);
    return t.tasksA == t.tasksB ? QString::number(t.tasksA) : QStringLiteral("%1 \u2192 %2").arg(t.tasksA).arg(t.tasksB);
  }
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (col == ksColumn()) {
    const bool sig = ksCellSignificant(row);
    const bool have = t.a && t.b && t.a->wakeupLatency.count && t.b->wakeupLatency.count;
    switch (role) {
      case Qt::DisplayRole: return have ? QString::number(t.wakeupLatencyKs, 'f', 2) : QStringLiteral("\u2014");
      case SortRole: return have ? t.wakeupLatencyKs : -1.0;
      case SignificantRole: return sig;
      // A distance has no direction, so it takes neither change colour: bold only.
      case Qt::FontRole: {
        if (!sig) return {};
        QFont f;
        f.setBold(true);
        return f;
      }
      case Qt::ToolTipRole:
        return have ? tr("Kolmogorov\u2013Smirnov distance of the wakeup-latency distributions: %1 (%L2 vs %L3 wakeups)%4")
                          .arg(t.wakeupLatencyKs, 0, 'f', 3)
                          .arg(t.a->wakeupLatency.count)
                          .arg(t.b->wakeupLatency.count)
                          .arg(sig ? tr("; significant at the 1% level") : QString())
                    : tr("no wakeups in one of the runs");
      default: return {};
    }
  }
  const auto [metric, part] = metricAt(col);
  const core::analysis::TaskMetricSpec& spec = kTaskMetrics[static_cast<size_t>(metric)];
  const auto* m = findMetric(t.metrics, spec.key);
  if (!m) return {};
  const bool sig = cellSignificant(row, metric);
  const bool absentA = !t.a, absentB = !t.b;
  // A latency of a task without wakeups is no latency, not zero.
  const bool noLatA = spec.kind == MetricKind::Latency && (absentA || t.a->wakeupLatency.count == 0);
  const bool noLatB = spec.kind == MetricKind::Latency && (absentB || t.b->wakeupLatency.count == 0);
  const bool missing = (part == ValueA && (absentA || noLatA)) || (part == ValueB && (absentB || noLatB)) ||
                       ((part == Delta || part == Relative) && (noLatA || noLatB));
  switch (role) {
    case Qt::DisplayRole:
      if (missing) return QStringLiteral("\u2014");
      switch (part) {
        case ValueA: return formatMetric(spec.kind, m->a);
        case ValueB: return formatMetric(spec.kind, m->b);
        case Delta: return formatMetric(spec.kind, m->delta(), true);
        case Relative: return relativeText(m->a, m->b);
      }
      return {};
    case SortRole:
      if (missing) return part == Relative || part == Delta ? 0.0 : -1.0;
      switch (part) {
        case ValueA: return m->a;
        case ValueB: return m->b;
        case Delta: return m->delta();
        case Relative: return relativeKey(m->a, m->b);
      }
      return {};
    case SignificantRole: return sig && !missing && (part == Delta || part == Relative);
    case Qt::BackgroundRole:
      if (sig && !missing && (part == Delta || part == Relative)) return changeColor(m->delta());
      return {};
    case Qt::FontRole:
      if (sig && !missing && (part == Delta || part == Relative)) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    case Qt::ForegroundRole:
      if (missing || ((part == ValueA && absentA) || (part == ValueB && absentB))) return QColor(0x99, 0x99, 0x99);
      return {};
    case Qt::ToolTipRole:
      return tr("%1 of %2 (%3): %4 \u2192 %5 (%6, %7)%8")
          .arg(tr(spec.label), QString::fromStdString(t.comm), QString::fromStdString(t.process),
               noLatA ? QStringLiteral("\u2014") : formatMetric(spec.kind, m->a),
               noLatB ? QStringLiteral("\u2014") : formatMetric(spec.kind, m->b), formatMetric(spec.kind, m->delta(), true),
               relativeText(m->a, m->b), sig ? tr("<br><b>significant</b>") : QString());
    default: return {};
  }
}

QVariant DiffTaskModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
  if (section < FixedColumns) {
    if (role == Qt::DisplayRole) {
      if (section == ProcessColumn) return tr("Process");
      if (section == CommColumn) return tr("Task (comm)");
      return tr("Tasks\nA \u2192 B");
    }
    if (role == Qt::ToolTipRole)
      return tr("Tasks are matched by comm within their process; several tasks of one name are summed.");
    return {};
  }
  if (section == ksColumn()) {
    if (role == Qt::DisplayRole) return tr("Wakeup\nKS distance");
    if (role == Qt::ToolTipRole)
      return tr("Kolmogorov\u2013Smirnov distance between the two runs' wakeup-latency distributions (0: same, 1: disjoint)");
    return {};
  }
  const auto [metric, part] = metricAt(section);
  const QString name = tr(kTaskMetrics[static_cast<size_t>(metric)].label);
  if (role == Qt::DisplayRole) {
    static const char* const parts[] = {"A", "B", "\u0394", "\u0394 %"};
    return name + QLatin1Char('\n') + QString::fromUtf8(parts[part]);
  }
  if (role == Qt::ToolTipRole) {
    switch (part) {
      case ValueA: return tr("%1 in run A").arg(name);
      case ValueB: return tr("%1 in run B").arg(name);
      case Delta: return tr("%1: B \u2212 A").arg(name);
      case Relative: return tr("%1: (B \u2212 A) / A").arg(name);
    }
  }
  if (role == Qt::ForegroundRole && (part == ValueA || part == ValueB)) return render::runColor(part == ValueA ? 0 : 1);
  return {};
}

// ---------------------------------------------------------------- summary

DiffSummaryModel::DiffSummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void DiffSummaryModel::setDiff(std::shared_ptr<const core::analysis::RunDiff> diff) {
  beginResetModel();
  m_rows.clear();
  if (diff) {
    const int64_t range = core::analysis::diffRangeNs(*diff);
    const auto& sa = diff->a.stats;
    const auto& sb = diff->b.stats;
    struct Spec {
      const char* key;
      const char* label;
      MetricKind kind;
    };
    static const Spec specs[] = {
        {"span_ns", "trace span", MetricKind::Time},
        {"tasks", "tasks", MetricKind::Count},
        {"busy_ns", "busy CPU time", MetricKind::Time},
        {"switches_voluntary", "voluntary switches", MetricKind::Count},
        {"switches_involuntary", "involuntary switches", MetricKind::Count},
        {"involuntary_fraction", "involuntary fraction", MetricKind::Share},
        {"migrations", "migrations", MetricKind::Count},
        {"wakeup_latency_mean_ns", "wakeup latency mean", MetricKind::Latency},
        {"wakeup_latency_p50_ns", "wakeup latency p50", MetricKind::Latency},
        {"wakeup_latency_p99_ns", "wakeup latency p99", MetricKind::Latency},
        {"sched_delay_mean_ns", "scheduling delay mean", MetricKind::Latency},
        {"sched_delay_p99_ns", "scheduling delay p99", MetricKind::Latency},
        {"jain", "Jain's fairness index", MetricKind::Index},
        {"gps_lag_max_ns", "GPS lag max", MetricKind::Time},
        {"forced_idle_ns", "forced idle", MetricKind::Time},
    };
    for (const Spec& s : specs) {
      const auto* m = findMetric(diff->summary, s.key);
      if (!m) continue;
      Row r;
      r.label = tr(s.label);
      r.kind = s.kind;
      r.a = m->a;
      r.b = m->b;
      const bool delay = std::string_view(s.key).starts_with("sched_delay");
      r.samplesA = s.kind == MetricKind::Latency ? (delay ? sa.schedDelay.count : sa.wakeupLatency.count) : UINT64_MAX;
      r.samplesB = s.kind == MetricKind::Latency ? (delay ? sb.schedDelay.count : sb.wakeupLatency.count) : UINT64_MAX;
      r.significant = isSignificant(r.kind, r.a, r.b, range, r.samplesA, r.samplesB);
      m_rows.push_back(r);
    }
    const auto cpuRow = [&](const core::analysis::MetricDelta& c, MetricKind kind, const QString& label) {
      Row r;
      r.label = label;
      r.kind = kind;
      r.a = c.a;
      r.b = c.b;
      r.significant = isSignificant(r.kind, r.a, r.b, range);
      m_rows.push_back(r);
    };
    for (const auto& c : diff->cpus)
      cpuRow(c, MetricKind::Share, QString::fromStdString(c.name).replace(QStringLiteral("cpu"), QStringLiteral("CPU ")));
    // MHz are counted like counts: significant past 20% and 10 MHz.
    for (const auto& c : diff->frequencies)
      cpuRow(c, MetricKind::Count,
             QString::fromStdString(c.name)
                 .replace(QStringLiteral("cpu"), QStringLiteral("CPU "))
                 .replace(QStringLiteral(" mean_freq_mhz"), QStringLiteral(" mean MHz")));
    auto ks = [&](const QString& label, double d, uint64_t n, uint64_t m) {
      Row r;
      r.label = label;
      r.ks = true;
      r.kind = MetricKind::Index;
      r.b = d;
      r.samplesA = n;
      r.samplesB = m;
      r.significant = ksSignificant(d, n, m);
      m_rows.push_back(r);
    };
    ks(tr("wakeup latency KS distance"), diff->wakeupLatencyKs, sa.wakeupLatency.count, sb.wakeupLatency.count);
    ks(tr("scheduling delay KS distance"), diff->schedDelayKs, sa.schedDelay.count, sb.schedDelay.count);
  }
  endResetModel();
}

int DiffSummaryModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(m_rows.size()); }
int DiffSummaryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DiffSummaryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const Row& r = m_rows[static_cast<size_t>(index.row())];
  const int col = index.column();
  const bool latencyMissing = r.kind == MetricKind::Latency && (r.samplesA == 0 || r.samplesB == 0);
  if (role == DiffTaskModel::SignificantRole) return r.significant;
  if (role == Qt::TextAlignmentRole && col != MetricColumn) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && r.ks)
    return tr("Kolmogorov\u2013Smirnov distance of all tasks' distributions (%L1 vs %L2 samples)%3")
        .arg(r.samplesA)
        .arg(r.samplesB)
        .arg(r.significant ? tr("; significant at the 1% level") : QString());
  if ((role == Qt::BackgroundRole || role == Qt::FontRole) && r.significant && (col == DeltaColumn || col == RelativeColumn || (r.ks && col == MetricColumn))) {
    // A distance has no direction, so it takes neither change colour: bold only.
    if (role == Qt::BackgroundRole) return r.ks ? QVariant() : QVariant(changeColor(r.b - r.a));
    QFont f;
    f.setBold(true);
    return f;
  }
  if (role != Qt::DisplayRole) return {};
  switch (col) {
    case MetricColumn: return r.label;
    case AColumn:
      if (r.ks) return QString();
      return r.kind == MetricKind::Latency && r.samplesA == 0 ? QStringLiteral("\u2014") : formatMetric(r.kind, r.a);
    case BColumn:
      if (r.ks) return QString();
      return r.kind == MetricKind::Latency && r.samplesB == 0 ? QStringLiteral("\u2014") : formatMetric(r.kind, r.b);
    case DeltaColumn:
      if (r.ks) return QString::number(r.b, 'f', 3);
      return latencyMissing ? QStringLiteral("\u2014") : formatMetric(r.kind, r.b - r.a, true);
    case RelativeColumn:
      if (r.ks || latencyMissing) return QString();
      return relativeText(r.a, r.b);
    default: return {};
  }
}

QVariant DiffSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
  if (role == Qt::ForegroundRole && (section == AColumn || section == BColumn)) return render::runColor(section == AColumn ? 0 : 1);
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case MetricColumn: return tr("Metric");
    case AColumn: return QStringLiteral("A");
    case BColumn: return QStringLiteral("B");
    case DeltaColumn: return QStringLiteral("\u0394");
    case RelativeColumn: return QStringLiteral("\u0394 %");
    default: return {};
  }
}

// ---------------------------------------------------------------- proxy

DiffFilterProxy::DiffFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(DiffTaskModel::SortRole);
  setDynamicSortFilter(true);
}

void DiffFilterProxy::setOnlySignificant(bool on) {
  m_onlySignificant = on;
  invalidateFilter();
}

void DiffFilterProxy::setFilterText(const QString& text) {
  m_text = text.trimmed();
  invalidateFilter();
}

bool DiffFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  const QModelIndex comm = sourceModel()->index(sourceRow, DiffTaskModel::CommColumn, sourceParent);
  if (m_onlySignificant && !comm.data(DiffTaskModel::RowSignificantRole).toBool()) return false;
  if (m_text.isEmpty()) return true;
  const QModelIndex process = sourceModel()->index(sourceRow, DiffTaskModel::ProcessColumn, sourceParent);
  return comm.data().toString().contains(m_text, Qt::CaseInsensitive) ||
         process.data().toString().contains(m_text, Qt::CaseInsensitive);
}

}  // namespace app::gui
