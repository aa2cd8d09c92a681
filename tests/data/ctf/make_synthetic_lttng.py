#!/usr/bin/env python3
"""Writes tests/data/ctf/synthetic-lttng/: a small hand-specified CTF 1.8 trace
shaped like an lttng-modules 2.13 kernel trace, for what the real traces in
shared/traces do not contain: lttng_statedump_cpu_topology, a statedump with
per-task CPUs, an enumeration prev_state, a discarded-events counter, a
big-endian byte order and a clock offset. The expected model is worked out by
hand in tests/importers/ctf/ctf_synthetic_test.cpp.

Also writes tests/data/ctf/synthetic-power/: the same kind of kernel trace
with power_cpu_frequency and power_cpu_idle (tracecompass-test-traces/bug446190
declares them but records none), its expected counters and residencies worked
out by hand in ctf_synthetic_test.cpp too.

Also writes tests/data/ctf/synthetic-ties/: two CPUs with an event each at
one instant, after CPU 1's stream was the one read last: the order the
babeltrace2 command prints them in, and what that order makes of the task,
are checked in ctf_synthetic_test.cpp (CtfSyntheticTies).

Also writes tests/data/ctf/lttng-session/: the same kernel trace as the
`kernel/` folder of an LTTng 2.13 session, beside the session's user-space
trace in `ust/uid/1000/64-bit/` (three app:tick events), each with its own
UUID and the session's env (trace_name, trace_creation_datetime, hostname), as
lttng-modules and lttng-sessiond write them; tests/importers/ctf/ctf_folder_test.cpp
opens it. Regenerate with `python3 make_synthetic_lttng.py` (deterministic).
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "synthetic-lttng")
POWER_OUT = os.path.join(HERE, "synthetic-power")
SESSION_OUT = os.path.join(HERE, "lttng-session")
UUID = bytes(range(0x10, 0x20))
POWER_UUID = bytes(range(0x70, 0x80))
SESSION_KERNEL_UUID = bytes(range(0x30, 0x40))
SESSION_UST_UUID = bytes(range(0x50, 0x60))
BE = ">"

KERNEL_ENV = """\thostname = "synth";
\tdomain = "kernel";
\tsysname = "Linux";
\tkernel_release = "5.15.0-synthetic";
\tkernel_version = "#1 SMP synthetic";
\ttracer_name = "lttng-modules";
\ttracer_major = 2;
\ttracer_minor = 13;
\ttracer_patchlevel = 4;
"""
SESSION_ENV = """\ttrace_buffering_scheme = "global";
\ttrace_name = "sched-session";
\ttrace_creation_datetime = "20240501T120000+0000";
"""
UST_ENV = """\tdomain = "ust";
\ttracer_name = "lttng-ust";
\ttracer_major = 2;
\ttracer_minor = 13;
\ttracer_buffering_scheme = "uid";
\ttracer_buffering_id = 1000;
\tarchitecture_bit_width = 64;
\ttrace_name = "sched-session";
\ttrace_creation_datetime = "20240501T120000+0000";
\thostname = "synth";
"""


def uuid_text(uuid):
    h = uuid.hex()
    return "-".join((h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]))


COMMON_METADATA = """/* CTF 1.8 */

typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 32; align = 8; signed = true; } := int32_t;
typealias integer { size = 8; align = 8; signed = false; encoding = UTF8; } := utf8_t;

trace {
\tmajor = 1;
\tminor = 8;
\tuuid = "%s";
\tbyte_order = be;
\tpacket.header := struct {
\t\tuint32_t magic;
\t\tuint8_t  uuid[16];
\t\tuint32_t stream_id;
\t};
};

env {
%s};

clock {
\tname = "monotonic";
\tuuid = "20212223-2425-2627-2829-2a2b2c2d2e2f";
\tdescription = "Monotonic Clock";
\tfreq = 1000000000;
\tprecision = 1;
\toffset_s = 1700000000;
\toffset = 0;
\tabsolute = FALSE;
};

typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;

