#include "recorder/tracefs_instance.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace recorder {

namespace {

namespace fs = std::filesystem;

constexpr long kTracefsMagic = 0x74726163;  // TRACEFS_MAGIC, include/uapi/linux/magic.h
constexpr const char* kTracefsMount = "/sys/kernel/tracing";
constexpr const char* kDebugfsTracing = "/sys/kernel/debug/tracing";

bool isTracefs(const std::string& path) {
  struct statfs st {};
  return ::statfs(path.c_str(), &st) == 0 && st.f_type == kTracefsMagic;
}

std::string errnoText(int err) { return std::strerror(err); }

bool permissionError(int err) { return err == EACCES || err == EPERM; }

void sleepMs(long ms) {
  struct timespec ts {ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// rmdir of an instance fails with EBUSY while a file of it is still open (a
// reader that is just closing); a short wait is enough.
int removeInstanceDir(const char* path, const char* tracingOn) {
  const int fd = ::open(tracingOn, O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)!::write(fd, "0", 1);
    ::close(fd);
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (::rmdir(path) == 0 || errno == ENOENT) return 0;
    if (errno != EBUSY) return errno;
    sleepMs(20);
  }
  return EBUSY;
}

// The PID namespace whose PIDs this process sees: a recorder in a container
// that shares the host's tracefs sees other PIDs than the host's recorders.
// 0 when /proc cannot say.
uint64_t ownPidNamespace() {
  struct stat st {};
  return ::stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

// The initial PID namespace's inode (PROC_PID_INIT_INO, include/linux/proc_ns.h):
// the namespace of instances named before names carried theirs.
constexpr uint64_t kInitialPidNamespace = 0xEFFFFFFCU;

struct InstanceOwner {
  pid_t pid = -1;
  uint64_t pidNamespace = 0;
};

// "schedlab-1234-2-ns4026531836" -> 1234 in that namespace; "schedlab-1234-2"
// (an older build's) -> 1234 in the initial one; pid -1 when not one of ours.
InstanceOwner ownerOf(const std::string& name) {
  if (!name.starts_with(TracefsInstance::kNamePrefix)) return {};
  const char* p = name.data() + TracefsInstance::kNamePrefix.size();
  const char* end = name.data() + name.size();
  long pid = 0;
  const auto [q, ec] = std::from_chars(p, end, pid);
  if (ec != std::errc() || q == end || *q != '-' || pid <= 0) return {};
  InstanceOwner owner{static_cast<pid_t>(pid), kInitialPidNamespace};
  const std::string_view rest(q, static_cast<size_t>(end - q));
  if (const size_t ns = rest.find("-ns"); ns != std::string_view::npos) {
    const auto [r, nsEc] = std::from_chars(rest.data() + ns + 3, rest.data() + rest.size(), owner.pidNamespace);
    if (nsEc != std::errc() || r != rest.data() + rest.size()) return {};
  }
  return owner;
}

// Only a PID of our own namespace can be checked: to kill(2) a PID of another
// namespace is to ask about some other process, or none, while its recorder
// may be recording (a recorder in a container once stopped the host's this way).
void removeStaleInstances(const std::string& tracefs, uint64_t pidNamespace) {
  if (pidNamespace == 0) return;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(tracefs) / "instances", ec)) {
    const std::string name = entry.path().filename().string();
    const InstanceOwner owner = ownerOf(name);
    if (owner.pid <= 0 || owner.pidNamespace != pidNamespace) continue;
    if (::kill(owner.pid, 0) == 0 || errno != ESRCH) continue;
    const std::string path = entry.path().string();
    removeInstanceDir(path.c_str(), (path + "/tracing_on").c_str());
  }
}

}  // namespace

std::string needRootMessage() {
  return "recording needs root: the kernel's tracing interface (tracefs) is root-only; run it as root (e.g. with sudo)";
}

