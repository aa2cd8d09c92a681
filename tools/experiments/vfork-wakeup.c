// Does a vfork parent, woken by its child's exec, preempt that child at once?
// The experiment behind "builds' wakeup latency p99" (docs/models.md 8.3):
// make and g++ vfork their children, and in a recorded build a quarter of
// those parents waited for a tick behind the child they had just made.
//
// A new process (forked as make forks g++), pinned to CPU 1 with its parent
// and children, runs SPIN us of CPU and then vforks; the child execs this
// program again, which notes when its new image started (CLOCK_MONOTONIC,
// through a pipe) and spins 20 ms. The parent notes when it resumed from
// vfork. Resumed before the new image started: the parent preempted the
// child at its exec (the wakeup). Resumed later: it waited behind the child,
// by the time given. 40 rounds per SPIN, each after a 20 ms sleep.
//
//   cc -O2 -o vfork-wakeup tools/experiments/vfork-wakeup.c && ./vfork-wakeup [--sleep-first]
//
// --sleep-first: the new process sleeps 5 ms before it runs, so that the CPU
// idles and the process that forked it, queued still if it slept not
// eligible (DELAY_DEQUEUE), leaves the queue at the idle pick.
//
// Run it on an otherwise idle machine. On Linux 6.18.44-fc-v1272 (2 vCPUs,
// AMD EPYC), 2026-12-07, preempted / waited of 40 (the waits 2.3-2.7 ms on
// average: to the child's next tick):
//   parent ran    0 us: 40 / 0        parent ran  800 us:  1 / 39
//   parent ran  100 us:  0 / 40       parent ran 1000 us:  3 / 37
//   parent ran  300 us:  0 / 40       parent ran 1300 us:  6 / 34
//   parent ran  500 us:  0 / 40       parent ran 2000 us: 13 / 27
//   parent ran  650 us:  0 / 40
// Recorded with ../shared/tools/record-sched-trace (tracedat) and replayed on
// one CPU (`--topology 1x1`: the trace carries no affinity), the baseline
// gets 0 us wrong the other way (0 preempted of 37) and from 500 us on lets
// the parent preempt in 16-30 of 40 (docs/models.md 8.3, "builds' wakeup
// latency p99"); tools/experiments/busy-cpu-wakeup-waits.py
// --by-parent-runtime counts both.
// With --sleep-first the kernel lets the parent preempt at every spin (40 of
// 40 each), and the replay does as the trace shows (335 of the 336 rounds up
// to 1.3 ms in both): the difference lies in the queued grandparent.
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void spin_us(long long us) {
  const long long end = now_ns() + us * 1000;
  while (now_ns() < end) {
  }
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) {
    const long long started = now_ns();
    const int fd = atoi(argv[2]);
    if (write(fd, &started, sizeof started) != sizeof started) return 1;
    spin_us(20000);
    return 0;
  }
  const int sleep_first = argc == 2 && strcmp(argv[1], "--sleep-first") == 0;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(1, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    perror("sched_setaffinity");
    return 1;
  }
  static const int spins[] = {0, 100, 300, 500, 650, 800, 1000, 1300, 2000};
  for (size_t s = 0; s < sizeof spins / sizeof spins[0]; ++s) {
    int preempted = 0, waited = 0;
    long long waited_ns = 0;
    for (int round = 0; round < 40; ++round) {
      int p[2];
      if (pipe(p) != 0) return 1;
      char fd[16];
      snprintf(fd, sizeof fd, "%d", p[1]);
      int r[2];
      if (pipe(r) != 0) return 1;
      usleep(20000);
      // The vforking parent is itself new, as g++ is when make starts it.
      const pid_t middle = fork();
      if (middle == 0) {
        if (sleep_first) usleep(5000);
        spin_us(spins[s]);
        const pid_t pid = vfork();
        if (pid == 0) {
          char* args[] = {argv[0], "--child", fd, NULL};
          execv("/proc/self/exe", args);
          _exit(127);
        }
        const long long resumed = now_ns();
        long long started = 0;
        close(p[1]);
        if (read(p[0], &started, sizeof started) != sizeof started) _exit(1);
        waitpid(pid, NULL, 0);
        const long long result[2] = {resumed, started};
        if (write(r[1], result, sizeof result) != sizeof result) _exit(1);
        _exit(0);
      }
      close(p[1]);
      close(p[0]);
      long long result[2];
      if (read(r[0], result, sizeof result) != sizeof result) return 1;
      close(r[0]);
      close(r[1]);
      waitpid(middle, NULL, 0);
      if (result[0] < result[1]) {
        ++preempted;
      } else {
        ++waited;
        waited_ns += result[0] - result[1];
      }
    }
    printf("parent ran %4d us before vfork: preempted the child at its exec %2d/40, waited %2d/40 (mean %lld us)\n",
           spins[s], preempted, waited, waited ? waited_ns / waited / 1000 : 0);
  }
  return 0;
}
