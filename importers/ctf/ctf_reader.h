// Reads CTF traces through the babeltrace2 library (src.ctf.fs -> our own sink,
// which merges the streams in time order as flt.utils.muxer would) and feeds
// every event to the SchedBuilder in timestamp order, the builder running on a
// second thread when a core is free for it. Called by the CTF importer
// (ctf_importer.cpp) once it knows the trace folders.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "core/sched_builder.h"
#include "importers/importer.h"

namespace importers::ctf {

/// Reads the CTF trace folders `traceDirs` (one babeltrace2 source each, merged
/// by time) into `builder`. Fails (Status) when babeltrace2 cannot open a trace
/// or stops decoding part-way; events already read stay in the builder. A
/// stream file with a bad or cut-short packet is read up to that packet and
/// the rest imported; the returned error then names the file and byte offset.
/// Never throws; `builder` is not touched by another thread after it returns.
/// `threading`: whether the model is built on a second thread (importer.h).
core::Status readCtfTraces(const std::vector<std::string>& traceDirs, core::SchedBuilder& builder,
                           const ImportOptions& options, Threading threading = Threading::Auto);

}  // namespace importers::ctf
