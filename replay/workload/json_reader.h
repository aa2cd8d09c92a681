// A small JSON reader for hand-written workload files: a DOM that keeps object
// keys in file order (rt-app event order matters) and each value's line and
// column, so errors point at the spot. Used by rtapp_reader only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace replay::json {

enum class Type : uint8_t { Null, Bool, Number, String, Array, Object };
std::string_view toString(Type type);

struct Member;

struct Value {
  Type type = Type::Null;
  bool boolean = false;
  double number = 0;
  bool integral = false;  ///< the number was written without fraction or exponent
  int64_t integer = 0;    ///< valid when integral
  std::string string;
  std::vector<Value> items;                           ///< Array
  std::vector<Member> members;  ///< Object, in file order (a vector may hold a type still incomplete here)
  int line = 0;
  int column = 0;

  const Value* find(std::string_view key) const;
};

struct Member {
  std::string key;
  Value value;
};

/// Parses `text`; errors read "NAME: line L, column C: what". Nesting deeper
/// than 256 levels and documents with trailing content are errors.
core::Result<Value> parse(std::string_view text, const std::string& name);

}  // namespace replay::json
