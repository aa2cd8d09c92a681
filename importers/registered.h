// Factory functions of the importers compiled into this build (each behind its
// CMake option); the registry calls registerBuiltinImporters once.
#pragma once

#include <memory>
#include <vector>

namespace importers {
class Importer;
void registerBuiltinImporters(std::vector<std::unique_ptr<Importer>>& list);

std::unique_ptr<Importer> makeFtraceTextImporter();
std::unique_ptr<Importer> makePerfScriptImporter();
std::unique_ptr<Importer> makeTraceDatImporter();
std::unique_ptr<Importer> makePerfDataImporter();
std::unique_ptr<Importer> makeCtfImporter();
std::unique_ptr<Importer> makePerfettoImporter();
}  // namespace importers
