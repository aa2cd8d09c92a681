#include "core/string_pool.h"

namespace core {

StringPool::StringPool() { intern(""); }

StringId StringPool::intern(std::string_view text) {
  if (auto it = m_index.find(text); it != m_index.end()) return StringId(it->second);
  const auto id = static_cast<uint32_t>(m_strings.size());
  m_strings.emplace_back(text);
  m_index.emplace(m_strings.back(), id);
  return StringId(id);
}

size_t StringPool::memoryBytes() const {
  size_t bytes = 0;
  for (const auto& s : m_strings) bytes += sizeof(std::string) + (s.size() > 15 ? s.capacity() : 0);
  return bytes + m_index.size() * (sizeof(std::string_view) + sizeof(uint32_t) + 2 * sizeof(void*));
}

}  // namespace core
