#include "importers/ctf/ctf_reader.h"

#include <babeltrace2/babeltrace.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include "core/decoded_event.h"
#include "core/event_feed.h"
#include "core/power_events.h"
#include "core/task_state.h"
#include "core/tid_table.h"
#include "core/topology.h"
#include "importers/ctf/ctf_crash_guard.h"
#include "importers/ctf/ctf_packet_check.h"
#include "importers/ctf/ctf_stream_repair.h"
#include "importers/ctf/ctf_trace_finder.h"

namespace importers::ctf {

namespace {

namespace fs = std::filesystem;
using core::DecodedEvent;
using core::EventOp;

// ---------------------------------------------------------------------------
// babeltrace2 references

struct GraphDeleter {
  void operator()(bt_graph* g) const { bt_graph_put_ref(g); }
};
struct ValueDeleter {
  void operator()(bt_value* v) const { bt_value_put_ref(v); }
};
struct PluginDeleter {
  void operator()(const bt_plugin* p) const { bt_plugin_put_ref(p); }
};
struct QueryDeleter {
  void operator()(bt_query_executor* q) const { bt_query_executor_put_ref(q); }
};
using GraphPtr = std::unique_ptr<bt_graph, GraphDeleter>;
using ValuePtr = std::unique_ptr<bt_value, ValueDeleter>;
using PluginPtr = std::unique_ptr<const bt_plugin, PluginDeleter>;
using QueryPtr = std::unique_ptr<bt_query_executor, QueryDeleter>;

struct Plugins {
  PluginPtr ctf;
  const bt_component_class_source* source = nullptr;
};

// Our components log nothing: every failure reaches the user through the error
// causes babeltrace2 appends whatever the log level, formatted by takeError().
constexpr bt_logging_level kComponentLogLevel = BT_LOGGING_LEVEL_NONE;

core::Result<Plugins> loadPlugins() {
  Plugins p;
  const bt_plugin* plugin = nullptr;
  // Standard env var, system folder and static plugins; not ~/.local (a user's
  // stray build must not change what an import means).
  if (bt_plugin_find("ctf", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &plugin) != BT_PLUGIN_FIND_STATUS_OK)
    return core::Error("babeltrace2 plugin 'ctf' not found (is the babeltrace2 plugins package installed?)");
  p.ctf.reset(plugin);
  p.source = bt_plugin_borrow_source_component_class_by_name_const(p.ctf.get(), "fs");
  if (!p.source) return core::Error("babeltrace2 plugin 'ctf' lacks src.ctf.fs");
  bt_current_thread_clear_error();
  return p;
}

ValuePtr makeSourceParams(const std::string& dir) {
  ValuePtr params(bt_value_map_create());
  ValuePtr inputs(bt_value_array_create());
  if (!params || !inputs) return nullptr;
  if (bt_value_array_append_string_element(inputs.get(), dir.c_str()) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK)
    return nullptr;
  if (bt_value_map_insert_entry(params.get(), "inputs", inputs.get()) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK)
    return nullptr;
  return params;
}

// ---------------------------------------------------------------------------
// Error causes -> one line naming the file

/// The folders babeltrace2 was given, and the ones the user gave (they differ
/// for a repaired trace, whose paths are mapped back in messages).
struct PathMap {
  std::vector<std::string> effective;
  std::vector<std::string> original;
  std::string toOriginal(const std::string& path) const {
    for (size_t i = 0; i < effective.size(); ++i)
      if (path.compare(0, effective[i].size(), effective[i]) == 0) return original[i] + path.substr(effective[i].size());
    // Stream names are absolute paths.
    for (size_t i = 0; i < effective.size(); ++i) {
      const std::string dir = fs::absolute(effective[i]).lexically_normal().string();
      if (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/')
        return original[i] + path.substr(dir.size());
    }
    return path;
  }
};

struct BtErrorInfo {
  std::string root;   ///< the innermost cause, tidied
  std::string file;   ///< a trace file named by a cause (original path), or empty
  std::optional<uint64_t> offset;
  bool crashed = false;  ///< babeltrace2 aborted (caught by runGuarded)
  std::string format(const std::string& fallbackFile) const {
    std::string out = file.empty() ? fallbackFile : file;
    if (offset) out += ": byte offset " + std::to_string(*offset);
    return out + ": " + (root.empty() ? "babeltrace2 failed without saying why" : root);
  }
};

// Causes carry object addresses and line breaks that mean nothing to a user.
std::string tidyCause(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t addr = text.find("addr=0x", i);
    if (addr != std::string_view::npos) {
      // Drop "name-addr=0x1234, " entirely.
      size_t start = addr;
      while (start > i && text[start - 1] != ' ' && text[start - 1] != ',' && text[start - 1] != ':') --start;
      size_t end = addr + 7;
      while (end < text.size() && std::isxdigit(static_cast<unsigned char>(text[end]))) ++end;
      while (end < text.size() && (text[end] == ',' || text[end] == ' ')) ++end;
      out.append(text.substr(i, start - i));
      i = end;
      continue;
    }
    out.append(text.substr(i));
    break;
  }
  std::string flat;
  for (char c : out) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c == ' ' && !flat.empty() && flat.back() == ' ') continue;
    flat.push_back(c);
  }
  while (!flat.empty() && (flat.back() == ' ' || flat.back() == ',' || flat.back() == ':')) flat.pop_back();
  return flat;
}

std::optional<uint64_t> findOffset(std::string_view text) {
  for (size_t pos = text.find("offset="); pos != std::string_view::npos; pos = text.find("offset=", pos + 1)) {
    std::string_view num = text.substr(pos + 7);
    uint64_t value = 0;
    int base = 10;
    if (num.substr(0, 2) == "0x") {
      num.remove_prefix(2);
      base = 16;
    }
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), value, base);
    if (ec == std::errc() && p != num.data()) return value;
  }
  return std::nullopt;
}

std::string findTracePath(std::string_view text, const PathMap& paths) {
  auto scan = [&](const std::string& dir) -> std::string {
    const size_t pos = text.find(dir + "/");
    if (pos == std::string_view::npos) return {};
    size_t end = pos + dir.size() + 1;
    while (end < text.size() && std::string_view("'\"`,; \n)|").find(text[end]) == std::string_view::npos) ++end;
    return std::string(text.substr(pos, end - pos));
  };
  for (const auto& dir : paths.effective)
    if (auto p = scan(dir); !p.empty()) return paths.toOriginal(p);
  for (const auto& dir : paths.original)
    if (auto p = scan(dir); !p.empty()) return p;
  return {};
}

/// Releases a babeltrace2 error (causes in the order they were appended: the
/// innermost, the actual reason, first) and keeps the innermost cause, the
/// first trace file a cause names (innermost first) and an offset if one is given.
BtErrorInfo describeError(const bt_error* error, const PathMap& paths) {
  BtErrorInfo info;
  if (!error) return info;
  const uint64_t count = bt_error_get_cause_count(error);
  for (uint64_t k = 0; k < count; ++k) {
    const bt_error_cause* cause = bt_error_borrow_cause_by_index(error, k);
    std::string text = bt_error_cause_get_message(cause) ? bt_error_cause_get_message(cause) : "";
    if (bt_error_cause_get_actor_type(cause) == BT_ERROR_CAUSE_ACTOR_TYPE_MESSAGE_ITERATOR) {
      // The source's output port is named "<uuid> | <stream class> | <stream file>".
      if (const char* port = bt_error_cause_message_iterator_actor_get_component_output_port_name(cause))
        text += std::string(" port=") + port;
    }
    if (k == 0) info.root = tidyCause(bt_error_cause_get_message(cause) ? bt_error_cause_get_message(cause) : "");
    if (info.file.empty()) info.file = findTracePath(text, paths);
    if (!info.offset) info.offset = findOffset(text);
  }
  bt_error_release(error);
  // A repaired trace is read from a temporary mirror: name the user's files.
  for (size_t i = 0; i < paths.effective.size(); ++i) {
    if (paths.effective[i] == paths.original[i]) continue;
    for (size_t pos = info.root.find(paths.effective[i]); pos != std::string::npos;
         pos = info.root.find(paths.effective[i], pos + paths.original[i].size()))
      info.root.replace(pos, paths.effective[i].size(), paths.original[i]);
  }
  return info;
}

BtErrorInfo takeError(const PathMap& paths) { return describeError(bt_current_thread_take_error(), paths); }

// ---------------------------------------------------------------------------
// Event classes: what each one means for the builder, resolved once

enum class Kind : uint8_t {
  Other,
  Switch,
  Waking,
  Wakeup,
  WakeupNew,
  Migrate,
  Fork,
  Exec,
  Exit,
  Rename,
  StatedumpProcess,
  StatedumpCpuTopology,
  IrqEntry,
  IrqExit,
  SoftIrqEntry,
  SoftIrqExit,
  Power,  ///< power_cpu_frequency, power_cpu_idle (LTTng), power:* and PELT (perf): core/power_events.h
};

