// Atomic output files with errno reasons (see output_file.h).
#include "sim/core/output_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <streambuf>
#include <vector>

#include "sim/core/temp_files.h"

namespace servesim {
namespace {

// A stream buffer over a file descriptor that remembers why the first
// write failed (std::ofstream loses errno).
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd), buf_(1 << 16) {
    setp(buf_.data(), buf_.data() + buf_.size());
  }
  int error() const { return error_; }
  // Writes what is buffered and closes; returns errno of the first failure.
  int Close() {
    sync();
    if (close(fd_) != 0 && error_ == 0) error_ = errno ? errno : EIO;
    return error_;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!Drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return Drain() ? 0 : -1; }

 private:
  bool Drain() {
    const char* p = pbase();
    while (error_ == 0 && p < pptr()) {
      const ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        error_ = n < 0 ? errno : ENOSPC;
      else
        p += n;
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return error_ == 0;
  }
  int fd_;
  std::vector<char> buf_;
  int error_ = 0;
};

// Writes through `fd` (which it closes); returns errno of the first failure.
int WriteFd(int fd, const std::function<void(std::ostream&)>& write) {
  FdBuf buf(fd);
  {
    std::ostream out(&buf);
    write(out);
    out.flush();
  }
  return buf.Close();
}

Status Cannot(const std::string& path, const std::string& what, int errnum) {
  return Status::Error(path + ": " + what + ": " + ErrnoText(errnum));
}

// Where the bytes must land: a symlink is followed so that the rename
// replaces its target, not the link.
std::string Destination(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* real = realpath(path.c_str(), nullptr)) {
      std::string r(real);
      free(real);
      return r;
    }
  }
  return path;
}

}  // namespace

bool IsSpecialOutput(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
         !S_ISDIR(st.st_mode);
}

namespace {

// A temporary file beside the destination, registered for the fatal-signal
// handler (temp_files.h) while it exists; removed when it goes out of scope
// unless it was renamed into place (an exception from a writer included).
struct TempFile {
  std::string path;
  int fd = -1;
  TempFileRegistration registration;
  bool placed = false;
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd >= 0) close(fd);
    if (!placed && !path.empty()) std::remove(path.c_str());
  }
};

// Creates the temporary file beside `dest` into `*t`, or an error.
Status MakeTemp(const std::string& path, const std::string& dest, TempFile* t) {
  if (dest.empty())
    return Status::Error("<empty path>: cannot open for writing");
  struct stat st;
  if (dest.back() == '/' ||
      (stat(dest.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
    return Cannot(path, "cannot open for writing", EISDIR);
  }
  std::string tmp = dest + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return Cannot(path, "cannot open for writing", errno);
  t->fd = fd;
  t->path = std::move(tmp);
  t->registration = TempFileRegistration(t->path);
  return Status::Ok();
}

Status WriteInPlace(const std::string& path,
                    const std::function<void(std::ostream&)>& write) {
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return Cannot(path, "cannot open for writing", errno);
  if (const int e = WriteFd(fd, write); e != 0) {
    return Cannot(path, "write failed", e);
  }
  return Status::Ok();
}

}  // namespace

std::string ErrnoText(int errnum) { return std::strerror(errnum); }

Status CheckOutputPath(const std::string& path) {
  const std::string dest = Destination(path);
  if (IsSpecialOutput(dest)) {
    if (access(dest.c_str(), W_OK) != 0) {
      return Cannot(path, "cannot open for writing", errno);
    }
    return Status::Ok();
  }
  TempFile tmp;  // removed on return
  return MakeTemp(path, dest, &tmp);
}

namespace {

std::string CanonicalPath(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : p.lexically_normal().string();
}

}  // namespace

Status CheckOutputPaths(
    const std::vector<std::pair<std::string, std::string>>& outputs,
    const std::vector<std::string>& inputs) {
  std::vector<std::string> canon(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    // A device (/dev/null) may take several outputs; files may not.
    if (outputs[i].second.empty() || IsSpecialOutput(outputs[i].second)) {
      continue;
    }
    canon[i] = CanonicalPath(outputs[i].second);
    for (const std::string& in : inputs) {
      if (in.empty() || CanonicalPath(in) != canon[i]) continue;
      return Status::Error(outputs[i].first + " names the input " + in +
                           "; expected a different file (it would be overwritten)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (!canon[j].empty() && canon[j] == canon[i]) {
        return Status::Error(outputs[j].first + " and " + outputs[i].first +
                             " name the same file " + outputs[i].second +
                             "; expected a different file for each output");
      }
    }
  }
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    if (Status st = CheckOutputPath(path); !st.ok()) return st;
  }
  return Status::Ok();
}

Status WriteFileWith(const std::string& path,
                     const std::function<void(std::ostream&)>& write) {
  const std::string dest = Destination(path);
  if (IsSpecialOutput(dest)) return WriteInPlace(path, write);
  TempFile tmp;
  if (Status st = MakeTemp(path, dest, &tmp); !st.ok()) return st;
  const int fd = tmp.fd;
  tmp.fd = -1;  // WriteFd closes it
  if (const int err = WriteFd(fd, write); err != 0) {
    return Cannot(path, "write failed", err);
  }
  // mkstemp creates the file 0600; give it the permissions an ordinary
  // output file gets (0666 less the umask).
  const mode_t mask = umask(0);
  umask(mask);
  chmod(tmp.path.c_str(), 0666 & ~mask);
  if (std::rename(tmp.path.c_str(), dest.c_str()) != 0) {
    return Cannot(path, "cannot rename into place", errno);
  }
  tmp.placed = true;
  return Status::Ok();
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  return WriteFileWith(path, [&](std::ostream& os) { os << text; });
}

}  // namespace servesim
