#include "core/event_feed.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <thread>

namespace core {

// The hand-over between decoder and builder costs ~15% more CPU time in all
// (measured on perf.data), which only pays when the two really run side by
// side: on a machine whose CPUs are all busy it is a loss. /proc/loadavg's
// fourth field counts the tasks running or runnable right now (this one
// included).
bool EventFeed::spareCpu() {
  // The CPUs this process may run on: under `taskset -c 0` a worker would
  // only take turns with the decoder on the one core.
  unsigned cpus = std::thread::hardware_concurrency();
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    cpus = std::min(cpus, static_cast<unsigned>(CPU_COUNT(&allowed)));
  if (cpus < 2) return false;
  char buf[128] = {};
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  unsigned running = 0;
  if (n <= 0 || std::sscanf(buf, "%*s %*s %*s %u/", &running) != 1) return true;
  return running < cpus;
}

uint16_t EventFeed::eventType(std::string_view name) {
  const uint16_t key = m_nextKey < DecodedEvent::kNoCount - 1 ? m_nextKey++ : m_nextKey;
  if (!m_threaded) {
    if (key >= m_typeOfKey.size()) m_typeOfKey.resize(key + 1u, 0);
    m_typeOfKey[key] = m_b.eventType(name);
    return key;
  }
  side(SideKind::EventType, name).value = key;
  return key;
}

bool EventFeed::keepsRecord(DiagCode code) {
  const auto i = static_cast<size_t>(code);
  if (m_diagCounts[i]++ < Diagnostics::kRecordsKeptPerCode) return true;
  // Past the kept records only the count travels: as a diagnostic with no message.
  if (!m_threaded)
    m_b.diagnostics().add(code);
  else
    side(SideKind::Diagnostic, {}).code = code;
  return false;
}

void EventFeed::diagnostic(DiagCode code, uint64_t position, std::string_view message, std::optional<int> cpu,
                           std::optional<int64_t> ts) {
  if (!m_threaded) {
    setPosition(position);
    m_b.recordDiagnostic(code, std::string(message), cpu, ts);
    return;
  }
  SideRecord& r = side(SideKind::Diagnostic, message);
  r.code = code;
  r.position = position;
  r.cpu = cpu;
  r.ts = ts;
  r.value = 1;  // a message to record
}

void EventFeed::metadata(std::string_view key, std::string_view value) {
  if (!m_threaded) {
    m_b.setMetadata(std::string(key), std::string(value));
    return;
  }
  side(SideKind::Metadata, key, value);
}

void EventFeed::format(std::string_view name) {
  if (!m_threaded) {
    m_b.setFormat(std::string(name));
    return;
  }
  side(SideKind::Format, name);
}

void EventFeed::progress(double fraction) {
  if (!m_threaded) return;  // a direct producer reports progress itself
  side(SideKind::Progress, {}).value = fraction;
}

void EventFeed::setFile(size_t file) {
  file = std::min(file, m_files.size() - 1);
  if (file == m_currentFile) return;
  m_currentFile = file;
  m_b.setCurrentFile(m_files[file]);
}

EventFeed::SideRecord& EventFeed::side(SideKind kind, std::string_view a, std::string_view b) {
  Batch& batch = this->batch();
  SideRecord& r = batch.side.emplace_back();
  r.beforeEvent = static_cast<uint32_t>(batch.events.size());
  r.kind = kind;
  const std::string_view texts[2] = {a, b};
  for (int k = 0; k < 2; ++k) {
    r.text[k] = static_cast<uint32_t>(batch.text.size());
    r.textLen[k] = static_cast<uint32_t>(texts[k].size());
    batch.text.append(texts[k]);
  }
  return r;
}

// In a batch an outside text lives in the batch's own text; its pointer is set
// again on the consumer side, where the text no longer grows.
void EventFeed::keepTexts(Batch& b, DecodedEvent& e) {
  for (int k = 0; k < 2; ++k) {
    if (!(e.externalText & (1u << k))) continue;
    const std::string_view s = e.textAt(k);
    const auto at = static_cast<uint32_t>(b.text.size());
    b.text.append(s);
    e.setExternalTag(k, at);
  }
}

void EventFeed::applySide(const Batch& b, const SideRecord& r, const std::function<void(double)>& progress) {
  switch (r.kind) {
    case SideKind::EventType: {
      const auto key = static_cast<size_t>(r.value);
      if (key >= m_typeOfKey.size()) m_typeOfKey.resize(key + 1, 0);
      m_typeOfKey[key] = m_b.eventType(b.textOf(r.text[0], r.textLen[0]));
      break;
    }
    case SideKind::Diagnostic:
      if (r.value == 0) {
        m_b.diagnostics().add(r.code);
        break;
      }
      setPosition(r.position);
      m_b.recordDiagnostic(r.code, std::string(b.textOf(r.text[0], r.textLen[0])), r.cpu, r.ts);
      break;
    case SideKind::Metadata:
      m_b.setMetadata(std::string(b.textOf(r.text[0], r.textLen[0])), std::string(b.textOf(r.text[1], r.textLen[1])));
      break;
    case SideKind::Format: m_b.setFormat(std::string(b.textOf(r.text[0], r.textLen[0]))); break;
    case SideKind::Progress:
      if (progress) progress(r.value);
      break;
  }
}

std::unique_ptr<EventFeed::Batch> EventFeed::takeFreeBatch() {
  std::unique_lock lock(m_mutex);
  // Bounded: the producer waits when the builder falls behind, so memory stays flat.
  m_changed.wait(lock, [&] { return m_inFlight < kMaxBatchesInFlight || m_abandoned; });
  ++m_inFlight;
  std::unique_ptr<Batch> b;
  if (!m_free.empty()) {
    b = std::move(m_free.back());
    m_free.pop_back();
  } else {
    lock.unlock();
    b = std::make_unique<Batch>();
    b->events.reserve(kBatchEvents);
  }
  return b;
}

void EventFeed::publish() {
  if (!m_batch) return;
  {
    std::lock_guard lock(m_mutex);
    if (m_abandoned) {
      m_batch->clear();
      m_free.push_back(std::move(m_batch));
      --m_inFlight;
      return;
    }
    m_full.push_back(std::move(m_batch));
  }
  m_changed.notify_all();
}

void EventFeed::abandon() {
  {
    std::lock_guard lock(m_mutex);
    m_abandoned = true;
    m_inFlight -= m_full.size();
    m_full.clear();
  }
  m_changed.notify_all();
}

void EventFeed::finish(Status status) {
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

Status EventFeed::runThreaded(const std::function<Status()>& produce, const std::function<void(double)>& progress,
                              const std::string& source) {
  setThreaded();
  std::thread worker([&] {
    Status st;
    try {
      st = produce();
    } catch (const std::exception& e) {
      st = Error(source + ": reading stopped: " + e.what());
    }
    finish(std::move(st));
  });
  Status body;
  try {
    body = drain(progress);
  } catch (const std::exception& e) {
    abandon();  // the worker must not wait for a consumer that is gone
    body = Error(source + ": building the model failed: " + e.what());
  }
  worker.join();
  return body;
}

Status EventFeed::drain(const std::function<void(double)>& progress) {
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
    size_t next = 0;
    for (size_t i = 0; i < batch->events.size(); ++i) {
      while (next < batch->side.size() && batch->side[next].beforeEvent <= i) applySide(*batch, batch->side[next++], progress);
      DecodedEvent& e = batch->events[i];
      for (int k = 0; k < 2; ++k)
        if (e.externalText & (1u << k)) e.setText(k, batch->textOf(e.externalTag(k), static_cast<uint32_t>(e.textAt(k).size())));
      apply(e);
    }
    while (next < batch->side.size()) applySide(*batch, batch->side[next++], progress);
    batch->clear();
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

}  // namespace core
