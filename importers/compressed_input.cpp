#include "importers/compressed_input.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <memory>

namespace importers {

namespace {

namespace fs = std::filesystem;

constexpr size_t kInChunk = size_t{1} << 20;
constexpr size_t kOutChunk = size_t{4} << 20;

bool startsWith(std::span<const std::byte> head, std::initializer_list<uint8_t> magic) {
  if (head.size() < magic.size()) return false;
  size_t i = 0;
  for (uint8_t b : magic)
    if (std::to_integer<uint8_t>(head[i++]) != b) return false;
  return true;
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : m_fd(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (m_fd >= 0) ::close(m_fd);
  }
  int get() const { return m_fd; }

 private:
  int m_fd;
};

// How one pass over a compressed file ended.
struct Outcome {
  enum class Kind { Complete, Stopped, Damaged, Failed } kind = Kind::Complete;
  std::string why;       // Damaged: what is wrong with the data; Failed: the error
  uint64_t offset = 0;   // Damaged: the byte offset of the compressed file where decoding stopped
  uint64_t produced = 0; // decompressed bytes handed to the sink
};

// Receives decompressed bytes; false stops the pass (the head is full, a write failed).
using Sink = std::function<bool(const char* data, size_t size)>;
// Called after each chunk of input with the compressed bytes read so far; false cancels.
using Tick = std::function<bool(uint64_t consumed)>;

// Reads `fd` chunk by chunk, giving each chunk to `decode(in, size, fileOffset)`,
// which consumes all of it or reports how it ended.
template <typename Decode>
Outcome pumpChunks(int fd, const Tick& tick, Decode&& decode) {
  std::unique_ptr<uint8_t[]> in(new uint8_t[kInChunk]);
  uint64_t offset = 0;
  for (;;) {
    ssize_t n = ::read(fd, in.get(), kInChunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {Outcome::Kind::Failed, std::string("read failed: ") + std::strerror(errno), offset};
    std::optional<Outcome> ended = decode(in.get(), static_cast<size_t>(n), offset);
    offset += static_cast<uint64_t>(n);
    if (ended) return *ended;
    if (tick && !tick(offset)) return {Outcome::Kind::Stopped, "cancelled", offset};
  }
}

// gzip (RFC 1952), every member of a multi-member file (`cat a.gz b.gz`, pigz, bgzip).
Outcome gunzip(int fd, const Sink& sink, const Tick& tick) {
  z_stream s{};
  if (inflateInit2(&s, 15 + 16) != Z_OK) return {Outcome::Kind::Failed, "zlib could not start"};
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&s, inflateEnd);
  std::unique_ptr<char[]> out(new char[kOutChunk]);
  uint64_t produced = 0;
  bool inMember = false;     // inside a member whose end has not been seen
  bool memberEnded = false;  // at the end of a member: another may follow
  Outcome last = pumpChunks(fd, tick, [&](const uint8_t* data, size_t size, uint64_t base) -> std::optional<Outcome> {
    if (size == 0) {
      if (inMember) return Outcome{Outcome::Kind::Damaged, "gzip data ends early (truncated)", base, produced};
      return Outcome{Outcome::Kind::Complete, "", base, produced};
    }
    s.next_in = const_cast<Bytef*>(data);
    s.avail_in = static_cast<uInt>(size);
    // zlib's contract: a call that filled the output may hold more, even with no input left.
    bool outputFull = false;
    while (s.avail_in > 0 || outputFull) {
      const auto at = [&] { return base + (size - s.avail_in); };
      if (memberEnded) {
        if (s.avail_in == 0) break;
        if (s.next_in[0] != 0x1f || (s.avail_in > 1 && s.next_in[1] != 0x8b))
          return Outcome{Outcome::Kind::Damaged, "data after the end of the gzip data is not gzip", at(), produced};
        inflateReset(&s);
        memberEnded = false;
      }
      inMember = true;
      s.next_out = reinterpret_cast<Bytef*>(out.get());
      s.avail_out = static_cast<uInt>(kOutChunk);
      const int rc = inflate(&s, Z_NO_FLUSH);
      const size_t made = kOutChunk - s.avail_out;
      outputFull = s.avail_out == 0;
      if (made > 0) {
        produced += made;
        if (!sink(out.get(), made)) return Outcome{Outcome::Kind::Stopped, "", at(), produced};
      }
      if (rc == Z_STREAM_END) {
        inMember = outputFull = false;
        memberEnded = true;
      } else if (rc == Z_BUF_ERROR) {  // no progress possible: it needs the next chunk
        break;
      } else if (rc != Z_OK) {
        return Outcome{Outcome::Kind::Damaged, std::string("gzip data corrupt (") + (s.msg ? s.msg : zError(rc)) + ")",
                       at(), produced};
      }
    }
    return std::nullopt;
  });
  last.produced = produced;
  return last;
}

// zstd (RFC 8878), every frame, skippable ones included.
Outcome unzstd(int fd, const Sink& sink, const Tick& tick) {
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> ds(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!ds) return {Outcome::Kind::Failed, "zstd could not start"};
  std::unique_ptr<char[]> out(new char[kOutChunk]);
  uint64_t produced = 0;
  size_t pending = 0;  // ZSTD_decompressStream's last hint: 0 once a frame is complete
  bool anyInput = false;
  Outcome last = pumpChunks(fd, tick, [&](const uint8_t* data, size_t size, uint64_t base) -> std::optional<Outcome> {
    if (size == 0) {
      if (anyInput && pending != 0)
        return Outcome{Outcome::Kind::Damaged, "zstd data ends early (truncated)", base, produced};
      return Outcome{Outcome::Kind::Complete, "", base, produced};
    }
    anyInput = true;
    ZSTD_inBuffer in{data, size, 0};
    // zstd's contract: a non-zero return may mean output still to flush, even with no input left.
    while (in.pos < in.size || pending != 0) {
      ZSTD_outBuffer o{out.get(), kOutChunk, 0};
      const size_t before = in.pos;
      pending = ZSTD_decompressStream(ds.get(), &o, &in);
      if (ZSTD_isError(pending))
        return Outcome{Outcome::Kind::Damaged, std::string("zstd data corrupt (") + ZSTD_getErrorName(pending) + ")",
                       base + in.pos, produced};
      if (o.pos > 0) {
        produced += o.pos;
        if (!sink(out.get(), o.pos)) return Outcome{Outcome::Kind::Stopped, "", base + in.pos, produced};
      }
      if (in.pos == before && o.pos < o.size) break;  // needs the next chunk
    }
    return std::nullopt;
  });
  last.produced = produced;
  return last;
}

Outcome decompress(int fd, Compression c, const Sink& sink, const Tick& tick) {
  switch (c) {
    case Compression::Gzip: return gunzip(fd, sink, tick);
    case Compression::Zstd: return unzstd(fd, sink, tick);
    default: return {Outcome::Kind::Failed, std::string(compressionName(c)) + " is not decompressed here"};
  }
}

// The name the copy gets: the file's own, without its compression suffix, so
// that anything that reads the name sees what the file was before.
std::string copyName(const std::string& path) {
  const std::string name = fs::path(withoutCompressionSuffix(path)).filename().string();
  return name.empty() ? std::string("trace") : name;
}

core::Error errorOf(const std::string& path, const Outcome& o) {
  return core::Error(path + ": byte offset " + std::to_string(o.offset) + ": " + o.why);
}

}  // namespace

Compression compressionOf(std::span<const std::byte> head) {
  if (startsWith(head, {0x1f, 0x8b})) return Compression::Gzip;
  if (startsWith(head, {0x28, 0xb5, 0x2f, 0xfd})) return Compression::Zstd;
  if (startsWith(head, {0xfd, '7', 'z', 'X', 'Z', 0x00})) return Compression::Xz;
  if (startsWith(head, {'B', 'Z', 'h'}) && head.size() > 3) {
    const auto level = std::to_integer<char>(head[3]);
    if (level >= '1' && level <= '9') return Compression::Bzip2;
  }
  if (startsWith(head, {0x04, 0x22, 0x4d, 0x18})) return Compression::Lz4;
  return Compression::None;
}

std::string_view compressionName(Compression c) {
  switch (c) {
    case Compression::Gzip: return "gzip";
    case Compression::Zstd: return "zstd";
    case Compression::Xz: return "xz";
    case Compression::Bzip2: return "bzip2";
    case Compression::Lz4: return "lz4";
    case Compression::None: break;
  }
  return "";
}

std::string withoutCompressionSuffix(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  for (std::string_view suffix : {".gz", ".gzip", ".zst", ".zstd"})
    if (name.size() > suffix.size() && name.ends_with(suffix)) return path.substr(0, path.size() - suffix.size());
  return path;
}

bool canDecompress(Compression c) { return c == Compression::Gzip || c == Compression::Zstd; }

core::Result<std::vector<std::byte>> decompressedHead(const std::string& path, Compression c, size_t maxBytes) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return core::Error(path + ": cannot open: " + std::strerror(errno));
  std::vector<std::byte> head;
  head.reserve(maxBytes);
  const Outcome o = decompress(fd.get(), c, [&](const char* data, size_t size) {
    const size_t take = std::min(size, maxBytes - head.size());
    const auto* bytes = reinterpret_cast<const std::byte*>(data);
    head.insert(head.end(), bytes, bytes + take);
    return head.size() < maxBytes;
  }, {});
  if (o.kind == Outcome::Kind::Failed) return core::Error(path + ": " + o.why);
  if (head.empty() && o.kind == Outcome::Kind::Damaged) return errorOf(path, o);
  return head;
}

