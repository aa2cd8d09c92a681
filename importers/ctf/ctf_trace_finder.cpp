#include "importers/ctf/ctf_trace_finder.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "importers/ctf/ctf_metadata.h"

namespace importers::ctf {

namespace fs = std::filesystem;

namespace {
// TSDL metadata packets start with 0x75D11D57 in the trace's byte order (CTF 1.8 §7.1).
constexpr std::array<unsigned char, 4> kMetadataMagicLe = {0x57, 0x1d, 0xd1, 0x75};
constexpr std::array<unsigned char, 4> kMetadataMagicBe = {0x75, 0xd1, 0x1d, 0x57};
constexpr std::string_view kTextHeader = "/* CTF 1.";
// A session folder holds a handful of traces; a home directory holds thousands
// of entries. Stop looking long before probing becomes slow.
constexpr size_t kMaxEntriesVisited = 4096;
}  // namespace

bool looksLikeCtfMetadata(std::span<const std::byte> head) {
  if (head.size() >= 4 && (std::memcmp(head.data(), kMetadataMagicLe.data(), 4) == 0 ||
                           std::memcmp(head.data(), kMetadataMagicBe.data(), 4) == 0))
    return true;
  return head.size() >= kTextHeader.size() && std::memcmp(head.data(), kTextHeader.data(), kTextHeader.size()) == 0;
}

bool isCtfTraceDir(const std::string& dir) {
  std::error_code ec;
  const fs::path metadata = fs::path(dir) / "metadata";
  if (!fs::is_regular_file(metadata, ec)) return false;
  std::ifstream in(metadata, std::ios::binary);
  std::array<std::byte, 16> head{};
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  return looksLikeCtfMetadata(std::span(head.data(), static_cast<size_t>(in.gcount())));
}

std::vector<std::string> findCtfTraceDirs(const std::string& path, int maxDepth) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec) return {};
  if (fs::is_regular_file(status)) {
    const fs::path parent = fs::absolute(path, ec).parent_path();
    if (!ec && isCtfTraceDir(parent.string())) return {parent.string()};
    return {};
  }
  if (!fs::is_directory(status)) return {};
  if (isCtfTraceDir(path)) return {path};

  std::vector<std::string> found;
  std::vector<fs::path> level = {fs::path(path)};
  size_t visited = 0;
  for (int depth = 0; depth < maxDepth && !level.empty() && visited < kMaxEntriesVisited; ++depth) {
    std::vector<fs::path> next;
    for (const auto& dir : level) {
      // increment(ec), not ++: an unreadable entry must end the walk, not throw.
      fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
      for (const fs::directory_iterator end; !ec && it != end && ++visited <= kMaxEntriesVisited; it.increment(ec)) {
        std::error_code entryEc;
        if (!it->is_directory(entryEc)) continue;
        if (isCtfTraceDir(it->path().string()))
          found.push_back(it->path().string());
        else
          next.push_back(it->path());
      }
      ec.clear();
    }
    level = std::move(next);
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<std::string> streamFileNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (const fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code entryEc;
    if (!it->is_regular_file(entryEc) || name == "metadata" || name.front() == '.') continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// The statement `env { key = value; ... };` at the top level of the metadata
// (an `env` inside another block is something else).
void readEnv(const std::vector<Token>& t, CtfTraceIdentity& out) {
  const auto punct = [&](size_t k, std::string_view p) { return t[k].kind == Token::Punct && t[k].text == p; };
  int depth = 0;
  bool inEnv = false;
  for (size_t i = 0; t[i].kind != Token::End; ++i) {
    if (punct(i, "{")) {
      if (depth++ == 0) inEnv = i > 0 && t[i - 1].kind == Token::Ident && t[i - 1].text == "env";
    } else if (punct(i, "}")) {
      if (depth > 0 && --depth == 0) inEnv = false;
    } else if (inEnv && depth == 1 && t[i].kind == Token::Ident && punct(i + 1, "=") &&
               (t[i + 2].kind == Token::String || t[i + 2].kind == Token::Number || t[i + 2].kind == Token::Ident)) {
      out.env[t[i].text] = t[i + 2].text;
      i += 2;
    }
  }
}

std::string envOr(const CtfTraceIdentity& t, const std::string& key) {
  const auto it = t.env.find(key);
  return it == t.env.end() ? std::string() : it->second;
}

std::string hostOf(const CtfTraceIdentity& t) {
  std::string host = envOr(t, "hostname");
  return host.empty() ? envOr(t, "host") : host;  // perf data convert writes "host"
}

// The LTTng session folder a trace folder lies in: the parent of `kernel/`,
// or the folder above `ust/` (ust/uid/1000/64-bit, ust/pid/app-123-.../); for
// the chunks of a rotated session (archives/CHUNK/kernel), the folder above
// `archives/`. Empty when the folder is not laid out as a session.
std::string lttngSessionFolder(const std::string& dir) {
  const fs::path p = fs::path(dir).lexically_normal();
  fs::path folder;
  if (p.filename() == "kernel") {
    folder = p.parent_path();
  } else {
    fs::path above;
    for (const auto& part : p) {
      if (part == "ust") {
        folder = above;
        break;
      }
      above /= part;
    }
  }
  if (folder.parent_path().filename() == "archives") folder = folder.parent_path().parent_path();
  return folder.string();
}

bool isWithin(const std::string& path, const std::string& folder) {
  const fs::path rel = fs::path(path).lexically_normal().lexically_relative(fs::path(folder).lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

std::string commonFolder(const std::vector<std::string>& paths) {
  fs::path common = fs::path(paths.front()).lexically_normal();
  for (const auto& other : paths) {
    const fs::path p = fs::path(other).lexically_normal();
    fs::path shared;
    for (auto a = common.begin(), b = p.begin(); a != common.end() && b != p.end() && *a == *b; ++a, ++b) shared /= *a;
    common = shared;
  }
  std::string out = common.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace

CtfTraceIdentity readCtfTraceIdentity(const std::string& dir) {
  CtfTraceIdentity id;
  id.dir = dir;
  if (auto text = metadataText((fs::path(dir) / "metadata").string())) readEnv(tokenize(*text), id);
  return id;
}

std::string CtfTraceIdentity::describe() const {
  std::string out = envOr(*this, "tracer_name");
  if (out.empty()) out = "CTF";
  if (const std::string major = envOr(*this, "tracer_major"); !major.empty())
    out += " " + major + (envOr(*this, "tracer_minor").empty() ? "" : "." + envOr(*this, "tracer_minor"));
  if (const std::string domain = envOr(*this, "domain"); !domain.empty()) out += " " + domain;
  out += " trace";
  if (const std::string host = hostOf(*this); !host.empty()) out += ", host " + host;
  if (const std::string session = envOr(*this, "trace_name"); !session.empty()) {
    out += ", session '" + session + "'";
    if (const std::string created = envOr(*this, "trace_creation_datetime"); !created.empty())
      out += " created " + created;
  }
  return out;
}

std::vector<CtfRecording> groupCtfTraces(const std::vector<std::string>& dirs) {
  struct Member {
    std::string key;
    std::string folder;  // the folder the recording is kept in
    CtfTraceIdentity id;
  };
  std::vector<Member> members;
  for (const auto& dir : dirs) {
    Member m{{}, dir, readCtfTraceIdentity(dir)};
    const std::string session = envOr(m.id, "trace_name");
    const std::string created = envOr(m.id, "trace_creation_datetime");
    const std::string lttngFolder = envOr(m.id, "tracer_name").starts_with("lttng") ? lttngSessionFolder(dir) : "";
    // Copies of one session in two places are two runs: the folder is part of the key.
    if (!session.empty() && !created.empty()) {
      m.folder = lttngFolder.empty() ? fs::path(dir).lexically_normal().parent_path().string() : lttngFolder;
      m.key = "session\n" + hostOf(m.id) + "\n" + session + "\n" + created + "\n" + m.folder;
    } else if (!lttngFolder.empty()) {
      m.folder = lttngFolder;
      m.key = "lttng session folder\n" + hostOf(m.id) + "\n" + lttngFolder;
    } else {
      m.key = "folder\n" + dir;
    }
    members.push_back(std::move(m));
  }
  std::vector<CtfRecording> out;
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> folders;
  for (auto& m : members) {
    size_t g = 0;
    while (g < keys.size() && keys[g] != m.key) ++g;
    if (g == keys.size()) {
      keys.push_back(m.key);
      folders.emplace_back();
      out.push_back({{}, {}, m.id.describe()});
    }
    out[g].dirs.push_back(m.id.dir);
    folders[g].push_back(m.folder);
  }
  for (size_t g = 0; g < out.size(); ++g) {
    std::sort(out[g].dirs.begin(), out[g].dirs.end());
    out[g].root = commonFolder(folders[g]);
    if (out[g].dirs.size() > 1) {
      std::string parts;
      for (const auto& dir : out[g].dirs)
        parts += (parts.empty() ? "" : ", ") + fs::path(dir).lexically_relative(out[g].root).string();
      out[g].description += " (" + parts + ")";
    }
  }
  std::sort(out.begin(), out.end(), [](const CtfRecording& a, const CtfRecording& b) { return a.root < b.root; });
  return out;
}

std::vector<CtfRecording> findCtfRecordings(const std::string& path) {
  std::vector<std::string> dirs = findCtfTraceDirs(path);
  if (isCtfTraceDir(path)) return groupCtfTraces(dirs);  // a trace folder: itself only
  std::vector<std::string> sessionFolders;
  for (const auto& dir : dirs)
    if (std::string folder = lttngSessionFolder(dir); !folder.empty() && isWithin(folder, path))
      sessionFolders.push_back(std::move(folder));
  for (const auto& folder : sessionFolders)
    for (auto& dir : findCtfTraceDirs(folder)) dirs.push_back(std::move(dir));
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  return groupCtfTraces(dirs);
}

}  // namespace importers::ctf
