// CPU helpers shared by the placement experiments of this folder (each is one
// .c file, compiled alone; this header sits beside them).
#pragma once
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

// The getcpu system call: glibc's sched_getcpu() reads the rseq area, which a
// CLONE_VM or vfork child shares with its parent and would report its CPU.
static inline unsigned current_cpu(void) {
  unsigned cpu = 0;
  syscall(SYS_getcpu, &cpu, NULL, NULL);
  return cpu;
}

// Lets the calling thread run on `cpu` only, or on CPUs 0 and 1 when it is -1.
static inline void allow(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu < 0) {
    CPU_SET(0, &set);
    CPU_SET(1, &set);
  } else {
    CPU_SET(cpu, &set);
  }
  sched_setaffinity(0, sizeof set, &set);
}