/// "sched:sched_switch" (perf) -> "sched_switch" (what ftrace and LTTng call it).
std::string_view plainEventName(std::string_view name) {
  const size_t colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

Kind kindOf(std::string_view n) {
  static const std::unordered_map<std::string_view, Kind> kKinds = {
      {"sched_switch", Kind::Switch},
      {"sched_waking", Kind::Waking},
      {"sched_wakeup", Kind::Wakeup},
      {"sched_wakeup_new", Kind::WakeupNew},
      {"sched_migrate_task", Kind::Migrate},
      {"sched_process_fork", Kind::Fork},
      {"sched_process_exec", Kind::Exec},
      {"sched_process_exit", Kind::Exit},
      {"task_rename", Kind::Rename},
      {"lttng_statedump_process_state", Kind::StatedumpProcess},
      {"lttng_statedump_cpu_topology", Kind::StatedumpCpuTopology},
      {"irq_handler_entry", Kind::IrqEntry},
      {"irq_handler_exit", Kind::IrqExit},
      // hrtimers expire in hard-irq context (or in the timer softirq): either
      // way no task is the waker of what they wake.
      {"hrtimer_expire_entry", Kind::IrqEntry},
      {"hrtimer_expire_exit", Kind::IrqExit},
      {"timer_hrtimer_expire_entry", Kind::IrqEntry},
      {"timer_hrtimer_expire_exit", Kind::IrqExit},
      {"softirq_entry", Kind::SoftIrqEntry},
      {"softirq_exit", Kind::SoftIrqExit},
      {"irq_softirq_entry", Kind::SoftIrqEntry},
      {"irq_softirq_exit", Kind::SoftIrqExit},
  };
  if (auto it = kKinds.find(n); it != kKinds.end()) return it->second;
  // lttng-modules 2.10+: x86_irq_vectors_local_timer_entry, ..._reschedule_exit...
  if (startsWith(n, "x86_irq_vectors_")) {
    if (endsWith(n, "_entry")) return Kind::IrqEntry;
    if (endsWith(n, "_exit")) return Kind::IrqExit;
  }
  return Kind::Other;
}

enum class FieldType : uint8_t { None, Unsigned, Signed, String };
struct FieldSlot {
  uint32_t index = 0;
  FieldType type = FieldType::None;
  bool present() const { return type != FieldType::None; }
};

// Field names per kind, slot by slot; LTTng's name first, perf's (= ftrace's) second.
using SlotNames = std::array<std::string_view, 2>;
constexpr int kMaxSlots = 7;
enum SwitchSlot { kPrevComm, kPrevTid, kPrevPrio, kPrevState, kNextComm, kNextTid, kNextPrio };
enum WakeSlot { kWakeComm, kWakeTid, kWakePrio, kWakeTargetCpu };
enum MigrateSlot { kMigComm, kMigTid, kMigPrio, kMigOrigCpu, kMigDestCpu };
enum ForkSlot { kParentComm, kParentTid, kChildComm, kChildTid, kChildTgid };
enum ExecSlot { kExecFilename, kExecTid, kExecOldTid };
enum ExitSlot { kExitComm, kExitTid, kExitPrio };
enum RenameSlot { kRenameTid, kRenameNewComm };
enum StatedumpSlot { kSdTid, kSdTgid, kSdName, kSdStatus, kSdCpu };
enum TopologySlot { kTopoCpu, kTopoPackage, kTopoCore };

std::vector<SlotNames> slotNamesOf(Kind kind) {
  switch (kind) {
    case Kind::Switch:
      return {{"prev_comm"}, {"prev_tid", "prev_pid"}, {"prev_prio"}, {"prev_state"},
              {"next_comm"}, {"next_tid", "next_pid"}, {"next_prio"}};
    case Kind::Waking:
    case Kind::Wakeup:
    case Kind::WakeupNew: return {{"comm"}, {"tid", "pid"}, {"prio"}, {"target_cpu"}};
    case Kind::Migrate: return {{"comm"}, {"tid", "pid"}, {"prio"}, {"orig_cpu"}, {"dest_cpu"}};
    // LTTng's child_pid is the child's tgid (it has child_tid); perf's child_pid is its tid.
    case Kind::Fork:
      return {{"parent_comm"}, {"parent_tid", "parent_pid"}, {"child_comm"}, {"child_tid", "child_pid"}, {"child_pid"}};
    case Kind::Exec: return {{"filename"}, {"tid", "pid"}, {"old_tid", "old_pid"}};
    case Kind::Exit: return {{"comm"}, {"tid", "pid"}, {"prio"}};
    case Kind::Rename: return {{"tid", "pid"}, {"newcomm"}};
    case Kind::StatedumpProcess: return {{"tid"}, {"pid"}, {"name"}, {"status"}, {"cpu"}};
    case Kind::StatedumpCpuTopology: return {{"cpu_id"}, {"physical_id"}, {"core_id"}};
    default: return {};
  }
}

/// Slots without which the event says nothing the builder can use.
std::vector<int> requiredSlotsOf(Kind kind) {
  switch (kind) {
    case Kind::Switch: return {kPrevTid, kNextTid};
    case Kind::Waking:
    case Kind::Wakeup:
    case Kind::WakeupNew: return {kWakeTid};
    case Kind::Migrate: return {kMigTid, kMigDestCpu};
    case Kind::Fork: return {kParentTid, kChildTid};
    case Kind::Exec: return {kExecTid};
    case Kind::Exit: return {kExitTid};
    case Kind::Rename: return {kRenameTid, kRenameNewComm};
    case Kind::StatedumpProcess: return {kSdTid};
    case Kind::StatedumpCpuTopology: return {kTopoCpu};
    default: return {};
  }
}

FieldType fieldTypeOf(const bt_field_class* fc) {
  const bt_field_class_type t = bt_field_class_get_type(fc);
  // Enumerations (prev_state in recent lttng-modules) are integers too.
  if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) return FieldType::Unsigned;
  if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) return FieldType::Signed;
  if (t == BT_FIELD_CLASS_TYPE_STRING) return FieldType::String;
  return FieldType::None;
}

/// Members of a structure field class by name (CTF's leading '_' already
/// removed by src.ctf.fs).
std::unordered_map<std::string_view, FieldSlot> membersOf(const bt_field_class* structFc) {
  std::unordered_map<std::string_view, FieldSlot> out;
  if (!structFc || bt_field_class_get_type(structFc) != BT_FIELD_CLASS_TYPE_STRUCTURE) return out;
  const uint64_t n = bt_field_class_structure_get_member_count(structFc);
  for (uint64_t i = 0; i < n; ++i) {
    const bt_field_class_structure_member* m = bt_field_class_structure_borrow_member_by_index_const(structFc, i);
    const char* name = bt_field_class_structure_member_get_name(m);
    if (!name) continue;
    out.emplace(name, FieldSlot{static_cast<uint32_t>(i),
                                fieldTypeOf(bt_field_class_structure_member_borrow_field_class_const(m))});
  }
  return out;
}

inline const bt_field* memberField(const bt_field* s, FieldSlot f) {
  return bt_field_structure_borrow_member_field_by_index_const(s, f.index);
}
inline int64_t readInt(const bt_field* s, FieldSlot f, int64_t fallback) {
  switch (f.type) {
    case FieldType::Unsigned: return static_cast<int64_t>(bt_field_integer_unsigned_get_value(memberField(s, f)));
    case FieldType::Signed: return bt_field_integer_signed_get_value(memberField(s, f));
    default: return fallback;
  }
}
inline int32_t readI32(const bt_field* s, FieldSlot f, int32_t fallback) {
  return static_cast<int32_t>(readInt(s, f, fallback));
}
inline std::string_view readString(const bt_field* s, FieldSlot f) {
  if (f.type != FieldType::String) return {};
  // NUL-terminated (CTF strings, and text arrays cut at their first NUL): a
  // comm's strlen is cheaper than one more call into the library.
  const char* text = bt_field_string_get_value(memberField(s, f));
  return text ? std::string_view(text) : std::string_view();
}

/// What babeltrace2 says about one trace, decided once per trace.
struct TraceInfo {
  int32_t prioOffset = 0;
  core::PrevStateEncoding encoding = core::PrevStateEncoding::Report414;
  bool encodingFromValues = false;  ///< the env's guess was contradicted by a value
  bool describesModel = false;      ///< its env went into the model's metadata
};

struct ClassInfo {
  uint32_t type = 0;
  Kind kind = Kind::Other;
  bool hasPayload = false;
  bool hasCommonContext = false;
  TraceInfo* trace = nullptr;  ///< stable: unordered_map nodes never move
  std::array<FieldSlot, kMaxSlots> slots{};
  FieldSlot commonPid;    ///< payload: common_pid (perf), else perf_tid
  FieldSlot commonFlags;  ///< payload: common_flags (perf): irq context bits
  FieldSlot perfCpu;      ///< payload: perf_cpu (perf convert without per-CPU streams)
  FieldSlot perfTgid;     ///< payload: perf_pid (perf convert): the sampled task's tgid
  FieldSlot ctxTid;       ///< stream event context: tid (LTTng `add-context -t tid`)
  FieldSlot ctxTgid;      ///< stream event context: pid (LTTng `add-context -t pid`)
  FieldSlot ctxCpu;       ///< stream event context: cpu_id
  core::PowerEvent power = core::PowerEvent::None;  ///< Kind::Power: which
};

/// A power event's payload fields by name, for core::decodePowerEvent (rare
/// events: a lookup by name per field is cheap enough).
class PayloadFields final : public core::EventFields {
 public:
  explicit PayloadFields(const bt_field* payload) : m_payload(payload) {}
  std::optional<int64_t> number(std::string_view name) const override {
    const bt_field* f = member(name);
    if (!f) return std::nullopt;
    const bt_field_class_type t = bt_field_get_class_type(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
      return static_cast<int64_t>(bt_field_integer_unsigned_get_value(f));
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) return bt_field_integer_signed_get_value(f);
    return std::nullopt;
  }
  std::optional<std::string_view> text(std::string_view name) const override {
    const bt_field* f = member(name);
    if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRING) return std::nullopt;
    const char* t = bt_field_string_get_value(f);
    return t ? std::optional<std::string_view>(t) : std::nullopt;
  }

 private:
  const bt_field* member(std::string_view name) const {
    if (!m_payload) return nullptr;
    const std::string key(name);  // the library wants a NUL-terminated name
    return bt_field_structure_borrow_member_field_by_name_const(m_payload, key.c_str());
  }
  const bt_field* m_payload;
};

// ftrace's TRACE_FLAG_* bits in common_flags (kernel/trace/trace.h).
constexpr uint32_t kTraceFlagHardIrq = 0x08;
constexpr uint32_t kTraceFlagSoftIrq = 0x10;
constexpr uint32_t kTraceFlagNmi = 0x40;

struct KernelVersion {
  int major = 0;
  int minor = 0;
};
std::optional<KernelVersion> parseKernelRelease(std::string_view release) {
  KernelVersion v;
  auto [p, ec] = std::from_chars(release.data(), release.data() + release.size(), v.major);
  if (ec != std::errc() || p == release.data() + release.size() || *p != '.') return std::nullopt;
  auto [q, ec2] = std::from_chars(p + 1, release.data() + release.size(), v.minor);
  if (ec2 != std::errc()) return std::nullopt;
  (void)q;
  return v;
}

// ---------------------------------------------------------------------------
// The builder as the sink sees it: the same calls, turned into DecodedEvents
// for the builder (core::EventFeed: on its own thread, or at once).

class FeedWriter {
 public:
  explicit FeedWriter(core::EventFeed& feed) : m_feed(feed) {}

  uint32_t eventType(std::string_view name) { return m_feed.eventType(name); }
  void countEvent(uint32_t type) { m_type = static_cast<uint16_t>(type); }
  void setFormat(std::string_view format) { m_feed.format(format); }
  void setMetadata(std::string_view key, std::string_view value) { m_feed.metadata(key, value); }
  void recordDiagnostic(core::DiagCode code, std::string_view message) {
    if (m_feed.keepsRecord(code)) m_feed.diagnostic(code, 0, message);
  }

