#include "replay/workload/rtapp_reader.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "replay/workload/json_reader.h"

namespace replay {

namespace {

using json::Type;
using json::Value;

constexpr size_t kMaxBursts = 5'000'000;
constexpr int kMaxInstances = 4096;
// The simulator adds up work and sleep in int64 nanoseconds (per task, over
// the workload); bounding the unrolled total keeps every such sum exact.
constexpr double kMaxTotalNs = 4e18;

// A step of a task's sequence, before unrolling loops.
struct Event {
  enum Kind { Run, Sleep, Timer } kind;
  int64_t ns = 0;       // run work or sleep length
  uint32_t timer = 0;   // per-task timer slot
};

class Reader {
 public:
  explicit Reader(const std::string& name) : m_name(name) {}

  core::Result<Workload> read(std::string_view text) {
    auto doc = json::parse(text, m_name);
    if (!doc) return doc.error();
    Workload w;
    w.kind = "rt-app";
    w.source = m_name;
    if (!readDocument(*doc, w)) return core::Error(m_error);
    return w;
  }

 private:
  bool fail(const Value& at, const std::string& what) {
    if (m_error.empty())
      m_error = m_name + ": line " + std::to_string(at.line) + ", column " + std::to_string(at.column) + ": " + what;
    return false;
  }

  bool expect(const Value& v, Type type, const std::string& what) {
    if (v.type == type) return true;
    return fail(v, what + " must be " + std::string(json::toString(type)) + ", not " + std::string(json::toString(v.type)));
  }

  bool integer(const Value& v, const std::string& what, int64_t lo, int64_t hi, int64_t& out) {
    if (v.type != Type::Number || !v.integral)
      return fail(v, what + " must be an integer, not " +
                         (v.type == Type::Number ? std::string("a fraction") : std::string(json::toString(v.type))));
    if (v.integer < lo || v.integer > hi)
      return fail(v, what + " " + std::to_string(v.integer) + " out of range " + std::to_string(lo) + ".." +
                         std::to_string(hi));
    out = v.integer;
    return true;
  }

  bool policyOf(const Value& v, SchedPolicy& out) {
    if (!expect(v, Type::String, "\"policy\"")) return false;
    static const std::map<std::string, SchedPolicy, std::less<>> kPolicies = {
        {"SCHED_OTHER", SchedPolicy::Normal}, {"SCHED_NORMAL", SchedPolicy::Normal}, {"SCHED_BATCH", SchedPolicy::Batch},
        {"SCHED_IDLE", SchedPolicy::Idle},    {"SCHED_FIFO", SchedPolicy::Fifo},     {"SCHED_RR", SchedPolicy::RR},
        {"SCHED_ISO", SchedPolicy::Iso}};
    auto it = kPolicies.find(v.string);
    if (it == kPolicies.end())
      return fail(v, "unknown policy \"" + v.string +
                         "\" (expected SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR or SCHED_ISO)");
    out = it->second;
    return true;
  }

  static bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

  // Appends the events of an object (task or phase body) in file order.
  bool readEvents(const Value& obj, std::vector<Event>& out, std::map<std::string, uint32_t>& timers,
                  const std::vector<std::string_view>& otherKeys) {
    for (const auto& [key, v] : obj.members) {
      if (std::find(otherKeys.begin(), otherKeys.end(), key) != otherKeys.end()) continue;
      if (startsWith(key, "runtime")) return fail(v, "event \"" + key + "\" is not supported (use \"run\")");
      if (startsWith(key, "run")) {
        int64_t us = 0;
        if (!integer(v, "\"" + key + "\"", 0, INT64_MAX / 1000, us)) return false;
        out.push_back({Event::Run, us * 1000, 0});
      } else if (startsWith(key, "sleep")) {
        int64_t us = 0;
        if (!integer(v, "\"" + key + "\"", 0, INT64_MAX / 1000, us)) return false;
        out.push_back({Event::Sleep, us * 1000, 0});
      } else if (startsWith(key, "timer")) {
        if (!expect(v, Type::Object, "\"" + key + "\"")) return false;
        const Value* ref = v.find("ref");
        const Value* period = v.find("period");
        if (!ref || !period) return fail(v, "\"" + key + "\" needs \"ref\" and \"period\"");
        for (const auto& [k, tv] : v.members)
          if (k != "ref" && k != "period" && k != "mode")
            return fail(tv, "unknown key \"" + k + "\" in \"" + key + "\"");
        if (!expect(*ref, Type::String, "\"ref\"")) return false;
        int64_t us = 0;
        if (!integer(*period, "\"period\"", 1, INT64_MAX / 1000, us)) return false;
        auto [it, added] = timers.emplace(ref->string, static_cast<uint32_t>(timers.size()));
        if (!added && m_timerPeriods[it->second] != us * 1000)
          return fail(*period, "timer \"" + ref->string + "\" used with two different periods");
        if (added) m_timerPeriods.push_back(us * 1000);
        out.push_back({Event::Timer, us * 1000, it->second});
      } else {
        return fail(v, "unknown key \"" + key + "\" (supported events: run, sleep, timer)");
      }
    }
    return true;
  }

