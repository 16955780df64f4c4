// Progress lines on stderr (see progress.h).
#include "sim/core/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace servesim {
namespace {

// Taken at static initialisation: close enough to the process start for a
// 2 s threshold.
const std::chrono::steady_clock::time_point kProcessStart = std::chrono::steady_clock::now();

}  // namespace

double ProcessSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kProcessStart)
      .count();
}

ProgressSettings DefaultProgressSettings(bool enabled) {
  ProgressSettings s;
  // SERVESIM_PROGRESS=0: off in every command, for scripts that merge
  // stderr into the output they compare (tools/docs/check_figures.py).
  const char* env = std::getenv("SERVESIM_PROGRESS");
  s.enabled = enabled && !(env != nullptr && std::string(env) == "0");
  s.tty = isatty(fileno(stderr)) != 0;
  s.clock = ProcessSeconds;
  s.sink = [](const std::string& text) {
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  };
  return s;
}

std::string FormatDuration(double seconds) {
  char buf[64];
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  if (seconds < 1) {
    std::snprintf(buf, sizeof buf, "%.0f ms", seconds * 1e3);
  } else if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  } else if (seconds < 3600) {
    const long s = std::lround(seconds);
    std::snprintf(buf, sizeof buf, "%ld min %ld s", s / 60, s % 60);
  } else {
    const long m = std::lround(seconds / 60);
    std::snprintf(buf, sizeof buf, "%ld h %ld min", m / 60, m % 60);
  }
  return buf;
}

double EstimateSecondsLeft(double then_s, double then_fraction, double now_s,
                           double now_fraction) {
  const double rate = (now_fraction - then_fraction) / (now_s - then_s);
  if (!(now_s > then_s) || !(rate > 0)) return -1;
  return std::max(0.0, 1 - now_fraction) / rate;
}

ProgressReporter::ProgressReporter(std::string label, ProgressSettings s)
    : label_(std::move(label)), s_(std::move(s)) {
  if (!s_.clock) s_.clock = ProcessSeconds;
  start_ = s_.clock();
  samples_.emplace_back(start_, 0.0);
}

ProgressReporter::~ProgressReporter() { Finish(); }

bool ProgressReporter::DueLocked(double now) const {
  if (!s_.enabled || finished_ || now < s_.silent_for_s) return false;
  return last_line_ < 0 || now - last_line_ >= (s_.tty ? s_.tty_every_s : s_.log_every_s);
}

bool ProgressReporter::Due() {
  std::lock_guard<std::mutex> lock(mu_);
  return DueLocked(s_.clock());
}

void ProgressReporter::Sample(double now, double fraction) {
  if (fraction < 0) return;
  if (s_.eta_window_s <= 0) {  // the mean since the start: its first sample
    samples_.resize(1);
    samples_.emplace_back(now, fraction);
    return;
  }
  // A sample at most every quarter second keeps the history short; the
  // front stays the newest one at least a window old.
  if (now - samples_.back().first >= 0.25) samples_.emplace_back(now, fraction);
  while (samples_.size() > 2 && samples_[1].first <= now - s_.eta_window_s) {
    samples_.pop_front();
  }
}

std::string ProgressReporter::Line(double now, double fraction,
                                   const std::string& what) const {
  std::string line = label_ + ": " + what;
  char buf[32];
  if (fraction >= 0) {
    std::snprintf(buf, sizeof buf, " (%.0f%%)", 100 * std::min(1.0, fraction));
    line += buf;
  }
  line += ", " + FormatDuration(now - start_) + " elapsed";
  if (fraction < 0) return line;
  const auto& [then, then_fraction] = samples_.front();
  const double left = EstimateSecondsLeft(then, then_fraction, now, fraction);
  if (left < 0) return line;
  line += ", ETA " + FormatDuration(left);
  if (!s_.eta_of.empty()) line += " " + s_.eta_of;
  line += s_.eta_window_s > 0 ? " from the last " + FormatDuration(now - then)
                              : " at the mean rate so far";
  return line;
}

void ProgressReporter::Update(double fraction, const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  const double now = s_.clock();
  Sample(now, fraction);
  if (!DueLocked(now)) return;
  const std::string line = Line(now, fraction, what);
  s_.sink(s_.tty ? "\r\033[K" + line : line + "\n");
  last_line_ = now;
}

void ProgressReporter::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  // A log keeps its lines; the report that follows says the work is done.
  if (last_line_ >= 0 && s_.tty) s_.sink("\r\033[K");
}

}  // namespace servesim
