// Runs independent simulations (sweep points, seeds) on all cores, with a
// progress bar on stderr when stderr is a terminal.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

namespace servesim {

// Progress of a batch of runs: "label [=====>    ] 12/35 runs, 2/7 points,
// ~14 s left". Draws only when stderr is a terminal (isatty), so logs and
// pipes stay clean. Thread-safe.
class ProgressBar {
 public:
  // runs_per_group: runs that make one "point" (0: do not count points).
  ProgressBar(std::string label, int total_runs, int runs_per_group);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void AddTotal(int runs);  // more runs joined the batch
  void RunDone();
  void Finish();  // clears the line

 private:
  void Draw();  // mutex held

  std::mutex mu_;
  std::string label_;
  int total_ = 0, done_ = 0, per_group_ = 0;
  bool enabled_ = false, finished_ = false;
  std::chrono::steady_clock::time_point start_;
};

// Calls fn(i) for i in [0, n) on `jobs` threads (jobs <= 0: all hardware
// threads). Work is handed out one index at a time, in order, so long runs
// started first do not leave a core idle at the end. Each fn(i) must touch
// only its own outputs. bar may be null.
void ParallelFor(int n, int jobs, const std::function<void(int)>& fn,
                 ProgressBar* bar);

// hardware_concurrency, at least 1.
int DefaultJobs();

}  // namespace servesim
