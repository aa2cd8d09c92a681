#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <unordered_map>

#include "core/autogroup_snapshot.h"
#include "core/sched_settings.h"
#include "core/topology_snapshot.h"
#include "importers/compressed_input.h"
#include "importers/importer.h"
#include "importers/registered.h"

namespace importers {

const std::vector<std::unique_ptr<Importer>>& allImporters() {
  static const std::vector<std::unique_ptr<Importer>> importers = [] {
    std::vector<std::unique_ptr<Importer>> list;
    registerBuiltinImporters(list);
    return list;
  }();
  return importers;
}

namespace {
constexpr size_t kProbeBytes = 64 * 1024;
}

core::Result<Importer*> pickImporter(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return core::Error(path + ": no such file or folder");
  ProbeInput input;
  input.path = path;
  std::vector<std::byte> head;
  std::string compressedWith;
  if (fs::is_directory(status)) {
    input.isDirectory = true;
    for (const auto& e : fs::directory_iterator(path, ec)) input.directoryEntries.push_back(e.path().filename().string());
    std::sort(input.directoryEntries.begin(), input.directoryEntries.end());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return core::Error(path + ": cannot open for reading");
    // No bigger than the file: a small one (every fuzzer input) would pay for
    // zeroing and mapping 64 KiB it never reads. Size 0 may be a file whose
    // size is unknown until read (tracefs' `trace`, /proc).
    const auto size = fs::file_size(path, ec);
    head.resize(ec || size == 0 ? kProbeBytes : static_cast<size_t>(std::min<std::uintmax_t>(size, kProbeBytes)));
    in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    if (head.empty()) return core::Error(path + ": empty file (byte offset 0)");
    // A compressed trace is probed by what it decompresses to.
    if (const Compression c = compressionOf(head); c != Compression::None) {
      const std::string name(compressionName(c));
      if (!canDecompress(c))
        return core::Error(path + ": " + name + "-compressed (byte offset 0); SchedLab reads gzip and zstd, not " +
                           name + ": decompress it first (" + name + " -dk FILE)");
      auto inner = decompressedHead(path, c, kProbeBytes);
      if (!inner) return inner.error();
      if (inner->empty()) return core::Error(path + ": " + name + "-compressed and decompresses to nothing");
      head = std::move(*inner);
      compressedWith = name;
    }
    input.head = head;
  }
  Importer* best = nullptr;
  int bestScore = 0;
  for (const auto& imp : allImporters()) {
    const int score = imp->probe(input);
    if (score > bestScore) {
      best = imp.get();
      bestScore = score;
    }
  }
  if (!best) {
    std::string names;
    for (const auto& imp : allImporters()) names += (names.empty() ? "" : ", ") + std::string(imp->name());
    return core::Error(path +
                       (input.isDirectory        ? ": folder is neither a CTF trace nor a perf record --threads folder"
                        : compressedWith.empty() ? ": unknown format (byte offset 0)"
                                                 : ": " + compressedWith +
                                                       "-compressed, and what it decompresses to is of no known "
                                                       "format (byte offset 0 of it)") +
                       "; supported: " + names);
  }
  return best;
}

std::vector<std::string> separateRunsIn(const std::string& path) {
  auto picked = pickImporter(path);
  if (!picked) return {};
  return picked.value()->separateRuns(path);
}

namespace {
// A topology snapshot saved beside the trace (`schedlab-cli record` writes one)
// says how the CPUs pair into cores, which a trace.dat does not. A snapshot that
// cannot be read is reported, never fatal: the trace itself is fine.
std::optional<core::Topology> topologyBeside(const std::string& path, core::SchedBuilder& builder) {
  const std::string snapshot = core::topologySnapshotPath(path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(snapshot, ec)) return std::nullopt;
  auto topology = core::readTopologySnapshot(snapshot);
  if (topology) return *topology;
  std::string why = topology.error().message();
  if (why.starts_with(snapshot + ": ")) why.erase(0, snapshot.size() + 2);
  builder.diagnostics().record({core::DiagCode::topology_snapshot_unreadable, snapshot, std::nullopt, std::nullopt,
                                std::nullopt, std::nullopt, why});
  return std::nullopt;
}

// A small text file saved beside the trace by `schedlab-cli record`; nullopt
// when there is none, or (noted in the diagnostics) when it cannot be read or
// is too large to be what its name says: that is not read into memory.
std::optional<std::string> readBeside(const std::string& file, uintmax_t maxBytes, const std::string& what,
                                      core::SchedBuilder& builder) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  const auto unreadable = [&](const std::string& why) {
    builder.diagnostics().record(
        {core::DiagCode::malformed_record, file, std::nullopt, std::nullopt, std::nullopt, std::nullopt, why});
  };
  const uintmax_t size = std::filesystem::file_size(file, ec);
  if (!ec && size > maxBytes) {
    unreadable(std::to_string(size) + " bytes: too large to be " + what + " (at most " +
               std::to_string(maxBytes >> 20) + " MiB); not read");
    return std::nullopt;
  }
  std::ifstream in(file, std::ios::binary);
  // The byte past the size lets read() meet the end of the file (sidecars are written whole and renamed into place).
  std::string text(static_cast<size_t>(ec ? maxBytes : size) + 1, '\0');
  try {  // a failed read() throws out of the stream buffer
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
  } catch (const std::exception&) {
    in.setstate(std::ios::badbit);
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad() || (!in && !in.eof())) {
    unreadable("the " + what + " beside the trace could not be read");
    return std::nullopt;
  }
  return text;
}

template <typename BadLines>
void recordBadLines(const std::string& file, const BadLines& badLines, core::SchedBuilder& builder) {
  for (const auto& bad : badLines)
    builder.diagnostics().record(
        {core::DiagCode::malformed_record, file, bad.line, std::nullopt, std::nullopt, std::nullopt, bad.why});
}

// The scheduler settings saved beside the trace go into the run's metadata
// under their sysctl names, with the file they came from. A line that is not
// a setting is counted and shown; the others are kept.
void schedSettingsBeside(const std::string& path, core::SchedBuilder& builder) {
  const std::string file = core::schedSettingsPath(path);
  // A machine's sched_* settings are a few hundred bytes.
  const std::optional<std::string> text = readBeside(file, 1 << 20, "scheduler settings", builder);
  if (!text) return;
  const core::ParsedSchedSettings parsed = core::parseSchedSettings(*text);
  recordBadLines(file, parsed.badLines, builder);
  for (const auto& setting : parsed.settings) builder.setMetadata(setting.name, setting.value);
  if (!parsed.settings.empty()) builder.setMetadata(core::kSchedSettingsFromKey, file);
}

// The autogroups saved beside the trace, as its entries: applied to the thread
// table once the model is built. A line that is not an entry is counted and shown.
std::vector<core::AutogroupEntry> autogroupsBeside(const std::string& path, core::SchedBuilder& builder) {
  const std::string file = core::autogroupsPath(path);
  // About 20 bytes a thread: 64 MiB is millions of threads.
  const std::optional<std::string> text = readBeside(file, 64 << 20, "task autogroups", builder);
  if (!text) return {};
  core::ParsedAutogroups parsed = core::parseAutogroups(*text);
  recordBadLines(file, parsed.badLines, builder);
  if (!parsed.entries.empty()) builder.setMetadata(core::kAutogroupsFromKey, file);
  return std::move(parsed.entries);
}

// A "start" entry names the task alive when tracing started: the first row of
// its tid. An "end" entry names the task alive when it stopped, the last row,
// and is taken only where no "start" entry spoke: a task that called setsid()
// while it was traced keeps the group it began in.
void applyAutogroups(const std::vector<core::AutogroupEntry>& entries, core::ThreadTable& threads) {
  std::unordered_map<int32_t, std::pair<uint32_t, uint32_t>> rows;  // tid -> first and last row
  for (uint32_t u = 0; u < threads.size(); ++u) {
    const auto [it, added] = rows.try_emplace(threads.tid[u], u, u);
    if (!added) it->second.second = u;
  }
  for (const core::SnapshotWhen when : {core::SnapshotWhen::Start, core::SnapshotWhen::End})
    for (const core::AutogroupEntry& e : entries) {
      const auto it = rows.find(e.tid);
      if (e.when != when || it == rows.end()) continue;
      const uint32_t u = when == core::SnapshotWhen::Start ? it->second.first : it->second.second;
      if (when == core::SnapshotWhen::End && threads.autogroup[u] >= 0) continue;
      threads.autogroup[u] = e.group;
      threads.autogroupNice[u] = e.nice;
    }
}

// What the first bytes of `path` say it is compressed with (None when they cannot be read).
Compression compressionOfFile(const std::string& path) {
  std::array<std::byte, 8> head{};
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  return compressionOf(std::span<const std::byte>(head.data(), static_cast<size_t>(in.gcount())));
}

// Whether `schedlab-cli record` left anything beside `trace`.
bool anythingBeside(const std::string& trace) {
  std::error_code ec;
  for (const std::string& beside :
       {core::topologySnapshotPath(trace), core::schedSettingsPath(trace), core::autogroupsPath(trace)})
    if (std::filesystem::exists(beside, ec)) return true;
  return false;
}

}  // namespace

