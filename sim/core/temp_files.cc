// The registry of temporary output files and the fatal-signal handler
// (see temp_files.h).
#include "sim/core/temp_files.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace servesim {
namespace {

// A slot is free, being written by its claimant, or live (read by the
// handler). 64 covers every output a command writes at once.
enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };
constexpr int kSlots = 64;
struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
static_assert(std::atomic<int>::is_always_lock_free,
              "the signal handler reads the slots' states");
Slot g_slots[kSlots];

int Claim(const std::string& path) {
  if (path.empty() || path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kLive, std::memory_order_release);
    return i;
  }
  return -1;
}

void OnFatalSignal(int sig) {
  const int saved_errno = errno;
  RemoveTempFiles();
  // Die of the same signal: it is blocked while this handler runs, so the
  // raise() takes effect, with the default action, when the handler returns.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);
  errno = saved_errno;
}

}  // namespace

TempFileRegistration::TempFileRegistration(const std::string& path)
    : slot_(Claim(path)) {}

TempFileRegistration& TempFileRegistration::operator=(
    TempFileRegistration&& o) noexcept {
  if (this != &o) {
    Release();
    slot_ = o.slot_;
    o.slot_ = -1;
  }
  return *this;
}

void TempFileRegistration::Release() {
  if (slot_ >= 0) g_slots[slot_].state.store(kFree, std::memory_order_release);
  slot_ = -1;
}

void RemoveTempFiles() noexcept {
  for (Slot& s : g_slots) {
    if (s.state.load(std::memory_order_acquire) == kLive) unlink(s.path);
  }
}

void RemoveTempFilesOnFatalSignals() {
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGABRT, SIGXCPU,
                  SIGXFSZ, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction old;
    if (sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = OnFatalSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace servesim
