// Durations as people read them in plain-text output (the CLI, and the
// replay's summaries that the GUI and reports show as they are).
#pragma once

#include <cstdint>
#include <string>

namespace core {

/// "1.234 s", "5.678 ms", "9.0 us" or "12 ns", by size.
std::string formatDuration(int64_t ns);

}  // namespace core
