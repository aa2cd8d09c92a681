// Line tokenizer and payload parsers: every layout of the TASK-PID / CPU /
// flags / timestamp columns, with lines copied from real traces (tracefs on
// Linux 6.18, trace-cmd 3.1.6, Android atrace, catapult systrace, LISA).
#include <gtest/gtest.h>

#include "core/sched_builder.h"
#include "importers/ftrace/ftrace_line_tokenizer.h"

using namespace importers::ftrace;

TEST(FtraceTokenizer, TracefsLineWithIrqFlags) {
  LineFields f;
  ASSERT_TRUE(tokenizeLine(
      "            bash-10709   [000] dN.2.   285.242734: sched_wakeup_new: comm=bash pid=10711 prio=120 target_cpu=000",
      f));
  EXPECT_EQ(f.comm, "bash");
  EXPECT_EQ(f.tid, 10709);
  EXPECT_EQ(f.tgid, -1);
  EXPECT_EQ(f.cpu, 0);
  EXPECT_TRUE(f.hasFlags);
  EXPECT_EQ(f.irq, 0);
  EXPECT_EQ(f.ts, 285242734000);
  EXPECT_EQ(f.form, NameForm::Event);
  EXPECT_EQ(f.name, "sched_wakeup_new");
  EXPECT_EQ(f.payload, "comm=bash pid=10711 prio=120 target_cpu=000");
}

TEST(FtraceTokenizer, IrqColumnGivesTheContext) {
  LineFields f;
  ASSERT_TRUE(tokenizeLine("  ls-13780   [001] dNs3.   902.121247: sched_waking: comm=rcu_preempt pid=15", f));
  EXPECT_EQ(f.irq, core::kCtxSoftIrq);
  ASSERT_TRUE(tokenizeLine("          <idle>-0     [000] d.h5  1212.465297: sched_wakeup: comm=adbd pid=212", f));
  EXPECT_EQ(f.irq, core::kCtxHardIrq);
  EXPECT_EQ(f.comm, "<idle>");
  EXPECT_EQ(f.tid, 0);
  ASSERT_TRUE(tokenizeLine("          <idle>-0     [000] dNH4.  12.000001: sched_wakeup: comm=a pid=2", f));
  EXPECT_EQ(f.irq, core::kCtxHardIrq | core::kCtxSoftIrq);
  ASSERT_TRUE(tokenizeLine("           <...>-4083  [004] ....   395.705673: sys_rt_sigprocmask -> 0x0", f));
  EXPECT_EQ(f.irq, 0);
  EXPECT_EQ(f.comm, "<...>");
}

TEST(FtraceTokenizer, LineWithoutIrqFlags) {
  LineFields f;
  ASSERT_TRUE(tokenizeLine("          rec.sh-8518    [001]    548.722727: sched_process_fork: comm=rec.sh pid=8518", f));
  EXPECT_FALSE(f.hasFlags);
  EXPECT_EQ(f.cpu, 1);
  EXPECT_EQ(f.ts, 548722727000);
  EXPECT_EQ(f.name, "sched_process_fork");
  // Legacy systrace: no flags column, five-digit seconds.
  ASSERT_TRUE(tokenizeLine(" WebViewCoreThre-11043 [000] 50260.648275: sched_switch: prev_comm=WebViewCoreThre", f));
  EXPECT_EQ(f.comm, "WebViewCoreThre");
  EXPECT_EQ(f.tid, 11043);
  EXPECT_EQ(f.ts, 50260648275000);
}

TEST(FtraceTokenizer, TgidColumn) {
  LineFields f;
  ASSERT_TRUE(tokenizeLine("com.google.android.youtube-23071 (23071) [002] d..5 214168.479892: sched_wakeup: comm=x pid=1", f));
  EXPECT_EQ(f.comm, "com.google.android.youtube");
  EXPECT_EQ(f.tid, 23071);
  EXPECT_EQ(f.tgid, 23071);
  EXPECT_EQ(f.cpu, 2);
  ASSERT_TRUE(tokenizeLine("Binder:549_4-2029  (  549) [001] dn.4 214168.480452: sched_wakeup: comm=EventThread pid=654", f));
  EXPECT_EQ(f.comm, "Binder:549_4");
  EXPECT_EQ(f.tgid, 549);
  ASSERT_TRUE(tokenizeLine("          <idle>-0     (-----) [001] d..3 214168.479898: sched_switch: prev_comm=swapper/1", f));
  EXPECT_EQ(f.tgid, -1);
  EXPECT_EQ(f.tid, 0);
}

