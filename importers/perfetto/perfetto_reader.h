// Reads a Perfetto protobuf trace (`.perfetto-trace`, `.pftrace`) into a
// core::SchedBuilder: ftrace bundles in both encodings (per-event FtraceEvent
// and compact_sched), packets inside compressed_packets (deflate) and
// zstd_compressed_packets, thread names and tgids from process_tree and
// process_stats, lost events, ftrace_stats overruns and bundle gaps as data
// loss, the bundles' ftrace_clock, and the CPU count (system_info, cpu_info).
// Called by the "perfetto" importer (perfetto_importer.cpp).
//
// Two passes over the packets: the first finds which CPUs have bundles and
// reads the process tree and system packets (a few per trace), the second
// decodes the bundles. Knowing every CPU up front is what lets events go to the
// builder as soon as every CPU's bundles are read past them: Perfetto reads
// each CPU's kernel buffer a page at a time, so a quiet CPU's events arrive
// seconds after the busy CPUs' (3.2 s in test_trace.perfetto-trace).
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "core/result.h"
#include "core/sched_builder.h"
#include "importers/importer.h"

namespace importers::perfetto {

/// 90 when the head parses as TracePacket records, else 0.
int probePerfetto(std::span<const std::byte> head, uint64_t fileSize);

using importers::Threading;  // whether the bundles are decoded on a worker thread

/// Reads `path` into `builder`. Fails with "PATH: byte offset N (0xN): what"
/// when the file turns bad (everything before the bad packet kept). Never throws.
core::Status readPerfetto(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options,
                          Threading threading = Threading::Auto);

}  // namespace importers::perfetto