  void onOtherEvent(const core::EventContext& ctx) { m_feed.event(event(ctx, EventOp::Other)); }
  void onSwitch(const core::EventContext& ctx, const core::SwitchArgs& a) {
    DecodedEvent e = event(ctx, EventOp::Switch);
    e.tid = a.prevTid;
    e.prio = a.prevPrio;
    e.otherTid = a.nextTid;
    e.otherPrio = a.nextPrio;
    e.state = a.prevState;
    e.setText(0, a.prevComm);
    e.setText(1, a.nextComm);
    m_feed.event(e);
  }
  void onWaking(const core::EventContext& ctx, const core::WakeArgs& a) { wake(ctx, a, EventOp::Waking); }
  void onWakeup(const core::EventContext& ctx, const core::WakeArgs& a, bool isNew) {
    wake(ctx, a, isNew ? EventOp::WakeupNew : EventOp::Wakeup);
  }
  void onMigrate(const core::EventContext& ctx, int32_t tid, std::string_view comm, int32_t prio, int32_t origCpu,
                 int32_t destCpu) {
    DecodedEvent e = event(ctx, EventOp::Migrate);
    e.tid = tid;
    e.prio = prio;
    e.cpuA = origCpu;
    e.cpuB = destCpu;
    e.setText(0, comm);
    m_feed.event(e);
  }
  void onFork(const core::EventContext& ctx, int32_t parentTid, std::string_view parentComm, int32_t childTid,
              std::string_view childComm, int32_t childTgid) {
    DecodedEvent e = event(ctx, EventOp::Fork);
    e.tid = parentTid;
    e.otherTid = childTid;
    e.aux = childTgid;
    e.setText(0, parentComm);
    e.setText(1, childComm);
    m_feed.event(e);
  }
  void onExec(const core::EventContext& ctx, int32_t tid, int32_t oldTid, std::string_view filename) {
    DecodedEvent e = event(ctx, EventOp::Exec);
    e.tid = tid;
    e.otherTid = oldTid;
    e.setText(0, filename);
    m_feed.event(e);
  }
  void onExit(const core::EventContext& ctx, int32_t tid, std::string_view comm, int32_t prio) {
    DecodedEvent e = event(ctx, EventOp::Exit);
    e.tid = tid;
    e.prio = prio;
    e.setText(0, comm);
    m_feed.event(e);
  }
  void onRename(const core::EventContext& ctx, int32_t tid, std::string_view newComm) {
    DecodedEvent e = event(ctx, EventOp::Rename);
    e.tid = tid;
    e.setText(0, newComm);
    m_feed.event(e);
  }
  /// The events of one power record: only the first carries the record's
  /// count, the others are more values of it.
  void onPowerEvents(std::span<DecodedEvent> events) {
    for (size_t i = 0; i < events.size(); ++i) {
      events[i].countKey = i == 0 ? m_type : DecodedEvent::kNoCount;
      m_feed.event(events[i]);
    }
  }
  void onTaskInfo(int32_t tid, int32_t tgid, std::string_view comm) {
    DecodedEvent e;
    e.op = EventOp::TaskInfo;
    e.tid = tid;
    e.aux = tgid;
    e.setText(0, comm);
    m_feed.event(e);
  }
  void onTaskStateSeed(int64_t ts, int32_t tid, core::TaskState state, int32_t cpu) {
    DecodedEvent e;
    e.op = EventOp::TaskSeed;
    e.ts = ts;
    e.tid = tid;
    e.state = state;
    e.cpu = cpu;
    m_feed.event(e);
  }
  void onDataLoss(int32_t cpu, int64_t ts, int64_t count) {
    DecodedEvent e;
    e.op = EventOp::DataLoss;
    e.cpu = cpu;
    e.ts = ts;
    e.aux = count;
    m_feed.event(e);
  }

 private:
  // A trace event, counted under the type countEvent() named just before.
  DecodedEvent event(const core::EventContext& ctx, EventOp op) const {
    DecodedEvent e;
    e.op = op;
    e.ts = ctx.ts;
    e.cpu = ctx.cpu;
    e.ctxTid = ctx.ctxTid;
    e.irq = ctx.irq;
    e.countKey = m_type;
    return e;
  }
  void wake(const core::EventContext& ctx, const core::WakeArgs& a, EventOp op) {
    DecodedEvent e = event(ctx, op);
    e.tid = a.tid;
    e.prio = a.prio;
    e.cpuA = a.targetCpu;
    e.setText(0, a.comm);
    m_feed.event(e);
  }

  core::EventFeed& m_feed;
  uint16_t m_type = DecodedEvent::kNoCount;
};

// ---------------------------------------------------------------------------
// The sink: messages in time order -> builder calls

class EventSink {
 public:
  EventSink(core::EventFeed& feed, const ImportOptions& options) : m_builder(feed), m_feed(feed), m_options(options) {
    m_classCache.fill({nullptr, 0});
  }

  void setProgressRange(int64_t begin, int64_t end) {
    m_rangeBegin = begin;
    m_rangeEnd = end;
  }
  uint64_t eventsSeen() const { return m_events; }
  const std::string& internalError() const { return m_internalError; }

  /// The sink's input ports, one per stream of every trace (set before the graph runs).
  void setStreamCount(uint64_t streams) { m_upstreams.resize(streams); }
  uint64_t streamCount() const { return m_upstreams.size(); }

  // The component class that runs this sink: one input port per stream, merged
  // here (see consume()).
  static const bt_component_class_sink* componentClass();

  /// Called after the last message: hands everything to the builder thread.
  void finish() {
    flushLoss(nullptr, INT64_MIN);
    // A stream that ended early lost everything from its last event to the end of the trace.
    for (const Upstream& u : m_upstreams) {
      if (!u.failed) continue;
      const auto cpu = u.stream ? m_streamCpu.find(u.stream) : m_streamCpu.end();
      m_builder.onDataLoss(cpu == m_streamCpu.end() ? -1 : cpu->second, m_lastTs, -1);
    }
  }
  /// Why each stream that ended early did: babeltrace2's error (handed over
  /// once; the caller releases it), or the sink's own message and the stream's
  /// file (absolute, as babeltrace2 reads it).
  struct StreamFailure {
    const bt_error* error = nullptr;
    std::string message;
    std::string file;
    /// The file's packet (from 0) the failure is in, or after, for an error
    /// (babeltrace2 says no place): the last one whose beginning came.
    std::optional<uint64_t> packet;
  };
  std::vector<StreamFailure> takeStreamFailures() {
    std::vector<StreamFailure> failures;
    for (Upstream& u : m_upstreams) {
      if (!u.failed || (!u.error && u.timeWentBack.empty())) continue;
      // src.ctf.fs names a stream by its file's absolute path.
      const char* name = u.stream ? bt_stream_get_name(u.stream) : nullptr;
      failures.push_back(
          {std::exchange(u.error, nullptr), std::exchange(u.timeWentBack, {}), name ? name : "", u.failedPacket});
    }
    return failures;
  }
  /// The CPU topology the trace's statedump gave, if any (after finish()).
  std::optional<core::Topology> topology() const {
    if (m_topologyCpus.empty()) return std::nullopt;
    return buildTopology();
  }

 private:
  // The streams merged in time order, as flt.utils.muxer would, without it:
  // the muxer was 0.06 s of babeltrace2's own 0.44 s on an 859k-event perf
  // trace (issue 17's CTF margin). Each stream's messages come in order; the
  // sink takes the stream whose next message is earliest, and stays on it
  // while its messages are no later than every other stream's next one; of
  // messages at the same time, the first stream's goes first (the perf.data
  // importer's order, and the muxer's on perf's CTF). A message without a
  // time (stream beginning and end, a clockless stream's events) counts as
  // earliest, so it passes at once, after its stream's earlier messages. A
  // time before one already taken ends the merge, as it ends the muxer's.
  struct Upstream {
    bt_message_iterator* it = nullptr;
    std::vector<const bt_message*> msgs;  // owned references, taken from `next` on
    std::vector<int64_t> ts;               // each one's time, kNoTime when it has none
    size_t next = 0;
    bool ended = false;
    bool failed = false;                // ended early: its stream file turned unreadable
    const bt_error* error = nullptr;    // babeltrace2's why, until the reader takes it
    std::string timeWentBack;           // or ours
    const bt_stream* stream = nullptr;  // the stream it carries (from its beginning on)
    // Packet beginnings pulled, and before the current batch: where in its file a failure is.
    uint64_t packetsPulled = 0, packetsBeforeBatch = 0;
    std::optional<uint64_t> failedPacket;
    struct {  // which of its messages have a default clock snapshot (its class says)
      bool events = false, packetBeginnings = false, packetEnds = false, discardedEvents = false,
           discardedPackets = false;
    } clocks;
  };
  static constexpr int64_t kNoTime = INT64_MIN;
  static constexpr uint64_t kMessagesPerConsume = 4096;

