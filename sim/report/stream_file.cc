// Streamed output files with an atomic rename at the end (see stream_file.h).
#include "sim/report/stream_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace servesim {
namespace {
constexpr size_t kBufferBytes = 128 << 10;
// How often written bytes are handed to the kernel's writeback (below).
constexpr int64_t kWritebackBytes = 4 << 20;
}  // namespace

StatusOr<std::unique_ptr<StreamFile>> StreamFile::Open(
    const std::string& path) {
  if (Status st = CheckOutputPath(path); !st.ok()) return st;
  const auto cannot = [&](int e) {
    return Status::Error(path + ": cannot open for writing: " + ErrnoText(e));
  };
  if (IsSpecialOutput(path)) {  // /dev/null, a FIFO: written in place
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return cannot(errno);
    return std::unique_ptr<StreamFile>(new StreamFile(path, "", f));
  }
  // The temporary file lives in the destination's directory so the final
  // rename stays on one file system (and is atomic).
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return cannot(errno);
  std::FILE* f = fdopen(fd, "wb");
  if (f == nullptr) {
    const int e = errno;
    close(fd);
    std::remove(tmp.c_str());
    return cannot(e);
  }
  return std::unique_ptr<StreamFile>(new StreamFile(path, std::move(tmp), f));
}

StreamFile::StreamFile(std::string path, std::string tmp, std::FILE* f)
    : path_(std::move(path)),
      tmp_(std::move(tmp)),
      tmp_registration_(tmp_),
      file_(f),
      buf_(kBufferBytes) {}

StreamFile::~StreamFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!finished_ && !tmp_.empty()) std::remove(tmp_.c_str());
  tmp_registration_.Release();
}

void StreamFile::Flush() {
  if (used_ > 0 && !failed_ &&
      std::fwrite(buf_.data(), 1, used_, file_) != used_) {
    failed_ = true;
    errno_ = errno ? errno : EIO;
  }
  written_ += static_cast<int64_t>(used_);
  used_ = 0;
  if (write_back_ && written_ - synced_ >= kWritebackBytes) StartWriteback();
}

void StreamFile::StartWriteback() {
#ifdef __linux__
  // Written data goes to the disk as the file grows, from the thread that
  // writes, rather than piling up as dirty pages that throttle later writes
  // or that the kernel's flusher writes back on the run's core.
  if (failed_ || tmp_.empty() || std::fflush(file_) != 0) return;
  sync_file_range(fileno(file_), synced_, written_ - synced_,
                  SYNC_FILE_RANGE_WRITE);
#endif
  synced_ = written_;
}

void StreamFile::Write(std::string_view s) {
  while (!s.empty()) {
    const size_t n = std::min(s.size(), kMaxReserve);
    char* p = Reserve(n);
    std::memcpy(p, s.data(), n);
    Advance(p + n);
    s.remove_prefix(n);
  }
}

int StreamFile::ReplaceAtomically() const {
#ifdef __linux__
  // rename() onto an existing file makes ext4 (auto_da_alloc) flush the
  // new one first, inside the call: 30-170 ms for a 300 MB export, waiting
  // on the disk queue. Exchanging the two names is as atomic for a reader
  // and does not; the old contents, now under the temporary name, go.
  // Only onto a regular file: anything else (a directory) gets rename()'s
  // own answer.
  struct stat st;
  if (lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, path_.c_str(),
                RENAME_EXCHANGE) == 0) {
    ::unlink(tmp_.c_str());
    return 0;
  }
#endif
  return std::rename(tmp_.c_str(), path_.c_str());
}

Status StreamFile::Finish() {
  Flush();
  errno = 0;
  const bool closed = std::fclose(file_) == 0;
  if (!closed && !failed_) errno_ = errno ? errno : EIO;
  file_ = nullptr;
  if (failed_ || !closed) {
    return Status::Error(path_ + ": write failed: " + ErrnoText(errno_));
  }
  if (tmp_.empty()) {
    finished_ = true;
    return Status::Ok();
  }
  // mkstemp creates the file 0600; give it the permissions an ordinary
  // output file gets (0666 less the umask).
  const mode_t mask = umask(0);
  umask(mask);
  chmod(tmp_.c_str(), 0666 & ~mask);
  if (ReplaceAtomically() != 0) {
    return Status::Error(path_ +
                         ": cannot rename into place: " + ErrnoText(errno));
  }
  tmp_registration_.Release();
  finished_ = true;
  return Status::Ok();
}

}  // namespace servesim
