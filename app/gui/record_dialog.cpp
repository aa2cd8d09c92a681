#include "app/gui/record_dialog.h"

#include <unistd.h>

#include <QAction>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "app/gui/main_window.h"
#include "recorder/tracefs_instance.h"

namespace app::gui {

namespace {

QString defaultOutput() {
  const QString name = QStringLiteral("schedlab-%1.dat").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
  return QDir::home().filePath(name);
}

QString megabytes(uint64_t bytes) { return QStringLiteral("%1 MB").arg(static_cast<double>(bytes) / 1e6, 0, 'f', 1); }

}  // namespace

RecordDialog::RecordDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Record a trace"));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(tr("Records the scheduler events of this machine into a trace.dat (which trace-cmd "
                              "and KernelShark also read) and opens it. Needs root."),
                           this);
  intro->setWordWrap(true);
  layout->addWidget(intro);

  auto* form = new QFormLayout;
  m_events = new QComboBox(this);
  m_events->setObjectName(QStringLiteral("events"));
  m_events->setEditable(true);
  m_events->addItems({QStringLiteral("sched"), QStringLiteral("sched+power")});
  m_events->setToolTip(tr("sched: the scheduler events SchedLab reads; power: cpu_frequency and cpu_idle; or a "
                          "list of SYSTEM:EVENT and SYSTEM:*, separated by commas"));
  form->addRow(tr("&Events:"), m_events);

  m_bufferKb = new QSpinBox(this);
  m_bufferKb->setObjectName(QStringLiteral("bufferKb"));
  m_bufferKb->setRange(recorder::kMinBufferKb, recorder::kMaxBufferKb);
  m_bufferKb->setValue(recorder::RecordOptions().bufferKb);
  m_bufferKb->setSuffix(tr(" KB per CPU"));
  m_bufferKb->setToolTip(tr("The buffers are read every 100 ms: they only have to hold the busiest 100 ms. "
                            "Events lost to a full buffer are counted and shown."));
  form->addRow(tr("&Buffer:"), m_bufferKb);

  auto* stopBox = new QWidget(this);
  auto* stopGrid = new QFormLayout(stopBox);
  stopGrid->setContentsMargins(0, 0, 0, 0);
  m_forDuration = new QRadioButton(tr("For"), stopBox);
  m_forDuration->setObjectName(QStringLiteral("forDuration"));
  m_seconds = new QDoubleSpinBox(stopBox);
  m_seconds->setObjectName(QStringLiteral("seconds"));
  m_seconds->setRange(0.01, 86400);
  m_seconds->setDecimals(2);
  m_seconds->setValue(5);
  m_seconds->setSuffix(tr(" s"));
  stopGrid->addRow(m_forDuration, m_seconds);
  m_forCommand = new QRadioButton(tr("While"), stopBox);
  m_forCommand->setObjectName(QStringLiteral("forCommand"));
  m_command = new QLineEdit(stopBox);
  m_command->setObjectName(QStringLiteral("command"));
  m_command->setPlaceholderText(tr("a command and its arguments, e.g. hackbench -g 4 -l 100"));
  stopGrid->addRow(m_forCommand, m_command);
  m_untilStop = new QRadioButton(tr("Until Stop is pressed"), stopBox);
  m_untilStop->setObjectName(QStringLiteral("untilStop"));
  stopGrid->addRow(m_untilStop);
  m_forDuration->setChecked(true);
  connect(m_command, &QLineEdit::textEdited, this, [this] { m_forCommand->setChecked(true); });
  connect(m_seconds, &QDoubleSpinBox::valueChanged, this, [this] { m_forDuration->setChecked(true); });
  form->addRow(tr("Record:"), stopBox);

  auto* outputRow = new QHBoxLayout;
  m_output = new QLineEdit(defaultOutput(), this);
  m_output->setObjectName(QStringLiteral("output"));
  m_browse = new QPushButton(tr("Browse\u2026"), this);
  connect(m_browse, &QPushButton::clicked, this, &RecordDialog::browse);
  outputRow->addWidget(m_output, 1);
  outputRow->addWidget(m_browse);
  auto* outputLabel = new QLabel(tr("&Save as:"), this);
  outputLabel->setBuddy(m_output);
  form->addRow(outputLabel, outputRow);
  layout->addLayout(form);

  m_progress = new QProgressBar(this);
  m_progress->setObjectName(QStringLiteral("progress"));
  m_progress->setVisible(false);
  layout->addWidget(m_progress);
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("status"));
  layout->addWidget(m_status);
  m_error = new QLabel(this);
  m_error->setObjectName(QStringLiteral("error"));
  m_error->setWordWrap(true);
  m_error->setStyleSheet(QStringLiteral("color: #b00020"));
  m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  if (::geteuid() != 0) m_error->setText(QString::fromStdString(recorder::needRootMessage()));
  layout->addWidget(m_error);

  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  m_start = new QPushButton(tr("&Record"), this);
  m_start->setObjectName(QStringLiteral("start"));
  m_start->setDefault(true);
  connect(m_start, &QPushButton::clicked, this, &RecordDialog::startOrStop);
  m_close = new QPushButton(tr("Close"), this);
  connect(m_close, &QPushButton::clicked, this, &QDialog::reject);
  buttons->addWidget(m_start);
  buttons->addWidget(m_close);
  layout->addLayout(buttons);

  connect(&m_watcher, &QFutureWatcherBase::finished, this, &RecordDialog::finished);
  resize(560, sizeHint().height());
}

