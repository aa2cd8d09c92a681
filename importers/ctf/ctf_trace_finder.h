// Finds the CTF traces a path designates: a trace folder, its `metadata` file,
// or a folder above it (an LTTng session with `kernel/`, `ust/uid/...`), and
// tells from their metadata which of them were recorded together. Used by the
// CTF importer's probe() and read(); touches only the file system.
#pragma once

#include <cstddef>
#include <map>
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

/// The files of a trace folder that src.ctf.fs takes for stream files: every
/// regular file but `metadata` and hidden ones (".gitkeep"), sorted.
std::vector<std::string> streamFileNames(const std::string& dir);

/// What a trace's metadata says about where it comes from: its `env` block
/// (hostname, domain, tracer_name, tracer_major..., and since LTTng 2.11
/// trace_name and trace_creation_datetime, the session's).
struct CtfTraceIdentity {
  std::string dir;
  std::map<std::string, std::string> env;
  /// "lttng-modules 2.13 kernel trace, host synth, session 's1' created 2024...".
  std::string describe() const;
};
/// Reads `dir/metadata`; an unreadable one gives an identity with only `dir`.
CtfTraceIdentity readCtfTraceIdentity(const std::string& dir);

/// Traces of one recording: read together, they make one run.
struct CtfRecording {
  std::string root;               ///< the folder that opens exactly this recording
  std::vector<std::string> dirs;  ///< its trace folders, sorted
  std::string description;
};
/// Groups trace folders by recording. Traces belong together when their
/// metadata names the same tracing session (hostname, trace_name and
/// trace_creation_datetime: LTTng 2.11+ writes them into every domain's trace)
/// and they lie in one session folder (`kernel/`, `ust/...`, rotated chunks in
/// `archives/`; else one parent folder), so that two copies of a session are two
/// runs; for older LTTng, when they are the `kernel/` and `ust/...` of one
/// session folder on one host. Any other trace is a recording of its own (two
/// copies of one trace share a UUID, yet muxed they would double every event).
/// Sorted by root.
std::vector<CtfRecording> groupCtfTraces(const std::vector<std::string>& dirs);

/// The recordings `path` designates: findCtfTraceDirs() grouped by
/// groupCtfTraces(), where an LTTng session folder met on the way is searched
/// whole (its ust/uid/1000/64-bit/ may lie deeper than the walk from above
/// goes). Empty when there is no trace.
std::vector<CtfRecording> findCtfRecordings(const std::string& path);

}  // namespace importers::ctf
