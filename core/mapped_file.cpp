#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
    // than taking one page fault per 4 KiB, but a big file populated whole
    // is resident whole (7 GB of perf script text: 8.3 GB of peak RSS), so
    // past kPopulateLimit the kernel reads ahead instead and the reader
    // releases what it has read (releaseBefore).
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (size <= kPopulateLimit ? MAP_POPULATE : 0), fd, 0);
    if (p == MAP_FAILED) {
      const int saved = errno;
      ::close(fd);
      return Error(path + ": cannot map the file: " + std::strerror(saved));
    }
    if (size > kPopulateLimit) madvise(p, size, MADV_SEQUENTIAL);
    m_map = p;
    m_size = size;
    m_released = 0;
  }
  ::close(fd);
  return Status::ok();
}

void MappedFile::releaseBefore(size_t offset) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t end = std::min(offset, m_size) / page * page;
  if (!m_map || end <= m_released) return;
  madvise(static_cast<char*>(m_map) + m_released, end - m_released, MADV_DONTNEED);
  m_released = end;
}

}  // namespace core
