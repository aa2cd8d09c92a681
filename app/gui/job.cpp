#include "app/gui/job.h"

#include <QMetaObject>
#include <algorithm>
#include <cmath>

namespace app::gui {

Job::Job(QString title, QObject* parent) : QObject(parent), m_title(std::move(title)) {}

Job::~Job() {
  // Qt destroys children before this object is gone; a running job is only
  // destroyed at shutdown, after MainWindow cancelled it and waited for the pool.
  m_stop.request_stop();
}

std::stop_token Job::stopToken() const { return m_stop.get_token(); }

void Job::setProgress(double fraction) {
  if (!std::isfinite(fraction)) return;
  m_permille.store(static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * 1000)));
  if (m_progressQueued.exchange(true)) return;
  QMetaObject::invokeMethod(
      this,
      [this] {
        m_progressQueued.store(false);
        emit progressChanged(progress());
      },
      Qt::QueuedConnection);
}

void Job::cancel() {
  if (m_stop.stop_requested()) return;
  m_stop.request_stop();
  emit cancelRequested();
}

}  // namespace app::gui
