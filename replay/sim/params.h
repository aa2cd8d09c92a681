// Named replay parameters with defaults, ranges and a doc string each: the
// engine and every policy declare theirs here, `--param key=value` overrides
// them, and the full list (key, value, doc) is stored with the replayed model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/trace_model.h"

namespace replay {

class Params {
 public:
  enum class Type : uint8_t { Int, Double, Bool, Choice, Text };

  struct Spec {
    std::string key;
    Type type = Type::Int;
    std::string value;  ///< current value, as text (starts as the default)
    std::string doc;
    /// Where the value comes from: "default" (the doc says whose), "user"
    /// (--param), or how it was resolved ("measured from the recording: ...",
    /// "release 6.18.44: ...").
    std::string origin = "default";
    int64_t minInt = INT64_MIN, maxInt = INT64_MAX;
    double minDouble = -1e300, maxDouble = 1e300;
    std::vector<std::string> choices;
  };

  void defineInt(std::string key, int64_t value, int64_t min, int64_t max, std::string doc);
  void defineDouble(std::string key, double value, double min, double max, std::string doc);
  void defineBool(std::string key, bool value, std::string doc);
  void defineChoice(std::string key, std::string value, std::vector<std::string> choices, std::string doc);
  /// Free text validated by its user (e.g. a list of CPU speeds).
  void defineText(std::string key, std::string value, std::string doc);

  /// Sets `key` from text (origin "user"). Errors name the key and say what is allowed.
  core::Status set(std::string_view key, std::string_view value);
  /// Replaces a "derive it" value (-1 = measured, auto, release) with the one
  /// the replay derived itself (from the recording or the kernel release) and
  /// says how. Callers call it only for a parameter at such a value, whoever
  /// set it: a user's explicit -1 asks for the measurement, and the replay
  /// then reports the measured value, not -1.
  core::Status resolve(std::string_view key, std::string_view value, std::string origin);
  /// "key=value"
  core::Status setAssignment(std::string_view assignment);

  bool has(std::string_view key) const { return find(key) != nullptr; }
  int64_t getInt(std::string_view key) const;
  double getDouble(std::string_view key) const;
  /// Bool parameters, and Choice parameters whose value is "true" or "false"
  /// (switches whose default depends on the kernel release, once resolved).
  bool getBool(std::string_view key) const;
  const std::string& get(std::string_view key) const;
  /// "default", "user", or how the replay resolved it (Spec::origin).
  const std::string& origin(std::string_view key) const;

  const std::vector<Spec>& specs() const { return m_specs; }
  std::vector<core::ReplayParam> describe() const;
  /// "hz (int, 1..10000, default 250): tick rate ..." lines, for --help.
  std::string helpText() const;

 private:
  const Spec* find(std::string_view key) const;
  Spec* find(std::string_view key);
  std::vector<Spec> m_specs;
};

/// Where a parameter resolved from the scheduler settings saved beside a
/// recording (schedlab-cli record) got its value: the setting's line, or why
/// there was none (the file lacks it, or there is no file).
inline std::string settingBeside(const std::string& name, const std::string& value) {
  return "the settings beside the recording: " + name + " = " + value;
}
inline std::string settingNotBeside(const std::string& name, bool settingsKnown) {
  return settingsKnown ? "the settings beside the recording do not have " + name
                       : "no scheduler settings beside the recording";
}

}  // namespace replay
