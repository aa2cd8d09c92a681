#include "app/gui/run_set.h"

#include <algorithm>

namespace app::gui {

RunSet::RunSet(QObject* parent) : QObject(parent) {}

int RunSet::add(Run run) {
  run.id = m_nextId++;
  if (run.order < 0) run.order = reserveOrder();
  if (run.shortTitle.isEmpty()) run.shortTitle = run.title;
  const int id = run.id;
  m_runs.push_back(std::move(run));
  emit runAdded(id);
  return id;
}

void RunSet::remove(int id) {
  std::vector<int> doomed = replaysOf(id);
  doomed.push_back(id);
  for (int d : doomed) {
    auto it = std::find_if(m_runs.begin(), m_runs.end(), [d](const Run& r) { return r.id == d; });
    if (it == m_runs.end()) continue;
    m_runs.erase(it);
    emit runRemoved(d);
  }
}

void RunSet::clear() {
  for (int id : recordings()) remove(id);
}

const Run* RunSet::run(int id) const {
  auto it = std::find_if(m_runs.begin(), m_runs.end(), [id](const Run& r) { return r.id == id; });
  return it == m_runs.end() ? nullptr : &*it;
}

namespace {
// The ids of the runs that pass `keep`, in the order they were asked for.
template <typename Keep>
std::vector<int> idsInOrder(const std::vector<Run>& runs, Keep keep) {
  std::vector<const Run*> kept;
  for (const Run& r : runs)
    if (keep(r)) kept.push_back(&r);
  std::stable_sort(kept.begin(), kept.end(), [](const Run* a, const Run* b) { return a->order < b->order; });
  std::vector<int> out;
  for (const Run* r : kept) out.push_back(r->id);
  return out;
}
}  // namespace

std::vector<int> RunSet::recordings() const {
  return idsInOrder(m_runs, [](const Run& r) { return !r.isReplay(); });
}

std::vector<int> RunSet::replaysOf(int id) const {
  return idsInOrder(m_runs, [id](const Run& r) { return r.parentId == id; });
}

std::vector<int> RunSet::ids() const {
  std::vector<int> out;
  for (int rec : recordings()) {
    out.push_back(rec);
    for (int rep : replaysOf(rec)) out.push_back(rep);
  }
  // Replays whose recording was closed stay visible at the end.
  for (const Run& r : m_runs)
    if (r.isReplay() && !run(r.parentId)) out.push_back(r.id);
  return out;
}

int RunSet::indexOf(int id) const {
  const auto order = ids();
  auto it = std::find(order.begin(), order.end(), id);
  return it == order.end() ? -1 : static_cast<int>(it - order.begin());
}

void RunSet::setStats(int id, std::shared_ptr<const core::analysis::RunStats> stats) {
  for (Run& r : m_runs)
    if (r.id == id) r.stats = std::move(stats);
  emit statsChanged();
}

void RunSet::setMarker(int id, std::optional<int64_t> absTs) {
  std::vector<int> affected = replaysOf(id);
  affected.push_back(id);
  for (Run& r : m_runs)
    if (std::find(affected.begin(), affected.end(), r.id) != affected.end()) r.marker = absTs;
  for (int a : affected) emit runChanged(a);
}

void RunSet::setOrigin(int id, int64_t origin) {
  std::vector<int> affected = replaysOf(id);
  affected.push_back(id);
  std::vector<int> changed;
  for (Run& r : m_runs) {
    if (!r.render || std::find(affected.begin(), affected.end(), r.id) == affected.end() || r.render->origin == origin)
      continue;
    auto copy = std::make_shared<render::RunRenderData>(*r.render);
    copy->origin = origin;
    r.render = std::move(copy);
    changed.push_back(r.id);
  }
  for (int c : changed) emit runChanged(c);
}

std::pair<int64_t, int64_t> RunSet::extent() const {
  int64_t lo = 0, hi = 0;
  for (const Run& r : m_runs) {
    if (!r.model) continue;
    const int64_t origin = r.render ? r.render->origin : r.model->firstTs;
    lo = std::min(lo, r.model->firstTs - origin);
    hi = std::max(hi, r.model->lastTs - origin);
  }
  return {lo, hi};
}

int64_t RunSet::longestSpan() const {
  int64_t span = 0;
  for (const Run& r : m_runs)
    if (r.model) span = std::max(span, r.model->lastTs - (r.render ? r.render->origin : r.model->firstTs));
  return span;
}

}  // namespace app::gui
