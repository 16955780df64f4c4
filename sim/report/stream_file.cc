// Streamed output files with an atomic rename at the end (see stream_file.h).
#include "sim/report/stream_file.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace servesim {
namespace {
constexpr size_t kBufferBytes = 128 << 10;
}  // namespace

StatusOr<std::unique_ptr<StreamFile>> StreamFile::Open(
    const std::string& path) {
  const Status cannot = Status::Error(path + ": cannot open for writing");
  if (path.empty() || path.back() == '/') return cannot;
  // The temporary file lives in the destination's directory so the final
  // rename stays on one file system (and is atomic).
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return cannot;
  std::FILE* f = fdopen(fd, "wb");
  if (f == nullptr) {
    close(fd);
    std::remove(tmp.c_str());
    return cannot;
  }
  return std::unique_ptr<StreamFile>(new StreamFile(path, std::move(tmp), f));
}

StreamFile::StreamFile(std::string path, std::string tmp, std::FILE* f)
    : path_(std::move(path)),
      tmp_(std::move(tmp)),
      file_(f),
      buf_(kBufferBytes) {}

StreamFile::~StreamFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!finished_) std::remove(tmp_.c_str());
}

void StreamFile::Flush() {
  if (used_ > 0 && !failed_ &&
      std::fwrite(buf_.data(), 1, used_, file_) != used_) {
    failed_ = true;
  }
  used_ = 0;
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

Status StreamFile::Finish() {
  Flush();
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (failed_ || !closed) return Status::Error(path_ + ": write failed");
  // mkstemp creates the file 0600; give it the permissions an ordinary
  // output file gets (0666 less the umask).
  const mode_t mask = umask(0);
  umask(mask);
  chmod(tmp_.c_str(), 0666 & ~mask);
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    return Status::Error(path_ + ": cannot open for writing");
  }
  finished_ = true;
  return Status::Ok();
}

}  // namespace servesim
