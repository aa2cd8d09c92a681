#include "app/gui/export_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>
#include <algorithm>

#include "app/render/time_axis.h"

namespace app::gui {

namespace {
constexpr int kRunIdRole = Qt::UserRole + 1;
}  // namespace

ExportReportDialog::ExportReportDialog(const RunSet& runs, const std::vector<int>& checked,
                                       std::optional<std::pair<int64_t, int64_t>> selection, const QString& defaultPath,
                                       QWidget* parent)
    : QDialog(parent), m_runs(runs), m_selection(selection) {
  setWindowTitle(tr("Export report"));
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;

  m_format = new QComboBox(this);
  m_format->addItem(tr("PDF (vector, selectable text)"), static_cast<int>(report::ReportFormat::Pdf));
  m_format->addItem(tr("HTML (one self-contained page)"), static_cast<int>(report::ReportFormat::Html));
  m_format->addItem(tr("JSON (stats and diff schemas, replay blocks)"), static_cast<int>(report::ReportFormat::Json));
  m_format->addItem(tr("CSV (per-task rows of every run)"), static_cast<int>(report::ReportFormat::Csv));
  form->addRow(tr("Format:"), m_format);

  m_page = new QComboBox(this);
  m_page->addItem(QStringLiteral("A4"), static_cast<int>(report::PageSize::A4));
  m_page->addItem(QStringLiteral("Letter"), static_cast<int>(report::PageSize::Letter));
  form->addRow(tr("Page size:"), m_page);

  m_runList = new QListWidget(this);
  m_runList->setMinimumHeight(110);
  for (int id : runs.ids()) {
    const Run* r = runs.run(id);
    auto* item = new QListWidgetItem((r->isReplay() ? QStringLiteral("    ") : QString()) + r->title, m_runList);
    item->setData(kRunIdRole, id);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    item->setCheckState(std::find(checked.begin(), checked.end(), id) != checked.end() ? Qt::Checked : Qt::Unchecked);
    item->setToolTip(r->isReplay() ? tr("A replay: its model, every parameter and the validation block go in the report")
                                   : tr("A recording: the first one ticked is A, the second B"));
  }
  auto* runsBox = new QWidget(this);
  auto* runsLayout = new QVBoxLayout(runsBox);
  runsLayout->setContentsMargins(0, 0, 0, 0);
  runsLayout->addWidget(m_runList);
  auto* runsHint = new QLabel(tr("The first recording ticked is A, the second B (the report compares them); "
                                 "replays are listed under their recording."),
                              runsBox);
  runsHint->setWordWrap(true);
  runsHint->setStyleSheet(QStringLiteral("color:#555"));
  runsLayout->addWidget(runsHint);
  form->addRow(tr("Runs:"), runsBox);

  auto* rangeBox = new QWidget(this);
  auto* rangeLayout = new QVBoxLayout(rangeBox);
  rangeLayout->setContentsMargins(0, 0, 0, 0);
  m_whole = new QRadioButton(tr("Whole runs"), rangeBox);
  m_range = new QRadioButton(selection ? tr("Selected range: %1 \u2013 %2")
                                             .arg(render::formatDuration(selection->first), render::formatDuration(selection->second))
                                       : tr("Selected range (none selected: Shift+drag on the timeline)"),
                             rangeBox);
  m_range->setEnabled(selection.has_value());
  (selection ? m_range : m_whole)->setChecked(true);
  rangeLayout->addWidget(m_whole);
  rangeLayout->addWidget(m_range);
  form->addRow(tr("Range:"), rangeBox);

  auto* pathBox = new QWidget(this);
  auto* pathLayout = new QHBoxLayout(pathBox);
  pathLayout->setContentsMargins(0, 0, 0, 0);
  m_path = new QLineEdit(defaultPath, pathBox);
  auto* browse = new QPushButton(tr("Browse\u2026"), pathBox);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString ext = report::formatName(current().format);
    const QString p = QFileDialog::getSaveFileName(this, tr("Export report"), m_path->text(),
                                                   tr("%1 files (*.%2)").arg(ext.toUpper(), ext));
    if (!p.isEmpty()) m_path->setText(p);
  });
  pathLayout->addWidget(m_path, 1);
  pathLayout->addWidget(browse);
  form->addRow(tr("File:"), pathBox);
  layout->addLayout(form);

  m_command = new QLabel(this);
  m_command->setWordWrap(true);
  m_command->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_command->setStyleSheet(QStringLiteral("color:#555"));
  layout->addWidget(m_command);
  m_error = new QLabel(this);
  m_error->setWordWrap(true);
  m_error->setStyleSheet(QStringLiteral("color:#b00020"));
  layout->addWidget(m_error);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
  connect(buttons, &QDialogButtonBox::accepted, this, &ExportReportDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);

  connect(m_format, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
    // Keep the file name, change its extension to the format's.
    const QFileInfo fi(m_path->text());
    if (!m_path->text().isEmpty())
      m_path->setText(fi.dir().filePath(fi.completeBaseName() + QLatin1Char('.') + report::formatName(current().format)));
    updateState();
  });
  connect(m_page, qOverload<int>(&QComboBox::currentIndexChanged), this, &ExportReportDialog::updateState);
  connect(m_runList, &QListWidget::itemChanged, this, &ExportReportDialog::updateState);
  connect(m_whole, &QRadioButton::toggled, this, &ExportReportDialog::updateState);
  connect(m_path, &QLineEdit::textChanged, this, &ExportReportDialog::updateState);
  resize(620, 460);
  updateState();
}

