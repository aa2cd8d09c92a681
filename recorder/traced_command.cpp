#include "recorder/traced_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace recorder {

namespace {

namespace fs = std::filesystem;

// execvp's search, done before fork(): the child may not allocate.
std::optional<std::string> findExecutable(const std::string& name, int& err) {
  err = ENOENT;
  auto usable = [&](const fs::path& p) {
    std::error_code ec;
    if (!fs::exists(p, ec)) return false;
    if (fs::is_directory(p, ec) || ::access(p.c_str(), X_OK) != 0) {
      err = EACCES;
      return false;
    }
    return true;
  };
  if (name.find('/') != std::string::npos) {
    if (usable(name)) return name;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (usable(candidate)) return candidate.string();
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

}  // namespace

core::Result<std::unique_ptr<TracedCommand>> TracedCommand::prepare(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) return core::Error("no command given after --");
  int err = 0;
  const auto path = findExecutable(argv[0], err);
  if (!path)
    return core::Error("cannot start '" + argv[0] + "': " +
                       (err == ENOENT ? std::string("command not found") : std::strerror(err)));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int go[2];
  int errors[2];
  if (::pipe2(go, O_CLOEXEC) != 0) return core::Error("cannot start '" + argv[0] + "': " + std::strerror(errno));
  if (::pipe2(errors, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(go[0]);
    ::close(go[1]);
    return core::Error("cannot start '" + argv[0] + "': " + std::strerror(e));
  }
  const char* file = path->c_str();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {go[0], go[1], errors[0], errors[1]}) ::close(fd);
    return core::Error("cannot start '" + argv[0] + "': " + std::strerror(e));
  }
  if (pid == 0) {
    // Until exec the child holds copies of every descriptor of the recorder,
    // CLOEXEC or not: the write end of `go` (then a killed recorder's EOF never
    // comes), the guardian's pipe (then the guardian never sees the recorder
    // go) and the instance's files (then it cannot be removed). Keep only the
    // two pipe ends the child uses.
    const unsigned lo = static_cast<unsigned>(std::min(go[0], errors[1]));
    const unsigned hi = static_cast<unsigned>(std::max(go[0], errors[1]));
    if (lo > 3) ::syscall(SYS_close_range, 3U, lo - 1, 0U);
    if (hi > lo + 1) ::syscall(SYS_close_range, lo + 1, hi - 1, 0U);
    ::syscall(SYS_close_range, hi + 1, ~0U, 0U);
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) ::signal(sig, SIG_DFL);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    char c;
    ssize_t n;
    do n = ::read(go[0], &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) ::_exit(127);  // the recording gave up before starting
    ::execv(file, args.data());
    const int e = errno;
    (void)!::write(errors[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: whichever of the two runs first, the group exists before any kill
  ::close(go[0]);
  ::close(errors[1]);
  std::unique_ptr<TracedCommand> command(new TracedCommand());
  command->m_name = argv[0];
  command->m_pid = pid;
  command->m_goPipe = go[1];
  command->m_errorPipe = errors[0];
  command->m_pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  return command;
}

core::Status TracedCommand::release() {
  if (::write(m_goPipe, "g", 1) != 1)
    return core::Error("cannot start '" + m_name + "': " + std::strerror(errno));
  ::close(m_goPipe);
  m_goPipe = -1;
  int err = 0;
  ssize_t n;
  do n = ::read(m_errorPipe, &err, sizeof err);
  while (n < 0 && errno == EINTR);
  ::close(m_errorPipe);
  m_errorPipe = -1;
  if (n == static_cast<ssize_t>(sizeof err)) {
    checkExited();
    return core::Error("cannot start '" + m_name + "': " + std::strerror(err));
  }
  return core::Status::ok();
}

bool TracedCommand::checkExited() {
  if (m_status) return true;
  int status = 0;
  const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
  if (r == m_pid) m_status = status;
  return m_status.has_value();
}

void TracedCommand::terminate(std::chrono::milliseconds grace) {
  if (checkExited()) return;
  ::kill(-m_pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!checkExited() && std::chrono::steady_clock::now() < deadline) {
    if (m_pidfd >= 0) {
      pollfd p{m_pidfd, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      ::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, left.count())));
    } else {
      ::usleep(10000);
    }
  }
  if (!checkExited()) {
    ::kill(-m_pid, SIGKILL);
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    m_status = status;
  }
}

std::string TracedCommand::exitDescription() const {
  if (!m_status) return {};
  if (WIFEXITED(*m_status)) return "exited with status " + std::to_string(WEXITSTATUS(*m_status));
  if (WIFSIGNALED(*m_status)) {
    const int sig = WTERMSIG(*m_status);
    const char* name = ::strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : std::string());
  }
  return "ended";
}

bool TracedCommand::succeeded() const { return m_status && WIFEXITED(*m_status) && WEXITSTATUS(*m_status) == 0; }

TracedCommand::~TracedCommand() {
  if (m_goPipe >= 0) ::close(m_goPipe);  // never released: the child sees EOF and exits
  if (m_errorPipe >= 0) ::close(m_errorPipe);
  terminate(std::chrono::milliseconds(2000));
  if (m_pidfd >= 0) ::close(m_pidfd);
}

}  // namespace recorder
