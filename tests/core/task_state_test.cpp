#include <gtest/gtest.h>

#include "core/task_state.h"

using core::PrevStateEncoding;
using core::TaskState;

TEST(TaskState, Letters) {
  EXPECT_EQ(core::taskStateFromLetters("R"), TaskState::RunnablePreempted);
  EXPECT_EQ(core::taskStateFromLetters("R+"), TaskState::RunnablePreempted);
  EXPECT_EQ(core::taskStateFromLetters("S"), TaskState::Sleeping);
  EXPECT_EQ(core::taskStateFromLetters("D"), TaskState::Blocked);
  EXPECT_EQ(core::taskStateFromLetters("D|K"), TaskState::Blocked);
  EXPECT_EQ(core::taskStateFromLetters("I"), TaskState::Idle);
  EXPECT_EQ(core::taskStateFromLetters("X"), TaskState::Dead);
  EXPECT_EQ(core::taskStateFromLetters("Z"), TaskState::Dead);
  EXPECT_EQ(core::taskStateFromLetters("x"), TaskState::Dead);
  EXPECT_EQ(core::taskStateFromLetters("P"), TaskState::Parked);
  EXPECT_FALSE(core::taskStateFromLetters("?").has_value());
  EXPECT_FALSE(core::taskStateFromLetters("").has_value());
}

// Linux 4.14+ (TASK_REPORT bits): include/trace/events/sched.h __trace_sched_switch_state.
TEST(TaskState, RawReport414) {
  const auto e = PrevStateEncoding::Report414;
  EXPECT_EQ(core::taskStateFromRaw(0, e), TaskState::RunnablePreempted);
  EXPECT_EQ(core::taskStateFromRaw(0x100, e), TaskState::RunnablePreempted);
  EXPECT_EQ(core::taskStateFromRaw(1, e), TaskState::Sleeping);
  EXPECT_EQ(core::taskStateFromRaw(2, e), TaskState::Blocked);
  EXPECT_EQ(core::taskStateFromRaw(0x10, e), TaskState::Dead);
  EXPECT_EQ(core::taskStateFromRaw(0x20, e), TaskState::Dead);
  EXPECT_EQ(core::taskStateFromRaw(0x40, e), TaskState::Parked);
  EXPECT_EQ(core::taskStateFromRaw(0x80, e), TaskState::Idle);
}

// Pre-4.14 raw task->state, as in lisa's trace.txt (4096 preempted, 64 TASK_DEAD, 130 D|K).
TEST(TaskState, RawLegacy) {
  EXPECT_EQ(core::guessPrevStateEncoding(0 | 1 | 2 | 64 | 130 | 4096), PrevStateEncoding::Legacy);
  EXPECT_EQ(core::guessPrevStateEncoding(0 | 1 | 2 | 0x100 | 0x80), PrevStateEncoding::Report414);
  const auto e = PrevStateEncoding::Legacy;
  EXPECT_EQ(core::taskStateFromRaw(4096, e), TaskState::RunnablePreempted);
  EXPECT_EQ(core::taskStateFromRaw(2048, e), TaskState::RunnablePreempted);
  EXPECT_EQ(core::taskStateFromRaw(64, e), TaskState::Dead);
  EXPECT_EQ(core::taskStateFromRaw(130, e), TaskState::Blocked);
  EXPECT_EQ(core::taskStateFromRaw(1, e), TaskState::Sleeping);
  EXPECT_EQ(core::taskStateFromRaw(512, e), TaskState::Parked);
  EXPECT_EQ(core::taskStateFromRaw(0x402, e), TaskState::Idle);  // TASK_IDLE = D | NOLOAD (4.2..4.13)
}
