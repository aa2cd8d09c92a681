// File → Compare…: choose two traces (A, the reference, and B) to open as a
// comparison; each field offers the recent files. MainWindow opens both and
// shows the Diff tab once they are loaded.
#pragma once

#include <QDialog>

class QComboBox;
class QLabel;

namespace app::gui {

class CompareDialog : public QDialog {
  Q_OBJECT
 public:
  CompareDialog(const QStringList& recent, const QString& startDir, QWidget* parent = nullptr);
  QString fileA() const;
  QString fileB() const;
  void setFiles(const QString& a, const QString& b);

 public slots:
  void accept() override;

 private:
  QComboBox* m_a;
  QComboBox* m_b;
  QLabel* m_error;
  QString m_dir;
};

}  // namespace app::gui
