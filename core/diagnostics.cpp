#include "core/diagnostics.h"

#include <cstdio>

namespace core {
namespace {
struct DiagInfo {
  std::string_view name;
  Severity severity;
  std::string_view description;
};
constexpr std::array<DiagInfo, kDiagCount> kDiagTable = {{
#define SCHEDLAB_DIAG_INFO(name, sev, desc) {#name, Severity::sev, desc},
    SCHEDLAB_DIAGNOSTICS(SCHEDLAB_DIAG_INFO)
#undef SCHEDLAB_DIAG_INFO
}};
}  // namespace

std::string_view toString(Severity severity) {
  switch (severity) {
    case Severity::Info: return "info";
    case Severity::DataLoss: return "data-loss";
    case Severity::Error: return "error";
  }
  return "?";
}

std::string_view diagName(DiagCode code) { return kDiagTable[static_cast<size_t>(code)].name; }
std::string_view diagDescription(DiagCode code) { return kDiagTable[static_cast<size_t>(code)].description; }
Severity diagSeverity(DiagCode code) { return kDiagTable[static_cast<size_t>(code)].severity; }

std::string DiagnosticRecord::format() const {
  std::string out = file;
  char buf[96];
  if (line) {
    std::snprintf(buf, sizeof buf, ": line %llu", static_cast<unsigned long long>(*line));
    out += buf;
  } else if (byteOffset) {
    std::snprintf(buf, sizeof buf, ": byte offset %llu (0x%llx)", static_cast<unsigned long long>(*byteOffset),
                  static_cast<unsigned long long>(*byteOffset));
    out += buf;
  }
  if (cpu) {
    std::snprintf(buf, sizeof buf, " (cpu %d)", *cpu);
    out += buf;
  }
  out += ": ";
  out += message.empty() ? std::string(diagDescription(code)) : message;
  return out;
}

void Diagnostics::record(DiagnosticRecord rec) {
  size_t same = 0;
  for (const auto& r : m_records) same += r.code == rec.code;
  add(rec.code);
  if (same < kRecordsKeptPerCode) m_records.push_back(std::move(rec));
}

uint64_t Diagnostics::total(Severity severity) const {
  uint64_t sum = 0;
  for (size_t i = 0; i < kDiagCount; ++i)
    if (kDiagTable[i].severity == severity) sum += m_counts[i];
  return sum;
}

void Diagnostics::merge(const Diagnostics& other) {
  for (size_t i = 0; i < kDiagCount; ++i) m_counts[i] += other.m_counts[i];
  for (const auto& r : other.m_records) {
    size_t same = 0;
    for (const auto& mine : m_records) same += mine.code == r.code;
    if (same < kRecordsKeptPerCode) m_records.push_back(r);
  }
}

std::string withFileRenamed(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

void Diagnostics::renameFile(const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (auto& r : m_records) {
    if (r.file == from) r.file = to;
    r.message = withFileRenamed(std::move(r.message), from, to);
  }
}

}  // namespace core
