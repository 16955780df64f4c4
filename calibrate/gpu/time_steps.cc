// TimeSteps: each sampled batch composition executed by a StepExecutor as
// one CUDA graph (as vLLM replays decode batches) and timed with CUDA
// events over repetitions, every step getting its share of the budget.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>

#include "calibrate/gpu/cuda_check.h"
#include "calibrate/gpu/op_timer.h"
#include "calibrate/gpu/step_executor.h"
#include "calibrate/gpu_harness_api.h"

namespace servesim::calibrate {

std::vector<StepTiming> TimeSteps(const ModelSpec& model, int tp,
                                  const std::vector<BatchShape>& steps,
                                  double budget_s, int* distinct_layers) {
  constexpr int kBlockSize = 16;
  if (tp <= 0 || model.num_heads % tp != 0)
    throw std::runtime_error("TimeSteps: heads must divide evenly over tp");
  // Freed on every exit, including a failed step.
  struct Context {
    cudaStream_t stream = nullptr;
    cublasHandle_t cublas = nullptr;
    void* ws = nullptr;
    ~Context() {
      if (cublas) cublasDestroy(cublas);
      cudaFree(ws);
      if (stream) cudaStreamDestroy(stream);
    }
  } ctx;
  SERVESIM_CUDA(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  SERVESIM_CUDA(cublasCreate(&ctx.cublas));
  const size_t cublas_ws = size_t(64) << 20;  // fixed: keeps cuBLAS capturable
  SERVESIM_CUDA(cudaMalloc(&ctx.ws, cublas_ws));
  SERVESIM_CUDA(cublasSetWorkspace(ctx.cublas, ctx.ws, cublas_ws));
  cudaStream_t stream = ctx.stream;
  cublasHandle_t cublas = ctx.cublas;
  std::vector<StepTiming> out;
  {
    const gpu::StepLimits lim = gpu::LimitsOf(steps, kBlockSize);
    size_t free = 0, total = 0;
    SERVESIM_CUDA(cudaMemGetInfo(&free, &total));
    const int layers = gpu::DistinctLayersThatFit(model, tp, lim, kBlockSize, free);
    if (distinct_layers) *distinct_layers = layers;
    gpu::StepExecutor exec(model, tp, lim, kBlockSize, layers, stream, cublas);
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < steps.size(); ++i) {
      const double used =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double share = std::max(0.02, (budget_s - used) / double(steps.size() - i));
      exec.Prepare(steps[i]);
      cudaGraph_t graph;
      cudaGraphExec_t graph_exec;
      SERVESIM_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      exec.Enqueue();
      SERVESIM_CUDA(cudaStreamEndCapture(stream, &graph));
      SERVESIM_CUDA(cudaGraphInstantiate(&graph_exec, graph, 0));
      SERVESIM_CUDA(cudaGraphDestroy(graph));
      const gpu::TimingStats st = gpu::TimeOnStream(
          [&](int) { SERVESIM_CUDA(cudaGraphLaunch(graph_exec, stream)); }, stream,
          share, /*may_capture=*/false);
      SERVESIM_CUDA(cudaGraphExecDestroy(graph_exec));
      out.push_back({st.median_s, st.p10_s, st.p90_s, st.repetitions});
    }
  }
  return out;
}

}  // namespace servesim::calibrate
