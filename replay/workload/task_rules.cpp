#include "replay/workload/task_rules.h"

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <regex>

namespace replay {

namespace {

std::vector<std::string_view> splitRules(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t semi = std::min(text.find(';', pos), text.size());
    std::string_view item = text.substr(pos, semi - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.push_back(item);
    pos = semi + 1;
  }
  return out;
}

template <typename T>
std::optional<T> parseNumber(std::string_view s) {
  T v{};
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// libstdc++'s std::regex backtracks: a quantifier on something already
// quantified ("_**", "(a+)*") makes a failing search take time exponential in
// the nesting (comm:t_**************x took 12 s per comm), and its compiler
// overflows on a long back-reference or repeat count ("\\5555555555555555555":
// undefined behaviour). Both found by replay_text_fuzzer. A comm has at most 15
// characters: a selector needs neither, so they are refused.
std::optional<std::string> unsafeForStdRegex(std::string_view p) {
  std::vector<bool> groupHasQuantifier;  // per open group
  bool afterQuantifier = false;          // the last token was a quantifier
  bool afterQuantifiedGroup = false;     // the last token closed a group holding one
  auto numberAt = [&](size_t i) {        // length of the digit run at i
    size_t n = 0;
    while (i + n < p.size() && p[i + n] >= '0' && p[i + n] <= '9') ++n;
    return n;
  };
  constexpr size_t kMaxNumber = 3;  // repeat counts and back-references up to 999
  // The escape at i is read as std::regex reads it: "\\cX" takes the character
  // after the 'c' whatever it is, a backslash too. Read as a two-character
  // escape, "\\c\\\\5555..." hid a back-reference whose number overflows an int
  // inside libstdc++ (undefined behaviour, found by the replay_text fuzzer).
  auto escapeLength = [&](size_t i) -> size_t { return i + 1 < p.size() && p[i + 1] == 'c' ? 3 : 2; };
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    const bool quantifier = c == '*' || c == '+' || c == '{' || (c == '?' && !afterQuantifier && (i == 0 || p[i - 1] != '('));
    if (quantifier) {
      if (afterQuantifier || afterQuantifiedGroup) return "a quantifier on a quantified expression (std::regex would backtrack exponentially)";
      if (!groupHasQuantifier.empty()) groupHasQuantifier.back() = true;
      for (; c == '{' && i + 1 < p.size() && p[i] != '}'; ++i)
        if (numberAt(i + 1) > kMaxNumber) return "a repeat count above 999";
      afterQuantifier = true;
      afterQuantifiedGroup = false;
      continue;
    }
    if (c == '?') continue;  // lazy ("*?") or a group's "(?:"
    afterQuantifier = afterQuantifiedGroup = false;
    if (c == '\\') {
      if (numberAt(i + 1) > kMaxNumber) return "a back-reference above 999";
      i += escapeLength(i) - 1;
    } else if (c == '[') {
      // A class, to its first ']': in ECMAScript "[]" is an empty class, as
      // libstdc++ reads it (read as a literal ']', "[]...\5555" hid a
      // back-reference: replay_text fuzzer).
      size_t j = i + 1;
      if (j < p.size() && p[j] == '^') ++j;
      while (j < p.size() && p[j] != ']') j += p[j] == '\\' ? escapeLength(j) : 1;
      i = j;
    } else if (c == '(') {
      groupHasQuantifier.push_back(false);
    } else if (c == ')' && !groupHasQuantifier.empty()) {
      afterQuantifiedGroup = groupHasQuantifier.back();
      groupHasQuantifier.pop_back();
      if (afterQuantifiedGroup && !groupHasQuantifier.empty()) groupHasQuantifier.back() = true;
    }
  }
  return std::nullopt;
}

// "SELECTOR=VALUE", split at the last '=' (a comm regex may contain '=').
core::Result<std::pair<TaskSelector, std::string_view>> selectorAndValue(std::string_view rule, std::string_view what) {
  const size_t eq = rule.rfind('=');
  if (eq == std::string_view::npos || eq == 0)
    return core::Error(std::string(what) + " rule '" + std::string(rule) + "': expected SELECTOR=VALUE");
  auto sel = TaskSelector::parse(rule.substr(0, eq));
  if (!sel) return core::Error(std::string(what) + " rule '" + std::string(rule) + "': " + sel.error().message());
  return std::make_pair(std::move(*sel), rule.substr(eq + 1));
}

// Tasks no rule set take their parent's value (fork inheritance), recursively.
template <typename Get, typename Set>
void inheritFromParents(const Workload& w, const std::vector<bool>& set, Get get, Set put) {
  for (size_t t = 0; t < w.tasks.size(); ++t) {
    if (set[t]) continue;
    TaskId p = w.tasks[t].parent;
    for (size_t depth = 0; p != kNoTask && depth < w.tasks.size(); ++depth) {
      if (set[p]) {
        put(t, get(p));
        break;
      }
      p = w.tasks[p].parent;
    }
  }
}

}  // namespace

core::Result<TaskSelector> TaskSelector::parse(std::string_view text) {
  TaskSelector s;
  s.text = std::string(text);
  auto idAfter = [&](std::string_view prefix) -> std::optional<int32_t> {
    auto v = parseNumber<int32_t>(text.substr(prefix.size()));
    if (!v || *v < 0) return std::nullopt;
    return v;
  };
  if (text == "all") {
    s.kind = Kind::All;
  } else if (text == "rt") {
    s.kind = Kind::Rt;
  } else if (text == "fair") {
    s.kind = Kind::Fair;
  } else if (text.starts_with("comm:")) {
    s.kind = Kind::Comm;
    s.pattern = std::string(text.substr(5));
    if (auto why = unsafeForStdRegex(s.pattern))
      return core::Error("selector '" + s.text + "': " + *why);
    try {
      std::regex check(s.pattern);
    } catch (const std::regex_error& e) {
      return core::Error("selector '" + s.text + "': invalid regular expression (" + e.what() + ")");
    }
  } else if (text.starts_with("tgid:")) {
    s.kind = Kind::Tgid;
    auto id = idAfter("tgid:");
    if (!id) return core::Error("selector '" + s.text + "': expected tgid:N with N a process id");
    s.id = *id;
  } else if (text.starts_with("tid:")) {
    s.kind = Kind::Tid;
    auto id = idAfter("tid:");
    if (!id) return core::Error("selector '" + s.text + "': expected tid:N with N a thread id");
    s.id = *id;
  } else {
    return core::Error("selector '" + s.text + "': expected comm:REGEX, tgid:N, tid:N, all, rt or fair");
  }
  return s;
}

std::vector<TaskId> TaskSelector::match(const Workload& w) const {
  std::vector<TaskId> out;
  std::optional<std::regex> re;
  if (kind == Kind::Comm) re.emplace(pattern);
  for (size_t t = 0; t < w.tasks.size(); ++t) {
    const Task& task = w.tasks[t];
    bool hit = false;
    switch (kind) {
      case Kind::All: hit = true; break;
      case Kind::Rt: hit = isRtPolicy(task.policy); break;
      case Kind::Fair: hit = !isRtPolicy(task.policy); break;
      case Kind::Comm: hit = std::regex_search(task.comm, *re); break;
      case Kind::Tgid: hit = (task.tgid >= 0 ? task.tgid : task.tid) == id; break;
      case Kind::Tid: hit = task.tid == id; break;
    }
    if (hit) out.push_back(static_cast<TaskId>(t));
  }
  return out;
}

core::Status resolveCookies(const Workload& w, std::string_view rules, std::vector<TaskAttributes>& attrs,
                            std::vector<std::string>* names) {
  attrs.resize(w.tasks.size());
  std::vector<bool> set(w.tasks.size(), false);
  std::map<std::string, uint32_t> byName;
  std::vector<std::string> nameOf = {"untagged"};
  auto cookieFor = [&](const std::string& name) {
    auto [it, fresh] = byName.emplace(name, static_cast<uint32_t>(nameOf.size()));
    if (fresh) nameOf.push_back(name);
    return it->second;
  };
  for (std::string_view rule : splitRules(rules)) {
    if (rule == "none") {
      for (size_t t = 0; t < w.tasks.size(); ++t) attrs[t].cookie = 0, set[t] = true;
    } else if (rule == "per-process" || rule == "per-thread") {
      const bool perProcess = rule == "per-process";
      for (size_t t = 0; t < w.tasks.size(); ++t) {
        const Task& task = w.tasks[t];
        // Kernel threads cannot be tagged from user space (prctl needs an mm to share with).
        if (task.kernelThread) continue;
        const int32_t id = perProcess && task.tgid >= 0 ? task.tgid : task.tid;
        attrs[t].cookie = cookieFor((perProcess ? "tgid:" : "tid:") + std::to_string(id));
        set[t] = true;
      }
    } else {
      auto sv = selectorAndValue(rule, "coresched.cookie");
      if (!sv) return core::Error(sv.error().message());
      const std::string name(sv->second);
      if (name.empty()) return core::Error("coresched.cookie rule '" + std::string(rule) + "': empty cookie name");
      const uint32_t cookie = cookieFor(name);
      for (TaskId t : sv->first.match(w)) attrs[t].cookie = cookie, set[t] = true;
    }
  }
  inheritFromParents(w, set, [&](TaskId p) { return attrs[p].cookie; },
                     [&](size_t t, uint32_t c) { attrs[t].cookie = c; });
  if (names) *names = std::move(nameOf);
  return {};
}

core::Status resolveUclamp(const Workload& w, std::string_view rules, std::vector<TaskAttributes>& attrs) {
  attrs.resize(w.tasks.size());
  std::vector<bool> set(w.tasks.size(), false);
  for (std::string_view rule : splitRules(rules)) {
    auto sv = selectorAndValue(rule, "uclamp.clamp");
    if (!sv) return core::Error(sv.error().message());
    const std::string_view value = sv->second;
    const size_t colon = value.find(':');
    auto side = [&](std::string_view s) -> std::optional<int16_t> {
      if (s.empty()) return int16_t{-1};
      auto v = parseNumber<int>(s);
      if (!v || *v < 0 || *v > 1024) return std::nullopt;
      return static_cast<int16_t>(*v);
    };
    const auto lo = side(colon == std::string_view::npos ? value : value.substr(0, colon));
    const auto hi = side(colon == std::string_view::npos ? std::string_view() : value.substr(colon + 1));
    if (colon == std::string_view::npos || !lo || !hi)
      return core::Error("uclamp.clamp rule '" + std::string(rule) +
                         "': expected SELECTOR=MIN:MAX with values 0..1024 (either may be empty)");
    if (*lo >= 0 && *hi >= 0 && *lo > *hi)
      return core::Error("uclamp.clamp rule '" + std::string(rule) + "': MIN is above MAX");
    for (TaskId t : sv->first.match(w)) {
      if (*lo >= 0) attrs[t].uclampMin = *lo;
      if (*hi >= 0) attrs[t].uclampMax = *hi;
      set[t] = true;
    }
  }
  inheritFromParents(w, set, [&](TaskId p) { return std::make_pair(attrs[p].uclampMin, attrs[p].uclampMax); },
                     [&](size_t t, std::pair<int16_t, int16_t> v) {
                       attrs[t].uclampMin = v.first;
                       attrs[t].uclampMax = v.second;
                     });
  return {};
}

core::Status resolveSlices(const Workload& w, std::string_view rules, std::vector<TaskAttributes>& attrs) {
  attrs.resize(w.tasks.size());
  std::vector<bool> set(w.tasks.size(), false);
  for (std::string_view rule : splitRules(rules)) {
    auto sv = selectorAndValue(rule, "task_slice");
    if (!sv) return core::Error(sv.error().message());
    const auto ns = parseNumber<int64_t>(sv->second);
    if (!ns || *ns < 100'000 || *ns > 100'000'000)
      return core::Error("task_slice rule '" + std::string(rule) +
                         "': expected SELECTOR=NS with NS from 100000 to 100000000 (0.1 to 100 ms)");
    for (TaskId t : sv->first.match(w)) attrs[t].sliceNs = *ns, set[t] = true;
  }
  inheritFromParents(w, set, [&](TaskId p) { return attrs[p].sliceNs; },
                     [&](size_t t, int64_t v) { attrs[t].sliceNs = v; });
  return {};
}

core::Status resolveSmtFactors(const Workload& w, std::string_view rules, std::vector<TaskAttributes>& attrs) {
  attrs.resize(w.tasks.size());
  for (std::string_view rule : splitRules(rules)) {
    auto sv = selectorAndValue(rule, "smt.task_factor");
    if (!sv) return core::Error(sv.error().message());
    const std::string value(sv->second);
    char* end = nullptr;
    const double f = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(f) || f <= 0 || f > 1)
      return core::Error("smt.task_factor rule '" + std::string(rule) + "': expected SELECTOR=F with F in (0, 1]");
    for (TaskId t : sv->first.match(w)) attrs[t].smtFactor = f;
  }
  return {};
}

}  // namespace replay
