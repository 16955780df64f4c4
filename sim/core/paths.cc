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
  const std::string where = path + ":" + std::to_string(line_no) + ": ";
  std::streambuf* sb = in.rdbuf();
  if (sb == nullptr || !in.good()) {
    if (in.bad()) throw ConfigError(where + "read error");
    return false;
  }
  bool any = false;
  try {
    // A filebuf throws from underflow on a failed read(2); getline would
    // turn that into an end of file.
    errno = 0;
    for (;;) {
      const int c = sb->sbumpc();
      if (c == std::char_traits<char>::eof()) {
        in.setstate(std::ios::eofbit);
        return any;
      }
      any = true;
      if (c == '\n') return true;
      if (line->size() >= max_bytes) {
        throw ConfigError(where + "line longer than " +
                          std::to_string(max_bytes >> 20) +
                          " MiB; expected one record per line");
      }
      line->push_back(static_cast<char>(c));
    }
  } catch (const ConfigError&) {
    throw;
  } catch (const std::bad_alloc&) {
    in.setstate(std::ios::badbit);
    throw ConfigError(where + "read error: out of memory");
  } catch (const std::exception&) {
    const int e = errno;
    in.setstate(std::ios::badbit);
    throw ConfigError(where + "read error" +
                      (e != 0 ? ": " + std::string(std::strerror(e)) : ""));
  }
}

}  // namespace servesim
