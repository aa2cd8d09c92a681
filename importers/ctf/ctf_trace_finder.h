// Finds the CTF traces a path designates: a trace folder, its `metadata` file,
// or a folder above it (an LTTng session with `kernel/`, `ust/uid/...`). Used by
// the CTF importer's probe() and read(); touches only the file system.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace importers::ctf {

/// True when `head` (a file's first bytes) starts like CTF 1.8 metadata: the
/// packetized metadata magic in either byte order, or the "/* CTF 1." text header.
bool looksLikeCtfMetadata(std::span<const std::byte> head);

/// True when `dir/metadata` exists and looksLikeCtfMetadata().
bool isCtfTraceDir(const std::string& dir);

/// The trace folders `path` designates, sorted: {path} for a trace folder, its
/// parent for a metadata file, or the trace folders found up to `maxDepth`
/// levels below a folder (not descending into a trace). Empty when none.
std::vector<std::string> findCtfTraceDirs(const std::string& path, int maxDepth = 4);

}  // namespace importers::ctf
