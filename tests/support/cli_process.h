// schedlab-cli as a process of its own, for tests that signal or kill it: its
// stdout and stderr go to one log file the test reads afterwards.
#pragma once

#include <fcntl.h>
#include <spawn.h>

#include <string>
#include <vector>

extern char** environ;

namespace test_support {

/// The child's pid, or -1 when it could not start.
inline pid_t spawnCli(const std::string& binary, const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> all = {binary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

}  // namespace test_support