struct packet_context {
\tuint64_clock_monotonic_t timestamp_begin;
\tuint64_clock_monotonic_t timestamp_end;
\tuint64_t content_size;
\tuint64_t packet_size;
\tuint64_t packet_seq_num;
\tuint64_t events_discarded;
\tuint32_t cpu_id;
};

stream {
\tid = 0;
\tevent.header := struct { uint32_t id; uint64_clock_monotonic_t timestamp; };
\tpacket.context := struct packet_context;
};
"""
KERNEL_EVENTS = """
event {
\tname = "sched_switch";
\tid = 0;
\tstream_id = 0;
\tfields := struct {
\t\tutf8_t _prev_comm[16];
\t\tint32_t _prev_tid;
\t\tint32_t _prev_prio;
\t\tenum : integer { size = 64; align = 8; signed = true; } {
\t\t\t"TASK_RUNNING" = 0, "TASK_INTERRUPTIBLE" = 1, "TASK_UNINTERRUPTIBLE" = 2,
\t\t\t"TASK_STOPPED" = 4, "TASK_TRACED" = 8, "EXIT_DEAD" = 16, "EXIT_ZOMBIE" = 32,
\t\t\t"TASK_PARKED" = 64, "TASK_REPORT_IDLE" = 128, "TASK_REPORT_MAX" = 256
\t\t} _prev_state;
\t\tutf8_t _next_comm[16];
\t\tint32_t _next_tid;
\t\tint32_t _next_prio;
\t};
};

event {
\tname = "sched_waking";
\tid = 1;
\tstream_id = 0;
\tfields := struct { utf8_t _comm[16]; int32_t _tid; int32_t _prio; int32_t _target_cpu; };
};

event {
\tname = "lttng_statedump_process_state";
\tid = 2;
\tstream_id = 0;
\tfields := struct {
\t\tint32_t _tid; int32_t _vtid; int32_t _pid; int32_t _vpid; int32_t _ppid; int32_t _vppid;
\t\tutf8_t _name[16]; int32_t _type; int32_t _mode; int32_t _submode; int32_t _status; int32_t _cpu;
\t};
};

event {
\tname = "lttng_statedump_cpu_topology";
\tid = 3;
\tstream_id = 0;
\tfields := struct {
\t\tstring _architecture; uint16_t _cpu_id; string _vendor; int32_t _family; int32_t _model;
\t\tstring _model_name; uint16_t _physical_id; uint16_t _core_id; uint16_t _cores;
\t};
};

event {
\tname = "sched_process_fork";
\tid = 4;
\tstream_id = 0;
\tfields := struct {
\t\tutf8_t _parent_comm[16]; int32_t _parent_tid; int32_t _parent_pid;
\t\tutf8_t _child_comm[16]; int32_t _child_tid; int32_t _child_pid;
\t};
};

event {
\tname = "irq_handler_entry";
\tid = 5;
\tstream_id = 0;
\tfields := struct { int32_t _irq; string _name; };
};

event {
\tname = "irq_handler_exit";
\tid = 6;
\tstream_id = 0;
\tfields := struct { int32_t _irq; int32_t _ret; };
};

event {
\tname = "sched_wakeup";
\tid = 7;
\tstream_id = 0;
\tfields := struct { utf8_t _comm[16]; int32_t _tid; int32_t _prio; int32_t _target_cpu; };
};
"""
POWER_EVENTS = """
event {
\tname = "power_cpu_idle";
\tid = 8;
\tstream_id = 0;
\tfields := struct { uint32_t _state; uint32_t _cpu_id; };
};

