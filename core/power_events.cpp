#include "core/power_events.h"

#include <charconv>

namespace core {

namespace {

struct Name {
  std::string_view name;
  PowerEvent kind;
};
constexpr Name kNames[] = {
    {"cpu_frequency", PowerEvent::CpuFrequency},
    {"cpu_frequency_limits", PowerEvent::CpuFrequencyLimits},
    {"cpu_idle", PowerEvent::CpuIdle},
    {"sched_pelt_cfs", PowerEvent::PeltCfs},
    {"sched_load_cfs_rq", PowerEvent::PeltCfs},
    {"sched_load_avg_cpu", PowerEvent::PeltCfs},
    {"sched_pelt_se", PowerEvent::PeltSe},
    {"sched_load_se", PowerEvent::PeltSe},
    {"sched_load_avg_task", PowerEvent::PeltSe},
    {"sched_util_est_cfs", PowerEvent::UtilEstCfs},
    {"sched_util_est_se", PowerEvent::UtilEstSe},
    {"sched_util_est_task", PowerEvent::UtilEstSe},
    {"sched_pelt_rt", PowerEvent::PeltRt},
    {"sched_pelt_dl", PowerEvent::PeltDl},
    {"sched_pelt_irq", PowerEvent::PeltIrq},
    {"print", PowerEvent::Print},
    {"tracing_mark_write", PowerEvent::Print},
};

// The first of several spellings a field has had (util_avg on EAS kernels, util in mainline's module).
std::optional<int64_t> firstNumber(const EventFields& f, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    if (auto v = f.number(n)) return v;
  return std::nullopt;
}

DecodedEvent counterEvent(const DecodedEvent& base, CounterKind kind, int32_t cpu, int32_t tid,
                          std::string_view comm, int64_t value) {
  DecodedEvent e = base;
  e.op = EventOp::Pelt;
  e.cpuA = cpu;
  e.tid = tid;
  e.otherTid = static_cast<int32_t>(kind);
  e.aux = value;
  e.setText(0, comm.substr(0, DecodedEvent::kInlineText));
  return e;
}

// A cfs_rq event describes the CPU only for its root: task groups ("/autogroup-12") are not kept.
bool isRootCfsRq(const EventFields& f) {
  const auto path = f.text("path");
  return !path || *path == "/" || path->empty();
}

}  // namespace

PowerEvent powerEventOf(std::string_view name) {
  if (const size_t colon = name.find(':'); colon != std::string_view::npos) name.remove_prefix(colon + 1);
  if (name.substr(0, 6) == "power_") name.remove_prefix(6);  // LTTng: power_cpu_frequency
  // LISA's module (lisa/_assets/kmodules/lisa/ftrace_events.h) names its events
  // "lisa__sched_pelt_se" ..., the sched_tp module before it "sched_pelt_se".
  if (name.substr(0, 6) == "lisa__") name.remove_prefix(6);
  for (const Name& n : kNames)
    if (n.name == name) return n.kind;
  return PowerEvent::None;
}

std::optional<std::string_view> TextFields::text(std::string_view field) const {
  for (size_t pos = 0; pos < m_payload.size();) {
    const size_t at = m_payload.find(field, pos);
    if (at == std::string_view::npos) return std::nullopt;
    const size_t eq = at + field.size();
    if ((at == 0 || m_payload[at - 1] == ' ') && eq < m_payload.size() && m_payload[eq] == '=') {
      const size_t end = m_payload.find_first_of(" \t\r\n", eq + 1);
      return m_payload.substr(eq + 1, end == std::string_view::npos ? std::string_view::npos : end - eq - 1);
    }
    pos = at + 1;
  }
  return std::nullopt;
}

std::optional<int64_t> TextFields::number(std::string_view field) const {
  const auto t = text(field);
  if (!t || t->empty()) return std::nullopt;
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
  if (ec != std::errc() || p != t->data() + t->size()) return std::nullopt;
  return v;
}

std::optional<size_t> decodePowerEvent(PowerEvent kind, const EventFields& f, const DecodedEvent& base,
                                       std::span<DecodedEvent, kMaxPowerEventsPerRecord> out) {
  switch (kind) {
    case PowerEvent::CpuFrequency:
    case PowerEvent::CpuIdle: {
      const auto state = f.number("state");
      const auto cpu = f.number("cpu_id");
      if (!state || !cpu) return std::nullopt;
      DecodedEvent& e = out[0];
      e = base;
      e.op = kind == PowerEvent::CpuFrequency ? EventOp::CpuFrequency : EventOp::CpuIdle;
      e.cpuA = static_cast<int32_t>(*cpu);
      // cpu_idle's state is a u32 whose (u32)-1 means "left idle"; formats print it signed or not.
      e.aux = kind == PowerEvent::CpuIdle ? static_cast<int32_t>(static_cast<uint32_t>(*state)) : *state;
      return 1;
    }
    case PowerEvent::CpuFrequencyLimits: {
      // The fields are min_freq and max_freq; the kernel prints them "min=%lu max=%lu cpu_id=%lu"
      // (include/trace/events/power.h), so text traces say min= and max=.
      const auto lo = firstNumber(f, {"min_freq", "min"});
      const auto hi = firstNumber(f, {"max_freq", "max"});
      const auto cpu = f.number("cpu_id");
      if (!lo || !hi || !cpu) return std::nullopt;
      DecodedEvent& e = out[0];
      e = base;
      e.op = EventOp::CpuFrequencyLimits;
      e.cpuA = static_cast<int32_t>(*cpu);
      e.aux = *hi;
      e.otherTid = static_cast<int32_t>(*lo);
      return 1;
    }
    case PowerEvent::PeltCfs:
    case PowerEvent::PeltSe:
    case PowerEvent::UtilEstCfs:
    case PowerEvent::UtilEstSe: {
      const auto cpu = f.number("cpu");
      if (!cpu) return std::nullopt;
      const bool perTask = kind == PowerEvent::PeltSe || kind == PowerEvent::UtilEstSe;
      int32_t tid = -1;
      std::string_view comm;
      if (perTask) {
        const auto pid = f.number("pid");
        if (!pid) return std::nullopt;
        if (*pid < 0) return 0;  // a task group's entity
        tid = static_cast<int32_t>(*pid);
        comm = f.text("comm").value_or(std::string_view{});
      } else if (!isRootCfsRq(f)) {
        return 0;
      }
      const auto c = static_cast<int32_t>(*cpu);
      size_t n = 0;
      const auto add = [&](CounterKind k, std::optional<int64_t> v) {
        if (v) out[n++] = counterEvent(base, k, c, tid, comm, *v);
      };
      if (kind == PowerEvent::UtilEstCfs || kind == PowerEvent::UtilEstSe) {
        add(CounterKind::UtilEstEnqueued, f.number("enqueued"));
        add(CounterKind::UtilEstEwma, f.number("ewma"));
      } else {
        add(CounterKind::PeltLoad, firstNumber(f, {"load", "load_avg"}));
        add(CounterKind::PeltRunnable, firstNumber(f, {"runnable", "runnable_avg"}));
        add(CounterKind::Utilisation, firstNumber(f, {"util", "util_avg"}));
      }
      if (n == 0) return std::nullopt;
      return n;
    }
    case PowerEvent::PeltRt:
    case PowerEvent::PeltDl:
    case PowerEvent::PeltIrq: {
      const auto cpu = f.number("cpu");
      const auto util = firstNumber(f, {"util", "util_avg"});
      if (!cpu || !util) return std::nullopt;
      const CounterKind k = kind == PowerEvent::PeltRt   ? CounterKind::UtilRt
                            : kind == PowerEvent::PeltDl ? CounterKind::UtilDl
                                                         : CounterKind::UtilIrq;
      out[0] = counterEvent(base, k, static_cast<int32_t>(*cpu), -1, {}, *util);
      return 1;
    }
    case PowerEvent::Print:
    case PowerEvent::None: return std::nullopt;
  }
  return std::nullopt;
}

DecodedEvent userMarkEvent(const DecodedEvent& base, int32_t writerTid, std::string_view text) {
  DecodedEvent e = base;
  e.op = EventOp::UserMark;
  e.tid = writerTid;
  e.setText(0, text);
  return e;
}

std::string_view printedMarkerText(std::string_view payload) {
  // The ip's symbol is one word followed by ": "; atrace text never starts so
  // ("B|1|x: y" has a '|' before the colon).
  const size_t colon = payload.find(": ");
  if (colon != std::string_view::npos && colon > 0 && payload.substr(0, colon).find_first_of(" |") == std::string_view::npos)
    payload.remove_prefix(colon + 2);
  return payload;
}

}  // namespace core
