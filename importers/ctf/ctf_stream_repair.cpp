#include "importers/ctf/ctf_stream_repair.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

namespace importers::ctf {

namespace fs = std::filesystem;

std::vector<uint64_t> packetStartCandidates(const std::string& file) {
  std::vector<uint64_t> offsets;
  std::ifstream in(file, std::ios::binary);
  if (!in) return offsets;
  constexpr size_t kChunk = 1 << 20;
  constexpr size_t kOverlap = 3;
  std::vector<unsigned char> buf(kChunk + kOverlap);
  size_t carried = 0;
  uint64_t base = 0;  // file offset of buf[0]
  while (in) {
    in.read(reinterpret_cast<char*>(buf.data() + carried), static_cast<std::streamsize>(kChunk));
    const size_t n = carried + static_cast<size_t>(in.gcount());
    if (n < 4) break;
    for (size_t i = 0; i + 4 <= n; ++i) {
      // 0xC1FC1FC1 reads the same in both byte orders except for the middle
      // bytes: C1 1F FC C1 (little-endian) or C1 FC 1F C1 (big-endian).
      if (buf[i] != 0xc1 || buf[i + 3] != 0xc1) continue;
      if ((buf[i + 1] == 0x1f && buf[i + 2] == 0xfc) || (buf[i + 1] == 0xfc && buf[i + 2] == 0x1f))
        offsets.push_back(base + i);
    }
    carried = std::min(kOverlap, n);
    std::memmove(buf.data(), buf.data() + n - carried, carried);
    base += n - carried;
  }
  return offsets;
}

core::Result<RepairedTraceDir> RepairedTraceDir::create(const std::string& originalDir,
                                                        const std::vector<std::string>& onlyFiles) {
  std::error_code ec;
  const fs::path original = fs::absolute(originalDir, ec);
  if (ec) return core::Error(originalDir + ": " + ec.message());
  std::string templ = (fs::temp_directory_path(ec) / "schedlab-ctf-XXXXXX").string();
  if (ec) return core::Error("cannot find a temporary folder: " + ec.message());
  if (!::mkdtemp(templ.data())) return core::Error(templ + ": cannot create a temporary folder");
  RepairedTraceDir repaired;
  repaired.m_dir = templ;
  repaired.m_originalDir = original.string();
  fs::directory_iterator it(original, ec);
  for (const fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    std::error_code entryEc;
    if (!it->is_regular_file(entryEc)) continue;
    const std::string name = it->path().filename().string();
    if (!onlyFiles.empty() && name != "metadata" && std::find(onlyFiles.begin(), onlyFiles.end(), name) == onlyFiles.end())
      continue;
    fs::create_symlink(it->path(), fs::path(templ) / it->path().filename(), entryEc);
    if (entryEc) return core::Error(templ + ": cannot link " + it->path().string() + ": " + entryEc.message());
  }
  if (ec) return core::Error(originalDir + ": cannot list the folder: " + ec.message());
  return repaired;
}

RepairedTraceDir::RepairedTraceDir(RepairedTraceDir&& other) noexcept
    : m_dir(std::exchange(other.m_dir, {})), m_originalDir(std::move(other.m_originalDir)), m_cuts(std::move(other.m_cuts)) {}

RepairedTraceDir& RepairedTraceDir::operator=(RepairedTraceDir&& other) noexcept {
  if (this != &other) {
    removeDir();
    m_dir = std::exchange(other.m_dir, {});
    m_originalDir = std::move(other.m_originalDir);
    m_cuts = std::move(other.m_cuts);
  }
  return *this;
}

RepairedTraceDir::~RepairedTraceDir() { removeDir(); }

void RepairedTraceDir::removeDir() {
  if (m_dir.empty()) return;
  std::error_code ec;
  fs::remove_all(m_dir, ec);
  m_dir.clear();
}

core::Status RepairedTraceDir::cut(const std::string& name, uint64_t keepBytes) {
  const fs::path target = fs::path(m_dir) / name;
  const fs::path source = fs::path(m_originalDir) / name;
  std::error_code ec;
  fs::remove(target, ec);
  m_cuts[name] = keepBytes;
  if (keepBytes == 0) return {};
  std::ifstream in(source, std::ios::binary);
  std::ofstream out(target, std::ios::binary | std::ios::trunc);
  if (!in) return core::Error(source.string() + ": cannot open for reading");
  if (!out) return core::Error(target.string() + ": cannot create");
  std::vector<char> buf(1 << 20);
  uint64_t left = keepBytes;
  while (left > 0 && in) {
    const auto want = static_cast<std::streamsize>(std::min<uint64_t>(left, buf.size()));
    in.read(buf.data(), want);
    const std::streamsize got = in.gcount();
    if (got <= 0) break;
    out.write(buf.data(), got);
    left -= static_cast<uint64_t>(got);
  }
  if (!out) return core::Error(target.string() + ": cannot write the kept packets");
  return {};
}

}  // namespace importers::ctf