TEST(FtraceTokenizer, CommsWithDashesSpacesAndColonsSplitAtTheLastDash) {
  LineFields f;
  ASSERT_TRUE(tokenizeLine(" irq/409-inv_irq-99    [000] 50260.767491: sched_switch: prev_comm=irq/409-inv_irq", f));
  EXPECT_EQ(f.comm, "irq/409-inv_irq");
  EXPECT_EQ(f.tid, 99);
  ASSERT_TRUE(tokenizeLine("  Binder thread #-3-12345 [003] d..2. 10.000000: sched_switch: x", f));
  EXPECT_EQ(f.comm, "Binder thread #-3");
  EXPECT_EQ(f.tid, 12345);
  ASSERT_TRUE(tokenizeLine("   kworker/u12:1-46    [002]    76.211715: sched_switch:          prev_comm=kworker/u12:1", f));
  EXPECT_EQ(f.comm, "kworker/u12:1");
  EXPECT_EQ(f.payload, "prev_comm=kworker/u12:1");
  // A comm holding ": " only moves the search for the timestamp on.
  ASSERT_TRUE(tokenizeLine("  odd: name-77 [000] .... 5.5: sched_waking: comm=a pid=1", f));
  EXPECT_EQ(f.comm, "odd: name");
  EXPECT_EQ(f.tid, 77);
  EXPECT_EQ(f.ts, 5500000000);
}

TEST(FtraceTokenizer, LatencyLayout) {
  LineFields f;
  // tracefs with options/latency-format: "%8.8s-%-7d %3d" then the flags, then microseconds.
  ASSERT_TRUE(tokenizeLine("  rec.sh-8532      1d..2. 45135us+: sched_wakeup_new: comm=rec.sh pid=8537 prio=120", f));
  EXPECT_EQ(f.comm, "rec.sh");
  EXPECT_EQ(f.tid, 8532);
  EXPECT_EQ(f.cpu, 1);
  EXPECT_TRUE(f.relativeUs);
  EXPECT_EQ(f.ts, 45135000);
  ASSERT_TRUE(tokenizeLine("memfd:se-5205      0d..2. 47498us!: sched_switch: prev_comm=memfd:sealed-91", f));
  EXPECT_EQ(f.comm, "memfd:se");
  EXPECT_EQ(f.cpu, 0);
  ASSERT_TRUE(tokenizeLine("  <idle>-0         0d.h3. 47419us : sched_waking: comm=memfd:sealed-91 pid=5205", f));
  EXPECT_EQ(f.irq, core::kCtxHardIrq);
  EXPECT_EQ(f.ts, 47419000);
  // trace-cmd report -l: latency columns, absolute seconds.
  ASSERT_TRUE(tokenizeLine("   sleep-8630    1dN.4.   555.697896: sched_wakeup:         migration/1:21 [0] CPU:001", f));
  EXPECT_FALSE(f.relativeUs);
  EXPECT_EQ(f.cpu, 1);
  EXPECT_EQ(f.ts, 555697896000);
  EXPECT_EQ(f.payload, "migration/1:21 [0] CPU:001");
  // Microseconds past what nanoseconds in 64 bits hold (found by the fuzzer):
  // not a line, and no overflow (UBSan in the ASan suite).
  EXPECT_FALSE(tokenizeLine("  rec.sh-8532      1d..2. 777777777777751957us+: sched_switch: prev_comm=rec.sh", f));
  EXPECT_TRUE(tokenizeLine("  rec.sh-8532      1d..2. 9223372036854775us+: sched_switch: prev_comm=rec.sh", f));
  EXPECT_EQ(f.ts, 9223372036854775000);
}

TEST(FtraceTokenizer, SyscallFunctionAndMarkerForms) {
  LineFields f;
  ASSERT_TRUE(tokenizeLine("           xfwm4-3252  [005] ....   395.705680: sys_recvmsg(fd: 3, msg: 7ffe3ce41670, flags: 0)", f));
  EXPECT_EQ(f.form, NameForm::SyscallEnter);
  EXPECT_EQ(f.name, "sys_recvmsg");
  ASSERT_TRUE(tokenizeLine("           xfwm4-3252  [005] ....   395.705681: sys_recvmsg -> 0xfffffffffffffff5", f));
  EXPECT_EQ(f.form, NameForm::SyscallExit);
  EXPECT_EQ(f.payload, "0xfffffffffffffff5");
  ASSERT_TRUE(tokenizeLine("            bash-1  [000] ....   1.000001: do_sys_open <-do_syscall_64", f));
  EXPECT_EQ(f.form, NameForm::Function);
  EXPECT_EQ(f.name, "do_sys_open");
  ASSERT_TRUE(tokenizeLine("  SurfaceFlinger-236   [000] 50265.647620: 0: B|124|onMessageReceived", f));
  EXPECT_EQ(f.name, "0");
  EXPECT_EQ(f.payload, "B|124|onMessageReceived");
}

