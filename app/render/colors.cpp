#include "app/render/colors.h"

#include <array>
#include <cmath>

namespace app::render {

namespace {
uint32_t fnv1a(std::string_view s, uint32_t h = 2166136261u) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}
uint32_t mix(uint32_t x) {
  // murmur3 finaliser: neighbouring tids must not get neighbouring hues.
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}
}  // namespace

QColor taskColor(std::string_view comm, int32_t tid) {
  // Threads of one program have the same comm and neighbouring tids: step the
  // hue by the golden angle per tid so siblings never look alike, and start
  // from the comm's hash so different programs differ too.
  const uint32_t c = mix(fnv1a(comm));
  const double hue = std::fmod(static_cast<double>(c % 360) + 137.508 * static_cast<double>(static_cast<uint32_t>(tid) % 100000), 360.0);
  const uint32_t h = mix(c ^ static_cast<uint32_t>(tid));
  const int sat = 140 + static_cast<int>((h >> 9) % 80);
  const int light = 118 + static_cast<int>((h >> 17) % 50);
  return QColor::fromHsl(static_cast<int>(hue), sat, light);
}

QColor stateColor(core::TrackKind kind) {
  switch (kind) {
    case core::TrackKind::Running: return {0x2f, 0x9e, 0x44};
    case core::TrackKind::Runnable: return {0x8f, 0xc9, 0xe8};
    case core::TrackKind::Sleeping: return {0xd3, 0xd7, 0xdd};
    case core::TrackKind::Blocked: return {0xe8, 0x7a, 0x2c};
    case core::TrackKind::ForcedIdle: return palette().forcedIdle;
    case core::TrackKind::Loss: return palette().loss;
    case core::TrackKind::Empty: break;
  }
  return {0, 0, 0, 0};
}

QColor cookieColor(uint32_t cookie) {
  if (cookie == 0) return {0, 0, 0, 0};
  const uint32_t h = mix(cookie * 2654435761u);
  return QColor::fromHsl(static_cast<int>(h % 360), 220, 70);
}

QColor textColorOn(const QColor& background) {
  const double lum = 0.299 * background.redF() + 0.587 * background.greenF() + 0.114 * background.blueF();
  return lum > 0.55 ? QColor(0x11, 0x11, 0x11) : QColor(0xff, 0xff, 0xff);
}

QColor runColor(int index) {
  static const std::array<QColor, 8> colors = {
      QColor(0x1f, 0x77, 0xb4), QColor(0xd6, 0x27, 0x28), QColor(0x2c, 0xa0, 0x2c), QColor(0xff, 0x7f, 0x0e),
      QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2), QColor(0x17, 0xbe, 0xcf)};
  return colors[static_cast<size_t>(index) % colors.size()];
}

const Palette& palette() {
  static const Palette p;
  return p;
}

}  // namespace app::render
