// The "ftrace-text" importer: probes for ftrace text in any of its layouts and
// hands the file to FtraceTextReader. Registered by importers/builtin.cpp.
#include "importers/ftrace/ftrace_text_reader.h"
#include "importers/importer.h"
#include "importers/registered.h"

namespace importers {

namespace {

class FtraceTextImporter final : public Importer {
 public:
  std::string_view name() const override { return "ftrace-text"; }

  int probe(const ProbeInput& input) const override {
    if (input.isDirectory) return 0;
    return ftrace::probeFtraceText(input.headText());
  }

  core::Status read(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options) override {
    ftrace::FtraceTextReader reader(builder, options);
    return reader.read(path);
  }
};

}  // namespace

std::unique_ptr<Importer> makeFtraceTextImporter() { return std::make_unique<FtraceTextImporter>(); }

}  // namespace importers
