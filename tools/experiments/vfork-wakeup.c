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
//   cc -O2 -o vfork-wakeup tools/experiments/vfork-wakeup.c
//   ./vfork-wakeup [--sleep-first] [--spins LIST] [--rounds N]
//                  [--dump-at-resume FILE | --dump-before-exec FILE]
//
// --sleep-first: the new process sleeps 5 ms before it runs, so that the CPU
// idles and the process that forked it, queued still if it slept not
// eligible (DELAY_DEQUEUE), leaves the queue at the idle pick.
// --spins LIST: the spins, in us, comma-separated (default
// 0,100,300,500,650,800,1000,1300,2000); --rounds N: rounds per spin.
// --dump-at-resume FILE: the parent appends /sys/kernel/debug/sched/debug to
// FILE as soon as it resumes from vfork (each entity's vruntime, eligibility
// and deadline, and each cfs_rq's nr_queued, delayed entities included);
// --dump-before-exec FILE: the child does, before its exec. Either costs the
// process that copies it about a millisecond of CPU.
//
// Run it on an otherwise idle machine. On Linux 6.18.44-fc-v1272 (2 vCPUs,
// AMD EPYC), 2026-12-07, preempted / waited of 40 (the waits 2.3-2.7 ms on
// average: to the child's next tick):
//   parent ran    0 us: 40 / 0        parent ran  800 us:  1 / 39
//   parent ran  100 us:  0 / 40       parent ran 1000 us:  3 / 37
//   parent ran  300 us:  0 / 40       parent ran 1300 us:  6 / 34
//   parent ran  500 us:  0 / 40       parent ran 2000 us: 13 / 27
//   parent ran  650 us:  0 / 40
// and with --spins 0,10,20,30,40,50,60,70,80 --rounds 25: 25, 25, 24, 10, 1,
// 1, 0, 0 and 0 of 25 preempted. Recorded with
// ../shared/tools/record-sched-trace (tracedat) and replayed on one CPU
// (`--topology 1x1 --param base_slice_ns=1400000`: the trace carries no
// affinity, and the kernel scales the slice by its two online CPUs), the
// baseline agrees at every spin (docs/models.md 8.3, "builds' wakeup latency
// p99"): up to 650 us since it dequeues the delayed grandparent at the
// wakeup test as 6.18.33 does, from 800 us since it lets the parent run on
// to its vfork wait (preempt=none, 8.1);
// tools/experiments/busy-cpu-wakeup-waits.py --by-parent-runtime counts both,
// and --margins relates each round's outcome to the entities' vruntimes.
// With --sleep-first the kernel lets the parent preempt at every spin (40 of
// 40 each), and the replay does as the trace shows (335 of the 336 rounds up
// to 1.3 ms in both).
#define _GNU_SOURCE
#include <fcntl.h>
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

// Appends the scheduler's debug file to `out`: read() and write() only,
// which a vfork child may call.
static void dump_sched_debug(int out, const char* when) {
  static char buf[1 << 20];
  const int in = open("/sys/kernel/debug/sched/debug", O_RDONLY);
  if (in < 0) return;
  size_t n = 0;
  ssize_t r;
  while (n < sizeof buf && (r = read(in, buf + n, sizeof buf - n)) > 0) n += (size_t)r;
  close(in);
  char head[96];
  const int h = snprintf(head, sizeof head, "=== %s, pid %d\n", when, (int)getpid());
  if (write(out, head, (size_t)h) != h || write(out, buf, n) != (ssize_t)n) return;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) {
    const long long started = now_ns();
    const int fd = atoi(argv[2]);
    if (write(fd, &started, sizeof started) != sizeof started) return 1;
    spin_us(20000);
    return 0;
  }
  int sleep_first = 0, rounds = 40, dump_fd = -1, dump_in_child = 0, nspins = 0;
  int spins[64];
  const char* spin_list = "0,100,300,500,650,800,1000,1300,2000";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--sleep-first") == 0) {
      sleep_first = 1;
    } else if (strcmp(argv[i], "--spins") == 0 && i + 1 < argc) {
      spin_list = argv[++i];
    } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else if ((strcmp(argv[i], "--dump-at-resume") == 0 || strcmp(argv[i], "--dump-before-exec") == 0) &&
               i + 1 < argc) {
      dump_in_child = strcmp(argv[i], "--dump-before-exec") == 0;
      dump_fd = open(argv[++i], O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (dump_fd < 0) {
        perror(argv[i]);
        return 1;
      }
    } else {
      fprintf(stderr,
              "usage: %s [--sleep-first] [--spins LIST] [--rounds N] [--dump-at-resume FILE | --dump-before-exec "
              "FILE]\n",
              argv[0]);
      return 2;
    }
  }
  for (const char* p = spin_list; *p && nspins < 64; ++nspins) {
    char* end;
    spins[nspins] = (int)strtol(p, &end, 10);
    if (end == p) {
      fprintf(stderr, "bad --spins: %s\n", spin_list);
      return 2;
    }
    p = *end == ',' ? end + 1 : end;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(1, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    perror("sched_setaffinity");
    return 1;
  }
  for (int s = 0; s < nspins; ++s) {
    int preempted = 0, waited = 0;
    long long waited_ns = 0;
    for (int round = 0; round < rounds; ++round) {
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
          if (dump_fd >= 0 && dump_in_child) dump_sched_debug(dump_fd, "child before exec");
          char* args[] = {argv[0], "--child", fd, NULL};
          execv("/proc/self/exe", args);
          _exit(127);
        }
        const long long resumed = now_ns();
        if (dump_fd >= 0 && !dump_in_child) dump_sched_debug(dump_fd, "parent resumed");
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
    printf("parent ran %4d us before vfork: preempted the child at its exec %2d/%d, waited %2d/%d (mean %lld us)\n",
           spins[s], preempted, rounds, waited, rounds, waited ? waited_ns / waited / 1000 : 0);
  }
  return 0;
}
