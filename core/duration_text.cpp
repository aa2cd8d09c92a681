#include "core/duration_text.h"

#include <cmath>
#include <cstdio>

namespace core {

std::string formatDuration(int64_t ns) {
  char buf[48];
  const double a = std::fabs(static_cast<double>(ns));
  if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.1f us", static_cast<double>(ns) / 1e3);
  else std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  return buf;
}

}  // namespace core
