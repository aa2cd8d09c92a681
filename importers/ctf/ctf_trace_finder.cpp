#include "importers/ctf/ctf_trace_finder.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace importers::ctf {

namespace fs = std::filesystem;

namespace {
// TSDL metadata packets start with 0x75D11D57 in the trace's byte order (CTF 1.8 §7.1).
constexpr std::array<unsigned char, 4> kMetadataMagicLe = {0x57, 0x1d, 0xd1, 0x75};
constexpr std::array<unsigned char, 4> kMetadataMagicBe = {0x75, 0xd1, 0x1d, 0x57};
constexpr std::string_view kTextHeader = "/* CTF 1.";
// A session folder holds a handful of traces; a home directory holds thousands
// of entries. Stop looking long before probing becomes slow.
constexpr size_t kMaxEntriesVisited = 4096;
}  // namespace

bool looksLikeCtfMetadata(std::span<const std::byte> head) {
  if (head.size() >= 4 && (std::memcmp(head.data(), kMetadataMagicLe.data(), 4) == 0 ||
                           std::memcmp(head.data(), kMetadataMagicBe.data(), 4) == 0))
    return true;
  return head.size() >= kTextHeader.size() && std::memcmp(head.data(), kTextHeader.data(), kTextHeader.size()) == 0;
}

bool isCtfTraceDir(const std::string& dir) {
  std::error_code ec;
  const fs::path metadata = fs::path(dir) / "metadata";
  if (!fs::is_regular_file(metadata, ec)) return false;
  std::ifstream in(metadata, std::ios::binary);
  std::array<std::byte, 16> head{};
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  return looksLikeCtfMetadata(std::span(head.data(), static_cast<size_t>(in.gcount())));
}

std::vector<std::string> findCtfTraceDirs(const std::string& path, int maxDepth) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec) return {};
  if (fs::is_regular_file(status)) {
    const fs::path parent = fs::absolute(path, ec).parent_path();
    if (!ec && isCtfTraceDir(parent.string())) return {parent.string()};
    return {};
  }
  if (!fs::is_directory(status)) return {};
  if (isCtfTraceDir(path)) return {path};

  std::vector<std::string> found;
  std::vector<fs::path> level = {fs::path(path)};
  size_t visited = 0;
  for (int depth = 0; depth < maxDepth && !level.empty() && visited < kMaxEntriesVisited; ++depth) {
    std::vector<fs::path> next;
    for (const auto& dir : level) {
      // increment(ec), not ++: an unreadable entry must end the walk, not throw.
      fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
      for (const fs::directory_iterator end; !ec && it != end && ++visited <= kMaxEntriesVisited; it.increment(ec)) {
        std::error_code entryEc;
        if (!it->is_directory(entryEc)) continue;
        if (isCtfTraceDir(it->path().string()))
          found.push_back(it->path().string());
        else
          next.push_back(it->path());
      }
      ec.clear();
    }
    level = std::move(next);
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace importers::ctf
