// The "perfetto" importer: Perfetto protobuf traces, probed from their first
// packets (perfetto_reader.h). Registered through makePerfettoImporter().
#include <filesystem>

#include "importers/importer.h"
#include "importers/perfetto/perfetto_reader.h"
#include "importers/registered.h"

namespace importers {

namespace {

class PerfettoImporter final : public Importer {
 public:
  std::string_view name() const override { return "perfetto"; }
  int probe(const ProbeInput& input) const override {
    if (input.isDirectory) return 0;
    std::error_code ec;
    const auto size = std::filesystem::file_size(input.path, ec);
    return perfetto::probePerfetto(input.head, ec ? input.head.size() : size);
  }
  core::Status read(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options) override {
    return perfetto::readPerfetto(path, builder, options);
  }
};

}  // namespace

std::unique_ptr<Importer> makePerfettoImporter() { return std::make_unique<PerfettoImporter>(); }

}  // namespace importers
