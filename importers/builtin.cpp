#include "importers/importer.h"
#include "importers/registered.h"

namespace importers {

void registerBuiltinImporters([[maybe_unused]] std::vector<std::unique_ptr<Importer>>& list) {
#ifdef SCHEDLAB_HAVE_TRACEDAT
  list.push_back(makeTraceDatImporter());
#endif
#ifdef SCHEDLAB_HAVE_PERFDATA
  list.push_back(makePerfDataImporter());
#endif
#ifdef SCHEDLAB_HAVE_CTF
  list.push_back(makeCtfImporter());
#endif
#ifdef SCHEDLAB_HAVE_PERFETTO
  list.push_back(makePerfettoImporter());
#endif
#ifdef SCHEDLAB_HAVE_PERFSCRIPT
  list.push_back(makePerfScriptImporter());
#endif
#ifdef SCHEDLAB_HAVE_FTRACE
  list.push_back(makeFtraceTextImporter());
#endif
}

}  // namespace importers