DecompressedCopy::DecompressedCopy(DecompressedCopy&& other) noexcept { *this = std::move(other); }

DecompressedCopy& DecompressedCopy::operator=(DecompressedCopy&& other) noexcept {
  if (this == &other) return *this;
  std::swap(m_folder, other.m_folder);
  std::swap(m_path, other.m_path);
  std::swap(m_damage, other.m_damage);
  return *this;
}

DecompressedCopy::~DecompressedCopy() {
  if (m_folder.empty()) return;
  std::error_code ec;
  fs::remove_all(m_folder, ec);
}

core::Result<DecompressedCopy> decompressToTemp(const std::string& path, Compression c, const ImportOptions& options) {
  FileDescriptor in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) return core::Error(path + ": cannot open: " + std::strerror(errno));
  std::error_code ec;
  const uintmax_t compressedBytes = fs::file_size(path, ec);
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) return core::Error(path + ": no temp folder to decompress it into (" + ec.message() + ")");
  std::string folderTemplate = (tmp / "schedlab-XXXXXX").string();
  if (!::mkdtemp(folderTemplate.data()))
    return core::Error(path + ": cannot make a folder in " + tmp.string() + " to decompress it into: " +
                       std::strerror(errno));
  DecompressedCopy copy;
  copy.m_folder = folderTemplate;  // removed with `copy` on every way out
  copy.m_path = (fs::path(folderTemplate) / copyName(path)).string();
  FileDescriptor out(::open(copy.m_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (out.get() < 0)
    return core::Error(path + ": cannot write its decompressed copy in " + tmp.string() + ": " + std::strerror(errno));

  std::string writeError;
  const Sink write = [&](const char* data, size_t size) {
    while (size > 0) {
      const ssize_t n = ::write(out.get(), data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        writeError = std::strerror(n < 0 ? errno : EIO);
        return false;
      }
      data += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  };
  const Tick tick = [&](uint64_t consumed) {
    if (options.progress && compressedBytes > 0)
      options.progress(std::min(1.0, static_cast<double>(consumed) / static_cast<double>(compressedBytes)));
    return !options.stop.stop_requested();
  };
  const Outcome o = decompress(in.get(), c, write, tick);
  if (!writeError.empty())
    return core::Error(path + ": cannot write its decompressed copy in " + tmp.string() + ": " + writeError);
  switch (o.kind) {
    case Outcome::Kind::Complete: break;
    case Outcome::Kind::Stopped: return core::Error(path + ": import cancelled");
    case Outcome::Kind::Failed: return core::Error(path + ": " + o.why);
    case Outcome::Kind::Damaged:
      if (o.produced == 0) return core::Error(errorOf(path, o).message() + "; nothing could be decompressed");
      copy.m_damage = DecompressedCopy::Damage{
          o.offset, o.why + "; the " + std::to_string(o.produced) + " bytes decompressed before it were read"};
      break;
  }
  return copy;
}

}  // namespace importers
