// Runs independent simulations (sweep points, seeds) on all cores, with
// progress on stderr (sim/core/progress.h).
#pragma once

#include <functional>
#include <mutex>
#include <string>

#include "sim/core/progress.h"

namespace servesim {

// Progress of a batch of runs: "label: stage: 12/35 runs, 2/7 points (34%),
// 9 s elapsed, ETA 17 s at the mean rate so far", through a
// ProgressReporter (silent for short commands, rate-limited, stderr only).
// Runs in a batch are of similar length, so the mean so far is a fair
// guess at the rest. Thread-safe.
class ProgressBar {
 public:
  // runs_per_group: runs that make one "point" (0: do not count points).
  ProgressBar(std::string label, int total_runs, int runs_per_group);
  ProgressBar(std::string label, int total_runs, int runs_per_group, ProgressSettings s);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void AddTotal(int runs);  // more runs joined the batch
  void RunDone();
  // What the runs are for now ("bisection step 3, 12.5 req/s"); shown
  // before the counts.
  void SetStage(std::string stage);
  void SetUnit(std::string unit);  // what is counted: "runs" unless told
  void Finish();  // clears the line (on a terminal)

 private:
  void Draw();  // mutex held

  std::mutex mu_;
  std::string stage_, unit_ = "runs";
  int total_ = 0, done_ = 0, per_group_ = 0;
  ProgressReporter reporter_;
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
