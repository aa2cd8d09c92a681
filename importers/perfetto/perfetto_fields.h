// Field numbers of the Perfetto messages SchedLab reads and writes (protos/…,
// copied from google/perfetto), and the names of the ftrace events an
// FtraceEvent can carry. Used by the reader, the writer and their tests.
#pragma once

#include <cstdint>
#include <string_view>

namespace importers::perfetto {

// Trace
inline constexpr uint32_t kTracePacket = 1;
// TracePacket
inline constexpr uint32_t kFtraceEvents = 1;
inline constexpr uint32_t kProcessTree = 2;
inline constexpr uint32_t kPacketTimestamp = 8;
inline constexpr uint32_t kProcessStats = 9;
inline constexpr uint32_t kTrustedSequenceId = 10;
inline constexpr uint32_t kTrackEvent = 11;
inline constexpr uint32_t kFtraceStats = 34;
inline constexpr uint32_t kSystemInfo = 45;
// GenericKernelTaskStateEvent (generic_kernel/generic_task.proto, "stable
// public API"): a task's state from the packet's timestamp on.
inline constexpr uint32_t kGenericTaskState = 117;
inline constexpr uint32_t kGenericTaskCpu = 1;
inline constexpr uint32_t kGenericTaskComm = 2;
inline constexpr uint32_t kGenericTaskTid = 3;
inline constexpr uint32_t kGenericTaskStateField = 4;
inline constexpr uint32_t kGenericTaskPrio = 5;
inline constexpr uint32_t kCompressedPackets = 50;
inline constexpr uint32_t kTrackDescriptor = 60;
inline constexpr uint32_t kCpuInfo = 67;
inline constexpr uint32_t kZstdCompressedPackets = 133;
// FtraceEventBundle
inline constexpr uint32_t kBundleCpu = 1;
inline constexpr uint32_t kBundleEvent = 2;
inline constexpr uint32_t kBundleLostEvents = 3;
inline constexpr uint32_t kBundleCompactSched = 4;
inline constexpr uint32_t kBundleClock = 5;
inline constexpr uint32_t kBundlePreviousEnd = 10;
// FtraceEventBundle.CompactSched
inline constexpr uint32_t kCompactSwitchTs = 1;
inline constexpr uint32_t kCompactSwitchPrevState = 2;
inline constexpr uint32_t kCompactSwitchNextPid = 3;
inline constexpr uint32_t kCompactSwitchNextPrio = 4;
inline constexpr uint32_t kCompactInternTable = 5;
inline constexpr uint32_t kCompactSwitchNextComm = 6;
inline constexpr uint32_t kCompactWakingTs = 7;
inline constexpr uint32_t kCompactWakingPid = 8;
inline constexpr uint32_t kCompactWakingTargetCpu = 9;
inline constexpr uint32_t kCompactWakingPrio = 10;
inline constexpr uint32_t kCompactWakingComm = 11;
inline constexpr uint32_t kCompactWakingFlags = 12;
inline constexpr uint32_t kCompactLastField = 12;
// FtraceEvent
inline constexpr uint32_t kEventTimestamp = 1;
inline constexpr uint32_t kEventPid = 2;
inline constexpr uint32_t kEventCommonFlags = 5;
inline constexpr uint32_t kFirstEventPayload = 3;  // the oneof's numbers; 5 is a varint
inline constexpr uint32_t kPrint = 3;
inline constexpr uint32_t kSchedSwitch = 4;
inline constexpr uint32_t kCpuFrequency = 11;
inline constexpr uint32_t kCpuIdle = 13;
inline constexpr uint32_t kSchedWakeup = 17;
inline constexpr uint32_t kSchedWaking = 20;
inline constexpr uint32_t kSchedWakeupNew = 114;
inline constexpr uint32_t kTaskNewtask = 235;
inline constexpr uint32_t kTaskRename = 236;
inline constexpr uint32_t kSchedProcessExec = 237;
inline constexpr uint32_t kSchedProcessExit = 238;
inline constexpr uint32_t kSchedProcessFork = 239;
inline constexpr uint32_t kSchedMigrateTask = 491;
// ProcessTree
inline constexpr uint32_t kTreeProcess = 1;
inline constexpr uint32_t kTreeThread = 2;
inline constexpr uint32_t kProcessPid = 1;
inline constexpr uint32_t kProcessPpid = 2;
inline constexpr uint32_t kProcessCmdline = 3;
inline constexpr uint32_t kThreadTid = 1;
inline constexpr uint32_t kThreadName = 2;
inline constexpr uint32_t kThreadTgid = 3;
// ProcessStats
inline constexpr uint32_t kStatsProcess = 1;
inline constexpr uint32_t kStatsThreads = 11;
// FtraceStats
inline constexpr uint32_t kStatsPhase = 1;
inline constexpr uint32_t kStatsCpu = 2;
inline constexpr uint32_t kCpuStatsCpu = 1;
inline constexpr uint32_t kCpuStatsOverrun = 3;
inline constexpr uint64_t kPhaseStart = 1;
inline constexpr uint64_t kPhaseEnd = 2;
// SystemInfo
inline constexpr uint32_t kSysUtsname = 1;
inline constexpr uint32_t kSysFingerprint = 2;
inline constexpr uint32_t kSysServiceVersion = 4;
inline constexpr uint32_t kSysNumCpus = 8;
inline constexpr uint32_t kUtsSysname = 1;
inline constexpr uint32_t kUtsRelease = 3;
inline constexpr uint32_t kUtsMachine = 4;
// CpuInfo
inline constexpr uint32_t kCpuInfoCpu = 1;
inline constexpr uint32_t kCpuProcessor = 1;
/// SchedLab's own CpuInfo.Cpu fields: the core and package of the CPU, which
/// Perfetto does not record. Numbers far above Perfetto's (it skips fields it
/// does not know), so that an export keeps its SMT topology through a round trip.
inline constexpr uint32_t kCpuSchedlabCore = 1000;
inline constexpr uint32_t kCpuSchedlabPackage = 1001;
/// On a sched_switch to idle: the CPU is forced idle (core scheduling).
inline constexpr uint32_t kSwitchSchedlabForcedIdle = 1000;
/// On a sched_switch: SchedLab's import had inferred it (the recording lacked
/// it; SliceEnd::Mismatch, kSliceStartInferred), so it reads back as that repair.
/// Value kRepairedKeepsPrevState: the import had learnt of it only after the
/// task it displaced had left (that task's states went on without it).
inline constexpr uint32_t kSwitchSchedlabRepaired = 1001;
inline constexpr uint64_t kRepairedKeepsPrevState = 2;
/// An FtraceEvent without payload that turns an idle CPU forced idle (2) or
/// back (1) without a switch.
inline constexpr uint32_t kEventSchedlabIdleKind = 1000;
/// TracePacket: SchedLab's own record of what replays set per task, and the replay.
inline constexpr uint32_t kPacketSchedlab = 1901;
inline constexpr uint32_t kSchedlabTask = 1;
inline constexpr uint32_t kSchedlabReplay = 2;
inline constexpr uint32_t kTaskTid = 1;
inline constexpr uint32_t kTaskCookie = 2;
inline constexpr uint32_t kTaskUclampMin = 3;
inline constexpr uint32_t kTaskUclampMax = 4;
inline constexpr uint32_t kTaskPolicy = 5;
inline constexpr uint32_t kTaskAffinity = 6;
inline constexpr uint32_t kReplayModel = 1;
inline constexpr uint32_t kReplayRecording = 2;
inline constexpr uint32_t kReplayParam = 3;
inline constexpr uint32_t kReplayCookieName = 4;
// TrackDescriptor / TrackEvent (the exporter's named tracks)
inline constexpr uint32_t kTrackUuid = 1;
inline constexpr uint32_t kTrackName = 2;
inline constexpr uint32_t kTrackParentUuid = 5;
inline constexpr uint32_t kTrackCounter = 8;
inline constexpr uint32_t kTrackEventType = 9;
inline constexpr uint32_t kTrackEventTrackUuid = 11;
inline constexpr uint32_t kTrackEventName = 23;
inline constexpr uint32_t kTrackEventCounterValue = 30;
inline constexpr uint32_t kTrackEventDoubleCounterValue = 44;
inline constexpr uint64_t kTypeSliceBegin = 1;
inline constexpr uint64_t kTypeSliceEnd = 2;
inline constexpr uint64_t kTypeCounter = 4;
inline constexpr uint32_t kSequenceFlags = 13;
inline constexpr uint64_t kSeqIncrementalStateCleared = 1;

/// Above every FtraceEvent payload number (617 in the copied proto).
inline constexpr uint32_t kMaxFtraceEventId = 1024;
/// "sched_switch" for 4, ...; empty for numbers the proto does not name.
std::string_view ftraceEventName(uint32_t id);
/// The payload number of an event name, 0 if none.
uint32_t ftraceEventId(std::string_view name);

}  // namespace importers::perfetto
