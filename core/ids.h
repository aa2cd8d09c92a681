// Strong id types shared by every table of the trace model. Utid and Upid are
// dense and stay unique when the kernel reuses a tid; StringId indexes the
// model's StringPool.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>

namespace core {

template <typename Tag, typename Rep>
struct StrongId {
  using rep_type = Rep;
  static constexpr Rep kInvalidValue = std::numeric_limits<Rep>::max();
  Rep value = kInvalidValue;

  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr bool isValid() const { return value != kInvalidValue; }
  constexpr auto operator<=>(const StrongId&) const = default;
};

using Utid = StrongId<struct UtidTag, uint32_t>;          ///< unique thread (task) id
using Upid = StrongId<struct UpidTag, uint32_t>;          ///< unique process id
using StringId = StrongId<struct StringIdTag, uint32_t>;  ///< interned string
using CpuId = uint16_t;

/// The idle task ("swapper/N", tid 0) is always utid 0.
inline constexpr Utid kIdleUtid{0};

}  // namespace core

template <typename Tag, typename Rep>
struct std::hash<core::StrongId<Tag, Rep>> {
  size_t operator()(const core::StrongId<Tag, Rep>& id) const noexcept { return std::hash<Rep>{}(id.value); }
};
