#include "app/gui/compare_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

namespace app::gui {

CompareDialog::CompareDialog(const QStringList& recent, const QString& startDir, QWidget* parent)
    : QDialog(parent), m_dir(startDir) {
  setWindowTitle(tr("Compare two runs"));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(tr("Open two traces side by side: the timelines share one time scale (aligned at their starts, "
                              "or at markers you set), and the <b>Diff</b> tab lists what changed from A to B, task by task."),
                           this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* form = new QFormLayout;
  auto field = [&](QComboBox*& combo, const QString& label) {
    auto* box = new QWidget(this);
    auto* row = new QHBoxLayout(box);
    row->setContentsMargins(0, 0, 0, 0);
    combo = new QComboBox(box);
    combo->setEditable(true);
    combo->addItems(recent);
    combo->setCurrentIndex(-1);
    combo->lineEdit()->setPlaceholderText(tr("trace file or CTF folder"));
    combo->setMinimumContentsLength(48);
    auto* browse = new QPushButton(tr("Browse\u2026"), box);
    QComboBox* target = combo;
    connect(browse, &QPushButton::clicked, this, [this, target] {
      const QString start = target->currentText().isEmpty() ? m_dir : QFileInfo(target->currentText()).absolutePath();
      QString f = QFileDialog::getOpenFileName(this, tr("Choose a trace"), start,
                                               tr("Scheduler traces (*.dat *.data *.txt *.trace *.html metadata);;All files (*)"));
      if (QFileInfo(f).fileName() == QLatin1String("metadata")) f = QFileInfo(f).absolutePath();
      if (!f.isEmpty()) target->setCurrentText(f);
    });
    row->addWidget(combo, 1);
    row->addWidget(browse);
    form->addRow(label, box);
  };
  field(m_a, tr("A (reference):"));
  field(m_b, tr("B (compared):"));
  layout->addLayout(form);
  auto* swap = new QToolButton(this);
  swap->setText(tr("Swap A and B"));
  connect(swap, &QToolButton::clicked, this, [this] { setFiles(fileB(), fileA()); });
  layout->addWidget(swap, 0, Qt::AlignLeft);
  m_error = new QLabel(this);
  m_error->setStyleSheet(QStringLiteral("color:#b00020"));
  layout->addWidget(m_error);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Compare"));
  connect(buttons, &QDialogButtonBox::accepted, this, &CompareDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

QString CompareDialog::fileA() const { return m_a->currentText().trimmed(); }
QString CompareDialog::fileB() const { return m_b->currentText().trimmed(); }

void CompareDialog::setFiles(const QString& a, const QString& b) {
  m_a->setCurrentText(a);
  m_b->setCurrentText(b);
}

void CompareDialog::accept() {
  for (const QString& f : {fileA(), fileB()}) {
    if (f.isEmpty()) {
      m_error->setText(tr("Choose two traces."));
      return;
    }
    if (!QFileInfo::exists(f)) {
      m_error->setText(tr("%1 does not exist.").arg(f));
      return;
    }
  }
  QDialog::accept();
}

}  // namespace app::gui
