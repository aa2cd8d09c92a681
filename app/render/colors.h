// The colours of the timeline and charts: stable task colours (a hash of comm
// and tid, so a task keeps its colour across runs, replays and sessions), state
// and cookie colours. Used by the renderer, the GUI's tables and charts, and reports.
#pragma once

#include <QColor>
#include <cstdint>
#include <string_view>

#include "core/timeline_index.h"

namespace app::render {

QColor taskColor(std::string_view comm, int32_t tid);
/// Colours of task states in per-task rows (and of the same categories in legends).
QColor stateColor(core::TrackKind kind);
/// A distinct colour per core-scheduling cookie (0 = untagged, transparent).
QColor cookieColor(uint32_t cookie);
/// Black or white, whichever reads better on `background`.
QColor textColorOn(const QColor& background);
/// The n-th colour of a categorical palette for runs in charts (recording, replays...).
QColor runColor(int index);

/// Fixed colours of the timeline.
struct Palette {
  QColor background{0xfb, 0xfb, 0xfb};
  QColor coreBandA{0xf4, 0xf6, 0xf9};
  QColor coreBandB{0xff, 0xff, 0xff};
  QColor groupHeader{0xdf, 0xe5, 0xee};  ///< a CPU or process group's header row
  QColor gutter{0xee, 0xf0, 0xf3};
  QColor gutterText{0x22, 0x22, 0x22};
  QColor gutterSubText{0x66, 0x6b, 0x73};
  QColor separator{0xd6, 0xda, 0xe0};
  QColor coreSeparator{0x9a, 0xa3, 0xaf};
  QColor forcedIdle{0xb0, 0x3a, 0x2e};
  QColor forcedIdleBack{0xf6, 0xdf, 0xdb};
  QColor loss{0xd0, 0x10, 0x10};
  QColor lossBack{0xff, 0xe8, 0xe8};
  QColor highlight{0xff, 0xc4, 0x00};
  QColor selection{0x33, 0x77, 0xdd, 0x38};
  QColor selectionEdge{0x33, 0x77, 0xdd};
  QColor cursor{0x20, 0x20, 0x20, 0xa0};
  QColor rulerBack{0xf0, 0xf2, 0xf5};
  QColor rulerText{0x30, 0x30, 0x30};
  QColor rulerTick{0x80, 0x86, 0x90};
  QColor paneHeader{0xe3, 0xe8, 0xef};
  QColor paneHeaderReplay{0xe6, 0xef, 0xe2};
  QColor paneHeaderText{0x1a, 0x1a, 0x1a};
};
const Palette& palette();

}  // namespace app::render
