// Interns comms, event names and file names once per model; rows store 32-bit
// StringIds. Written during import, read-only afterwards.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ids.h"

namespace core {

class StringPool {
 public:
  StringPool();
  StringId intern(std::string_view text);
  std::string_view get(StringId id) const { return id.isValid() ? std::string_view(m_strings[id.value]) : std::string_view(); }
  size_t size() const { return m_strings.size(); }
  size_t memoryBytes() const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  // deque: element addresses stay stable, so the map can key on views into it.
  std::deque<std::string> m_strings;
  std::unordered_map<std::string_view, uint32_t, Hash, std::equal_to<>> m_index;
};

}  // namespace core
