#include "replay/sim/params.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace replay {

namespace {
std::string formatDouble(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}
}  // namespace

void Params::defineInt(std::string key, int64_t value, int64_t min, int64_t max, std::string doc) {
  Spec s;
  s.key = std::move(key);
  s.type = Type::Int;
  s.value = std::to_string(value);
  s.doc = std::move(doc);
  s.minInt = min;
  s.maxInt = max;
  m_specs.push_back(std::move(s));
}

void Params::defineDouble(std::string key, double value, double min, double max, std::string doc) {
  Spec s;
  s.key = std::move(key);
  s.type = Type::Double;
  s.value = formatDouble(value);
  s.doc = std::move(doc);
  s.minDouble = min;
  s.maxDouble = max;
  m_specs.push_back(std::move(s));
}

void Params::defineBool(std::string key, bool value, std::string doc) {
  Spec s;
  s.key = std::move(key);
  s.type = Type::Bool;
  s.value = value ? "true" : "false";
  s.doc = std::move(doc);
  m_specs.push_back(std::move(s));
}

void Params::defineChoice(std::string key, std::string value, std::vector<std::string> choices, std::string doc) {
  Spec s;
  s.key = std::move(key);
  s.type = Type::Choice;
  s.value = std::move(value);
  s.doc = std::move(doc);
  s.choices = std::move(choices);
  m_specs.push_back(std::move(s));
}

void Params::defineText(std::string key, std::string value, std::string doc) {
  Spec s;
  s.key = std::move(key);
  s.type = Type::Text;
  s.value = std::move(value);
  s.doc = std::move(doc);
  m_specs.push_back(std::move(s));
}

const Params::Spec* Params::find(std::string_view key) const {
  for (const Spec& s : m_specs)
    if (s.key == key) return &s;
  return nullptr;
}

Params::Spec* Params::find(std::string_view key) {
  for (Spec& s : m_specs)
    if (s.key == key) return &s;
  return nullptr;
}

core::Status Params::set(std::string_view key, std::string_view value) {
  Spec* s = find(key);
  if (!s) {
    std::string known;
    for (const Spec& k : m_specs) known += (known.empty() ? "" : ", ") + k.key;
    return core::Error("unknown parameter '" + std::string(key) + "' (known: " + known + ")");
  }
  const std::string v(value);
  s->origin = "user";
  switch (s->type) {
    case Type::Int: {
      int64_t x = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (ec != std::errc() || p != v.data() + v.size())
        return core::Error("parameter " + s->key + "=" + v + ": not an integer");
      if (x < s->minInt || x > s->maxInt)
        return core::Error("parameter " + s->key + "=" + v + ": out of range " + std::to_string(s->minInt) + ".." +
                           std::to_string(s->maxInt));
      s->value = std::to_string(x);
      return {};
    }
    case Type::Double: {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(x))
        return core::Error("parameter " + s->key + "=" + v + ": not a number");
      if (x < s->minDouble || x > s->maxDouble)
        return core::Error("parameter " + s->key + "=" + v + ": out of range " + formatDouble(s->minDouble) + ".." +
                           formatDouble(s->maxDouble));
      s->value = formatDouble(x);
      return {};
    }
    case Type::Bool: {
      if (v == "1" || v == "true" || v == "on" || v == "yes") s->value = "true";
      else if (v == "0" || v == "false" || v == "off" || v == "no") s->value = "false";
      else return core::Error("parameter " + s->key + "=" + v + ": expected true or false");
      return {};
    }
    case Type::Choice: {
      for (const std::string& c : s->choices)
        if (c == v) {
          s->value = v;
          return {};
        }
      std::string list;
      for (const std::string& c : s->choices) list += (list.empty() ? "" : ", ") + c;
      return core::Error("parameter " + s->key + "=" + v + ": expected one of " + list);
    }
    case Type::Text: s->value = v; return {};
  }
  return {};
}

core::Status Params::resolve(std::string_view key, std::string_view value, std::string origin) {
  if (auto st = set(key, value); !st) return st;
  find(key)->origin = std::move(origin);
  return {};
}

core::Status Params::setAssignment(std::string_view assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return core::Error("--param '" + std::string(assignment) + "': expected KEY=VALUE");
  return set(assignment.substr(0, eq), assignment.substr(eq + 1));
}

const std::string& Params::origin(std::string_view key) const {
  const Spec* s = find(key);
  assert(s);
  return s->origin;
}

int64_t Params::getInt(std::string_view key) const {
  const Spec* s = find(key);
  assert(s && s->type == Type::Int);
  return s ? std::strtoll(s->value.c_str(), nullptr, 10) : 0;
}

double Params::getDouble(std::string_view key) const {
  const Spec* s = find(key);
  assert(s && s->type == Type::Double);
  return s ? std::strtod(s->value.c_str(), nullptr) : 0.0;
}

bool Params::getBool(std::string_view key) const {
  const Spec* s = find(key);
  assert(s && (s->type == Type::Bool || s->type == Type::Choice));
  return s && s->value == "true";
}

const std::string& Params::get(std::string_view key) const {
  static const std::string kEmpty;
  const Spec* s = find(key);
  assert(s);
  return s ? s->value : kEmpty;
}

std::vector<core::ReplayParam> Params::describe() const {
  std::vector<core::ReplayParam> out;
  out.reserve(m_specs.size());
  for (const Spec& s : m_specs) out.push_back({s.key, s.value, s.doc, s.origin});
  return out;
}

std::string Params::helpText() const {
  std::ostringstream out;
  for (const Spec& s : m_specs) {
    out << "  " << s.key << " = " << s.value;
    switch (s.type) {
      case Type::Int: out << " (integer " << s.minInt << ".." << s.maxInt << ")"; break;
      case Type::Double: out << " (number " << formatDouble(s.minDouble) << ".." << formatDouble(s.maxDouble) << ")"; break;
      case Type::Bool: out << " (true/false)"; break;
      case Type::Choice: {
        out << " (";
        for (size_t i = 0; i < s.choices.size(); ++i) out << (i ? "|" : "") << s.choices[i];
        out << ")";
        break;
      }
      case Type::Text: break;
    }
    out << "\n      " << s.doc << "\n";
  }
  return out.str();
}

}  // namespace replay