ExportOptions ExportReportDialog::current() const {
  ExportOptions o;
  o.path = m_path->text().trimmed();
  o.format = static_cast<report::ReportFormat>(m_format->currentData().toInt());
  o.page = static_cast<report::PageSize>(m_page->currentData().toInt());
  for (int i = 0; i < m_runList->count(); ++i)
    if (m_runList->item(i)->checkState() == Qt::Checked) o.runIds.push_back(m_runList->item(i)->data(kRunIdRole).toInt());
  if (m_range->isChecked() && m_selection) o.range = m_selection;
  return o;
}

void ExportReportDialog::updateState() {
  const ExportOptions o = current();
  m_page->setEnabled(o.format == report::ReportFormat::Pdf);
  auto plan = planExport(m_runs, o);
  m_error->setText(plan ? QString() : QString::fromStdString(plan.error().message()));
  const QString cmd = plan ? equivalentCommand(m_runs, o) : QString();
  m_command->setText(cmd.isEmpty() ? QString() : tr("Same content as: <code>%1</code>").arg(cmd.toHtmlEscaped()));
}

void ExportReportDialog::setFormat(report::ReportFormat format) { m_format->setCurrentIndex(m_format->findData(static_cast<int>(format))); }
void ExportReportDialog::setPath(const QString& path) { m_path->setText(path); }
void ExportReportDialog::setUseSelection(bool on) { (on ? m_range : m_whole)->setChecked(true); }
QString ExportReportDialog::errorText() const { return m_error->text(); }

void ExportReportDialog::setRunsChecked(const std::vector<int>& runIds) {
  for (int i = 0; i < m_runList->count(); ++i) {
    const int id = m_runList->item(i)->data(kRunIdRole).toInt();
    m_runList->item(i)->setCheckState(std::find(runIds.begin(), runIds.end(), id) != runIds.end() ? Qt::Checked : Qt::Unchecked);
  }
}

void ExportReportDialog::accept() {
  const ExportOptions o = current();
  if (o.path.isEmpty()) {
    m_error->setText(tr("Choose a file to write."));
    return;
  }
  auto plan = planExport(m_runs, o);
  if (!plan) {
    m_error->setText(QString::fromStdString(plan.error().message()));
    return;
  }
  m_options = o;
  QDialog::accept();
}

}  // namespace app::gui
