// Thread pool and progress bar (see parallel.h).
#include "sim/analysis/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

namespace servesim {

namespace {

// The mean rate since the start: runs end in bursts, seconds apart. A
// batch that grows as it goes (capacity's bisection) knows only the runs
// started so far.
ProgressSettings BarSettings(ProgressSettings s, bool open_ended) {
  s.eta_window_s = 0;
  if (open_ended) s.eta_of = "for the runs started";
  return s;
}

}  // namespace

ProgressBar::ProgressBar(std::string label, int total_runs, int runs_per_group)
    : ProgressBar(std::move(label), total_runs, runs_per_group, DefaultProgressSettings()) {}

ProgressBar::ProgressBar(std::string label, int total_runs, int runs_per_group,
                         ProgressSettings s)
    : total_(total_runs),
      per_group_(runs_per_group),
      reporter_(std::move(label), BarSettings(std::move(s), total_runs == 0)) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::AddTotal(int runs) {
  std::lock_guard<std::mutex> lock(mu_);
  total_ += runs;
}

void ProgressBar::RunDone() {
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  Draw();
}

void ProgressBar::SetStage(std::string stage) {
  std::lock_guard<std::mutex> lock(mu_);
  stage_ = std::move(stage);
}

void ProgressBar::SetUnit(std::string unit) {
  std::lock_guard<std::mutex> lock(mu_);
  unit_ = std::move(unit);
}

void ProgressBar::Finish() { reporter_.Finish(); }

void ProgressBar::Draw() {
  if (total_ <= 0 || !reporter_.Due()) return;
  std::string what = stage_.empty() ? "" : stage_ + ": ";
  what += std::to_string(done_) + "/" + std::to_string(total_) + " " + unit_;
  if (per_group_ > 0) {
    what += ", " + std::to_string(done_ / per_group_) + "/" +
            std::to_string(total_ / per_group_) + " points";
  }
  reporter_.Update(static_cast<double>(done_) / total_, what);
}

int DefaultJobs() {
  return std::max(1u, std::thread::hardware_concurrency());
}

void ParallelFor(int n, int jobs, const std::function<void(int)>& fn,
                 ProgressBar* bar) {
  if (jobs <= 0) jobs = DefaultJobs();
  jobs = std::max(1, std::min(jobs, n));
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int i = next++; i < n; i = next++) {
      fn(i);
      if (bar) bar->RunDone();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
}

}  // namespace servesim
