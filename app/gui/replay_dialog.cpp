#include "app/gui/replay_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace app::gui {

ReplayDialog::ReplayDialog(const RunSet& runs, int currentRecording, std::shared_ptr<ReplayBackend> backend,
                           QWidget* parent)
    : QDialog(parent), m_runs(runs), m_backend(std::move(backend)), m_models(m_backend->models()) {
  setWindowTitle(tr("Replay through scheduler models"));
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  layout->addLayout(form);

  m_recording = new QComboBox(this);
  for (int id : runs.recordings()) {
    m_recording->addItem(runs.run(id)->title, id);
    if (id == currentRecording) m_recording->setCurrentIndex(m_recording->count() - 1);
  }
  form->addRow(tr("Recording:"), m_recording);

  m_modelList = new QListWidget(this);
  m_modelList->setMaximumHeight(130);
  for (const auto& m : m_models) {
    auto* item = new QListWidgetItem(QString::fromStdString(m.name), m_modelList);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(m_modelList->count() == 1 ? Qt::Checked : Qt::Unchecked);
    item->setToolTip(QString::fromStdString(m.description));
  }
  form->addRow(tr("Models:"), m_modelList);

  auto* topoRow = new QWidget(this);
  auto* topoLayout = new QHBoxLayout(topoRow);
  topoLayout->setContentsMargins(0, 0, 0, 0);
  m_topoTrace = new QRadioButton(tr("from the trace"), topoRow);
  m_topoSpec = new QRadioButton(tr("cores \u00d7 threads:"), topoRow);
  m_topoEdit = new QLineEdit(QStringLiteral("2x2"), topoRow);
  m_topoEdit->setMaximumWidth(80);
  m_topoEdit->setToolTip(tr("CxT, e.g. 2x2 = two cores with two SMT siblings each; or fields, e.g. 2s:64c:2t = two sockets of 64 two-thread cores"));
  m_topoTrace->setChecked(true);
  topoLayout->addWidget(m_topoTrace);
  topoLayout->addWidget(m_topoSpec);
  topoLayout->addWidget(m_topoEdit);
  topoLayout->addStretch(1);
  form->addRow(tr("Topology:"), topoRow);

  // Per-task rules, as the CLI's --cookie / --uclamp / --smt-factor: rules
  // separated by ';', SELECTOR = comm:REGEX, tgid:N, tid:N, all, rt or fair.
  m_cookies = new QLineEdit(this);
  m_cookies->setPlaceholderText(tr("per-process, per-thread, or SELECTOR=NAME; ... (models with +coresched)"));
  m_cookies->setToolTip(tr("coresched.cookie: core-scheduling cookies as prctl(PR_SCHED_CORE) would set them. "
                           "Rules separated by ';', later ones winning: per-process, per-thread, none, or "
                           "SELECTOR=NAME (comm:REGEX, tgid:N, tid:N, all, rt, fair). Children inherit; untagged "
                           "tasks share cookie 0."));
  form->addRow(tr("Cookies:"), m_cookies);
  m_uclamp = new QLineEdit(this);
  m_uclamp->setPlaceholderText(tr("SELECTOR=MIN:MAX; ... e.g. comm:^game$=512:1024 (models with +uclamp)"));
  m_uclamp->setToolTip(tr("uclamp.clamp: per-task uclamp requests, 0..1024, either side may be empty."));
  form->addRow(tr("uclamp:"), m_uclamp);
  m_smtFactors = new QLineEdit(this);
  m_smtFactors->setPlaceholderText(tr("SELECTOR=F; ... e.g. comm:^stream$=0.9 (default smt.factor, 0.65)"));
  m_smtFactors->setToolTip(tr("smt.task_factor: a task's speed while its SMT sibling is busy (SMT topologies)."));
  form->addRow(tr("SMT factors:"), m_smtFactors);

  m_params = new QPlainTextEdit(this);
  m_params->setPlaceholderText(tr("key=value, one per line or comma-separated\n(e.g. coresched.variant=v3, "
                                  "sysctl.sched_util_clamp_min_rt_default=0, smt.factor=0.7: see the list below)"));
  m_params->setMaximumHeight(90);
  form->addRow(tr("Parameters:"), m_params);

  m_help = new QTextBrowser(this);
  m_help->setMinimumHeight(140);
  layout->addWidget(m_help, 1);
  m_error = new QLabel(this);
  m_error->setStyleSheet(QStringLiteral("color:#b00020"));
  m_error->setWordWrap(true);
  layout->addWidget(m_error);

  m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Replay"));
  layout->addWidget(m_buttons);
  connect(m_buttons, &QDialogButtonBox::accepted, this, &ReplayDialog::accept);
  connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(m_modelList, &QListWidget::currentRowChanged, this, &ReplayDialog::updateHelp);
  connect(m_modelList, &QListWidget::itemChanged, this, &ReplayDialog::updateHelp);
  connect(m_recording, &QComboBox::currentIndexChanged, this, &ReplayDialog::updateTopologyInfo);
  connect(m_topoEdit, &QLineEdit::textEdited, this, [this] { m_topoSpec->setChecked(true); });

  const QString reason = m_backend->unavailableReason();
  if (!reason.isEmpty() || m_models.empty() || m_recording->count() == 0) {
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(false);
    m_error->setText(!reason.isEmpty() ? reason
                     : m_models.empty() ? tr("No scheduler models are available.")
                                        : tr("Open a recording first."));
  }
  updateTopologyInfo();
  updateHelp();
  resize(640, 640);
}