core::Result<ImportResult> importTrace(const std::string& path, const ImportOptions& options) {
  auto picked = pickImporter(path);
  if (!picked) return picked.error();
  core::SchedBuilder builder;
  builder.addSourceFile(path);
  builder.setFormat(std::string(picked.value()->name()));

  // A compressed trace: its importer reads a decompressed copy (pickImporter()
  // has refused what cannot be decompressed), and the files saved beside it
  // may carry the name it had before it was compressed.
  std::optional<DecompressedCopy> copy;
  std::string besideName = path;
  ImportOptions readOptions = options;
  if (const Compression c = compressionOfFile(path); c != Compression::None) {
    ImportOptions decompressing = options;
    if (options.progress) decompressing.progress = [&options](double f) { options.progress(0.5 * f); };
    auto decompressed = decompressToTemp(path, c, decompressing);
    if (!decompressed) return decompressed.error();
    copy.emplace(std::move(*decompressed));
    if (options.progress) readOptions.progress = [&options](double f) { options.progress(0.5 + 0.5 * f); };
    builder.setMetadata("compression", std::string(compressionName(c)));
    if (const std::string plain = withoutCompressionSuffix(path); plain != path && !anythingBeside(path))
      besideName = plain;
  }
  const std::string readPath = copy ? copy->path() : path;
  core::Status status = picked.value()->read(readPath, builder, readOptions);
  if (copy) {
    // Line numbers and byte offsets in the importer's words count in the
    // decompressed data, whether it named the copy or the file it stands for.
    const std::string shown = path + " (decompressed)";
    for (const std::string* named : {&path, &readPath}) {
      builder.diagnostics().renameFile(*named, shown);
      if (!status) status = core::Error(core::withFileRenamed(status.message(), *named, shown));
    }
    if (const auto& damage = copy->damage()) {
      builder.diagnostics().record(
          {core::DiagCode::truncated_input, path, std::nullopt, damage->offset, std::nullopt, std::nullopt, damage->why});
      const std::string where = path + ": byte offset " + std::to_string(damage->offset) + ": " + damage->why;
      status = core::Error(status ? where : where + "; and then: " + status.message());
    }
    copy.reset();  // read: its room in the temp folder is given back before the model is finalized
  }
  if (!status && (builder.empty() || options.stop.stop_requested())) return core::Error(status.message());
  if (!status) builder.setPartial(status.message());
  // Read after the trace, whose diagnostics were renamed above: this one names the snapshot.
  if (const auto topology = options.topology ? options.topology : topologyBeside(besideName, builder))
    builder.setTopology(*topology);
  schedSettingsBeside(besideName, builder);
  const std::vector<core::AutogroupEntry> autogroups = autogroupsBeside(besideName, builder);
  ImportResult result;
  result.model = builder.finalize();
  applyAutogroups(autogroups, result.model->threads);
  if (options.topology) result.model->topology.setSource("user");
  if (!status) result.error = core::Error(status.message());
  if (result.model->eventCount == 0 && !status) return core::Error(status.message());
  return result;
}

core::Result<std::vector<std::string>> copyFilesBeside(const core::TraceModel& model, const std::string& newTrace) {
  namespace fs = std::filesystem;
  std::vector<std::string> written;
  for (const auto& [key, to] : {std::pair{core::kSchedSettingsFromKey, core::schedSettingsPath(newTrace)},
                                std::pair{core::kAutogroupsFromKey, core::autogroupsPath(newTrace)}}) {
    const auto from = model.metadata.find(key);
    if (from == model.metadata.end()) continue;
    std::error_code ec;
    if (fs::exists(to, ec) && fs::equivalent(from->second, to, ec)) continue;
    fs::copy_file(from->second, to, fs::copy_options::overwrite_existing, ec);
    if (ec) return core::Error(to + ": cannot copy " + from->second + " there (" + ec.message() + ")");
    written.push_back(to);
  }
  return written;
}

}  // namespace importers
