// Long work off the GUI thread (import, replay, statistics, export): a Job runs
// a function on Qt's thread pool with a std::stop_token and a progress sink, and
// hands its result back on the GUI thread. MainWindow shows running jobs in the
// status bar with a progress bar and a Cancel button.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QtConcurrent/QtConcurrentRun>
#include <atomic>
#include <functional>
#include <stop_token>

namespace app::gui {

class Job : public QObject {
  Q_OBJECT
 public:
  explicit Job(QString title, QObject* parent = nullptr);
  ~Job() override;

  const QString& title() const { return m_title; }
  double progress() const { return m_permille.load() / 1000.0; }
  std::stop_token stopToken() const;
  bool isCancelled() const { return m_stop.stop_requested(); }
  bool isRunning() const { return m_running; }
  /// Any thread. Updates reach the GUI thread coalesced (one queued call at a time).
  void setProgress(double fraction);
  /// Whether the user may cancel it (statistics are cancelled by newer ones, not by the user).
  bool userCancellable() const { return m_userCancellable; }
  void setUserCancellable(bool on) { m_userCancellable = on; }

  /// Runs `work(job)` on the global thread pool, then `done(result)` on this
  /// object's thread; the job deletes itself afterwards. `work` must not throw.
  template <typename T>
  void start(std::function<T(Job&)> work, std::function<void(T&)> done) {
    auto* watcher = new QFutureWatcher<T>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, done = std::move(done)] {
      T result = watcher->result();
      m_running = false;
      done(result);
      emit finished();
      deleteLater();
    });
    m_running = true;
    emit started();
    watcher->setFuture(QtConcurrent::run([this, work = std::move(work)] { return work(*this); }));
  }

 public slots:
  void cancel();

 signals:
  void started();
  void progressChanged(double fraction);
  void finished();
  void cancelRequested();

 private:
  QString m_title;
  std::stop_source m_stop;
  std::atomic<int> m_permille{0};
  std::atomic<bool> m_progressQueued{false};
  bool m_running = false;
  bool m_userCancellable = true;
};

}  // namespace app::gui