event {
\tname = "power_cpu_frequency";
\tid = 9;
\tstream_id = 0;
\tfields := struct { uint32_t _state; uint32_t _cpu_id; };
};
"""
UST_EVENTS = """
event {
\tname = "app:tick";
\tid = 0;
\tstream_id = 0;
\tfields := struct { int32_t _count; };
};
"""


def comm(s):
    return s.encode().ljust(16, b"\0")[:16]


def i32(v):
    return struct.pack(BE + "i", v)


def u16(v):
    return struct.pack(BE + "H", v)


def cstr(s):
    return s.encode() + b"\0"


def sched_switch(prev, ptid, pprio, pstate, nxt, ntid, nprio):
    # lttng-modules records prio - MAX_RT_PRIO: 20 is nice 0.
    return 0, comm(prev) + i32(ptid) + i32(pprio) + struct.pack(BE + "q", pstate) + comm(nxt) + i32(ntid) + i32(nprio)


def waking(name, tid, prio, target, event_id=1):
    return event_id, comm(name) + i32(tid) + i32(prio) + i32(target)


def statedump(tid, pid, name, status, cpu):
    return 2, b"".join(i32(v) for v in (tid, tid, pid, pid, 1, 1)) + comm(name) + b"".join(
        i32(v) for v in (0, 0, 0, status, cpu))


def topology(cpu, package, core):
    return 3, cstr("x86") + u16(cpu) + cstr("AuthenticAMD") + i32(23) + i32(49) + cstr("Synthetic CPU") + u16(
        package) + u16(core) + u16(2)


def fork(pcomm, ptid, ppid, ccomm, ctid, cpid):
    return 4, comm(pcomm) + i32(ptid) + i32(ppid) + comm(ccomm) + i32(ctid) + i32(cpid)


def cpu_idle(state, cpu):
    return 8, struct.pack(BE + "II", state & 0xFFFFFFFF, cpu)  # leaving idle is (u32)-1


def cpu_frequency(khz, cpu):
    return 9, struct.pack(BE + "II", khz, cpu)


def metadata(uuid, env, events):
    return COMMON_METADATA % (uuid_text(uuid), env) + events


def packet(cpu, seq, discarded, events, uuid=UUID):
    body = b"".join(struct.pack(BE + "IQ", eid, ts) + payload for ts, (eid, payload) in events)
    header_size = 4 + 16 + 4 + 8 * 6 + 4
    content = header_size + len(body)
    size = (content + 7) // 8 * 8
    ts_begin = events[0][0]
    ts_end = events[-1][0]
    head = struct.pack(BE + "I", 0xC1FC1FC1) + uuid + struct.pack(BE + "I", 0)
    ctx = struct.pack(BE + "QQQQQQI", ts_begin, ts_end, content * 8, size * 8, seq, discarded, cpu)
    return (head + ctx + body).ljust(size, b"\0")


# Timeline (ns after the clock offset), worked through in ctf_synthetic_test.cpp.
CPU0 = [
    (0, 0, [
        (1000, statedump(100, 100, "app", 5, 0)),          # WAIT
        (1010, statedump(101, 100, "app-worker", 6, 1)),   # RUN
        (1020, statedump(200, 200, "daemon", 5, 0)),       # WAIT
        (1030, topology(0, 0, 0)),
        (1040, topology(1, 0, 1)),
        (1050, topology(2, 0, 0)),
        (1060, topology(3, 0, 1)),
        (2000, waking("app", 100, 20, 0)),
        (2100, sched_switch("swapper/0", 0, 20, 0, "app", 100, 20)),
        (5000, sched_switch("app", 100, 20, 1, "swapper/0", 0, 20)),     # S
    ]),
    (1, 3, [  # 3 events lost between the packets
        (9000, (5, i32(19) + cstr("eth0"))),
        (9100, waking("daemon", 200, 20, 0)),                             # in the irq handler
        (9200, (6, i32(19) + i32(1))),
        (9300, sched_switch("swapper/0", 0, 20, 0, "daemon", 200, 20)),
        (12000, sched_switch("daemon", 200, 20, 256, "swapper/0", 0, 20)),  # preempted
    ]),
]
CPU1 = [
    (0, 0, [
        (1500, sched_switch("app-worker", 101, 20, 2, "swapper/1", 0, 20)),  # D
        (3000, waking("app-worker", 101, 20, 1)),
        (3050, waking("app-worker", 101, 20, 1, event_id=7)),
        (3100, sched_switch("swapper/1", 0, 20, 0, "app-worker", 101, 20)),
        (4000, fork("app-worker", 101, 100, "app-worker", 102, 100)),
        (6000, sched_switch("app-worker", 101, 20, 128, "app-worker", 102, 20)),  # I
        (7000, sched_switch("app-worker", 102, 20, 16, "swapper/1", 0, 20)),      # X
    ]),
]
# The power trace, worked through in ctf_synthetic_test.cpp (CtfSyntheticPower):
# CPU 0 sets its policy's frequency (CPUs 0 and 1) twice; each CPU enters and leaves idle.
POWER_CPU0 = [
    (0, 0, [
        (1000, cpu_frequency(1200000, 0)),
        (1010, cpu_frequency(1200000, 1)),
        (1900, cpu_idle(-1, 0)),
        (2000, sched_switch("swapper/0", 0, 20, 0, "app", 100, 20)),
        (5000, sched_switch("app", 100, 20, 1, "swapper/0", 0, 20)),     # S
        (5050, cpu_idle(2, 0)),
        (9000, cpu_frequency(600000, 0)),
        (12000, sched_switch("swapper/0", 0, 20, 0, "app", 100, 20)),
    ]),
]
POWER_CPU1 = [
    (0, 0, [
        (1500, cpu_idle(1, 1)),
        (8000, cpu_idle(-1, 1)),
        (8010, sched_switch("swapper/1", 0, 20, 0, "daemon", 200, 20)),
        (12000, sched_switch("daemon", 200, 20, 1, "swapper/1", 0, 20)),  # S
    ]),
]
# The ties trace (CtfSyntheticTies): at 5000 task a (300) sleeps on CPU 0 and
# c (302) wakes it from CPU 1; CPU 1's stream was read last before then (4000).
TIES_UUID = bytes(range(0x90, 0xA0))
TIES_CPU0 = [
    (0, 0, [
        (1000, sched_switch("swapper/0", 0, 20, 0, "a", 300, 20)),
        (5000, sched_switch("a", 300, 20, 1, "b", 301, 20)),             # S
    ]),
]
TIES_CPU1 = [
    (0, 0, [
        (2000, sched_switch("swapper/1", 0, 20, 0, "c", 302, 20)),
        (4000, waking("b", 301, 20, 0)),
        (5000, waking("a", 300, 20, 0)),
    ]),
]
# The session's user-space trace: app (tid 100) ticks on CPU 0 while it runs.
UST_CPU0 = [
    (0, 0, [(2200, (0, i32(1))), (3000, (0, i32(2))), (4000, (0, i32(3)))]),
]


def write_trace(folder, meta, streams, uuid):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "metadata"), "w") as f:
        f.write(meta)
    for name, (cpu, packets) in streams.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(b"".join(packet(cpu, seq, lost, events, uuid) for seq, lost, events in packets))


write_trace(OUT, metadata(UUID, KERNEL_ENV, KERNEL_EVENTS), {"chan_0": (0, CPU0), "chan_1": (1, CPU1)}, UUID)
write_trace(POWER_OUT, metadata(POWER_UUID, KERNEL_ENV, KERNEL_EVENTS + POWER_EVENTS),
            {"chan_0": (0, POWER_CPU0), "chan_1": (1, POWER_CPU1)}, POWER_UUID)
write_trace(os.path.join(HERE, "synthetic-ties"), metadata(TIES_UUID, KERNEL_ENV, KERNEL_EVENTS),
            {"chan_0": (0, TIES_CPU0), "chan_1": (1, TIES_CPU1)}, TIES_UUID)
write_trace(os.path.join(SESSION_OUT, "kernel"), metadata(SESSION_KERNEL_UUID, KERNEL_ENV + SESSION_ENV, KERNEL_EVENTS),
            {"channel0_0": (0, CPU0), "channel0_1": (1, CPU1)}, SESSION_KERNEL_UUID)
write_trace(os.path.join(SESSION_OUT, "ust", "uid", "1000", "64-bit"), metadata(SESSION_UST_UUID, UST_ENV, UST_EVENTS),
            {"channel0_0": (0, UST_CPU0)}, SESSION_UST_UUID)
