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
    const std::vector<std::string> dirs = ctf::findCtfTraceDirs(path);
    if (dirs.empty()) {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) return core::Error(path + ": no such file or folder");
      return core::Error(path + ": no CTF trace here (no folder with a CTF 'metadata' file, up to 4 levels down)");
    }
    core::Status status = ctf::readCtfTraces(dirs, builder, options);
    if (status && builder.eventsSeen() == 0) {
      // babeltrace2 reads an empty stream file as a stream without packets, so a
      // trace whose streams are all empty would open as a model of nothing.
      for (const auto& dir : dirs) {
        std::error_code ec;
        for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
          if (it->path().filename() == "metadata" || !it->is_regular_file(ec) || it->file_size(ec) != 0) continue;
          return core::Error(it->path().string() + ": empty stream file (byte offset 0); the trace has no events");
        }
      }
    }
    return status;
  }
};

}  // namespace

std::unique_ptr<Importer> makeCtfImporter() { return std::make_unique<CtfImporter>(); }

}  // namespace importers