  static bt_component_class_initialize_method_status initializeMethod(bt_self_component_sink* self,
                                                                      bt_self_component_sink_configuration*,
                                                                      const bt_value*, void* data) {
    auto* sink = static_cast<EventSink*>(data);
    bt_self_component_set_data(bt_self_component_sink_as_self_component(self), sink);
    for (uint64_t i = 0; i < sink->streamCount(); ++i) {
      const std::string name = "in" + std::to_string(i);
      if (bt_self_component_sink_add_input_port(self, name.c_str(), nullptr, nullptr) !=
          BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    }
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
  }

  static EventSink& of(bt_self_component_sink* self) {
    return *static_cast<EventSink*>(bt_self_component_get_data(bt_self_component_sink_as_self_component(self)));
  }

  static bt_component_class_sink_graph_is_configured_method_status graphIsConfiguredMethod(
      bt_self_component_sink* self) {
    EventSink& sink = of(self);
    for (uint64_t i = 0; i < sink.m_upstreams.size(); ++i) {
      bt_self_component_port_input* port = bt_self_component_sink_borrow_input_port_by_index(self, i);
      if (bt_message_iterator_create_from_sink_component(self, port, &sink.m_upstreams[i].it) !=
          BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
        return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
    }
    return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
  }

  static void finalizeMethod(bt_self_component_sink* self) {
    for (Upstream& u : of(self).m_upstreams) {
      if (u.error) bt_error_release(std::exchange(u.error, nullptr));
      for (size_t i = u.next; i < u.msgs.size(); ++i) bt_message_put_ref(u.msgs[i]);
      u.msgs.clear();
      bt_message_iterator_put_ref(u.it);
      u.it = nullptr;
    }
  }

  static bt_component_class_sink_consume_method_status consumeMethod(bt_self_component_sink* self) {
    return of(self).consume();
  }

  // The time a message of `u` is ordered by. Every stream begins with a
  // stream-beginning message (babeltrace2's message sequence rules), and each
  // port of src.ctf.fs carries one stream: which of its messages have times
  // is read once there, so an event costs two calls here.
  static int64_t orderTime(Upstream& u, const bt_message* msg) {
    const bt_clock_snapshot* snapshot = nullptr;
    switch (bt_message_get_type(msg)) {
      case BT_MESSAGE_TYPE_EVENT:
        if (u.clocks.events) snapshot = bt_message_event_borrow_default_clock_snapshot_const(msg);
        break;
      case BT_MESSAGE_TYPE_STREAM_BEGINNING: {
        u.stream = bt_message_stream_beginning_borrow_stream_const(msg);
        const bt_stream_class* sc = bt_stream_borrow_class_const(u.stream);
        u.clocks.events = bt_stream_class_borrow_default_clock_class_const(sc) != nullptr;
        u.clocks.packetBeginnings = bt_stream_class_packets_have_beginning_default_clock_snapshot(sc);
        u.clocks.packetEnds = bt_stream_class_packets_have_end_default_clock_snapshot(sc);
        u.clocks.discardedEvents = bt_stream_class_discarded_events_have_default_clock_snapshots(sc);
        u.clocks.discardedPackets = bt_stream_class_discarded_packets_have_default_clock_snapshots(sc);
        break;
      }
      case BT_MESSAGE_TYPE_PACKET_BEGINNING:
        ++u.packetsPulled;
        if (u.clocks.packetBeginnings) snapshot = bt_message_packet_beginning_borrow_default_clock_snapshot_const(msg);
        break;
      case BT_MESSAGE_TYPE_PACKET_END:
        if (u.clocks.packetEnds) snapshot = bt_message_packet_end_borrow_default_clock_snapshot_const(msg);
        break;
      case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
        if (u.clocks.discardedEvents) snapshot = bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(msg);
        break;
      case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
        if (u.clocks.discardedPackets)
          snapshot = bt_message_discarded_packets_borrow_beginning_default_clock_snapshot_const(msg);
        break;
      default: break;
    }
    int64_t ns = 0;
    if (!snapshot ||
        bt_clock_snapshot_get_ns_from_origin(snapshot, &ns) != BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
      return kNoTime;
    return ns;
  }

  // The upstream's next batch; false when it has none now (ended, AGAIN or an error in `status`).
  bool refill(Upstream& u, bt_component_class_sink_consume_method_status& status) {
    bt_message_array_const msgs = nullptr;
    uint64_t count = 0;
    switch (bt_message_iterator_next(u.it, &msgs, &count)) {
      case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
      case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: u.ended = true; return false;
      case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        status = BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
        return false;
      case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        status = BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
        return false;
      default:
        // Its stream file is unreadable from here on (a corrupt packet). Each
        // stream has an iterator of its own, so the others read on: the merge
        // goes on without this one, whose rest counts as lost (finish()).
        u.error = bt_current_thread_take_error();
        u.failed = u.ended = true;
        u.failedPacket = u.packetsPulled ? u.packetsPulled - 1 : 0;
        return false;
    }
    u.packetsBeforeBatch = u.packetsPulled;
    u.msgs.assign(msgs, msgs + count);
    u.ts.resize(count);
    for (uint64_t i = 0; i < count; ++i) u.ts[i] = orderTime(u, msgs[i]);
    u.next = 0;
    return true;
  }

  // Whether stream k still has a message: refilled when its batch is used up.
  bool hasNext(size_t k, bt_component_class_sink_consume_method_status& status) {
    Upstream& u = m_upstreams[k];
    return u.next < u.msgs.size() || (!u.ended && refill(u, status) && !u.msgs.empty());
  }

  bt_component_class_sink_consume_method_status consume() {
    auto status = BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
    if (m_feed.abandoned()) {
      m_internalError = "the model could not be built";
      return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
    }
    for (uint64_t done = 0; done < kMessagesPerConsume;) {
      if (m_current == kNone || !hasNext(m_current, status)) {
        if (status != BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK) return status;
        // Choose again: the earliest next message of all streams.
        m_current = kNone;
        int64_t best = 0;
        for (size_t k = 0; k < m_upstreams.size(); ++k) {
          if (!hasNext(k, status)) {
            if (status != BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK) return status;
            continue;
          }
          const int64_t t = m_upstreams[k].ts[m_upstreams[k].next];
          if (m_current == kNone || t < best) m_current = k, best = t;
        }
        if (m_current == kNone) return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
        m_until = INT64_MAX;
        m_untilStream = kNone;
        for (size_t k = 0; k < m_upstreams.size(); ++k) {
          const Upstream& u = m_upstreams[k];
          if (k != m_current && u.next < u.msgs.size() && u.ts[u.next] < m_until)
            m_until = u.ts[u.next], m_untilStream = k;
        }
      }
      Upstream& u = m_upstreams[m_current];
      const int64_t t = u.ts[u.next];
      if (t > m_until || (t == m_until && m_untilStream < m_current)) {  // another stream is due first
        m_current = kNone;
        continue;
      }
      if (t != kNoTime && t < m_lastMerged) {
        // Where the muxer stops the whole trace ("timestamp is less than ...
        // last returned timestamp"): a stream whose clock went back, e.g. a
        // corrupt timestamp far ahead before it. Only this stream ends here.
        u.timeWentBack = "time goes back from " + std::to_string(m_lastMerged) + " ns to " + std::to_string(t) +
                         " ns; the stream cannot be merged in time order from here on";
        u.failed = u.ended = true;
        uint64_t begun = u.packetsBeforeBatch;
        for (size_t i = 0; i <= u.next; ++i) begun += bt_message_get_type(u.msgs[i]) == BT_MESSAGE_TYPE_PACKET_BEGINNING;
        u.failedPacket = begun ? begun - 1 : 0;
        for (size_t i = u.next; i < u.msgs.size(); ++i) bt_message_put_ref(u.msgs[i]);
        u.msgs.clear();
        u.next = 0;
        m_current = kNone;
        continue;
      }
      if (t != kNoTime) m_lastMerged = t;
      const bt_message* msg = u.msgs[u.next++];
      ++done;
      // From here on a fault is ours, not babeltrace2's: let it crash.
      const OwnCodeScope own;
      try {
        handle(msg, t);
      } catch (const std::exception& e) {
        // No exception may cross babeltrace2's C frames.
        m_internalError = e.what();
        bt_message_put_ref(msg);
        return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
      }
      bt_message_put_ref(msg);
    }
    return status;
  }

  void handle(const bt_message* msg, int64_t ts) {
    switch (bt_message_get_type(msg)) {
      case BT_MESSAGE_TYPE_EVENT: handleEvent(msg, ts); break;
      case BT_MESSAGE_TYPE_PACKET_BEGINNING: handlePacketBeginning(msg); break;
      case BT_MESSAGE_TYPE_STREAM_BEGINNING:
        traceInfo(bt_stream_borrow_trace_const(bt_message_stream_beginning_borrow_stream_const(msg)));
        break;
      case BT_MESSAGE_TYPE_STREAM_END:
        if (!m_pendingLoss.empty()) flushLoss(bt_message_stream_end_borrow_stream_const(msg), INT64_MIN);
        break;
      case BT_MESSAGE_TYPE_DISCARDED_EVENTS: handleDiscarded(msg, false); break;
      case BT_MESSAGE_TYPE_DISCARDED_PACKETS: handleDiscarded(msg, true); break;
      default: break;
    }
  }

  // --- streams and CPUs ---

  void handlePacketBeginning(const bt_message* msg) {
    const bt_packet* packet = bt_message_packet_beginning_borrow_packet_const(msg);
    const bt_stream* stream = bt_packet_borrow_stream_const(packet);
    const bt_field* context = bt_packet_borrow_context_field_const(packet);
    if (!context) return;
    const bt_stream_class* sc = bt_stream_borrow_class_const(stream);
    auto [it, inserted] = m_packetCpuSlot.try_emplace(sc);
    if (inserted) {
      const auto members = membersOf(bt_stream_class_borrow_packet_context_field_class_const(sc));
      if (auto m = members.find("cpu_id"); m != members.end()) it->second = m->second;
    }
    if (it->second.present()) {
      const auto cpu = static_cast<int32_t>(readInt(context, it->second, 0));
      m_streamCpu[stream] = cpu;
      if (stream == m_lastStream) m_lastStreamCpu = cpu;
    }
    if (!m_pendingLoss.empty()) {
      int64_t ts = INT64_MIN;
      if (bt_stream_class_packets_have_beginning_default_clock_snapshot(sc)) {
        int64_t ns = 0;
        if (bt_clock_snapshot_get_ns_from_origin(bt_message_packet_beginning_borrow_default_clock_snapshot_const(msg),
                                                 &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
          ts = ns;
      }
      flushLoss(stream, ts);
    }
  }

  int32_t streamCpu(const bt_stream* stream) {
    if (stream != m_lastStream) {
      auto it = m_streamCpu.find(stream);
      m_lastStream = stream;
      m_lastStreamCpu = it == m_streamCpu.end() ? 0 : it->second;
    }
    return m_lastStreamCpu;
  }

  void handleDiscarded(const bt_message* msg, bool packets) {
    const bt_stream* stream = packets ? bt_message_discarded_packets_borrow_stream_const(msg)
                                      : bt_message_discarded_events_borrow_stream_const(msg);
    uint64_t count = 0;
    const bool known = packets ? false
                               : bt_message_discarded_events_get_count(msg, &count) == BT_PROPERTY_AVAILABILITY_AVAILABLE;
    int64_t ts = m_lastTs;
    const bt_stream_class* sc = bt_stream_borrow_class_const(stream);
    const bool hasSnapshots = packets ? bt_stream_class_discarded_packets_have_default_clock_snapshots(sc)
                                      : bt_stream_class_discarded_events_have_default_clock_snapshots(sc);
    if (hasSnapshots && bt_stream_class_borrow_default_clock_class_const(sc)) {
      const bt_clock_snapshot* end =
          packets ? bt_message_discarded_packets_borrow_end_default_clock_snapshot_const(msg)
                  : bt_message_discarded_events_borrow_end_default_clock_snapshot_const(msg);
      int64_t ns = 0;
      if (end && bt_clock_snapshot_get_ns_from_origin(end, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
        ts = ns;
    }
    // babeltrace2 dates a CTF discard from the end of the previous packet to the
    // end of the packet whose counter grew: the tracer dropped them while no
    // sub-buffer was free, i.e. before that packet began. The loss is given to
    // the builder when the packet begins (flushLoss), so the packet's own events
    // stay outside the lost range.
    PendingLoss& loss = m_pendingLoss[stream];
    const int64_t n = known && count > 0 ? static_cast<int64_t>(count) : -1;
    loss.count = (loss.count < 0 || n < 0) ? -1 : loss.count + n;
    loss.endTs = std::max(loss.endTs, ts);
  }

  /// Hands the losses pending on `stream` (all streams if null) to the builder,
  /// at `ts` (INT64_MIN: the end babeltrace2 gave).
  void flushLoss(const bt_stream* stream, int64_t ts) {
    for (auto it = m_pendingLoss.begin(); it != m_pendingLoss.end();) {
      if (stream && it->first != stream) {
        ++it;
        continue;
      }
      auto cpuIt = m_streamCpu.find(it->first);
      const int32_t cpu = cpuIt == m_streamCpu.end() ? -1 : cpuIt->second;
      const int64_t at = ts == INT64_MIN ? it->second.endTs : ts;
      m_builder.onDataLoss(cpu, std::max(at, m_lastTs), it->second.count == 0 ? -1 : it->second.count);
      if (cpu >= 0 && static_cast<size_t>(cpu) < m_irqDepth.size()) m_irqDepth[static_cast<size_t>(cpu)] = {};
      it = m_pendingLoss.erase(it);
    }
  }

  // --- traces: env, prio convention, prev_state encoding ---

  TraceInfo& traceInfo(const bt_trace* trace) {
    if (trace == m_lastTrace) return *m_lastTraceInfo;
    auto [it, inserted] = m_traces.try_emplace(trace);
    if (inserted) it->second = describeTrace(trace);
    m_lastTrace = trace;
    m_lastTraceInfo = &it->second;
    return it->second;
  }

  TraceInfo describeTrace(const bt_trace* trace) {
    std::map<std::string, std::string> env;
    const uint64_t n = bt_trace_get_environment_entry_count(trace);
    for (uint64_t i = 0; i < n; ++i) {
      const char* name = nullptr;
      const bt_value* value = nullptr;
      bt_trace_borrow_environment_entry_by_index_const(trace, i, &name, &value);
      if (!name || !value) continue;
      if (bt_value_get_type(value) == BT_VALUE_TYPE_STRING)
        env[name] = bt_value_string_get(value);
      else if (bt_value_get_type(value) == BT_VALUE_TYPE_SIGNED_INTEGER)
        env[name] = std::to_string(bt_value_integer_signed_get(value));
    }
    auto get = [&](std::initializer_list<const char*> keys) -> std::string {
      for (const char* k : keys)
        if (auto it = env.find(k); it != env.end()) return it->second;
      return {};
    };
    TraceInfo info;
    const std::string tracer = get({"tracer_name"});
    const std::string release = get({"kernel_release", "release"});
    // lttng-modules records prio - MAX_RT_PRIO (instrumentation/events/sched.h:
    // "prev->prio - MAX_RT_PRIO"); perf keeps the kernel's prio.
    if (startsWith(tracer, "lttng")) info.prioOffset = 100;
    // perf records the traced kernel's sched_switch prev_state: TASK_REPORT bits
    // from 4.14 on (commit efb40f588b43), raw task->state before. lttng-modules
    // computes its own: raw task->state up to and including 2.10 whatever the
    // kernel (babeltrace's lttng-tracefile-rotation trace, lttng-modules 2.10.8 on
    // 4.15, holds 4096 = TASK_STATE_MAX and 1026 = TASK_IDLE), the kernel's
    // TASK_REPORT form on 4.14+ kernels in later releases. A value the guess
    // cannot hold corrects it (prevState()).
    const auto kernel = parseKernelRelease(release);
    const bool reportKernel = kernel && (kernel->major > 4 || (kernel->major == 4 && kernel->minor >= 14));
    bool reportTracer = true;
    if (startsWith(tracer, "lttng")) {
      int major = 0;
      int minor = 0;
      const std::string maj = get({"tracer_major"});
      const std::string min = get({"tracer_minor"});
      std::from_chars(maj.data(), maj.data() + maj.size(), major);
      std::from_chars(min.data(), min.data() + min.size(), minor);
      reportTracer = major > 2 || (major == 2 && minor >= 11);
    }
    if (kernel || !reportTracer)
      info.encoding = reportKernel && reportTracer ? core::PrevStateEncoding::Report414 : core::PrevStateEncoding::Legacy;

    if (!m_describedATrace) {
      m_describedATrace = true;
      std::string version = get({"tracer_major"});
      if (!version.empty() && !get({"tracer_minor"}).empty()) version += "." + get({"tracer_minor"});
      if (tracer == "perf")
        m_builder.setFormat("ctf (perf data convert)");
      else if (!tracer.empty())
        m_builder.setFormat("ctf (" + tracer + (version.empty() ? "" : " " + version) + ")");
      else
        m_builder.setFormat("ctf");
      if (auto h = get({"hostname", "host"}); !h.empty()) m_builder.setMetadata("hostname", h);
      if (!release.empty()) m_builder.setMetadata("osrelease", release);
      if (auto v = get({"kernel_version", "version"}); !v.empty()) m_builder.setMetadata("kernel_version", v);
      if (auto m = get({"machine"}); !m.empty()) m_builder.setMetadata("machine", m);
      if (auto s = get({"sysname"}); !s.empty()) m_builder.setMetadata("sysname", s);
      if (auto d = get({"domain"}); !d.empty()) m_builder.setMetadata("domain", d);
      if (!tracer.empty()) {
        std::string full = tracer;
        if (!version.empty()) full += " " + version + (get({"tracer_patchlevel"}).empty() ? "" : "." + get({"tracer_patchlevel"}));
        m_builder.setMetadata("tracer", full);
      }
      if (auto t = get({"trace_name"}); !t.empty()) m_builder.setMetadata("trace_name", t);
      info.describesModel = true;
      noteEncoding(info);
    }
    return info;
  }

  void noteEncoding(const TraceInfo& info) {
    if (!info.describesModel) return;
    std::string text = info.encoding == core::PrevStateEncoding::Report414 ? "TASK_REPORT bits (Linux 4.14+)"
                                                                          : "raw task->state (before Linux 4.14)";
    if (info.encodingFromValues) text += ", detected from the values";
    m_builder.setMetadata("prev_state_encoding", text);
  }

  // --- event classes ---

  const ClassInfo& classFor(const bt_event_class* ec, const bt_event* ev) {
    // Direct-mapped cache in front of the map: a trace has a few hundred
    // classes at most, and the hot ones (sched_*) stay resident.
    auto& slot = m_classCache[(reinterpret_cast<uintptr_t>(ec) >> 4) & (kClassCacheSize - 1)];
    if (slot.first == ec) return m_classes[slot.second];
    uint32_t index;
    if (auto it = m_classIndex.find(ec); it != m_classIndex.end()) {
      index = it->second;
    } else {
      index = static_cast<uint32_t>(m_classes.size());
      m_classes.push_back(resolveClass(ec, ev));
      m_classIndex.emplace(ec, index);
    }
    slot = {ec, index};
    return m_classes[index];
  }

  ClassInfo resolveClass(const bt_event_class* ec, const bt_event* ev) {
    ClassInfo ci;
    const char* rawName = bt_event_class_get_name(ec);
    const std::string name =
        rawName ? std::string(plainEventName(rawName)) : "event" + std::to_string(bt_event_class_get_id(ec));
    ci.type = m_builder.eventType(name);
    ci.kind = kindOf(name);
    if (ci.kind == Kind::Other) {
      ci.power = core::powerEventOf(name);
      // print/tracing_mark_write are ftrace's: LTTng records user-space text as its own UST events.
      if (ci.power != core::PowerEvent::None && ci.power != core::PowerEvent::Print) ci.kind = Kind::Power;
    }
    const bt_stream_class* sc = bt_event_class_borrow_stream_class_const(ec);
    ci.trace = &traceInfo(bt_stream_borrow_trace_const(bt_event_borrow_stream_const(ev)));

    const bt_field_class* payloadFc = bt_event_class_borrow_payload_field_class_const(ec);
    const auto payload = membersOf(payloadFc);
    ci.hasPayload = !payload.empty();
    auto find = [&](const auto& members, std::string_view n) -> FieldSlot {
      auto it = members.find(n);
      return it == members.end() ? FieldSlot{} : it->second;
    };
    ci.commonPid = find(payload, "common_pid");
    if (!ci.commonPid.present()) ci.commonPid = find(payload, "perf_tid");
    ci.commonFlags = find(payload, "common_flags");
    ci.perfCpu = find(payload, "perf_cpu");
    ci.perfTgid = find(payload, "perf_pid");
    const auto context = membersOf(bt_stream_class_borrow_event_common_context_field_class_const(sc));
    ci.hasCommonContext = !context.empty();
    ci.ctxTid = find(context, "tid");
    ci.ctxCpu = find(context, "cpu_id");
    ci.ctxTgid = find(context, "pid");

    const auto names = slotNamesOf(ci.kind);
    for (size_t s = 0; s < names.size(); ++s) {
      for (std::string_view n : names[s]) {
        if (n.empty()) continue;
        if (FieldSlot f = find(payload, n); f.present()) {
          ci.slots[s] = f;
          break;
        }
      }
    }
    if (ci.kind == Kind::Fork && !find(payload, "child_tid").present()) ci.slots[kChildTgid] = {};
    for (int s : requiredSlotsOf(ci.kind)) {
      const FieldType t = ci.slots[static_cast<size_t>(s)].type;
      const bool wantString = (ci.kind == Kind::Rename && s == kRenameNewComm);
      if (t == FieldType::None || (wantString != (t == FieldType::String))) {
        m_builder.recordDiagnostic(core::DiagCode::unsupported_event,
                                   "event '" + name + "' lacks the field '" +
                                       std::string(names[static_cast<size_t>(s)][0]) +
                                       "' (or it has an unexpected type); counted, not interpreted");
        ci.kind = Kind::Other;
        break;
      }
    }
    return ci;
  }

  // --- events ---

  // `orderTs`: its time as the merge read it, kNoTime when it has none.
  void handleEvent(const bt_message* msg, int64_t orderTs) {
    const bt_event* ev = bt_message_event_borrow_event_const(msg);
    const ClassInfo& ci = classFor(bt_event_borrow_class_const(ev), ev);
    ++m_events;
    const int64_t ts = orderTs != kNoTime ? orderTs : m_lastTs;
    m_lastTs = ts;
    m_builder.countEvent(ci.type);

    const bt_field* payload = ci.hasPayload ? bt_event_borrow_payload_field_const(ev) : nullptr;
    const bt_field* context = ci.hasCommonContext ? bt_event_borrow_common_context_field_const(ev) : nullptr;
    core::EventContext ctx;
    ctx.ts = ts;
    if (ci.perfCpu.present())
      ctx.cpu = readI32(payload, ci.perfCpu, 0);
    else if (ci.ctxCpu.present())
      ctx.cpu = readI32(context, ci.ctxCpu, 0);
    else
      ctx.cpu = streamCpu(bt_event_borrow_stream_const(ev));
    if ((m_events & kProgressMask) == 0) reportProgress(ts);

    // Each field read is two or three calls into libbabeltrace2, a third of
    // the import's own cost: read only what the builder uses for this kind.
    // The task current when the event fired, as perf.data gives it for every
    // event: the builder infers a switch-in the trace lacks from the first
    // event in a task's context. Not read for a switch, whose prev says it.
    if (ci.kind != Kind::Switch) {
      if (ci.commonPid.present())
        ctx.ctxTid = readI32(payload, ci.commonPid, -1);
      else if (ci.ctxTid.present())
        ctx.ctxTid = readI32(context, ci.ctxTid, -1);
    }
    const auto& s = ci.slots;
    switch (ci.kind) {
      case Kind::Other: m_builder.onOtherEvent(ctx); return;
      case Kind::Power: {
        core::DecodedEvent base;
        base.ts = ctx.ts;
        base.cpu = ctx.cpu;
        base.ctxTid = ctx.ctxTid;
        std::array<core::DecodedEvent, core::kMaxPowerEventsPerRecord> out;
        const auto n = core::decodePowerEvent(ci.power, PayloadFields(payload), base, out);
        if (!n || *n == 0) {
          if (!n) m_builder.recordDiagnostic(core::DiagCode::unsupported_event, "a power event lacks a field its decoding needs");
          m_builder.onOtherEvent(ctx);
          return;
        }
        m_builder.onPowerEvents(std::span(out).first(*n));
        return;
      }
      case Kind::Switch: {
        core::SwitchArgs a;
        a.prevTid = readI32(payload, s[kPrevTid], 0);
        a.prevComm = readString(payload, s[kPrevComm]);
        a.prevPrio = prio(ci, payload, s[kPrevPrio]);
        a.prevState = prevState(ci, payload, s[kPrevState]);
        a.nextTid = readI32(payload, s[kNextTid], 0);
        a.nextComm = readString(payload, s[kNextComm]);
        a.nextPrio = prio(ci, payload, s[kNextPrio]);
        // A context switch never happens inside an interrupt: whatever entry
        // we saw without its exit is over.
        if (ctx.cpu >= 0 && static_cast<size_t>(ctx.cpu) < m_irqDepth.size())
          m_irqDepth[static_cast<size_t>(ctx.cpu)] = {};
        m_builder.onSwitch(ctx, a);
        // The switch runs in prev's context: perf stamps prev's tgid on it.
        if (!tgidKnown(a.prevTid)) {
          if (ci.perfTgid.present())
            noteTgid(a.prevTid, readI32(payload, ci.perfTgid, -1));
          else if (ci.ctxTgid.present())
            noteTgid(a.prevTid, readI32(context, ci.ctxTgid, -1));
        }
        break;
      }
      case Kind::Waking:
      case Kind::Wakeup:
      case Kind::WakeupNew: {
        // Whether an irq woke it.
        if (ci.commonFlags.present()) {
          const auto flags = static_cast<uint32_t>(readInt(payload, ci.commonFlags, 0));
          ctx.irq = static_cast<uint8_t>(((flags & kTraceFlagHardIrq) ? core::kCtxHardIrq : 0) |
                                         ((flags & kTraceFlagSoftIrq) ? core::kCtxSoftIrq : 0) |
                                         ((flags & kTraceFlagNmi) ? core::kCtxNmi : 0));
        } else if (ctx.cpu >= 0 && static_cast<size_t>(ctx.cpu) < m_irqDepth.size()) {
          const IrqDepth& d = m_irqDepth[static_cast<size_t>(ctx.cpu)];
          ctx.irq = static_cast<uint8_t>((d.hard ? core::kCtxHardIrq : 0) | (d.soft ? core::kCtxSoftIrq : 0));
        }
        core::WakeArgs a;
        a.tid = readI32(payload, s[kWakeTid], 0);
        a.comm = readString(payload, s[kWakeComm]);
        a.prio = prio(ci, payload, s[kWakePrio]);
        a.targetCpu = readI32(payload, s[kWakeTargetCpu], -1);
        if (ci.kind == Kind::Waking)
          m_builder.onWaking(ctx, a);
        else
          m_builder.onWakeup(ctx, a, ci.kind == Kind::WakeupNew);
        // After the event: the builder meets the waker in its own events first.
        if (ctx.ctxTid > 0 && !tgidKnown(ctx.ctxTid)) {
          if (ci.perfTgid.present())
            noteTgid(ctx.ctxTid, readI32(payload, ci.perfTgid, -1));
          else if (ci.ctxTgid.present())
            noteTgid(ctx.ctxTid, readI32(context, ci.ctxTgid, -1));
        }
        break;
      }
      case Kind::Migrate:
        m_builder.onMigrate(ctx, readI32(payload, s[kMigTid], 0), readString(payload, s[kMigComm]),
                            prio(ci, payload, s[kMigPrio]), readI32(payload, s[kMigOrigCpu], -1),
                            readI32(payload, s[kMigDestCpu], -1));
        break;
      case Kind::Fork:
        forgetTgid(readI32(payload, s[kChildTid], 0));  // a new task: the tid may have been reused
        m_builder.onFork(ctx, readI32(payload, s[kParentTid], 0), readString(payload, s[kParentComm]),
                         readI32(payload, s[kChildTid], 0), readString(payload, s[kChildComm]),
                         readI32(payload, s[kChildTgid], -1));
        break;
      case Kind::Exec:
        m_builder.onExec(ctx, readI32(payload, s[kExecTid], 0), readI32(payload, s[kExecOldTid], -1),
                         readString(payload, s[kExecFilename]));
        break;
      case Kind::Exit:
        m_builder.onExit(ctx, readI32(payload, s[kExitTid], 0), readString(payload, s[kExitComm]),
                         prio(ci, payload, s[kExitPrio]));
        break;
      case Kind::Rename:
        m_builder.onRename(ctx, readI32(payload, s[kRenameTid], 0), readString(payload, s[kRenameNewComm]));
        break;
      case Kind::StatedumpProcess: handleStatedumpProcess(ctx, ci, payload); break;
      case Kind::StatedumpCpuTopology:
        m_builder.onOtherEvent(ctx);
        m_topologyCpus.push_back({readI32(payload, s[kTopoCpu], -1), readI32(payload, s[kTopoPackage], 0),
                                  readI32(payload, s[kTopoCore], -1)});
        break;
      case Kind::IrqEntry:
      case Kind::IrqExit:
      case Kind::SoftIrqEntry:
      case Kind::SoftIrqExit:
        trackIrq(ctx.cpu, ci.kind);
        m_builder.onOtherEvent(ctx);
        break;
    }
  }

  static int32_t prio(const ClassInfo& ci, const bt_field* payload, FieldSlot f) {
    if (!f.present()) return core::kPrioUnknown;
    // In 64 bits: a corrupt field near INT32_MAX must not overflow; a value
    // outside the kernel's range is the builder's to ignore.
    const int64_t p = int64_t{readI32(payload, f, core::kPrioUnknown - ci.trace->prioOffset)} + ci.trace->prioOffset;
    return p > INT32_MAX ? core::kPrioUnknown : static_cast<int32_t>(p);
  }

  core::TaskState prevState(const ClassInfo& ci, const bt_field* payload, FieldSlot f) {
    if (f.type == FieldType::String)
      return core::taskStateFromLetters(readString(payload, f)).value_or(core::TaskState::Unknown);
    if (!f.present()) return core::TaskState::Unknown;
    const auto raw = static_cast<uint64_t>(readInt(payload, f, 0));
    TraceInfo& trace = *ci.trace;
    // TASK_REPORT values stop at TASK_REPORT_MAX | 0xff; anything above is the
    // raw task->state form (TASK_STATE_MAX as the preempt flag, TASK_NOLOAD...).
    if (trace.encoding == core::PrevStateEncoding::Report414 && raw > 0x1ff) {
      trace.encoding = core::PrevStateEncoding::Legacy;
      trace.encodingFromValues = true;
      noteEncoding(trace);
    }
    return core::taskStateFromRaw(raw, trace.encoding).value_or(core::TaskState::Unknown);
  }

  // A thread's tgid is fixed for its life, so it is read once per tid (and
  // again after a fork reuses the tid).
  bool tgidKnown(int32_t tid) const { return tid > 0 && m_tgidOfTid.get(tid) != 0; }
  void forgetTgid(int32_t tid) {
    if (tgidKnown(tid)) m_tgidOfTid.at(tid) = 0;
  }

  /// perf convert stamps each event with the sampled task's tid and tgid;
  /// passes the tgid on once per tid (and again if it changes).
  void noteTgid(int32_t tid, int32_t tgid) {
    if (tid <= 0 || tgid <= 0 || !m_tgidOfTid.holds(tid)) return;
    int32_t& known = m_tgidOfTid.at(tid);
    if (known == tgid) return;
    known = tgid;
    m_builder.onTaskInfo(tid, tgid, {});
  }

  void handleStatedumpProcess(const core::EventContext& ctx, const ClassInfo& ci, const bt_field* payload) {
    const auto& s = ci.slots;
    m_builder.onOtherEvent(ctx);
    const int32_t tid = readI32(payload, s[kSdTid], 0);
    if (tid <= 0) return;  // the idle tasks, one per CPU, all tid 0
    m_builder.onTaskInfo(tid, readI32(payload, s[kSdTgid], -1), readString(payload, s[kSdName]));
    // lttng-modules' lttng_process_status (lttng-statedump-impl.c): 1 WAIT_FORK,
    // 2 WAIT_CPU, 3 EXIT, 4 ZOMBIE, 5 WAIT, 6 RUN, 7 DEAD. WAIT covers both
    // TASK_INTERRUPTIBLE and TASK_UNINTERRUPTIBLE, so it seeds plain sleep; RUN
    // is TASK_RUNNING, which may be on a CPU or queued: the next switch says which.
    std::optional<core::TaskState> state;
    switch (readInt(payload, s[kSdStatus], 0)) {
      case 1:
      case 2:
      case 6: state = core::TaskState::Runnable; break;
      case 5: state = core::TaskState::Sleeping; break;
      default: break;  // dead or unnamed: its exit events tell the rest
    }
    if (state) m_builder.onTaskStateSeed(ctx.ts, tid, *state, readI32(payload, s[kSdCpu], -1));
  }

  struct IrqDepth {
    uint8_t hard = 0;
    uint8_t soft = 0;
  };
  void trackIrq(int32_t cpu, Kind kind) {
    if (cpu < 0 || cpu >= core::SchedBuilder::kMaxCpus) return;
    if (static_cast<size_t>(cpu) >= m_irqDepth.size()) m_irqDepth.resize(static_cast<size_t>(cpu) + 1);
    IrqDepth& d = m_irqDepth[static_cast<size_t>(cpu)];
    // An exit without its entry (the trace began inside the handler) must not underflow.
    switch (kind) {
      case Kind::IrqEntry: d.hard = static_cast<uint8_t>(std::min(d.hard + 1, 255)); break;
      case Kind::IrqExit: d.hard = static_cast<uint8_t>(d.hard ? d.hard - 1 : 0); break;
      case Kind::SoftIrqEntry: d.soft = static_cast<uint8_t>(std::min(d.soft + 1, 255)); break;
      case Kind::SoftIrqExit: d.soft = static_cast<uint8_t>(d.soft ? d.soft - 1 : 0); break;
      default: break;
    }
  }

  void reportProgress(int64_t ts) {
    if (!m_options.progress || m_rangeEnd <= m_rangeBegin) return;
    const double f = static_cast<double>(ts - m_rangeBegin) / static_cast<double>(m_rangeEnd - m_rangeBegin);
    m_options.progress(std::clamp(f, 0.0, 1.0));
  }

  struct TopologyCpu {
    int32_t cpu;
    int32_t package;
    int32_t core;
  };
  core::Topology buildTopology() const {
    // lttng_statedump_cpu_topology (lttng-modules 2.11+, x86): one event per
    // CPU with its physical_id (package) and core_id; SMT siblings share both.
    std::map<std::pair<int32_t, int32_t>, std::vector<int>> byCore;
    for (const auto& c : m_topologyCpus) {
      if (c.cpu < 0 || c.cpu >= core::SchedBuilder::kMaxCpus) continue;
      auto& cpus = byCore[{c.package, c.core < 0 ? c.cpu : c.core}];
      if (std::find(cpus.begin(), cpus.end(), c.cpu) == cpus.end()) cpus.push_back(c.cpu);
    }
    std::vector<std::pair<std::vector<int>, int>> cores;
    for (auto& [key, cpus] : byCore) {
      std::sort(cpus.begin(), cpus.end());
      cores.emplace_back(cpus, key.first);
    }
    std::sort(cores.begin(), cores.end());
    std::vector<std::vector<int>> coreCpus;
    std::vector<int> corePackage;
    for (auto& [cpus, package] : cores) {
      coreCpus.push_back(cpus);
      corePackage.push_back(package);
    }
    return core::Topology(std::move(coreCpus), std::move(corePackage), "lttng");
  }

  static constexpr size_t kClassCacheSize = 256;
  static constexpr uint64_t kProgressMask = (1u << 16) - 1;

  FeedWriter m_builder;
  core::EventFeed& m_feed;
  const ImportOptions& m_options;
  std::array<std::pair<const bt_event_class*, uint32_t>, kClassCacheSize> m_classCache;
  std::unordered_map<const bt_event_class*, uint32_t> m_classIndex;
  std::vector<ClassInfo> m_classes;
  std::unordered_map<const bt_stream_class*, FieldSlot> m_packetCpuSlot;
  std::unordered_map<const bt_stream*, int32_t> m_streamCpu;
  const bt_stream* m_lastStream = nullptr;
  int32_t m_lastStreamCpu = 0;
  std::unordered_map<const bt_trace*, TraceInfo> m_traces;
  const bt_trace* m_lastTrace = nullptr;
  TraceInfo* m_lastTraceInfo = nullptr;
  bool m_describedATrace = false;
  std::vector<IrqDepth> m_irqDepth;
  core::TidTable<int32_t> m_tgidOfTid;
  struct PendingLoss {
    int64_t count = 0;  ///< -1 once any part is of unknown size
    int64_t endTs = INT64_MIN;
  };
  std::unordered_map<const bt_stream*, PendingLoss> m_pendingLoss;
  std::vector<TopologyCpu> m_topologyCpus;
  int64_t m_lastTs = 0;
  static constexpr size_t kNone = SIZE_MAX;
  std::vector<Upstream> m_upstreams;
  size_t m_current = kNone;  // the stream being taken
  int64_t m_until = 0;       // ... while its messages are no later than this
  size_t m_untilStream = kNone;  // the first stream whose next message is at m_until
  int64_t m_lastMerged = kNoTime;
  int64_t m_rangeBegin = 0;
  int64_t m_rangeEnd = 0;
  uint64_t m_events = 0;
  std::string m_internalError;
};

const bt_component_class_sink* EventSink::componentClass() {
  // Made once and kept for the process: graphs hold references to it.
  static const bt_component_class_sink* const cls = [] {
    constexpr auto kOk = BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK;
    bt_component_class_sink* c = bt_component_class_sink_create("schedlab", &EventSink::consumeMethod);
    if (!c || bt_component_class_sink_set_initialize_method(c, &EventSink::initializeMethod) != kOk ||
        bt_component_class_sink_set_graph_is_configured_method(c, &EventSink::graphIsConfiguredMethod) != kOk ||
        bt_component_class_sink_set_finalize_method(c, &EventSink::finalizeMethod) != kOk)
      return static_cast<const bt_component_class_sink*>(nullptr);
    return static_cast<const bt_component_class_sink*>(c);
  }();
  return cls;
}

// ---------------------------------------------------------------------------
// Graph

std::string signalName(int sig) {
  switch (sig) {
    case SIGABRT: return "assertion failure, SIGABRT";
    case SIGSEGV: return "invalid memory access, SIGSEGV";
    case SIGBUS: return "file mapping fault, SIGBUS";
    case SIGFPE: return "arithmetic fault, SIGFPE";
    default: return "signal " + std::to_string(sig);
  }
}

// Calls into babeltrace2 that read trace data, each run through runGuarded():
// plain structs, so nothing with a destructor sits between the guard and
// babeltrace2's frames.
struct AddSourceCall {
  bt_graph* graph;
  const bt_component_class_source* cls;
  const char* name;
  const bt_value* params;
  const bt_component_source* source = nullptr;
  bt_graph_add_component_status status = BT_GRAPH_ADD_COMPONENT_STATUS_ERROR;
  static void run(void* p) {
    auto* c = static_cast<AddSourceCall*>(p);
    c->status = bt_graph_add_source_component(c->graph, c->cls, c->name, c->params, kComponentLogLevel, &c->source);
  }
};

struct RunLoopCall {
  bt_graph* graph;
  const std::stop_token* stop;
  bt_graph_run_once_status status = BT_GRAPH_RUN_ONCE_STATUS_OK;
  bool cancelled = false;
  /// The first error babeltrace2 reported while it went on reading (owned).
  const bt_error* readOn = nullptr;
  static void run(void* p) {
    auto* c = static_cast<RunLoopCall*>(p);
    for (;;) {
      if (c->stop->stop_requested()) {
        c->cancelled = true;
        return;
      }
      c->status = bt_graph_run_once(c->graph);
      if (c->status != BT_GRAPH_RUN_ONCE_STATUS_OK && c->status != BT_GRAPH_RUN_ONCE_STATUS_AGAIN) {
        if (c->status == BT_GRAPH_RUN_ONCE_STATUS_END) c->keepReadOnError();
        return;
      }
      // src.ctf.fs (2.0) may append an error cause and still return an ordinary
      // status, e.g. when an event header runs past its packet's content
      // ("Cannot handle state"). The babeltrace2 command reads on, and so do
      // we; left on the thread, the error makes the next call abort on a precondition.
      c->keepReadOnError();
    }
  }
  void keepReadOnError() {
    const bt_error* error = bt_current_thread_take_error();
    if (!error) return;
    if (readOn)
      bt_error_release(error);
    else
      readOn = error;
  }
};

struct QueryCall {
  bt_query_executor* query;
  const bt_value* result = nullptr;
  bt_query_executor_query_status status = BT_QUERY_EXECUTOR_QUERY_STATUS_ERROR;
  static void run(void* p) {
    auto* c = static_cast<QueryCall*>(p);
    c->status = bt_query_executor_query(c->query, &c->result);
  }
};

/// Adds one src.ctf.fs per folder, then (with a sink) the sink, every stream
/// connected to it. Without a sink it only checks that babeltrace2 can open the
/// folders (the repair search). Fails with the babeltrace2 error.
core::Result<GraphPtr> buildGraph(const Plugins& plugins, const PathMap& paths, EventSink* sink, BtErrorInfo* error) {
  auto fail = [&](const std::string& what) -> core::Error {
    *error = takeError(paths);
    if (error->root.empty()) error->root = what;
    return core::Error(error->format(paths.original.empty() ? "" : paths.original.front()));
  };
  GraphPtr graph(bt_graph_create(0));
  if (!graph) return fail("cannot create a babeltrace2 graph");
  std::vector<const bt_component_source*> sources;
  for (size_t i = 0; i < paths.effective.size(); ++i) {
    ValuePtr params = makeSourceParams(paths.effective[i]);
    if (!params) return fail("out of memory");
    const std::string name = "source" + std::to_string(i);
    // src.ctf.fs parses the metadata and indexes every packet here.
    AddSourceCall call{graph.get(), plugins.source, name.c_str(), params.get()};
    if (!runGuarded(&AddSourceCall::run, &call)) {
      // babeltrace2's state is unknown: abandon (leak) everything it touched.
      (void)graph.release();
      (void)params.release();
      bt_current_thread_clear_error();
      error->crashed = true;
      error->file.clear();
      error->root = "babeltrace2 aborted (" + signalName(lastGuardedSignal()) + ")";
      return core::Error(error->format(paths.original[i]));
    }
    const bt_component_source* source = call.source;
    if (call.status != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
      BtErrorInfo info = takeError(paths);
      if (info.root.empty()) info.root = "babeltrace2 cannot open the trace";
      *error = info;
      return core::Error(info.format(paths.original[i]));
    }
    sources.push_back(source);
  }
  if (!sink) return graph;

  uint64_t streams = 0;
  for (const bt_component_source* source : sources) streams += bt_component_source_get_output_port_count(source);
  sink->setStreamCount(streams);
  const bt_component_class_sink* sinkClass = EventSink::componentClass();
  const bt_component_sink* sinkComponent = nullptr;
  if (!sinkClass ||
      bt_graph_add_sink_component_with_initialize_method_data(graph.get(), sinkClass, "schedlab", nullptr, sink,
                                                              kComponentLogLevel, &sinkComponent) !=
          BT_GRAPH_ADD_COMPONENT_STATUS_OK)
    return fail("cannot create the sink");
  uint64_t sinkPort = 0;
  for (const bt_component_source* source : sources) {
    const uint64_t n = bt_component_source_get_output_port_count(source);
    for (uint64_t p = 0; p < n; ++p) {
      const bt_port_input* in = bt_component_sink_borrow_input_port_by_index_const(sinkComponent, sinkPort++);
      const bt_port_output* out = bt_component_source_borrow_output_port_by_index_const(source, p);
      if (!in || !out || bt_graph_connect_ports(graph.get(), out, in, nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
        return fail("cannot connect a stream to the sink");
    }
  }
  return graph;
}

/// First and last timestamps of all streams (babeltrace.trace-infos query), for progress.
std::optional<std::pair<int64_t, int64_t>> queryRange(const Plugins& plugins, const std::vector<std::string>& dirs) {
  int64_t begin = INT64_MAX;
  int64_t end = INT64_MIN;
  for (const auto& dir : dirs) {
    ValuePtr params = makeSourceParams(dir);
    if (!params) return std::nullopt;
    QueryPtr query(bt_query_executor_create(bt_component_class_source_as_component_class_const(plugins.source),
                                            "babeltrace.trace-infos", params.get()));
    if (!query) return std::nullopt;
    bt_query_executor_set_logging_level(query.get(), kComponentLogLevel);
    QueryCall call{query.get()};
    if (!runGuarded(&QueryCall::run, &call)) {
      (void)query.release();
      (void)params.release();
      bt_current_thread_clear_error();
      return std::nullopt;
    }
    const bt_value* result = call.result;
    if (call.status != BT_QUERY_EXECUTOR_QUERY_STATUS_OK || !result) {
      bt_current_thread_clear_error();
      return std::nullopt;
    }
    const uint64_t traces = bt_value_get_type(result) == BT_VALUE_TYPE_ARRAY ? bt_value_array_get_length(result) : 0;
    for (uint64_t t = 0; t < traces; ++t) {
      const bt_value* trace = bt_value_array_borrow_element_by_index_const(result, t);
      const bt_value* streams = bt_value_map_borrow_entry_value_const(trace, "stream-infos");
      if (!streams || bt_value_get_type(streams) != BT_VALUE_TYPE_ARRAY) continue;
      for (uint64_t s = 0; s < bt_value_array_get_length(streams); ++s) {
        const bt_value* range =
            bt_value_map_borrow_entry_value_const(bt_value_array_borrow_element_by_index_const(streams, s), "range-ns");
        if (!range) continue;
        const bt_value* b = bt_value_map_borrow_entry_value_const(range, "begin");
        const bt_value* e = bt_value_map_borrow_entry_value_const(range, "end");
        if (b && bt_value_get_type(b) == BT_VALUE_TYPE_SIGNED_INTEGER) begin = std::min(begin, bt_value_integer_signed_get(b));
        if (e && bt_value_get_type(e) == BT_VALUE_TYPE_SIGNED_INTEGER) end = std::max(end, bt_value_integer_signed_get(e));
      }
    }
    bt_value_put_ref(result);
  }
  if (begin >= end) return std::nullopt;
  return std::make_pair(begin, end);
}

/// The largest packet-boundary prefix of `name` (in trace folder `dir`) that
/// babeltrace2 accepts on its own; 0 when none does.
uint64_t readablePrefix(const Plugins& plugins, const std::string& dir, const std::string& name) {
  std::vector<uint64_t> candidates = packetStartCandidates((fs::path(dir) / name).string());
  if (candidates.empty()) return 0;
  auto opens = [&](uint64_t keep) {
    auto mirror = RepairedTraceDir::create(dir, {name});
    if (!mirror || !mirror->cut(name, keep)) return false;
    BtErrorInfo ignored;
    const bool ok = static_cast<bool>(buildGraph(plugins, PathMap{{mirror->dir()}, {dir}}, nullptr, &ignored));
    bt_current_thread_clear_error();
    return ok;
  };
  // Usually only the last packet is cut short; otherwise bisect, assuming every
  // prefix of a readable prefix is readable too.
  if (candidates.back() > 0 && opens(candidates.back())) return candidates.back();
  ptrdiff_t good = -1;  // index of the largest candidate known to open (-1: keep nothing)
  auto bad = static_cast<ptrdiff_t>(candidates.size()) - 1;
  while (bad - good > 1) {
    const ptrdiff_t mid = good + (bad - good) / 2;
    if (candidates[static_cast<size_t>(mid)] == 0 || opens(candidates[static_cast<size_t>(mid)]))
      good = mid;
    else
      bad = mid;
  }
  return good < 0 ? 0 : candidates[static_cast<size_t>(good)];
}

constexpr int kMaxRepairedFiles = 16;

/// Whether babeltrace2 opens the trace folder `dir` reduced to its metadata.
bool metadataOpens(const Plugins& plugins, const std::string& dir) {
  auto mirror = RepairedTraceDir::create(dir, {"metadata"});
  if (!mirror) return true;  // cannot tell: do not blame the metadata
  BtErrorInfo ignored;
  const bool ok = static_cast<bool>(buildGraph(plugins, PathMap{{mirror->dir()}, {dir}}, nullptr, &ignored));
  bt_current_thread_clear_error();
  return ok;
}

/// The first stream file (not yet cut) that babeltrace2 cannot open on its own,
/// for when opening the whole trace aborted without saying which; empty if none.
std::string findUnopenableStream(const Plugins& plugins, const std::vector<std::string>& dirs,
                                 const std::vector<std::optional<RepairedTraceDir>>& repairs) {
  for (size_t t = 0; t < dirs.size(); ++t) {
    for (const auto& name : streamFileNames(dirs[t])) {
      if (repairs[t] && repairs[t]->cuts().count(name)) continue;
      auto mirror = RepairedTraceDir::create(dirs[t], {name});
      if (!mirror) continue;
      BtErrorInfo ignored;
      const bool opens = static_cast<bool>(buildGraph(plugins, PathMap{{mirror->dir()}, {dirs[t]}}, nullptr, &ignored));
      bt_current_thread_clear_error();
      if (!opens) return (fs::path(dirs[t]) / name).string();
    }
  }
  return {};
}

}  // namespace

namespace {

core::Status readTraces(const std::vector<std::string>& traceDirs, core::SchedBuilder& builder,
                        const ImportOptions& options, Threading threading) {
  // libbabeltrace2 is not thread-safe (plugin and class objects are shared,
  // their reference counts are not atomic): one CTF import at a time.
  static std::mutex babeltraceMutex;
  const std::lock_guard babeltraceLock(babeltraceMutex);
  bt_current_thread_clear_error();
  // Found once per process and kept: bt_plugin_find() dlopen()s every plugin of
  // babeltrace2's folder and the last reference dlclose()s them, which cost a
  // small trace as much as decoding it (the ctf fuzzer runs twice the inputs
  // with them kept). Used under babeltraceMutex only.
  static std::optional<Plugins> plugins;
  if (!plugins) {
    auto loaded = loadPlugins();
    if (!loaded) return loaded.error();
    plugins = std::move(*loaded);
  }

  PathMap paths{traceDirs, traceDirs};
  std::vector<std::optional<RepairedTraceDir>> repairs(traceDirs.size());
  std::vector<std::string> repairNotes;

  // The model's tables sized once from the stream bytes (regrowth copies and
  // their page faults slow the builder thread): perf-converted CTF takes ~85
  // bytes an event, LTTng ~35; reserving for the denser case costs untouched
  // address space only.
  uint64_t streamBytes = 0;
  for (const auto& dir : traceDirs)
    for (const auto& name : streamFileNames(dir)) {
      std::error_code ec;
      const auto size = fs::file_size(fs::path(dir) / name, ec);
      if (!ec) streamBytes += size;
    }
  if (streamBytes / 32 > (1u << 20)) builder.reserve(streamBytes / 32);

  // The model is built on a second thread while this one decodes, when a core
  // is free for it: the builder costs about a third of babeltrace2's decoding,
  // and this way it overlaps it.
  core::EventFeed feed(builder, core::EventFeed::Position::ByteOffset);
  const bool threaded = decodeOnAWorker(threading, streamBytes);
  if (threaded) feed.setThreaded();
  std::string builderError;
  std::thread builderThread;
  if (threaded) builderThread = std::thread([&] {
    try {
      (void)feed.drain();
    } catch (const std::exception& e) {
      builderError = std::string("building the model failed: ") + e.what();
      feed.abandon();  // the decoder stops; what it still hands over is dropped
    }
  });
  // Whatever the way out, the builder thread is done before `builder` is used again.
  struct JoinBuilder {
    core::EventFeed& feed;
    std::thread& thread;
    void now() {
      if (!thread.joinable()) return;
      feed.finish({});
      thread.join();
    }
    ~JoinBuilder() { now(); }
  } joinBuilder{feed, builderThread};

  // Our own walk over the packets first: babeltrace2 loops forever or aborts
  // on some packet sizes (ctf_packet_check.h). Where each packet starts is
  // kept to say where a stream that fails later failed.
  std::map<std::string, std::vector<uint64_t>> packetOffsets;  // by the stream file's normal path
  for (size_t t = 0; t < traceDirs.size(); ++t) {
    const auto layout = PacketLayout::fromMetadata((fs::path(traceDirs[t]) / "metadata").string());
    if (!layout) continue;  // babeltrace2 will say what is wrong with the metadata
    for (const auto& name : streamFileNames(traceDirs[t])) {
      auto scan = layout->scan((fs::path(traceDirs[t]) / name).string());
      packetOffsets[(fs::path(traceDirs[t]) / name).lexically_normal().string()] = std::move(scan.packetOffsets);
      if (scan.problem.empty()) continue;
      if (!repairs[t]) {
        auto mirror = RepairedTraceDir::create(traceDirs[t]);
        if (!mirror) return core::Error(mirror.error().message());
        repairs[t] = std::move(mirror.value());
        paths.effective[t] = repairs[t]->dir();
      }
      if (!repairs[t]->cut(name, scan.goodBytes)) continue;
      BtErrorInfo note;
      note.file = (fs::path(traceDirs[t]) / name).string();
      note.offset = scan.goodBytes;
      note.root = scan.goodBytes ? scan.problem + "; the packets before were imported"
                                 : "not a readable CTF stream file (" + scan.problem + "); file left out";
      repairNotes.push_back(note.format(note.file));
    }
  }

  std::unique_ptr<EventSink> sink;
  GraphPtr graph;
  for (int repaired = 0;; ++repaired) {
    sink = std::make_unique<EventSink>(feed, options);
    BtErrorInfo error;
    auto built = buildGraph(*plugins, paths, sink.get(), &error);
    if (built) {
      graph = std::move(built.value());
      break;
    }
    // src.ctf.fs indexes every packet of every stream file before it emits
    // anything; one truncated file would cost the whole trace. Cut that file
    // at its last packet babeltrace2 accepts and open the rest.
    if (error.crashed && error.file.empty()) error.file = findUnopenableStream(*plugins, traceDirs, repairs);
    if (error.file.empty()) {
      // Nothing named: babeltrace2 only logs metadata syntax errors. A trace
      // reduced to its metadata opens (empty) unless the metadata is the fault.
      for (const auto& dir : traceDirs)
        if (!metadataOpens(*plugins, dir)) {
          error.file = (fs::path(dir) / "metadata").string();
          error.root = "invalid CTF metadata (babeltrace2: " + error.root + ")";
          return core::Error(error.format(dir));
        }
    }
    const fs::path bad(error.file);
    size_t t = 0;
    while (t < traceDirs.size() && bad.parent_path() != fs::path(traceDirs[t])) ++t;
    if (error.file.empty() || bad.filename() == "metadata" || t == traceDirs.size() || repaired >= kMaxRepairedFiles ||
        options.stop.stop_requested())
      return core::Error(built.error().message());
    if (!repairs[t]) {
      auto mirror = RepairedTraceDir::create(traceDirs[t]);
      if (!mirror) return core::Error(built.error().message());
      repairs[t] = std::move(mirror.value());
      paths.effective[t] = repairs[t]->dir();
    }
    const std::string name = bad.filename().string();
    if (repairs[t]->cuts().count(name)) return core::Error(built.error().message());
    const uint64_t keep = readablePrefix(*plugins, traceDirs[t], name);
    if (!repairs[t]->cut(name, keep)) return core::Error(built.error().message());
    BtErrorInfo note = error;
    note.offset = keep;
    note.root = std::string(keep ? "unreadable from here on" : "no readable packet") +
                (error.crashed ? " (" : " (babeltrace2: ") + error.root +
                (keep ? "); the packets before were imported" : "); file left out");
    repairNotes.push_back(note.format(error.file));
  }

  if (options.progress) {
    if (auto range = queryRange(*plugins, paths.effective)) sink->setProgressRange(range->first, range->second);
  }

  std::optional<std::string> runError;
  const std::string where = traceDirs.size() == 1 ? traceDirs.front() : traceDirs.front() + " (and the other traces)";
  RunLoopCall run{graph.get(), &options.stop};
  EventSink* active = sink.get();
  if (!runGuarded(&RunLoopCall::run, &run)) {
    // The events consumed so far go to the builder; babeltrace2's objects are
    // in an unknown state and stay allocated (the sink too: the graph points to it).
    (void)graph.release();
    (void)sink.release();
    bt_current_thread_clear_error();
    BtErrorInfo error;
    error.root = "babeltrace2 aborted while decoding (" + signalName(lastGuardedSignal()) + ") after " +
                 std::to_string(active->eventsSeen()) + " events; the events before are kept";
    runError = error.format(where);
  } else if (run.cancelled) {
    if (run.readOn) bt_error_release(run.readOn);
    return core::Error("cancelled");
  } else if (run.status != BT_GRAPH_RUN_ONCE_STATUS_END) {
    BtErrorInfo error = takeError(paths);
    if (!active->internalError().empty()) error.root = active->internalError();
    if (run.status == BT_GRAPH_RUN_ONCE_STATUS_MEMORY_ERROR && error.root.empty()) error.root = "out of memory";
    error.root += " (after " + std::to_string(active->eventsSeen()) + " events)";
    runError = error.format(where);
  }
  if (run.readOn) {
    BtErrorInfo note = describeError(run.readOn, paths);
    note.root = "babeltrace2 reported an error and read on: " + (note.root.empty() ? "(no cause given)" : note.root);
    repairNotes.push_back(note.format(where));
  }
  for (const auto& failure : active->takeStreamFailures()) {
    BtErrorInfo note;
    if (failure.error) {
      note = describeError(failure.error, paths);
      note.root = "unreadable from here on (babeltrace2: " + (note.root.empty() ? "(no cause given)" : note.root) + ")";
    } else {
      note.root = failure.message;
    }
    if (note.file.empty() && !failure.file.empty()) note.file = paths.toOriginal(failure.file);
    if (const auto offsets = packetOffsets.find(fs::path(note.file).lexically_normal().string());
        failure.packet && !note.offset && offsets != packetOffsets.end() && *failure.packet < offsets->second.size()) {
      // babeltrace2 says no place: the packet it was in, or the last one begun before.
      note.offset = offsets->second[*failure.packet];
      note.root = std::string(failure.error ? "in or after" : "in") + " the packet that starts here (packet " +
                  std::to_string(*failure.packet + 1) + " of " + std::to_string(offsets->second.size()) +
                  "): " + note.root;
    }
    note.root += active->streamCount() > 1
                     ? "; its events before and the other streams' were imported, its rest counted as lost"
                     : "; its events before were imported, its rest counted as lost";
    repairNotes.push_back(note.format(where));
  }
  active->finish();
  joinBuilder.now();
  if (!builderError.empty()) runError = where + ": " + builderError;
  if (auto topology = active->topology()) builder.setTopology(std::move(*topology));
  if (options.progress) options.progress(1.0);
  graph.reset();
  bt_current_thread_clear_error();

  std::string message;
  for (const auto& note : repairNotes) message += (message.empty() ? "" : "; ") + note;
  if (runError) message += (message.empty() ? "" : "; ") + *runError;
  if (!message.empty()) return core::Error(message);
  return {};
}

}  // namespace

core::Status readCtfTraces(const std::vector<std::string>& traceDirs, core::SchedBuilder& builder,
                           const ImportOptions& options, Threading threading) {
  if (traceDirs.empty()) return core::Error("no CTF trace to read");
  try {
    return readTraces(traceDirs, builder, options, threading);
  } catch (const std::exception& e) {
    // Out of memory, or no thread to build on: the importer contract is no throw.
    return core::Error(traceDirs.front() + ": " + e.what());
  }
}

}  // namespace importers::ctf
