// Data-path resolution and input-file checks (see paths.h).
#include "sim/core/paths.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "sim/core/status.h"

namespace servesim {
namespace {

std::string KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISCHR(mode)) return "is a character device (expected a regular file)";
  if (S_ISBLK(mode)) return "is a block device (expected a regular file)";
  if (S_ISFIFO(mode)) return "is a pipe (expected a regular file)";
  if (S_ISSOCK(mode)) return "is a socket (expected a regular file)";
  return "is not a regular file";
}

std::string Mib(uintmax_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

std::string RepoRoot() {
  if (const char* env = std::getenv("SERVESIM_ROOT"); env && *env) return env;
  return SERVESIM_SOURCE_DIR;
}

std::string ResolveDataPath(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute()) return path;
  std::error_code ec;
  if (fs::exists(path, ec)) return path;
  const fs::path rooted = fs::path(RepoRoot()) / path;
  if (fs::exists(rooted, ec)) return rooted.string();
  return path;
}

void CheckInputFile(const std::string& path, const std::string& what,
                    bool allow_fifo) {
  const std::string prefix =
      path + ": cannot open" + (what.empty() ? "" : " " + what) + ": ";
  if (path.empty()) throw ConfigError("\"\"" + prefix + "empty file name");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    throw ConfigError(prefix + std::strerror(errno));
  }
  if (S_ISREG(st.st_mode) || (allow_fifo && S_ISFIFO(st.st_mode))) return;
  throw ConfigError(prefix + KindOf(st.st_mode));
}

std::string ReadInputFile(const std::string& path, const std::string& what,
                          uintmax_t max_bytes) {
  // A pipe (<(zcat s.json.gz), /dev/stdin) is fine: the read is bounded.
  CheckInputFile(path, what, /*allow_fifo=*/true);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(path + ": cannot open " + what + ": " +
                      std::strerror(errno));
  }
  // Read at most one byte past the limit: the size from stat() may be stale.
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      std::error_code ec;
      const uintmax_t size = std::filesystem::file_size(path, ec);
      throw ConfigError(path + ": " + what + " is " +
                        (ec ? "over " + Mib(max_bytes) : Mib(size)) +
                        "; expected at most " + Mib(max_bytes));
    }
  }
  if (in.bad()) {
    throw ConfigError(path + ": cannot read " + what + ": " +
                      std::strerror(errno));
  }
  return text;
}

bool ReadInputLine(std::istream& in, std::string* line, const std::string& path,
                   int64_t line_no, size_t max_bytes) {
  line->clear();
  const auto fail = [&](const std::string& what) {
    in.setstate(std::ios::badbit);
    return ConfigError(path + ":" + std::to_string(line_no) + ": " + what);
  };
  if (in.bad()) throw fail("read error");
  if (!in.good()) return false;
  // Chunks through istream::getline (as fast as std::getline), so the line
  // is bounded; a failed read(2) sets badbit, which std::getline would let
  // pass for the end of the file.
  char buf[4096];
  try {
    for (;;) {
      errno = 0;
      in.getline(buf, sizeof buf);
      const std::streamsize n = in.gcount();
      if (in.bad()) {
        const int e = errno;
        throw fail("read error" +
                   (e != 0 ? ": " + std::string(std::strerror(e)) : ""));
      }
      if (in.eof()) {  // a last line without '\n' (eof without failbit)
        line->append(buf, static_cast<size_t>(n));
        return n > 0 || !line->empty();
      }
      if (!in.fail()) {  // the '\n' was read (and counted)
        line->append(buf, static_cast<size_t>(n - 1));
        return true;
      }
      line->append(buf, static_cast<size_t>(n));
      in.clear();  // the buffer filled before the '\n'
      if (line->size() > max_bytes) {
        throw fail("line longer than " + std::to_string(max_bytes >> 20) +
                   " MiB; expected one record per line");
      }
    }
  } catch (const std::bad_alloc&) {
    throw fail("read error: out of memory");
  }
}

}  // namespace servesim
