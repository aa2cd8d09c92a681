// The importer contract: each format decodes bytes to events and feeds the
// core::SchedBuilder; a registry probes the input and picks the importer, so
// the user never names the format. Called by the CLI, the GUI's import worker
// and the tests.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_feed.h"
#include "core/result.h"
#include "core/sched_builder.h"
#include "core/topology.h"

namespace importers {

/// What probing sees: the path, whether it is a folder (CTF), the entries of a
/// folder, and the first bytes of a file.
struct ProbeInput {
  std::string path;
  bool isDirectory = false;
  std::vector<std::string> directoryEntries;  ///< names only, for folders
  std::span<const std::byte> head;            ///< first bytes of a file (up to 64 KiB)
  std::string_view headText() const { return {reinterpret_cast<const char*>(head.data()), head.size()}; }
};

/// Progress in [0, 1] of the bytes (or events) read so far.
using ProgressFn = std::function<void(double fraction)>;

/// Whether a reader decodes on a worker thread while the importing thread
/// builds the model (core::EventFeed::runThreaded). Auto: for inputs of
/// kThreadedFromBytes and more, when a CPU is idle (decoding and building then
/// overlap; on a busy machine the hand-over would only add work). The tests
/// force both.
enum class Threading : uint8_t { Auto, Never, Always };
inline constexpr uint64_t kThreadedFromBytes = 4 << 20;
inline bool decodeOnAWorker(Threading threading, uint64_t inputBytes) {
  return threading == Threading::Always ||
         (threading == Threading::Auto && inputBytes >= kThreadedFromBytes && core::EventFeed::spareCpu());
}

struct ImportOptions {
  ProgressFn progress;            ///< called now and then from the importing thread; may be empty
  std::stop_token stop;           ///< cancel: the importer returns "cancelled" soon after
  std::optional<core::Topology> topology;  ///< user's topology; overrides what the trace says
};

class Importer {
 public:
  virtual ~Importer() = default;
  /// Short stable name: "ftrace-text", "trace.dat", "perf.data", "perf-script", "ctf".
  virtual std::string_view name() const = 0;
  /// 0 = not this format; 100 = certain.
  virtual int probe(const ProbeInput& input) const = 0;
  /// Reads `path` into `builder`. On a corrupt body, keeps what was built, calls
  /// builder.setPartial() and returns an error naming the file and the line or
  /// byte offset. Never throws.
  virtual core::Status read(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options) = 0;
  /// When `path` is a folder holding traces of several unrelated recordings
  /// (which read() refuses), the path of each, to be opened as a run of its own.
  virtual std::vector<std::string> separateRuns(const std::string& /*path*/) const { return {}; }
};

/// Every importer built into this binary, best-first for probing ties.
const std::vector<std::unique_ptr<Importer>>& allImporters();

/// The importer that claims `path` most confidently, or an error saying why none does.
core::Result<Importer*> pickImporter(const std::string& path);

/// The unrelated recordings a folder holds, each a path that opens as a run
/// of its own; empty when `path` is one recording (or none).
std::vector<std::string> separateRunsIn(const std::string& path);

/// Outcome of importing one file: the model (possibly partial) and, if the
/// input was bad part-way, the error that stopped the read.
struct ImportResult {
  std::shared_ptr<core::TraceModel> model;
  std::optional<core::Error> error;  ///< set when the model is partial
};

/// Probes, reads and finalizes. Returns an error (and no model) when nothing
/// valid could be read; otherwise a model, partial with `error` set when the
/// input turned bad part-way.
core::Result<ImportResult> importTrace(const std::string& path, const ImportOptions& options = {});

/// Copies what was saved beside the trace `model` was imported from and no
/// trace format carries (its scheduler settings and autogroups) beside
/// `newTrace`, a copy of it in another format, so that the copy replays the
/// same. Returns the files written; fails naming the one that could not be.
core::Result<std::vector<std::string>> copyFilesBeside(const core::TraceModel& model, const std::string& newTrace);

}  // namespace importers
