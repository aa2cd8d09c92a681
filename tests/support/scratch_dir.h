// A folder of the test's own under the temporary directory, emptied when created
// and removed with everything in it when the object goes.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace test_support {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : m_path(std::filesystem::temp_directory_path() /
               ("schedlab-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(m_path);
    std::filesystem::create_directories(m_path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (m_path / name).string(); }
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

}  // namespace test_support
