// Reads a perf.data file — file layout (PERFILE2 header, attrs, data, feature
// sections), pipe layout (`perf record -o -`), or the folder of `perf record
// --threads`; records zstd-compressed or not — into a core::SchedBuilder:
// sched tracepoint samples in timestamp order, COMM/FORK/EXIT task identity,
// LOST records as data loss, and the header's topology and metadata.
// Called by the "perf.data" importer (perf_data_importer.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/sched_builder.h"
#include "importers/importer.h"

namespace importers::perf {

/// 100 for a PERFILE2 header of either endianness, 60 for the unsupported
/// version-1 magic (so the user gets a clear "version" error), else 0.
int probePerfData(std::span<const std::byte> head);
/// 100 for a folder whose `data` file is a perf.data file (perf record
/// --threads writes the header there and the events beside it), else 0.
int probePerfDataFolder(const std::string& path, const std::vector<std::string>& entries);

using importers::Threading;  // whether the records are read on a worker thread

/// Reads `path` (a file, or the folder of perf record --threads) into `builder`. Fails with "PATH: byte offset N (0xN): what" when
/// the header is unusable (nothing fed) or the body turns corrupt (everything
/// before the bad record fed, in timestamp order). Never throws.
core::Status readPerfData(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options,
                          Threading threading = Threading::Auto);

}  // namespace importers::perf
