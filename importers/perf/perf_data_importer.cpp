// The "perf.data" importer: claims files starting with the PERFILE2 magic, and
// the folders of perf record --threads, and hands them to the reader.
// Registered by importers/builtin.cpp.
#include "importers/importer.h"
#include "importers/perf/perf_data_reader.h"
#include "importers/registered.h"

namespace importers {

namespace {

class PerfDataImporter final : public Importer {
 public:
  std::string_view name() const override { return "perf.data"; }
  int probe(const ProbeInput& input) const override {
    return input.isDirectory ? perf::probePerfDataFolder(input.path, input.directoryEntries)
                             : perf::probePerfData(input.head);
  }
  core::Status read(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options) override {
    return perf::readPerfData(path, builder, options);
  }
};

}  // namespace

std::unique_ptr<Importer> makePerfDataImporter() { return std::make_unique<PerfDataImporter>(); }

}  // namespace importers
