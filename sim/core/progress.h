// Progress of a long command, on stderr. Nothing for the first ~2 s of the
// process, so short runs (and every documented output) print nothing extra;
// then an updating "\r" line on a terminal (at most 4 a second), else plain
// lines at most one every 5 s, so logs and CI show the command is alive.
// stdout is never written. Thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <utility>

namespace servesim {

struct ProgressSettings {
  bool enabled = true;             // false: -q
  bool tty = false;                // stderr is a terminal
  double silent_for_s = 2;         // after the clock's origin (process start)
  double tty_every_s = 0.25;
  double log_every_s = 5;
  // The ETA divides what is left by the rate over this many seconds of
  // wall time; 0: the mean rate since the reporter started.
  double eta_window_s = 5;
  // What the ETA covers when not the whole command ("for the runs
  // started"); empty: the whole.
  std::string eta_of;
  std::function<double()> clock;                 // seconds; default: since process start
  std::function<void(const std::string&)> sink;  // default: stderr
};

// enabled (unless SERVESIM_PROGRESS=0), tty from isatty(stderr), the
// process clock and stderr.
ProgressSettings DefaultProgressSettings(bool enabled = true);

// Seconds since the process started (the first static initialiser here).
double ProcessSeconds();

// "850 ms", "42 s", "3 min 20 s", "2 h 5 min".
std::string FormatDuration(double seconds);

// Seconds left if the work goes on at the rate seen between (then_s,
// then_fraction) and (now_s, now_fraction); negative when no progress was
// seen in between.
double EstimateSecondsLeft(double then_s, double then_fraction, double now_s,
                           double now_fraction);

class ProgressReporter {
 public:
  explicit ProgressReporter(std::string label,
                            ProgressSettings s = DefaultProgressSettings());
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // Whether Update would print now: callers build their text only then.
  bool Due();
  // fraction: of the work done, in [0, 1]; negative when unknown (no ETA).
  // what: the work in the command's units ("12/35 runs").
  void Update(double fraction, const std::string& what);
  // Clears the line on a terminal (if one was drawn); no more lines after.
  void Finish();


 private:
  bool DueLocked(double now) const;
  void Sample(double now, double fraction);
  std::string Line(double now, double fraction, const std::string& what) const;

  std::mutex mu_;
  std::string label_;
  ProgressSettings s_;
  double start_ = 0;
  double last_line_ = -1;  // when a line was printed; -1: never
  bool finished_ = false;
  std::deque<std::pair<double, double>> samples_;  // (time, fraction)
};

}  // namespace servesim