TEST(FtraceTokenizer, RejectsWhatIsNotAnEventLine) {
  LineFields f;
  for (std::string_view line :
       {"", "# tracer: nop", "#P:2", "version = 6", "cpus=6", "CPU:0 [LOST 3 EVENTS]", "hello world",
        "bash-12 [000] 1.0: ", "bash-12 [000] 1.0:sched_switch", "bash 12 [000] 1.0: sched_switch: x",
        "            perf 19790 [000]   811.591691:       sched:sched_waking: comm=migration/0",
        "bash-12 [0x0] 1.0: sched_switch: x", "bash-12 [000] 1.0x: sched_switch: x", "-12 [000] .: a:"}) {
    EXPECT_FALSE(tokenizeLine(line, f)) << line;
  }
}

TEST(FtraceTokenizer, SecondsToNanosecondsIsExact) {
  EXPECT_EQ(parseSecondsToNs("285.770047"), 285770047000);
  EXPECT_EQ(parseSecondsToNs("214168.479892"), 214168479892000);
  EXPECT_EQ(parseSecondsToNs("1.123456789"), 1123456789);
  EXPECT_EQ(parseSecondsToNs("0.0"), 0);
  EXPECT_EQ(parseSecondsToNs("12.5"), 12500000000);
  EXPECT_EQ(parseSecondsToNs("1234"), 1234000000000);
  EXPECT_EQ(parseSecondsToNs("9007199254.740993"), 9007199254740993000);  // beyond a double's exact range
  EXPECT_FALSE(parseSecondsToNs(""));
  EXPECT_FALSE(parseSecondsToNs(".5"));
  EXPECT_FALSE(parseSecondsToNs("12a"));
  EXPECT_FALSE(parseSecondsToNs("99999999999999.0"));
}

TEST(FtraceTokenizer, LostEventsLines) {
  auto lost = parseLostEventsLine("CPU:3 [LOST 120 EVENTS]");
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->cpu, 3);
  EXPECT_EQ(lost->count, 120);
  lost = parseLostEventsLine("CPU:2 [77 EVENTS DROPPED]");
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->count, 77);
  lost = parseLostEventsLine("CPU:1 [EVENTS DROPPED]");
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->count, -1);
  EXPECT_FALSE(parseLostEventsLine("CPU:1 [LOST EVENTS]"));
  EXPECT_FALSE(parseLostEventsLine("CPU 1 is empty"));
}

TEST(FtracePayload, SwitchKernelFormatWithSpacesInComms) {
  SwitchFields s;
  ASSERT_TRUE(parseSwitch("prev_comm=Binder thread prev_pid=12 prev_prio=120 prev_state=D|K ==> next_comm=swapper/0 "
                          "next_pid=0 next_prio=120",
                          s));
  EXPECT_EQ(s.prevComm, "Binder thread");
  EXPECT_EQ(s.prevTid, 12);
  EXPECT_EQ(s.prevPrio, 120);
  EXPECT_EQ(s.prevState, "D|K");
  EXPECT_EQ(s.stateForm, StateForm::Letters);
  EXPECT_EQ(s.nextComm, "swapper/0");
  EXPECT_EQ(s.nextTid, 0);
  EXPECT_EQ(s.nextPrio, 120);
}

TEST(FtracePayload, SwitchRawFieldStyle) {
  SwitchFields s;
  ASSERT_TRUE(parseSwitch("prev_comm=trace-cmd prev_pid=1701 prev_prio=120 prev_state=64 next_comm=swapper/1 "
                          "next_pid=0 next_prio=120",
                          s));
  EXPECT_EQ(s.prevComm, "trace-cmd");
  EXPECT_EQ(s.prevState, "64");
  EXPECT_EQ(s.stateForm, StateForm::Raw);
  EXPECT_EQ(s.nextComm, "swapper/1");
  EXPECT_EQ(parseRawState("4096"), 4096u);
  EXPECT_EQ(parseRawState("0x80"), 128u);
  EXPECT_FALSE(parseRawState("R+"));
}

TEST(FtracePayload, SwitchPluginStyle) {
  SwitchFields s;
  ASSERT_TRUE(parseSwitch("kworker/u12:1:46 [120] W ==> swapper/0:0 [120]", s));
  EXPECT_EQ(s.prevComm, "kworker/u12:1");
  EXPECT_EQ(s.prevTid, 46);
  EXPECT_EQ(s.prevPrio, 120);
  EXPECT_EQ(s.prevState, "W");
  EXPECT_EQ(s.stateForm, StateForm::PluginLetters);
  EXPECT_EQ(s.nextComm, "swapper/0");
  EXPECT_EQ(s.nextTid, 0);
  // The plugin's letters are bits of "SDTtZXxW": W is 0x80, TASK_REPORT_IDLE on 4.14+.
  EXPECT_EQ(pluginLettersToRaw("W"), 128u);
  EXPECT_EQ(pluginLettersToRaw("D|W"), 130u);
  EXPECT_EQ(pluginLettersToRaw("R"), 0u);
  EXPECT_EQ(core::taskStateFromRaw(*pluginLettersToRaw("W"), core::PrevStateEncoding::Report414), core::TaskState::Idle);
  EXPECT_FALSE(pluginLettersToRaw("Q"));
  EXPECT_FALSE(parseSwitch("[FAILED TO PARSE] prev_comm=x", s));
}

