// Error handling of the calibration harness: every CUDA/cuBLAS call is
// checked, and a failure throws std::runtime_error naming the call (the
// harness API lets errors escape as exceptions; calibrate/cli catches them).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "sim/core/status.h"

namespace servesim::calibrate::gpu {

inline void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
inline void Check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(s));
}
inline void Check(const Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string(what) + ": " + s.message());
}

#define SERVESIM_CUDA(call) ::servesim::calibrate::gpu::Check((call), #call)

}  // namespace servesim::calibrate::gpu
