#include "importers/ctf/ctf_crash_guard.h"

#include <csetjmp>
#include <csignal>
#include <mutex>

namespace importers::ctf {

namespace {

constexpr int kSignals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE};
constexpr int kSignalCount = sizeof kSignals / sizeof kSignals[0];

thread_local sigjmp_buf* t_jump = nullptr;
thread_local bool t_inBabeltrace = false;
thread_local volatile std::sig_atomic_t t_signal = 0;

std::mutex g_mutex;
int g_users = 0;
struct sigaction g_previous[kSignalCount];

int indexOf(int sig) {
  for (int i = 0; i < kSignalCount; ++i)
    if (kSignals[i] == sig) return i;
  return -1;
}

extern "C" void onFatalSignal(int sig, siginfo_t* info, void* context) {
  if (t_jump && t_inBabeltrace) {
    t_signal = sig;
    siglongjmp(*t_jump, 1);
  }
  // Not babeltrace2's: behave as if we had never been installed.
  const int i = indexOf(sig);
  const struct sigaction& prev = g_previous[i < 0 ? 0 : i];
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) {
      prev.sa_sigaction(sig, info, context);
      return;
    }
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// Handlers are installed while at least one thread runs a guarded call.
class Installation {
 public:
  Installation() {
    std::lock_guard lock(g_mutex);
    if (g_users++ > 0) return;
    struct sigaction act = {};
    act.sa_sigaction = &onFatalSignal;
    act.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&act.sa_mask);
    for (int i = 0; i < kSignalCount; ++i) sigaction(kSignals[i], &act, &g_previous[i]);
  }
  ~Installation() {
    std::lock_guard lock(g_mutex);
    if (--g_users > 0) return;
    for (int i = 0; i < kSignalCount; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
  }
  Installation(const Installation&) = delete;
  Installation& operator=(const Installation&) = delete;
};

}  // namespace

OwnCodeScope::OwnCodeScope() : m_outer(t_inBabeltrace) { t_inBabeltrace = false; }
OwnCodeScope::~OwnCodeScope() { t_inBabeltrace = m_outer; }

int lastGuardedSignal() { return t_signal; }

bool runGuarded(void (*fn)(void* arg), void* arg) {
  const Installation installed;
  sigjmp_buf jump;
  sigjmp_buf* const outer = t_jump;
  const bool outerInBabeltrace = t_inBabeltrace;
  // savemask = 1: the handler runs with the signal blocked; the jump must
  // restore the mask or the next abort would find SIGABRT blocked.
  if (sigsetjmp(jump, 1) == 0) {
    t_jump = &jump;
    t_inBabeltrace = true;
    fn(arg);
    t_inBabeltrace = outerInBabeltrace;
    t_jump = outer;
    return true;
  }
  t_jump = outer;
  t_inBabeltrace = outerInBabeltrace;
  return false;
}

}  // namespace importers::ctf
