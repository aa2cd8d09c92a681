// The CTF importer: claims trace folders (or their metadata file, or a session
// folder above them) and hands them to the babeltrace2-based reader.
#include <filesystem>
#include <fstream>

#include "importers/ctf/ctf_reader.h"
#include "importers/ctf/ctf_trace_finder.h"
#include "importers/importer.h"
#include "importers/registered.h"

namespace importers {

namespace {

class CtfImporter final : public Importer {
 public:
  std::string_view name() const override { return "ctf"; }

  int probe(const ProbeInput& input) const override {
    if (!input.isDirectory) {
      if (!ctf::looksLikeCtfMetadata(input.head)) return 0;
      // A metadata file opens its folder; a stray copy elsewhere does not.
      return ctf::isCtfTraceDir(std::filesystem::path(input.path).parent_path().string()) ? 100 : 0;
    }
    for (const auto& entry : input.directoryEntries)
      if (entry == "metadata" && ctf::isCtfTraceDir(input.path)) return 100;
    return ctf::findCtfTraceDirs(input.path).empty() ? 0 : 90;
  }

  core::Status read(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options) override {
    const auto recordings = ctf::findCtfRecordings(path);
    if (recordings.empty()) {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) return core::Error(path + ": no such file or folder");
      return core::Error(path + ": no CTF trace here (no folder with a CTF 'metadata' file, up to 4 levels down)");
    }
    // A folder that holds traces of several recordings (unrelated traces several
    // levels down, as in /tmp) is not one run: muxed together they would make a
    // model of nothing that ever ran.
    if (recordings.size() > 1) {
      std::string message = path + ": holds " + std::to_string(recordings.size()) +
                            " unrelated CTF traces, not one recording; open each as a run of its own:";
      for (const auto& r : recordings) message += "\n  " + r.root + ": " + r.description;
      return core::Error(message);
    }
    const std::vector<std::string>& dirs = recordings.front().dirs;
    core::Status status = ctf::readCtfTraces(dirs, builder, options);
    if (status && builder.eventsSeen() == 0) {
      // babeltrace2 reads an empty stream file as a stream without packets, so a
      // trace whose streams are all empty would open as a model of nothing.
      for (const auto& dir : dirs) {
        const auto streams = ctf::streamFileNames(dir);
        if (streams.empty()) return core::Error(dir + ": the trace has no stream files (only its metadata)");
        for (const auto& name : streams) {
          std::error_code ec;
          const auto file = std::filesystem::path(dir) / name;
          if (std::filesystem::file_size(file, ec) != 0 || ec) continue;
          return core::Error(file.string() + ": empty stream file (byte offset 0); the trace has no events");
        }
      }
    }
    return status;
  }

  std::vector<std::string> separateRuns(const std::string& path) const override {
    const auto recordings = ctf::findCtfRecordings(path);
    if (recordings.size() < 2) return {};
    std::vector<std::string> roots;
    for (const auto& r : recordings) roots.push_back(r.root);
    return roots;
  }
};

}  // namespace

std::unique_ptr<Importer> makeCtfImporter() { return std::make_unique<CtfImporter>(); }

}  // namespace importers
