// Where does the kernel wake a task whose previous CPU is idle, when the
// waker runs on another, busy CPU? Upstream fair.c has one answer on a machine
// whose CPUs share a cache: on the previous CPU. wake_affine_idle() returns
// prev_cpu when available_idle_cpu(prev_cpu), and select_idle_sibling() returns
// prev before it looks anywhere else. A wakee that lands on the waker's busy
// CPU means the kernel did not count its idle previous CPU as available: a
// placement rule beyond upstream's, or an idle vCPU that the hypervisor reports
// as preempted (vcpu_is_preempted()). docs/models.md §5.5 and §8.3 use it.
//
// The sleeper runs on A (CPU 0) and then waits, with every CPU allowed, so A
// goes idle; a spinner pinned to B (CPU 1) wakes it after a delay, by
// FUTEX_WAKE (a wakeup without WF_SYNC) or by a pipe write (WF_SYNC, where
// wake_affine_idle() picks the waker's CPU and select_idle_sibling() still
// returns the idle prev); the sleeper reports the CPU it wakes on (getcpu).
//
//   cc -O2 -pthread -o idle-prev-wakeup tools/experiments/idle-prev-wakeup.c && ./idle-prev-wakeup
//
// Run it on an otherwise idle machine. On the 2-vCPU guest that recorded the
// fidelity set of 2026-12-04 (Linux 6.18.44-fc-v1252, whose kernel command
// line and sysctl set kernel.sched_vcpu_pack=15, which upstream does not
// have), two runs, 40 wakeups per line: woken on A 40/40 for both kinds of
// wakeup and every delay (20 us, 100 us, 500 us, 2 ms, 10 ms): 800 of 800,
// as upstream places them.
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpus.h"

enum { kTrials = 40 };

static atomic_int g_word;        // the futex: 0 asleep, 1 woken
static atomic_int g_asleep;      // the sleeper is about to wait
static atomic_long g_delay_ns;
static atomic_int g_quit;
static atomic_int g_use_pipe;  // wake by a pipe write (WF_SYNC) instead of FUTEX_WAKE
static int g_pipe[2];

static long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void* waker(void* arg) {
  (void)arg;
  allow(1);
  while (!atomic_load(&g_quit)) {  // spins on B throughout: B is never idle
    if (!atomic_load(&g_asleep)) continue;
    const long since = now_ns();
    while (now_ns() - since < atomic_load(&g_delay_ns)) {
    }
    atomic_store(&g_asleep, 0);
    if (atomic_load(&g_use_pipe)) {
      const char byte = 1;
      if (write(g_pipe[1], &byte, 1) != 1) exit(1);
      continue;
    }
    atomic_store(&g_word, 1);
    syscall(SYS_futex, &g_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  }
  return NULL;
}

static void run_case(long delay_us, int use_pipe) {
  int on_a = 0, on_b = 0;
  atomic_store(&g_delay_ns, delay_us * 1000L);
  atomic_store(&g_use_pipe, use_pipe);
  for (int i = 0; i < kTrials; ++i) {
    allow(0);  // run on A ...
    usleep(2000);
    allow(-1);  // ... and may be woken anywhere
    atomic_store(&g_word, 0);
    atomic_store(&g_asleep, 1);
    if (use_pipe) {
      char byte;
      if (read(g_pipe[0], &byte, 1) != 1) exit(1);
    } else {
      while (atomic_load(&g_word) == 0) syscall(SYS_futex, &g_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    }
    if (current_cpu() == 0)
      ++on_a;
    else
      ++on_b;
  }
  printf("%-10s A idle %5ld us before the wakeup -> woken on A (its idle previous CPU) %2d/%d, on B (the waker's) %2d/%d\n",
         use_pipe ? "pipe" : "futex", delay_us, on_a, kTrials, on_b, kTrials);
}

int main(void) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    fprintf(stderr, "idle-prev-wakeup: needs CPUs 0 and 1\n");
    return 2;
  }
  if (pipe(g_pipe) != 0) return 1;
  pthread_t t;
  if (pthread_create(&t, NULL, waker, NULL) != 0) return 1;
  usleep(100000);
  const long delays_us[] = {20, 100, 500, 2000, 10000};
  for (int use_pipe = 0; use_pipe <= 1; ++use_pipe)
    for (size_t i = 0; i < sizeof delays_us / sizeof delays_us[0]; ++i) run_case(delays_us[i], use_pipe);
  atomic_store(&g_quit, 1);
  pthread_join(t, NULL);
  return 0;
}
