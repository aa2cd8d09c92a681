// A barrier around calls into libbabeltrace2, which (2.0.x) stops the whole
// process with abort() when an assertion about the data it decodes fails (e.g.
// a packet_size of 2^64-8 in a packet context). Used by the CTF reader so that
// a corrupt trace ends in an error and a kept prefix, not a dead application.
#pragma once

namespace importers::ctf {

/// Runs `fn(arg)`, which calls into babeltrace2. Returns false if meanwhile
/// the process received SIGABRT, SIGSEGV, SIGBUS or SIGFPE on this thread
/// outside an OwnCodeScope; control then comes back here and everything `fn`
/// had on its stack is abandoned (babeltrace2 objects it used must be leaked,
/// never released again). Signals raised inside an OwnCodeScope, or on other
/// threads, keep their previous disposition, so our own bugs still crash
/// loudly (and fuzzers see them). Frames between here and babeltrace2 must not
/// own objects with destructors.
bool runGuarded(void (*fn)(void* arg), void* arg);

/// Marks the calling thread as outside babeltrace2 (our code between two
/// babeltrace2 calls, e.g. the sink handling messages).
class OwnCodeScope {
 public:
  OwnCodeScope();
  ~OwnCodeScope();
  OwnCodeScope(const OwnCodeScope&) = delete;
  OwnCodeScope& operator=(const OwnCodeScope&) = delete;

 private:
  bool m_outer;
};

/// The signal that ended the last failed runGuarded() of this thread.
int lastGuardedSignal();

}  // namespace importers::ctf
