// Task identities known from outside the events (perf's COMM/FORK records,
// Perfetto's process tree): the tgid and comm of each tid, given to the
// builder the first time the schedule names the tid, right after the event
// that named it — not before (a fork would then find a live task of that tid)
// and not at the end (the task may be dead by then). Used by the perf.data and
// Perfetto readers, in time order (from their EventSink).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/decoded_event.h"
#include "core/event_feed.h"
#include "core/tid_table.h"

namespace core {

class TaskIdentities {
 public:
  struct Identity {
    int32_t tgid = -1;
    uint8_t commLen = 0;
    char comm[16] = {};
    std::string_view commText() const { return {comm, commLen}; }
    /// Comms are at most 15 characters (TASK_COMM_LEN); longer text is cut.
    void setComm(std::string_view s) {
      s = s.substr(0, 15);
      commLen = static_cast<uint8_t>(s.size());
      std::memcpy(comm, s.data(), s.size());
    }
  };

  /// The identity of `tid`, made if unknown.
  Identity& of(int32_t tid) { return m_known[tid]; }
  const Identity* find(int32_t tid) const {
    auto it = m_known.find(tid);
    return it == m_known.end() ? nullptr : &it->second;
  }

  /// The event being delivered names `tid`. True the first time (then its
  /// identity, if known, goes out with announce()).
  bool see(int32_t tid) {
    if (tid <= 0 || !m_seen.holds(tid)) return false;
    uint8_t& seen = m_seen.at(tid);
    if (seen) return false;
    seen = 1;
    if (m_known.count(tid)) m_pending.push_back(tid);
    return true;
  }
  bool seen(int32_t tid) const { return tid > 0 && m_seen.get(tid); }

  /// After the event that named them: the identities of the tids it named
  /// first, as TaskInfo events. After an exit nothing (it may have ended the
  /// task already; naming it now would start a new one).
  void announce(EventFeed& feed, bool afterExit) {
    if (m_pending.empty()) return;
    if (!afterExit)
      for (int32_t tid : m_pending) {
        const Identity& id = m_known[tid];
        DecodedEvent e;
        e.op = EventOp::TaskInfo;
        e.tid = tid;
        e.aux = id.tgid;
        e.setText(0, id.commText());
        feed.event(e);
      }
    m_pending.clear();
  }

  /// The tids a sched event names (a switch both; a fork is the reader's own
  /// business: which of parent and child it names depends on its source), each
  /// passed to `see`.
  template <class See>
  static void forEachNamedTid(const DecodedEvent& e, See&& see) {
    switch (e.op) {
      case EventOp::Switch:
        see(e.tid);
        see(e.otherTid);
        return;
      case EventOp::Waking:
      case EventOp::Wakeup:
      case EventOp::WakeupNew:
      case EventOp::Migrate:
      case EventOp::Exit:
      case EventOp::Exec:
      case EventOp::Rename:
      case EventOp::RuntimeStat:
      case EventOp::TaskSeed:
      case EventOp::Pelt: see(e.tid); return;  // a run queue's signal has no tid (see() ignores tid <= 0)
      default: return;
    }
  }

 private:
  std::unordered_map<int32_t, Identity> m_known;
  TidTable<uint8_t> m_seen;
  std::vector<int32_t> m_pending;
};

}  // namespace core