core::Result<std::string> locateTracefs(const std::string& requested) {
  if (!requested.empty()) {
    if (isTracefs(requested)) return requested;
    return core::Error("no tracefs at " + requested + " (it is not a tracefs mount)");
  }
  if (isTracefs(kTracefsMount)) return std::string(kTracefsMount);
  if (isTracefs(kDebugfsTracing)) return std::string(kDebugfsTracing);
  if (::geteuid() != 0) return core::Error(needRootMessage());
  if (::mount("nodev", kTracefsMount, "tracefs", 0, nullptr) == 0) return std::string(kTracefsMount);
  const int err = errno;
  if (err == ENODEV)
    return core::Error("no tracefs: this kernel was built without tracing (CONFIG_TRACING), so it cannot be recorded");
  if (err == ENOENT)
    return core::Error(std::string("no tracefs: ") + kTracefsMount + " does not exist, so this kernel has no tracefs");
  return core::Error(std::string("no tracefs: it is not mounted and mounting it on ") + kTracefsMount +
                     " failed (" + errnoText(err) + "); mount it with: mount -t tracefs nodev " + kTracefsMount);
}

TracefsInstance::TracefsInstance(std::string tracefs, std::string name)
    : m_tracefs(std::move(tracefs)), m_name(std::move(name)), m_path(m_tracefs + "/instances/" + m_name) {}

core::Status checkTracefsAccess(const std::string& tracefs) {
  const std::string instances = tracefs + "/instances";
  if (::access(instances.c_str(), W_OK) == 0) return core::Status::ok();
  if (permissionError(errno)) return core::Error(needRootMessage());
  return core::Error(instances + ": " + errnoText(errno) + " (this kernel's tracefs has no instances)");
}

core::Result<std::unique_ptr<TracefsInstance>> TracefsInstance::create(const std::string& tracefs) {
  const uint64_t pidNamespace = ownPidNamespace();
  removeStaleInstances(tracefs, pidNamespace);
  static std::atomic<int> serial{0};
  // The namespace in the name also keeps apart recorders of two namespaces
  // whose PIDs are equal.
  const std::string name = std::string(kNamePrefix) + std::to_string(::getpid()) + "-" + std::to_string(++serial) +
                           "-ns" + std::to_string(pidNamespace);
  std::unique_ptr<TracefsInstance> instance(new TracefsInstance(tracefs, name));
  // The guardian first: a recorder killed between the two would otherwise
  // leave the instance behind with nobody to remove it (forking a large
  // process, a sanitizer's for one, takes long enough to be hit).
  instance->m_removed = true;  // nothing to remove until the directory exists
  if (auto st = instance->startGuardian(); !st) return core::Error(st.message());
  if (::mkdir(instance->m_path.c_str(), 0700) != 0) {
    const int err = errno;
    if (permissionError(err)) return core::Error(needRootMessage());
    return core::Error("cannot create the tracing instance " + instance->m_path + ": " + errnoText(err));
  }
  instance->m_removed = false;
  // A new instance starts with tracing on; nothing is enabled yet, but keep it quiet until asked.
  if (auto st = instance->setTracing(false); !st) return core::Error(st.message());
  return instance;
}

core::Status TracefsInstance::startGuardian() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return core::Error("cannot create the guardian's pipe: " + errnoText(errno));
  // Everything the child uses is prepared here: after fork() it may only make
  // system calls (another thread may hold the allocator's lock).
  const std::string tracingOn = m_path + "/tracing_on";
  const char* instancePath = m_path.c_str();
  const char* tracingOnPath = tracingOn.c_str();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return core::Error("cannot start the guardian process: " + errnoText(err));
  }
  if (pid == 0) {
    // Its own session: the terminal's Ctrl+C and a kill of our process group miss it.
    ::setsid();
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
    if (fds[0] != 3) ::dup2(fds[0], 3);
    ::syscall(SYS_close_range, 4U, ~0U, 0U);
    const int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
    if (null > 3) ::close(null);
    pid_t group = 0;
    for (;;) {
      char c = 0;
      const ssize_t n = ::read(3, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n == 1 && c == 'd') ::_exit(0);
      if (n == 1 && c == 'g') {
        pid_t g = 0;
        if (::read(3, &g, sizeof g) == static_cast<ssize_t>(sizeof g)) group = g;
        continue;
      }
      if (n != 1) break;  // EOF: the recording process is gone and left the instance behind
    }
    if (group > 0) ::kill(-group, SIGTERM);
    removeInstanceDir(instancePath, tracingOnPath);
    ::_exit(0);
  }
  ::close(fds[0]);
  m_guardian = pid;
  m_guardianPipe = fds[1];
  return core::Status::ok();
}

