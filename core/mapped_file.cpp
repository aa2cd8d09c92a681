#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace core {

MappedFile::~MappedFile() {
  if (m_map) munmap(m_map, m_size);
}

Status MappedFile::open(const std::string& path) {
  if (m_map) {
    munmap(m_map, m_size);
    m_map = nullptr;
    m_size = 0;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(path + ": cannot open for reading: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(path + ": not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    // The importers walk the whole file once; populating up front costs less
    // than taking one page fault per 4 KiB.
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
      const int saved = errno;
      ::close(fd);
      return Error(path + ": cannot map the file: " + std::strerror(saved));
    }
    m_map = p;
    m_size = size;
  }
  ::close(fd);
  return Status::ok();
}

}  // namespace core
