#include "importers/perf/builder_feed.h"

namespace importers::perf {

void BuilderFeed::apply(const DecodedEvent& e, const Batch* batch, const ImportOptions* options) {
  if (e.countType != kNoCount16 && e.op != EventOp::Diagnostic) m_b.countEvent(e.countType);
  m_b.setByteOffset(e.off);
  const core::EventContext ctx = e.context();
  switch (e.op) {
    case EventOp::Switch: {
      core::SwitchArgs a;
      a.prevTid = e.a;
      a.nextTid = e.b;
      a.prevPrio = e.lo();
      a.nextPrio = e.hi();
      a.prevState = e.state;
      a.prevComm = e.textAt(0);
      a.nextComm = e.textAt(1);
      m_b.onSwitch(ctx, a);
      break;
    }
    case EventOp::Waking:
    case EventOp::Wakeup: {
      core::WakeArgs a;
      a.tid = e.a;
      a.prio = e.lo();
      a.targetCpu = e.hi();
      a.comm = e.textAt(0);
      if (e.op == EventOp::Waking)
        m_b.onWaking(ctx, a);
      else
        m_b.onWakeup(ctx, a, (e.flags & kFlagNew) != 0);
      break;
    }
    case EventOp::Migrate: m_b.onMigrate(ctx, e.a, e.textAt(0), e.lo(), e.hi(), e.b); break;
    case EventOp::Fork: m_b.onFork(ctx, e.a, e.textAt(0), e.b, e.textAt(1), e.c); break;
    case EventOp::Exit: m_b.onExit(ctx, e.a, e.textAt(0), e.lo()); break;
    case EventOp::Exec: m_b.onExec(ctx, e.a, e.b, e.longText()); break;
    case EventOp::Other: m_b.onOtherEvent(ctx); break;
    case EventOp::Power: core::applyEvent(m_b, e.toCore()); break;
    case EventOp::Comm: m_b.onRename(ctx, e.b, e.textAt(0)); break;
    case EventOp::TaskInfo: m_b.onTaskInfo(e.a, e.b, e.textAt(0)); break;
    case EventOp::DataLoss: m_b.onDataLoss(e.cpu, static_cast<int64_t>(e.ts), e.value()); break;
    case EventOp::Diagnostic: {
      const auto code = static_cast<core::DiagCode>(e.countType);
      if (!(e.flags & kFlagKeep) || !batch) {
        m_b.diagnostics().add(code);
        break;
      }
      std::optional<int> cpu;
      if (e.cpu >= 0) cpu = e.cpu;
      m_b.recordDiagnostic(code, batch->messages[static_cast<size_t>(e.value())], cpu);
      break;
    }
    case EventOp::Progress:
      if (options && options->progress) options->progress(static_cast<double>(e.value()) / 1e6);
      break;
    case EventOp::Uncounted:
    case EventOp::TaskIds:
    case EventOp::Lost:
    case EventOp::LostSamples: break;
  }
}

void BuilderFeed::diagnostic(core::DiagCode code, uint64_t off, std::string message, std::optional<int> cpu) {
  const bool keep = m_diagCounts[static_cast<size_t>(code)]++ < core::Diagnostics::kRecordsKeptPerCode;
  if (!m_threaded) {
    if (!keep) {
      m_b.diagnostics().add(code);
      return;
    }
    m_b.setByteOffset(off);
    m_b.recordDiagnostic(code, std::move(message), cpu);
    return;
  }
  DecodedEvent e;
  e.op = EventOp::Diagnostic;
  e.off = off;
  e.countType = static_cast<uint16_t>(code);
  e.cpu = static_cast<int16_t>(cpu.value_or(-1));
  if (!m_batch) m_batch = takeFreeBatch();
  if (keep) {
    e.flags = kFlagKeep;
    e.setValue(static_cast<int64_t>(m_batch->messages.size()));
    m_batch->messages.push_back(std::move(message));
  }
  event(e);
}

void BuilderFeed::progress(double fraction) {
  if (!m_threaded) return;  // the direct reader reports progress itself
  DecodedEvent e;
  e.op = EventOp::Progress;
  e.setValue(static_cast<int64_t>(fraction * 1e6));
  event(e);
}

std::unique_ptr<BuilderFeed::Batch> BuilderFeed::takeFreeBatch() {
  std::unique_lock lock(m_mutex);
  // Bounded: the reader waits when the builder falls behind, so memory stays flat.
  m_changed.wait(lock, [&] { return m_inFlight < kMaxBatchesInFlight || m_abandoned; });
  ++m_inFlight;
  std::unique_ptr<Batch> b;
  if (!m_free.empty()) {
    b = std::move(m_free.back());
    m_free.pop_back();
  } else {
    b = std::make_unique<Batch>();
    b->events.reserve(kBatchSize);
  }
  return b;
}

void BuilderFeed::publish() {
  if (!m_batch) return;
  {
    std::lock_guard lock(m_mutex);
    if (m_abandoned) {
      m_batch.reset();
      return;
    }
    m_full.push_back(std::move(m_batch));
  }
  m_changed.notify_all();
}

void BuilderFeed::abandon() {
  {
    std::lock_guard lock(m_mutex);
    m_abandoned = true;
    m_full.clear();
  }
  m_changed.notify_all();
}

void BuilderFeed::finish(core::Status status) {
  if (!m_threaded) {
    m_status = std::move(status);
    return;
  }
  publish();
  {
    std::lock_guard lock(m_mutex);
    m_done = true;
    m_status = std::move(status);
  }
  m_changed.notify_all();
}

core::Status BuilderFeed::drain(const ImportOptions& options) {
  if (!m_threaded) return m_status;
  while (true) {
    std::unique_ptr<Batch> batch;
    {
      std::unique_lock lock(m_mutex);
      m_changed.wait(lock, [&] { return !m_full.empty() || m_done; });
      if (m_full.empty()) break;
      batch = std::move(m_full.front());
      m_full.pop_front();
    }
    for (const DecodedEvent& e : batch->events) apply(e, batch.get(), &options);
    batch->events.clear();
    batch->messages.clear();
    {
      std::lock_guard lock(m_mutex);
      m_free.push_back(std::move(batch));
      --m_inFlight;
    }
    m_changed.notify_all();
  }
  std::lock_guard lock(m_mutex);
  return m_status;
}

}  // namespace importers::perf