core::Status TracefsInstance::write(const std::string& relative, const std::string& value) {
  const std::string file = m_path + "/" + relative;
  const int fd = ::open(file.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return core::Error("cannot open " + file + ": " + errnoText(errno));
  ssize_t n;
  do n = ::write(fd, value.data(), value.size());
  while (n < 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    return core::Error("cannot write '" + value + "' to " + file + ": " + errnoText(n < 0 ? err : EIO));
  return core::Status::ok();
}

core::Result<std::string> TracefsInstance::read(const std::string& relative) const {
  const std::string file = m_path + "/" + relative;
  std::ifstream in(file);
  if (!in) return core::Error("cannot read " + file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

core::Status TracefsInstance::setBufferKb(int kb) {
  auto st = write("buffer_size_kb", std::to_string(kb));
  if (!st && st.message().find(std::strerror(ENOMEM)) != std::string::npos)
    return core::Error("cannot allocate a ring buffer of " + std::to_string(kb) +
                       " KB per CPU (out of memory): choose a smaller --buffer-kb");
  return st;
}

core::Status TracefsInstance::enable(const std::vector<TraceEvent>& events) {
  for (const auto& e : events)
    if (auto st = write("events/" + e.system + "/" + e.name + "/enable", "1"); !st) return st;
  return core::Status::ok();
}

std::vector<int> TracefsInstance::cpus() const {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(m_path + "/per_cpu", ec)) {
    const std::string name = entry.path().filename().string();
    int cpu = -1;
    const auto [p, e] = std::from_chars(name.data() + std::min<size_t>(3, name.size()), name.data() + name.size(), cpu);
    if (name.starts_with("cpu") && e == std::errc() && p == name.data() + name.size() && cpu >= 0) out.push_back(cpu);
  }
  std::sort(out.begin(), out.end());
  return out;
}

core::Status TracefsInstance::remove() {
  core::Status status = core::Status::ok();
  if (!m_removed) {
    const std::string tracingOn = m_path + "/tracing_on";
    if (const int err = removeInstanceDir(m_path.c_str(), tracingOn.c_str()); err != 0)
      status = core::Error("cannot remove the tracing instance " + m_path + ": " + errnoText(err));
    else
      m_removed = true;
  }
  if (m_guardianPipe >= 0) {
    // Removed: the guardian has nothing to do. Not removed: closing without 'd'
    // lets the guardian try again once we are gone.
    if (m_removed) (void)!::write(m_guardianPipe, "d", 1);
    ::close(m_guardianPipe);
    m_guardianPipe = -1;
  }
  if (m_guardian > 0) {
    while (::waitpid(m_guardian, nullptr, 0) < 0 && errno == EINTR) {
    }
    m_guardian = -1;
  }
  return status;
}

void TracefsInstance::endWithUs(pid_t processGroup) {
  if (m_guardianPipe < 0) return;
  char message[1 + sizeof(pid_t)] = {'g'};
  std::memcpy(message + 1, &processGroup, sizeof processGroup);
  (void)!::write(m_guardianPipe, message, sizeof message);  // a pipe write this small is atomic
}

TracefsInstance::~TracefsInstance() { (void)remove(); }

}  // namespace recorder
