#include "test_models.h"

#include "support/trace_builder.h"

namespace apptest {

using testing_support::TraceBuilder;

std::shared_ptr<core::TraceModel> smtModel() {
  TraceBuilder tb;
  tb.builder().setTopology(core::Topology::uniform(2, 2, "test"));
  tb.builder().setFormat("synthetic");
  tb.builder().addSourceFile("/synthetic/smt.trace");
  tb.sw(1000, 0, 0, "R", 101).sw(1000, 1, 0, "R", 102).sw(1000, 2, 0, "R", 103).sw(1000, 3, 0, "R", 104);
  tb.builder().setTaskAttributes(101, 1, -1, -1);
  tb.builder().setTaskAttributes(102, 1, -1, -1);
  tb.builder().setTaskAttributes(103, 2, -1, -1);
  tb.builder().setTaskAttributes(104, 2, 0, 512);
  // CPU 1: t102 sleeps; core scheduling keeps the sibling idle (no cookie-1 task runnable).
  {
    core::SwitchArgs a;
    a.prevTid = 102;
    a.prevComm = "t102";
    a.prevPrio = 120;
    a.prevState = core::TaskState::Sleeping;
    a.nextTid = 0;
    a.nextComm = "swapper";
    a.nextPrio = 120;
    a.forcedIdle = true;
    tb.builder().countEvent(tb.builder().eventType("sched_switch"));
    tb.builder().onSwitch({100000, 1, 102, 0}, a);
  }
  tb.waking(150000, 0, 101, 105, 2);
  tb.waking(190000, 0, 101, 102, 1);
  tb.sw(200000, 1, 0, "R", 102);
  tb.sw(250000, 2, 103, "R+", 105);
  tb.other(299000, 3, 104);
  tb.loss(3, 400000, 12);
  tb.sw(420000, 3, 104, "S", 0);
  tb.sw(450000, 2, 105, "S", 103);
  tb.other(500000, 0, 101).other(500000, 1, 102).other(500000, 2, 103).other(500000, 3, 0);
  return tb.build();
}

std::shared_ptr<core::TraceModel> powerAndMarksModel() {
  TraceBuilder tb;
  tb.builder().setFormat("synthetic");
  tb.builder().addSourceFile("/synthetic/marks.trace");
  core::SchedBuilder& b = tb.builder();
  tb.sw(0, 0, 0, "R", 10);
  b.onCpuFrequency({0, 0, 10, 0}, 0, 1'000'000);
  b.onCpuIdle({0, 0, 10, 0}, 0, core::kIdleStateRunning);
  b.onUserMark({100000, 0, 10, 0}, 10, "B|10|outer");
  b.onUserMark({200000, 0, 10, 0}, 10, "B|10|inner");
  b.onUserMark({300000, 0, 10, 0}, 10, "E|10");
  b.onCpuFrequency({500000, 0, 10, 0}, 0, 2'000'000);
  b.onUserMark({600000, 0, 10, 0}, 10, "E|10");
  b.onCpuFrequency({700000, 0, 10, 0}, 0, 2'000'000);  // a repeat: no new step
  b.onCpuIdle({800000, 0, 10, 0}, 0, 1);
  tb.other(1000000, 0, 10);
  return tb.build();
}

core::Utid utidOfTid(const core::TraceModel& model, int tid) {
  core::Utid found;
  for (size_t u = 0; u < model.threadCount(); ++u)
    if (model.threads.tid[u] == tid) found = core::Utid(static_cast<uint32_t>(u));
  return found;
}

std::shared_ptr<core::TraceModel> taskPeltModel() {
  TraceBuilder tb;
  tb.builder().setFormat("synthetic");
  tb.builder().addSourceFile("/synthetic/pelt.trace");
  core::SchedBuilder& b = tb.builder();
  using core::CounterKind;
  tb.sw(0, 0, 0, "R", 10);
  b.onPelt({0, 0, 10, 0}, CounterKind::Utilisation, 0, -1, {}, 50);
  b.onPelt({0, 0, 10, 0}, CounterKind::PeltLoad, 0, 10, "t10", 512);
  b.onPelt({0, 0, 10, 0}, CounterKind::Utilisation, 0, 10, "t10", 100);
  b.onPelt({400000, 0, 10, 0}, CounterKind::PeltLoad, 0, 10, "t10", 1024);
  b.onPelt({400000, 0, 10, 0}, CounterKind::Utilisation, 0, 10, "t10", 300);
  b.onPelt({800000, 0, 10, 0}, CounterKind::Utilisation, 0, 10, "t10", 200);
  tb.other(1000000, 0, 10);
  return tb.build();
}

std::shared_ptr<core::TraceModel> denseModel(int slicesPerCpu, int cpus) {
  TraceBuilder tb;
  tb.builder().setFormat("synthetic");
  tb.builder().addSourceFile("/synthetic/dense.trace");
  int64_t ts = 1000;
  std::vector<int> cur(static_cast<size_t>(cpus), 0);
  // Every CPU switches at the same instants, so events stay in timestamp order.
  for (int i = 0; i < slicesPerCpu; ++i) {
    for (int c = 0; c < cpus; ++c) {
      int& running = cur[static_cast<size_t>(c)];
      const int next = i % 7 == 6 ? 0 : 200 + c * 10 + (i % 2);
      tb.sw(ts, c, running, running == 0 ? "R" : (i % 3 ? "S" : "R+"), next);
      running = next;
    }
    ts += (i % 5000 == 4999) ? 2000000 : 1000 + (i * 7919) % 2000;
  }
  for (int c = 0; c < cpus; ++c) tb.other(ts, c, cur[static_cast<size_t>(c)]);
  return tb.build();
}

std::shared_ptr<core::TraceModel> bigMachineModel() {
  TraceBuilder tb;
  auto topology = core::Topology::parseSpec("2s:8c:2t:4l");
  tb.builder().setTopology(*topology);
  tb.builder().setFormat("synthetic");
  tb.builder().addSourceFile("/synthetic/big.trace");
  for (int c = 0; c < 16; ++c) tb.sw(1000, c, 0, "R", 1000 + c);
  tb.waking(201000, 0, 1000, 2000, 0);
  for (int c = 8; c < 16; ++c) tb.sw(501000, c, 1000 + c, "S", 0);
  for (int c = 0; c < 32; ++c) tb.other(1001000, c, c < 8 ? 1000 + c : 0);
  return tb.build();
}

}  // namespace apptest