RecordDialog::~RecordDialog() {
  // The worker holds a tracefs instance and this dialog's callbacks: end it first.
  m_stop.request_stop();
  m_watcher.waitForFinished();
}

QString RecordDialog::errorText() const { return m_error->text(); }

core::Result<recorder::RecordOptions> RecordDialog::options() const {
  recorder::RecordOptions o;
  o.output = QDir::cleanPath(m_output->text().trimmed()).toStdString();
  if (m_output->text().trimmed().isEmpty()) return core::Error("choose a file to save the trace in");
  o.events = m_events->currentText().trimmed().toStdString();
  o.bufferKb = m_bufferKb->value();
  if (m_forDuration->isChecked()) o.duration = std::chrono::nanoseconds(static_cast<int64_t>(m_seconds->value() * 1e9));
  if (m_forCommand->isChecked()) {
    for (const QString& arg : QProcess::splitCommand(m_command->text())) o.command.push_back(arg.toStdString());
    if (o.command.empty()) return core::Error("type the command to record, or choose a duration");
  }
  return o;
}

void RecordDialog::browse() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save the trace as"), m_output->text(),
                                                    tr("trace-cmd traces (*.dat)"));
  if (!path.isEmpty()) m_output->setText(path);
}

void RecordDialog::setRecording(bool on) {
  for (QWidget* w : std::initializer_list<QWidget*>{m_events, m_bufferKb, m_forDuration, m_seconds, m_forCommand,
                                                    m_command, m_untilStop, m_output, m_browse})
    w->setEnabled(!on);
  m_start->setText(on ? tr("&Stop") : tr("&Record"));
  m_progress->setVisible(on);
}

void RecordDialog::startOrStop() {
  if (isRecording()) {
    m_stop.request_stop();
    m_start->setEnabled(false);
    m_status->setText(tr("Stopping\u2026"));
    return;
  }
  auto opts = options();
  if (!opts) {
    m_error->setText(QString::fromStdString(opts.error().message()));
    return;
  }
  m_error->clear();
  m_stop = std::stop_source();
  setRecording(true);
  m_progress->setRange(0, opts->duration ? 1000 : 0);  // no duration: a busy bar
  m_progress->setValue(0);
  m_status->setText(tr("Starting\u2026"));
  const std::stop_token token = m_stop.get_token();
  m_watcher.setFuture(QtConcurrent::run([this, options = std::move(*opts), token] {
    Outcome outcome;
    auto result = recorder::record(
        options,
        [this](const recorder::RecordProgress& p) {
          QMetaObject::invokeMethod(this, [this, p] { showProgress(p); }, Qt::QueuedConnection);
        },
        token);
    if (result)
      outcome.result = std::move(*result);
    else
      outcome.error = QString::fromStdString(result.error().message());
    return outcome;
  }));
}

void RecordDialog::reject() {
  if (isRecording()) {
    startOrStop();
    return;
  }
  QDialog::reject();
}

void RecordDialog::showProgress(const recorder::RecordProgress& p) {
  if (!isRecording()) return;
  const double seconds = std::chrono::duration<double>(p.elapsed).count();
  if (p.phase == recorder::Phase::Recording) {
    m_status->setText(tr("Recording: %1 s, %2, %L3 events lost").arg(seconds, 0, 'f', 1).arg(megabytes(p.bytes)).arg(p.lostEvents));
  } else {
    m_progress->setRange(0, 1000);
    m_status->setText(tr("Writing the trace\u2026"));
  }
  if (p.fraction >= 0) m_progress->setValue(static_cast<int>(p.fraction * 1000));
}

void RecordDialog::finished() {
  Outcome outcome = m_watcher.result();
  setRecording(false);
  m_start->setEnabled(true);
  if (!outcome.result) {
    m_status->clear();
    m_error->setText(outcome.error);
    return;
  }
  const recorder::RecordResult& r = *outcome.result;
  QStringList notes;
  for (const auto& loss : r.losses)
    notes << tr("CPU %1 lost %L2 events to a full ring buffer (a larger buffer keeps them)").arg(loss.cpu).arg(loss.overrun);
  for (const auto& note : r.notes) notes << QString::fromStdString(note);
  m_status->setText(tr("Wrote %1").arg(QString::fromStdString(r.output)));
  m_output->setText(defaultOutput());  // the next recording must not replace this one
  emit recorded(QString::fromStdString(r.output), notes);
  accept();
}

void addRecordAction(MainWindow& window, QMenu* fileMenu) {
  auto* action = fileMenu->addAction(QIcon::fromTheme(QStringLiteral("media-record")), QObject::tr("&Record\u2026"));
  action->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+R")));
  QObject::connect(action, &QAction::triggered, &window, [&window] {
    auto* dialog = window.findChild<RecordDialog*>();
    if (!dialog) {
      dialog = new RecordDialog(&window);
      QObject::connect(dialog, &RecordDialog::recorded, &window, [&window](const QString& path, const QStringList& notes) {
        window.openFile(path);
        if (!notes.isEmpty()) window.statusBar()->showMessage(notes.join(QStringLiteral("; ")), 15000);
      });
    }
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
  });
}

}  // namespace app::gui
