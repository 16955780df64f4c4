// Temporary output files (`<output>.tmp.XXXXXX`, written and then renamed
// into place) must not outlive the process. Each is registered while it
// exists, so that a run killed by a signal (SIGTERM, SIGINT, ...) or
// stopped by an abort (a failed internal check, a run-invariant violation)
// removes them first: a long run with --save-steps writes gigabytes.
//
// The registry is a fixed array of path buffers claimed with atomics, with
// no locks and no allocation, so a signal handler may read it; the handler
// calls only unlink(), sigaction() and raise().
#pragma once

#include <string>

namespace servesim {

// Registers `path` until the returned registration is destroyed (after the
// file was renamed or removed). A path longer than the buffers, or a full
// registry, is not covered: the file is then removed only by the normal
// paths (the owner's destructor), as before.
class TempFileRegistration {
 public:
  TempFileRegistration() = default;
  explicit TempFileRegistration(const std::string& path);
  ~TempFileRegistration() { Release(); }
  TempFileRegistration(TempFileRegistration&& o) noexcept : slot_(o.slot_) {
    o.slot_ = -1;
  }
  TempFileRegistration& operator=(TempFileRegistration&& o) noexcept;
  TempFileRegistration(const TempFileRegistration&) = delete;
  TempFileRegistration& operator=(const TempFileRegistration&) = delete;
  void Release();  // the file is gone or in place: stop covering it

 private:
  int slot_ = -1;
};

// Unlinks every registered file. Async-signal-safe; also called before an
// abort() (CheckFailed, CheckRunInvariantsOrDie), which in the Python
// extension has no handler of ours to run.
void RemoveTempFiles() noexcept;

// For the command-line programs only (a host such as Python keeps its own
// handlers): on a fatal signal (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE,
// SIGABRT, SIGXCPU, SIGXFSZ, SIGSEGV, SIGBUS, SIGFPE, SIGILL) remove the
// registered files, then die of the same signal, so the exit status is
// unchanged. A signal that is not at its default action when this is called
// (ignored by nohup, caught by a sanitizer) is left alone.
void RemoveTempFilesOnFatalSignals();

}  // namespace servesim