  bool readDocument(const Value& doc, Workload& w) {
    if (!expect(doc, Type::Object, "the workload")) return false;
    const Value* global = doc.find("global");
    const Value* tasks = doc.find("tasks");
    for (const auto& [k, v] : doc.members)
      if (k != "global" && k != "tasks") return fail(v, "unknown top-level key \"" + k + "\" (expected global, tasks)");
    if (!tasks) return fail(doc, "missing \"tasks\"");
    if (!expect(*tasks, Type::Object, "\"tasks\"")) return false;
    if (tasks->members.empty()) return fail(*tasks, "\"tasks\" is empty");

    SchedPolicy defaultPolicy = SchedPolicy::Normal;
    int64_t durationNs = 0;
    if (global) {
      if (!expect(*global, Type::Object, "\"global\"")) return false;
      static const std::vector<std::string_view> kIgnored = {
          "calibration", "logdir",     "log_basename",  "lock_pages",      "ftrace",         "gnuplot",
          "pi_enabled",  "io_device",  "mem_buffer_size", "cumulative_slack", "log_size",     "frag"};
      for (const auto& [k, v] : global->members) {
        if (k == "duration") {
          if (v.type != Type::Number) return expect(v, Type::Number, "\"duration\"");
          if (v.number == -1) continue;
          if (!(v.number > 0) || v.number > 1e6) return fail(v, "\"duration\" must be -1 or 0 < seconds <= 1e6");
          durationNs = std::llround(v.number * 1e9);
        } else if (k == "default_policy") {
          if (!policyOf(v, defaultPolicy)) return false;
        } else if (std::find(kIgnored.begin(), kIgnored.end(), k) == kIgnored.end()) {
          return fail(v, "unknown key \"" + k + "\" in \"global\"");
        }
      }
    }
    w.durationNs = durationNs;

    int32_t nextTid = 1000;
    for (const auto& [name, t] : tasks->members) {
      if (!expect(t, Type::Object, "task \"" + name + "\"")) return false;
      int64_t instances = 1, loop = -1, priority = 0, delayUs = 0;
      SchedPolicy policy = defaultPolicy;
      bool havePriority = false;
      m_priorityAt = nullptr;
      std::vector<int> cpus;
      const Value* phases = nullptr;
      static const std::vector<std::string_view> kTaskKeys = {"instance", "loop",  "policy", "priority",
                                                              "cpus",     "delay", "phases", "nice"};
      for (const auto& [k, v] : t.members) {
        if (k == "instance") {
          if (!integer(v, "\"instance\"", 1, kMaxInstances, instances)) return false;
        } else if (k == "loop") {
          if (!integer(v, "\"loop\"", -1, 1'000'000'000, loop)) return false;
          if (loop == 0) return fail(v, "\"loop\" must be -1 or positive");
        } else if (k == "policy") {
          if (!policyOf(v, policy)) return false;
        } else if (k == "priority" || k == "nice") {
          if (!integer(v, "\"" + k + "\"", -20, 99, priority)) return false;
          havePriority = true;
          m_priorityAt = &v;
        } else if (k == "cpus") {
          if (!expect(v, Type::Array, "\"cpus\"")) return false;
          if (v.items.empty()) return fail(v, "\"cpus\" is empty");
          for (const Value& c : v.items) {
            int64_t cpu = 0;
            if (!integer(c, "a CPU number", 0, 4095, cpu)) return false;
            cpus.push_back(static_cast<int>(cpu));
          }
        } else if (k == "delay") {
          if (!integer(v, "\"delay\"", 0, INT64_MAX / 1000, delayUs)) return false;
        } else if (k == "phases") {
          if (!expect(v, Type::Object, "\"phases\"")) return false;
          phases = &v;
        }
      }
      // Validate priority against the policy.
      int prio = 120;
      if (isRtPolicy(policy)) {
        if (!havePriority) priority = 10;
        if (priority < 1 || priority > 99)
          return fail(havePriority ? *m_priorityAt : t, "\"priority\" of a FIFO/RR task must be 1..99");
        prio = 99 - static_cast<int>(priority);
      } else {
        if (priority < -20 || priority > 19)
          return fail(*m_priorityAt, "\"priority\" (nice) of a fair-class task must be -20..19");
        prio = 120 + static_cast<int>(priority);
      }

      // The loop body: either the task's own events or its phases, each phase with its own loop.
      std::map<std::string, uint32_t> timers;
      m_timerPeriods.clear();
      std::vector<Event> body;
      if (phases) {
        for (const auto& [k, v] : t.members)
          if (std::find(kTaskKeys.begin(), kTaskKeys.end(), k) == kTaskKeys.end())
            return fail(v, "task \"" + name + "\" has \"phases\"; put event \"" + k + "\" inside a phase");
        if (phases->members.empty()) return fail(*phases, "\"phases\" is empty");
        for (const auto& [pname, p] : phases->members) {
          if (!expect(p, Type::Object, "phase \"" + pname + "\"")) return false;
          int64_t ploop = 1;
          if (const Value* pl = p.find("loop"))
            if (!integer(*pl, "\"loop\"", 1, 1'000'000'000, ploop)) return false;
          std::vector<Event> pe;
          if (!readEvents(p, pe, timers, {"loop"})) return false;
          if (pe.empty()) return fail(p, "phase \"" + pname + "\" has no events");
          for (int64_t i = 0; i < ploop; ++i) {
            body.insert(body.end(), pe.begin(), pe.end());
            if (body.size() > kMaxBursts) return fail(p, "workload too large (more than 5M events)");
          }
        }
      } else {
        if (!readEvents(t, body, timers, kTaskKeys)) return false;
      }
      if (body.empty()) return fail(t, "task \"" + name + "\" has no events");

      int64_t iterations = loop;
      if (loop == -1) {
        if (durationNs == 0) return fail(t, "task \"" + name + "\" loops for ever (loop -1) but global.duration is not set");
        int64_t minIter = 0, minPeriod = INT64_MAX;
        for (const Event& e : body) {
          if (e.kind != Event::Timer) minIter += e.ns;
          else minPeriod = std::min(minPeriod, e.ns);
        }
        if (minIter == 0) minIter = minPeriod == INT64_MAX ? 0 : minPeriod;
        if (minIter == 0) return fail(t, "task \"" + name + "\" has only zero-length events; it cannot loop");
        iterations = durationNs / minIter + 2;
      }
      const double unrolledBursts =
          static_cast<double>(iterations) * static_cast<double>(body.size()) * static_cast<double>(instances);
      if (unrolledBursts > static_cast<double>(kMaxBursts))
        return fail(t, "task \"" + name + "\" unrolls to more than 5M events; shorten the duration or the loop");
      m_bursts += unrolledBursts;
      if (m_bursts > static_cast<double>(kMaxBursts))
        return fail(t, "the workload unrolls to more than 5M events by task \"" + name + "\"");
      double iterationNs = 0;
      for (const Event& e : body) iterationNs += static_cast<double>(e.ns);
      m_totalNs += (static_cast<double>(delayUs) * 1e3 + iterationNs * static_cast<double>(iterations)) *
                   static_cast<double>(instances);
      if (m_totalNs > kMaxTotalNs)
        return fail(t, "the workload's run, sleep and timer time adds up to more than 4e9 seconds by task \"" +
                           name + "\"");

      for (int64_t inst = 0; inst < instances; ++inst) {
        Task task;
        task.tid = nextTid++;
        task.tgid = task.tid;
        std::string comm = instances > 1 ? name + "-" + std::to_string(inst) : name;
        task.comm = comm.substr(0, 15);
        task.prio = prio;
        task.policy = policy;
        task.affinity = cpus;
        task.startTs = w.originTs + delayUs * 1000;
        const auto timerBase = static_cast<uint32_t>(w.timers.size());
        for (int64_t period : m_timerPeriods) w.timers.push_back({period});
        // Unroll: runs accumulate into the current burst; sleeps and timers end it.
        Burst cur;
        for (int64_t it = 0; it < iterations; ++it) {
          for (const Event& e : body) {
            if (e.kind == Event::Run) {
              cur.work += e.ns;
            } else if (e.kind == Event::Sleep && e.ns == 0) {
              continue;
            } else {
              task.bursts.push_back(cur);
              cur = Burst();
              if (e.kind == Event::Sleep) {
                cur.wake = WakeKind::Sleep;
                cur.sleepNs = e.ns;
              } else {
                cur.wake = WakeKind::Timer;
                cur.timer = timerBase + e.timer;
                cur.sleepNs = e.ns;
              }
            }
          }
        }
        task.bursts.push_back(cur);
        w.tasks.push_back(std::move(task));
      }
    }
    return true;
  }

  const std::string& m_name;
  std::string m_error;
  std::vector<int64_t> m_timerPeriods;
  const Value* m_priorityAt = nullptr;
  double m_bursts = 0;
  double m_totalNs = 0;
};

}  // namespace

core::Result<Workload> readRtAppWorkload(std::string_view text, const std::string& name) {
  return Reader(name).read(text);
}

core::Result<Workload> readRtAppWorkloadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::Error(path + ": cannot open the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return core::Error(path + ": read error");
  const std::string text = ss.str();
  if (text.size() > (64u << 20)) return core::Error(path + ": workload file larger than 64 MiB");
  return readRtAppWorkload(text, path);
}

bool looksLikeWorkloadJson(const std::string& path) {
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) return true;
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c))
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return c == '{';
  return false;
}

}  // namespace replay
