#include "core/data_loss_text.h"

namespace core {

std::string describeLostEvents(const TraceModel& m) {
  const size_t ranges = m.dataLoss.size();
  if (ranges == 0) return "none";
  const size_t unknown = m.lostRangesOfUnknownCount();
  const std::string inRanges = " in " + std::to_string(ranges) + (ranges == 1 ? " range" : " ranges");
  // A count summed over only some ranges is a lower bound: said as such, never as the total.
  if (unknown == 0) return std::to_string(m.lostEvents()) + inRanges;
  if (unknown == ranges) return "unknown number" + inRanges;
  return std::to_string(m.lostEvents()) + inRanges + ", " + std::to_string(unknown) + " of them of unknown count";
}

}  // namespace core
