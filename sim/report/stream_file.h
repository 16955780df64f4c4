// An output file written while a run goes (the per-step export, the
// timeline): bytes are buffered and streamed to a temporary file beside the
// destination, which Finish() renames onto it, so a reader never sees a
// half-written file and a run that fails leaves nothing behind. Errors read
// as sim/core/output_file's: "<path>: cannot open for writing: <reason>",
// "<path>: write failed: <reason>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/output_file.h"
#include "sim/core/status.h"
#include "sim/core/temp_files.h"

namespace servesim {

class StreamFile {
 public:
  // Creates the temporary file now, so a path that cannot be written is an
  // error before the simulation starts.
  static StatusOr<std::unique_ptr<StreamFile>> Open(const std::string& path);
  ~StreamFile();  // removes the temporary file unless Finish() renamed it
  StreamFile(const StreamFile&) = delete;
  StreamFile& operator=(const StreamFile&) = delete;

  // Room for at least n more bytes (n <= kMaxReserve); write them from the
  // returned pointer and hand the end to Advance().
  char* Reserve(size_t n) {
    if (buf_.size() - used_ < n) Flush();
    return buf_.data() + used_;
  }
  void Advance(char* end) { used_ = static_cast<size_t>(end - buf_.data()); }
  void Write(std::string_view s);
  // Hand written bytes to the disk as the file grows (every few MB) rather
  // than leaving them dirty until the kernel's flusher gets to them. For a
  // file written on a background thread (the step export): that thread pays
  // for submitting the writes, not the run's (on the run's own thread it
  // measured 2% slower for --save-detailed).
  void WriteBackAsItGrows() { write_back_ = true; }
  // Flushes, closes and renames onto the destination.
  Status Finish();
  const std::string& path() const { return path_; }

  static constexpr size_t kMaxReserve = 16 * 1024;

 private:
  StreamFile(std::string path, std::string tmp, std::FILE* f);
  void Flush();
  void StartWriteback();
  int ReplaceAtomically() const;  // 0, or -1 with errno set

  std::string path_, tmp_;
  TempFileRegistration tmp_registration_;  // until renamed or removed
  std::FILE* file_ = nullptr;
  std::vector<char> buf_;
  size_t used_ = 0;
  int64_t written_ = 0, synced_ = 0;  // bytes handed to the file, to writeback
  bool failed_ = false;
  int errno_ = 0;  // why the first failed write failed
  bool finished_ = false;
  bool write_back_ = false;
};

}  // namespace servesim
