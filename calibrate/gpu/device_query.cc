// QueryDeviceAndCeilings: what the device is (properties, driver) and the
// two ceilings measured on it: device-to-device copy bandwidth (bytes read +
// bytes written per second, on a buffer far larger than L2) and the cuBLAS
// bf16 GEMM rate on random data at a large square size.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "calibrate/gpu/cuda_check.h"
#include "calibrate/gpu/op_timer.h"
#include "calibrate/gpu_harness_api.h"
#include "kernels/layer_ops.h"

namespace servesim::calibrate {
namespace {

double CopyBandwidth(cudaStream_t s, size_t l2_bytes, size_t free_bytes) {
  size_t bytes = std::max<size_t>(16 * l2_bytes, size_t(1) << 30);
  bytes = std::min(bytes, free_bytes / 4);
  void *src = nullptr, *dst = nullptr;
  SERVESIM_CUDA(cudaMalloc(&src, bytes));
  SERVESIM_CUDA(cudaMalloc(&dst, bytes));
  gpu::Check(kernels::LaunchFillRandomBf16(static_cast<kernels::Bf16*>(src),
                                           bytes / 2, 1, 1.f, s), "fill");
  gpu::TimingStats t = gpu::TimeOnStream(
      [&](int) { SERVESIM_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)); },
      s, 1.0);
  cudaFree(src);
  cudaFree(dst);
  return 2.0 * bytes / t.median_s;
}

double GemmRate(cudaStream_t s) {
  const int n = 8192;
  const size_t elems = size_t(n) * n;
  kernels::Bf16 *a = nullptr, *b = nullptr, *c = nullptr;
  SERVESIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&a), elems * 2));
  SERVESIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&b), elems * 2));
  SERVESIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&c), elems * 2));
  gpu::Check(kernels::LaunchFillRandomBf16(a, elems, 2, 1.f, s), "fill");
  gpu::Check(kernels::LaunchFillRandomBf16(b, elems, 3, 1.f, s), "fill");
  cublasHandle_t h;
  SERVESIM_CUDA(cublasCreate(&h));
  gpu::TimingStats t = gpu::TimeOnStream(
      [&](int) { gpu::Check(kernels::LaunchGemmBf16(h, a, b, c, n, n, n, s), "gemm"); },
      s, 1.5);
  cublasDestroy(h);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 2.0 * n * double(n) * n / t.median_s;
}

}  // namespace

DeviceInfo QueryDeviceAndCeilings() {
  DeviceInfo info;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear the sticky "no device" error
    return info;         // sm_count == 0: no device
  }
  cudaDeviceProp p{};
  SERVESIM_CUDA(cudaGetDeviceProperties(&p, 0));
  info.name = p.name;
  info.sm_count = p.multiProcessorCount;
  info.memory_bytes = static_cast<double>(p.totalGlobalMem);
  int clock_khz = 0, mem_khz = 0;
  SERVESIM_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  SERVESIM_CUDA(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0));
  info.sm_clock_mhz = clock_khz / 1e3;
  info.mem_clock_mhz = mem_khz / 1e3;
  int driver = 0;
  SERVESIM_CUDA(cudaDriverGetVersion(&driver));
  info.driver = "CUDA driver " + std::to_string(driver / 1000) + "." +
                std::to_string((driver % 1000) / 10);
  size_t free_bytes = 0, total = 0;
  SERVESIM_CUDA(cudaMemGetInfo(&free_bytes, &total));
  cudaStream_t s;
  SERVESIM_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  info.copy_bytes_per_s = CopyBandwidth(s, p.l2CacheSize, free_bytes);
  info.gemm_bf16_flops = GemmRate(s);
  cudaStreamDestroy(s);
  return info;
}

}  // namespace servesim::calibrate
