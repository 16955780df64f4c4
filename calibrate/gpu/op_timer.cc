// TimeOnStream: see op_timer.h.
#include "calibrate/gpu/op_timer.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "calibrate/gpu/cuda_check.h"

namespace servesim::calibrate::gpu {
namespace {

constexpr int kWarmup = 3, kMinReps = 5, kMaxReps = 200;
constexpr double kGraphBelowS = 50e-6;     // graph launches shorter than this
constexpr double kGraphTargetS = 500e-6;   // aim a replay at this length

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * (v.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

class Events {
 public:
  Events() {
    SERVESIM_CUDA(cudaEventCreate(&start_));
    SERVESIM_CUDA(cudaEventCreate(&stop_));
  }
  ~Events() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  template <typename Fn>
  double Time(cudaStream_t s, Fn&& fn) {
    SERVESIM_CUDA(cudaEventRecord(start_, s));
    fn();
    SERVESIM_CUDA(cudaEventRecord(stop_, s));
    SERVESIM_CUDA(cudaEventSynchronize(stop_));
    float ms = 0;
    SERVESIM_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

}  // namespace

TimingStats TimeOnStream(const std::function<void(int)>& launch,
                         cudaStream_t stream, double budget_s,
                         bool may_capture) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  Events ev;
  int counter = 0;
  for (int i = 0; i < kWarmup; ++i) launch(counter++);
  SERVESIM_CUDA(cudaStreamSynchronize(stream));
  SERVESIM_CUDA(cudaGetLastError());
  const double one = ev.Time(stream, [&] { launch(counter++); });

  // Short ops: a graph of `per` launches, each rotating its inputs, timed
  // per replay and divided by `per`.
  int per = 1;
  cudaGraphExec_t exec = nullptr;
  if (may_capture && one < kGraphBelowS) {
    per = std::clamp(static_cast<int>(kGraphTargetS / std::max(one, 1e-6)), 2, 64);
    cudaGraph_t graph;
    SERVESIM_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < per; ++i) launch(counter++);
    SERVESIM_CUDA(cudaStreamEndCapture(stream, &graph));
    SERVESIM_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    SERVESIM_CUDA(cudaGraphDestroy(graph));
    SERVESIM_CUDA(cudaGraphLaunch(exec, stream));  // warm the graph
    SERVESIM_CUDA(cudaStreamSynchronize(stream));
  }
  std::vector<double> samples;
  while (static_cast<int>(samples.size()) < kMaxReps &&
         (static_cast<int>(samples.size()) < kMinReps || elapsed() < budget_s)) {
    if (exec) {
      samples.push_back(ev.Time(stream, [&] {
        SERVESIM_CUDA(cudaGraphLaunch(exec, stream));
      }) / per);
    } else {
      samples.push_back(ev.Time(stream, [&] { launch(counter++); }));
    }
  }
  if (exec) cudaGraphExecDestroy(exec);
  SERVESIM_CUDA(cudaGetLastError());
  TimingStats st;
  st.median_s = Quantile(samples, 0.5);
  st.p10_s = Quantile(samples, 0.1);
  st.p90_s = Quantile(samples, 0.9);
  st.repetitions = static_cast<int>(samples.size()) * per;
  return st;
}

}  // namespace servesim::calibrate::gpu
