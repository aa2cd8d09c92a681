#include "replay/sim/pipelined_sink.h"

#include <utility>

namespace replay {

PipelinedSink::PipelinedSink(EventSink& inner) : m_inner(inner) {
  m_filling.reserve(kChunkRecords);
  m_consumer = std::thread([this] { consume(); });
}

PipelinedSink::~PipelinedSink() { finish(); }

void PipelinedSink::finish() {
  if (!m_consumer.joinable()) return;
  handOff();
  {
    std::lock_guard lock(m_mutex);
    m_closed = true;
  }
  m_changed.notify_all();
  m_consumer.join();
}

void PipelinedSink::handOff() {
  if (m_filling.empty()) return;
  std::vector<Record> next;
  {
    std::unique_lock lock(m_mutex);
    // Bounded: a simulation far ahead of the builder waits rather than
    // holding its whole output in chunks.
    m_changed.wait(lock, [this] { return m_full.size() < kChunksInFlight; });
    m_full.push_back(std::move(m_filling));
    if (!m_spare.empty()) {
      next = std::move(m_spare.back());
      m_spare.pop_back();
    }
  }
  m_changed.notify_all();
  next.reserve(kChunkRecords);  // a spare chunk comes back empty (consume())
  m_filling = std::move(next);
}

void PipelinedSink::consume() {
  for (;;) {
    std::vector<Record> chunk;
    {
      std::unique_lock lock(m_mutex);
      m_changed.wait(lock, [this] { return !m_full.empty() || m_closed; });
      if (m_full.empty()) return;  // closed, and everything handed over is done
      chunk = std::move(m_full.front());
      m_full.pop_front();
    }
    m_changed.notify_all();
    for (const Record& r : chunk) replayInto(m_inner, r);
    chunk.clear();
    std::lock_guard lock(m_mutex);
    m_spare.push_back(std::move(chunk));
  }
}

void PipelinedSink::replayInto(EventSink& sink, const Record& r) {
  switch (r.kind) {
    case Kind::Switch:
      sink.onSwitch(r.ts, r.cpu, r.a, static_cast<core::TaskState>(r.small), r.b, r.flag);
      break;
    case Kind::IdleKind: sink.onIdleKind(r.ts, r.cpu, r.flag); break;
    case Kind::Counter: sink.onCounter(r.ts, static_cast<core::CounterKind>(r.small), r.x, r.value); break;
    case Kind::Waking: sink.onWaking(r.ts, r.cpu, r.a, r.flag, r.b, r.x); break;
    case Kind::Wakeup: sink.onWakeup(r.ts, r.cpu, r.a, r.flag, r.b, r.x, r.small != 0); break;
    case Kind::Migrate: sink.onMigrate(r.ts, r.cpu, r.a, r.b, r.x, r.y); break;
    case Kind::Fork: sink.onFork(r.ts, r.cpu, r.a, r.b); break;
    case Kind::Exit: sink.onExit(r.ts, r.cpu, r.a); break;
    case Kind::End: sink.onEnd(r.ts); break;
  }
}

}  // namespace replay
