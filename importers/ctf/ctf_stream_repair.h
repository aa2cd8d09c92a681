// Keeps the readable packets of a CTF stream file that babeltrace2 must not or
// cannot open (a cut-short or corrupt packet): a temporary mirror of the trace
// folder in which that file is cut at a packet boundary. Used by the CTF reader
// after its own packet walk, and when src.ctf.fs still fails to index a file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"

namespace importers::ctf {

/// Byte offsets in `file` where a CTF packet header may start: every offset
/// holding the packet magic 0xC1FC1FC1 (either byte order), ascending. A magic
/// inside event payload is a false candidate; the reader verifies by reopening.
std::vector<uint64_t> packetStartCandidates(const std::string& file);

/// A temporary folder mirroring one trace folder through symbolic links, in
/// which some stream files are replaced by a prefix of themselves. Removed on
/// destruction. The packet `index/` folder is left out: it describes the
/// uncut files.
class RepairedTraceDir {
 public:
  /// Creates the mirror of `originalDir` under the system temporary folder,
  /// with every file, or only `metadata` and the files in `onlyFiles` when it
  /// is not empty. Fails when the folder cannot be created or listed.
  static core::Result<RepairedTraceDir> create(const std::string& originalDir,
                                               const std::vector<std::string>& onlyFiles = {});
  RepairedTraceDir(RepairedTraceDir&& other) noexcept;
  RepairedTraceDir& operator=(RepairedTraceDir&& other) noexcept;
  RepairedTraceDir(const RepairedTraceDir&) = delete;
  RepairedTraceDir& operator=(const RepairedTraceDir&) = delete;
  ~RepairedTraceDir();

  const std::string& dir() const { return m_dir; }
  const std::string& originalDir() const { return m_originalDir; }
  /// Replaces stream file `name` by its first `keepBytes` bytes (0: drops it).
  /// Fails when the original cannot be read or the copy written.
  core::Status cut(const std::string& name, uint64_t keepBytes);
  /// Bytes kept per cut stream file name.
  const std::map<std::string, uint64_t>& cuts() const { return m_cuts; }

 private:
  RepairedTraceDir() = default;
  void removeDir();
  std::string m_dir;
  std::string m_originalDir;
  std::map<std::string, uint64_t> m_cuts;
};

}  // namespace importers::ctf