// A SCHED_DEADLINE task's prio is -1 (MAX_DL_PRIO - 1) in every event that
// carries one, so "no prio field" must be told apart from it.
TEST(FtracePayload, DeadlinePrioIsKeptAndAMissingOneIsUnknown) {
  SwitchFields s;
  ASSERT_TRUE(
      parseSwitch("prev_comm=dl prev_pid=7 prev_prio=-1 prev_state=S ==> next_comm=b next_pid=8 next_prio=120", s));
  EXPECT_EQ(s.prevPrio, -1);
  ASSERT_TRUE(parseSwitch("dl:7 [-1] S ==> b:8 [120]", s));
  EXPECT_EQ(s.prevPrio, -1);
  ASSERT_TRUE(parseSwitch("prev_comm=a prev_pid=7 prev_state=S ==> next_comm=b next_pid=8", s));
  EXPECT_EQ(s.prevPrio, core::kPrioUnknown);
  EXPECT_EQ(s.nextPrio, core::kPrioUnknown);
  WakeFields w;
  ASSERT_TRUE(parseWake("comm=dl pid=7 prio=-1 target_cpu=000", w));
  EXPECT_EQ(w.prio, -1);
  ASSERT_TRUE(parseWake("comm=a pid=7 target_cpu=000", w));
  EXPECT_EQ(w.prio, core::kPrioUnknown);
}

TEST(FtracePayload, Wakeups) {
  WakeFields w;
  ASSERT_TRUE(parseWake("comm=sh pid=1642 prio=120 success=1 target_cpu=2", w));
  EXPECT_EQ(w.comm, "sh");
  EXPECT_EQ(w.tid, 1642);
  EXPECT_EQ(w.prio, 120);
  EXPECT_EQ(w.targetCpu, 2);
  ASSERT_TRUE(parseWake("comm=memfd:sealed-91 pid=5205 prio=120 target_cpu=000", w));
  EXPECT_EQ(w.comm, "memfd:sealed-91");
  EXPECT_EQ(w.targetCpu, 0);
  ASSERT_TRUE(parseWake("migration/1:21 [0] CPU:001", w));
  EXPECT_EQ(w.comm, "migration/1");
  EXPECT_EQ(w.tid, 21);
  EXPECT_EQ(w.prio, 0);
  EXPECT_EQ(w.targetCpu, 1);
  ASSERT_TRUE(parseWake("bash:8630 [120] success=1 CPU:003", w));
  EXPECT_EQ(w.tid, 8630);
  EXPECT_EQ(w.targetCpu, 3);
  EXPECT_FALSE(parseWake("pid=3", w));
}

TEST(FtracePayload, TaskLifecycle) {
  ForkFields k;
  ASSERT_TRUE(parseFork("comm=bash pid=10709 child_comm=bash child_pid=10711", k));
  EXPECT_EQ(k.parentTid, 10709);
  EXPECT_EQ(k.childTid, 10711);
  ASSERT_TRUE(parseFork("parent_comm=bash parent_pid=8628 child_comm=bash child_pid=8630", k));
  EXPECT_EQ(k.parentComm, "bash");
  EXPECT_EQ(k.childTid, 8630);
  ExecFields e;
  ASSERT_TRUE(parseExec("filename=/usr/bin/sleep pid=8630 old_pid=8630", e));
  EXPECT_EQ(e.filename, "/usr/bin/sleep");
  EXPECT_EQ(e.tid, 8630);
  ExitFields x;
  ASSERT_TRUE(parseExit("comm=sleep pid=8630 prio=120 group_dead=true", x));
  EXPECT_EQ(x.comm, "sleep");
  EXPECT_EQ(x.prio, 120);
  RenameFields r;
  ASSERT_TRUE(parseRename("pid=8523 oldcomm=rec.sh newcomm=sleep oom_score_adj=0", r));
  EXPECT_EQ(r.tid, 8523);
  EXPECT_EQ(r.oldComm, "rec.sh");
  EXPECT_EQ(r.newComm, "sleep");
  MigrateFields m;
  ASSERT_TRUE(parseMigrate("comm=bash pid=10711 prio=120 orig_cpu=0 dest_cpu=1", m));
  EXPECT_EQ(m.tid, 10711);
  EXPECT_EQ(m.origCpu, 0);
  EXPECT_EQ(m.destCpu, 1);
}
