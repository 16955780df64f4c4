// Thread pool and progress bar (see parallel.h).
#include "sim/analysis/parallel.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

namespace servesim {

ProgressBar::ProgressBar(std::string label, int total_runs, int runs_per_group)
    : label_(std::move(label)),
      total_(total_runs),
      per_group_(runs_per_group),
      enabled_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::AddTotal(int runs) {
  std::lock_guard<std::mutex> lock(mu_);
  total_ += runs;
  finished_ = false;
}

void ProgressBar::RunDone() {
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  Draw();
}

void ProgressBar::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (enabled_ && !finished_) std::fprintf(stderr, "\r\033[K");
  finished_ = true;
}

void ProgressBar::Draw() {
  if (!enabled_ || total_ <= 0) return;
  constexpr int kWidth = 30;
  const int filled = kWidth * std::min(done_, total_) / total_;
  const double elapsed = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start_)
                             .count();
  // Runs are of similar length within a batch, so the mean so far is a
  // fair guess at the rest.
  const double left = done_ > 0 ? elapsed / done_ * (total_ - done_) : 0;
  std::string bar(filled, '=');
  bar.resize(kWidth, ' ');
  std::fprintf(stderr, "\r\033[K%s [%s] %d/%d runs", label_.c_str(),
               bar.c_str(), done_, total_);
  if (per_group_ > 0) {
    std::fprintf(stderr, ", %d/%d points", done_ / per_group_,
                 total_ / per_group_);
  }
  std::fprintf(stderr, ", ~%.0f s left", left);
  std::fflush(stderr);
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
