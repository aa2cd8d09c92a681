// The one sentence every output (CLI info, GUI run list, report) uses for a
// model's data loss, so that ranges whose count the tracer did not give are
// said to be of unknown count everywhere instead of adding up as 0.
#pragma once

#include <string>

#include "core/trace_model.h"

namespace core {

/// "none", "1234 in 3 ranges", "1234 in 3 ranges, 2 of them of
/// unknown count", "unknown number in 1 range".
std::string describeLostEvents(const TraceModel& m);

}  // namespace core
