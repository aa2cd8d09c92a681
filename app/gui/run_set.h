// The runs open in one window: recordings and the replays made from them, each
// with its model, its render data (LOD index, task colours) and its statistics
// over the current range. Owned by MainWindow; every view observes it.
#pragma once

#include <QObject>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "app/gui/replay_backend.h"
#include "app/render/timeline_renderer.h"
#include "core/analysis/stats.h"
#include "core/trace_model.h"

namespace app::gui {

struct Run {
  int id = -1;
  int parentId = -1;  ///< the recording a replay was made from; -1 for recordings
  QString title;
  QString shortTitle;  ///< for column headers and legends: "hackbench", "cfs"
  int order = -1;      ///< position among recordings, and among a recording's replays: the order they were asked for, not finished in
  QString path;       ///< file or folder it was imported from (empty for replays)
  QString warning;    ///< why the model is partial, if it is
  std::shared_ptr<const core::TraceModel> model;
  std::shared_ptr<const render::RunRenderData> render;
  std::shared_ptr<const core::analysis::RunStats> stats;  ///< over the current range; null until computed
  /// A time the user marked (absolute trace time), e.g. where the workload
  /// starts; runs can be aligned at their markers. A replay shares its recording's.
  std::optional<int64_t> marker;
  /// How a replay was made (model, overrides, topology), so an exported report
  /// can replay it again exactly as `schedlab-cli report --replay` does.
  std::optional<ReplayRequest> replayRequest;
  bool isReplay() const { return parentId >= 0; }
};

class RunSet : public QObject {
  Q_OBJECT
 public:
  explicit RunSet(QObject* parent = nullptr);

  /// Adds a run; replays are listed after their recording. Returns its id.
  int add(Run run);
  /// A ticket for a run that is still loading or replaying: runs are listed in ticket order.
  int reserveOrder() { return m_nextOrder++; }
  /// Removes a run and its replays.
  void remove(int id);
  void clear();
  const Run* run(int id) const;
  /// Display order: each recording followed by its replays.
  std::vector<int> ids() const;
  std::vector<int> recordings() const;
  std::vector<int> replaysOf(int id) const;
  int count() const { return static_cast<int>(m_runs.size()); }
  int indexOf(int id) const;  ///< position in ids(), -1 if absent

  void setStats(int id, std::shared_ptr<const core::analysis::RunStats> stats);
  /// Marks (or clears) an absolute time in a recording and its replays.
  void setMarker(int id, std::optional<int64_t> absTs);
  /// Moves relative 0 of a recording and its replays to `origin` (absolute
  /// time); the LOD index is shared, only the render data's origin changes.
  void setOrigin(int id, int64_t origin);
  /// The longest span over all runs (relative time of a "fit all").
  int64_t longestSpan() const;
  /// Earliest and latest relative time over all runs: a run aligned at a
  /// marker starts before 0.
  std::pair<int64_t, int64_t> extent() const;

 signals:
  void runAdded(int id);
  void runRemoved(int id);
  void statsChanged();
  /// Its marker or origin changed (panes repaint, statistics follow).
  void runChanged(int id);

 private:
  std::vector<Run> m_runs;  // insertion order
  int m_nextId = 1;
  int m_nextOrder = 0;
};

}  // namespace app::gui