int ReplayDialog::recordingId() const { return m_recording->currentData().toInt(); }

void ReplayDialog::updateTopologyInfo() {
  const Run* r = m_runs.run(recordingId());
  m_topoTrace->setText(r && r->model ? tr("from the trace (%1)").arg(QString::fromStdString(r->model->topology.describe()))
                                     : tr("from the trace"));
}

void ReplayDialog::updateHelp() {
  QString html;
  for (int i = 0; i < m_modelList->count(); ++i) {
    const auto* item = m_modelList->item(i);
    if (item->checkState() != Qt::Checked && i != m_modelList->currentRow()) continue;
    const auto& m = m_models[static_cast<size_t>(i)];
    html += QStringLiteral("<p><b>%1</b> \u2014 %2</p><table cellspacing='0' cellpadding='2'>")
                .arg(QString::fromStdString(m.name).toHtmlEscaped(), QString::fromStdString(m.description).toHtmlEscaped());
    for (const auto& p : m.params)
      html += QStringLiteral("<tr><td><code>%1</code></td><td><code>%2</code></td><td style='color:#555'>%3</td></tr>")
                  .arg(QString::fromStdString(p.key).toHtmlEscaped(), QString::fromStdString(p.value).toHtmlEscaped(),
                       QString::fromStdString(p.doc).toHtmlEscaped());
    html += QStringLiteral("</table>");
  }
  if (html.isEmpty()) html = tr("<p style='color:#666'>Check one or more models; their parameters are listed here.</p>");
  m_help->setHtml(html);
}

void ReplayDialog::setModelsChecked(const QStringList& names) {
  for (int i = 0; i < m_modelList->count(); ++i)
    m_modelList->item(i)->setCheckState(names.contains(m_modelList->item(i)->text()) ? Qt::Checked : Qt::Unchecked);
}

void ReplayDialog::setTopologySpec(const QString& spec) {
  if (spec.isEmpty()) {
    m_topoTrace->setChecked(true);
  } else {
    m_topoSpec->setChecked(true);
    m_topoEdit->setText(spec);
  }
}

void ReplayDialog::setParamsText(const QString& text) { m_params->setPlainText(text); }

void ReplayDialog::setTaskRules(const QString& cookies, const QString& uclamp, const QString& smtFactors) {
  m_cookies->setText(cookies);
  m_uclamp->setText(uclamp);
  m_smtFactors->setText(smtFactors);
}

void ReplayDialog::accept() {
  m_requests.clear();
  m_error->clear();
  auto params = parseAssignments(m_params->toPlainText().toStdString());
  if (!params) {
    m_error->setText(QString::fromStdString(params.error().message()));
    return;
  }
  // The rule fields hold ';' lists with '=' and ',' of their own: added whole.
  const std::pair<QLineEdit*, const char*> rules[] = {
      {m_cookies, "coresched.cookie"}, {m_uclamp, "uclamp.clamp"}, {m_smtFactors, "smt.task_factor"}};
  for (const auto& [edit, key] : rules)
    if (const QString text = edit->text().trimmed(); !text.isEmpty()) params->emplace_back(key, text.toStdString());
  std::optional<core::Topology> topology;
  if (m_topoSpec->isChecked()) {
    auto t = core::Topology::parseSpec(m_topoEdit->text().trimmed().toStdString());
    if (!t) {
      m_error->setText(QString::fromStdString(t.error().message()));
      return;
    }
    topology = *t;
  }
  for (int i = 0; i < m_modelList->count(); ++i) {
    if (m_modelList->item(i)->checkState() != Qt::Checked) continue;
    ReplayRequest req;
    req.model = m_models[static_cast<size_t>(i)].name;
    // Only the keys this model declares; the others belong to other checked models.
    for (const auto& kv : *params) {
      const auto& declared = m_models[static_cast<size_t>(i)].params;
      if (declared.empty() || std::any_of(declared.begin(), declared.end(), [&](const core::ReplayParam& p) { return p.key == kv.first; }))
        req.params.push_back(kv);
    }
    req.topology = topology;
    m_requests.push_back(std::move(req));
  }
  if (m_requests.empty()) {
    m_error->setText(tr("Check at least one model."));
    return;
  }
  // A key no checked model knows is a typo: say so rather than ignore it.
  for (const auto& kv : *params) {
    bool known = false;
    for (const auto& r : m_requests)
      for (const auto& p : r.params) known = known || p.first == kv.first;
    if (!known) {
      m_error->setText(kv.first == "coresched.cookie" ? tr("Cookies need a checked model with +coresched.")
                       : kv.first == "uclamp.clamp"   ? tr("uclamp requests need a checked model with +uclamp.")
                                                      : tr("No checked model has a parameter '%1'.")
                                                            .arg(QString::fromStdString(kv.first)));
      m_requests.clear();
      return;
    }
  }
  QDialog::accept();
}

}  // namespace app::gui
