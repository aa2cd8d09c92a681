#include "importers/ctf/ctf_event_pipe.h"

#include "core/decoded_event.h"

#include <exception>

namespace importers::ctf {

std::unique_ptr<RecordChunk> RecordPipe::acquire() {
  std::unique_lock lock(m_mutex);
  if (m_free.empty() && m_created < kMaxChunks) {
    ++m_created;
    lock.unlock();
    return std::make_unique<RecordChunk>();
  }
  m_emptied.wait(lock, [&] { return !m_free.empty(); });
  auto chunk = std::move(m_free.back());
  m_free.pop_back();
  return chunk;
}

void RecordPipe::submit(std::unique_ptr<RecordChunk> chunk) {
  {
    std::lock_guard lock(m_mutex);
    m_full.push_back(std::move(chunk));
  }
  m_filled.notify_one();
}

void RecordPipe::close() {
  {
    std::lock_guard lock(m_mutex);
    m_closed = true;
  }
  m_filled.notify_one();
}

std::unique_ptr<RecordChunk> RecordPipe::take() {
  std::unique_lock lock(m_mutex);
  m_filled.wait(lock, [&] { return !m_full.empty() || m_closed; });
  if (m_full.empty()) return nullptr;
  auto chunk = std::move(m_full.front());
  m_full.pop_front();
  return chunk;
}

void RecordPipe::recycle(std::unique_ptr<RecordChunk> chunk) {
  chunk->clear();
  {
    std::lock_guard lock(m_mutex);
    m_free.push_back(std::move(chunk));
  }
  m_emptied.notify_one();
}

void RecordReplayer::run(RecordPipe& pipe) noexcept {
  while (auto chunk = pipe.take()) {
    if (m_error.empty()) {
      try {
        replay(*chunk);
      } catch (const std::exception& e) {
        m_error = std::string("building the model failed: ") + e.what();
        pipe.fail();
      }
    }
    pipe.recycle(std::move(chunk));
  }
}

void RecordReplayer::replay(const RecordChunk& chunk) {
  core::SchedBuilder& b = m_builder;
  for (const Record& r : chunk.records) {
    if (r.kind == RecordKind::Event) {
      b.countEvent(m_typeOfClass[r.type]);
      core::EventContext ctx;
      ctx.ts = r.ts;
      ctx.cpu = r.cpu;
      ctx.ctxTid = r.ctxTid;
      ctx.irq = r.irq;
      switch (r.op) {
        case EventOp::Other: b.onOtherEvent(ctx); break;
        case EventOp::Switch: {
          core::SwitchArgs a;
          a.prevTid = r.i[0];
          a.prevPrio = r.i[1];
          a.nextTid = r.i[2];
          a.nextPrio = r.i[3];
          a.prevComm = chunk.textOf(r, 0);
          a.nextComm = chunk.textOf(r, 1);
          a.prevState = r.state;
          b.onSwitch(ctx, a);
          break;
        }
        case EventOp::Waking:
        case EventOp::Wakeup:
        case EventOp::WakeupNew: {
          core::WakeArgs a;
          a.tid = r.i[0];
          a.prio = r.i[1];
          a.targetCpu = r.i[2];
          a.comm = chunk.textOf(r, 0);
          if (r.op == EventOp::Waking)
            b.onWaking(ctx, a);
          else
            b.onWakeup(ctx, a, r.op == EventOp::WakeupNew);
          break;
        }
        case EventOp::Migrate: b.onMigrate(ctx, r.i[0], chunk.textOf(r, 0), r.i[1], r.i[2], r.i[3]); break;
        case EventOp::Fork:
          b.onFork(ctx, r.i[0], chunk.textOf(r, 0), r.i[1], chunk.textOf(r, 1), r.i[2]);
          break;
        case EventOp::Exec: b.onExec(ctx, r.i[0], r.i[1], chunk.textOf(r, 0)); break;
        case EventOp::Exit: b.onExit(ctx, r.i[0], chunk.textOf(r, 0), r.i[1]); break;
        case EventOp::Rename: b.onRename(ctx, r.i[0], chunk.textOf(r, 0)); break;
        case EventOp::Power: {
          core::DecodedEvent e;
          e.ts = r.ts;
          e.cpu = r.cpu;
          e.ctxTid = r.ctxTid;
          e.irq = r.irq;
          e.op = static_cast<core::EventOp>(r.i[0]);
          e.cpuA = r.i[1];
          e.tid = r.i[2];
          e.otherTid = r.i[3];
          e.aux = static_cast<int64_t>((uint64_t{static_cast<uint32_t>(r.i[5])} << 32) | static_cast<uint32_t>(r.i[4]));
          e.setText(0, chunk.textOf(r, 0));
          core::applyEvent(b, e);
          break;
        }
      }
      continue;
    }
    switch (r.kind) {
      case RecordKind::ClassName:
        if (r.type >= m_typeOfClass.size()) m_typeOfClass.resize(r.type + 1, 0);
        m_typeOfClass[r.type] = b.eventType(chunk.textOf(r, 0));
        break;
      case RecordKind::TaskInfo: b.onTaskInfo(r.i[0], r.i[1], chunk.textOf(r, 0)); break;
      case RecordKind::TaskSeed: b.onTaskStateSeed(r.ts, r.i[0], r.state, r.cpu); break;
      case RecordKind::DataLoss: b.onDataLoss(r.cpu, r.ts, r.count()); break;
      case RecordKind::Metadata: b.setMetadata(std::string(chunk.textOf(r, 0)), std::string(chunk.textOf(r, 1))); break;
      case RecordKind::Format: b.setFormat(std::string(chunk.textOf(r, 0))); break;
      case RecordKind::Diagnostic:
        b.recordDiagnostic(static_cast<core::DiagCode>(r.i[0]), std::string(chunk.textOf(r, 0)));
        break;
      case RecordKind::Event: break;
    }
  }
}

}  // namespace importers::ctf
