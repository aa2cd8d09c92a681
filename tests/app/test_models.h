// Synthetic models for the app tests: an SMT machine with core-scheduling
// forced idle, cookies and lost data; and dense traces for level-of-detail checks.
#pragma once

#include <memory>

#include "core/trace_model.h"

namespace apptest {

/// 2 cores x 2 threads (CPUs 0,1 on core 0; 2,3 on core 1). Tasks t101..t104
/// carry cookies 1,1,2,2. CPU 1 is forced idle in [100 us, 200 us); CPU 3 lost
/// events in [300 us, 400 us); t105 is woken by t101 at 150 us and runs on CPU 2
/// from 250 us. The trace ends at 500 us.
std::shared_ptr<core::TraceModel> smtModel();

/// `slicesPerCpu` task slices of 1..3 us (two tasks alternating, with a short
/// idle every 7th slice and a 2 ms slice every 5000th) on each of `cpus` CPUs.
std::shared_ptr<core::TraceModel> denseModel(int slicesPerCpu, int cpus = 2);

/// One CPU, t10 running over [0, 1000 us]. t10 writes atrace "outer" over
/// [100, 600) us with "inner" nested in it over [200, 300) us. CPU 0 is at
/// 1 GHz from 0 and 2 GHz from 500 us (told again at 700 us); it leaves idle (cpu_idle -1) at 0 and
/// enters state 1 at 800 us.
std::shared_ptr<core::TraceModel> powerAndMarksModel();
/// The task identity of `tid` (the last, if the tid was reused); invalid if none.
core::Utid utidOfTid(const core::TraceModel& model, int tid);

/// One CPU, t10 running over [0, 1000 us], with its sched_entity's PELT
/// signals as sched_load_se gives them: util 100 from 0, 300 from 400 us,
/// 200 from 800 us; load 512 from 0 and 1024 from 400 us. CPU 0's root cfs_rq
/// has util 50 from 0 (a CPU signal: not one of t10's lines).
std::shared_ptr<core::TraceModel> taskPeltModel();
/// 2 sockets x 8 cores x 2 threads with 4 LLCs ("2s:8c:2t:4l": CPUs 0-7,
/// 8-15, 16-23, 24-31 share an LLC; 0-15 are package and node 0). From 0 to
/// 1000 us (relative; absolute ts = 1000 + relative): CPUs 0-7 run t1000+c
/// throughout, CPUs 8-15 run t1000+c for the first 500 us, CPUs 16-31 idle.
/// t2000 is woken onto CPU 0 at 200 us and waits there to the end.
std::shared_ptr<core::TraceModel> bigMachineModel();

}  // namespace apptest
