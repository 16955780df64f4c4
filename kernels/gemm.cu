// The model's GEMMs (QKV, O, gate+up, down, LM head at a tensor-parallel
// shard) through cuBLAS in bf16 with fp32 accumulation. Row-major
// c = a w^T is, in cuBLAS's column-major view, c^T (n x m) = w (n x k, stored
// as the transpose of a k x n column-major matrix) times a^T (k x m):
// gemm(op_a = T, op_b = N, m' = n, n' = m, k). FLOPs 2mnk. cuBLAS picks the
// Hopper kernels itself (it runs cublasLt's heuristics underneath); the CPU
// reference is GemmRef (layer_reference.cc).
#include <cublas_v2.h>

#include <string>

#include "kernels/layer_ops.h"

namespace servesim::kernels {

Status LaunchGemmBf16(cublasHandle_t handle, const Bf16* a, const Bf16* w,
                      Bf16* c, int m, int n, int k, cudaStream_t stream) {
  const std::string who = "LaunchGemmBf16: ";
  if (!handle || !a || !w || !c) return Status::Error(who + "null pointer argument");
  if (m <= 0 || n <= 0 || k <= 0)
    return Status::Error(who + "m, n and k must be positive");
  if (cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS)
    return Status::Error(who + "cublasSetStream failed");
  const float alpha = 1.f, beta = 0.f;
  cublasStatus_t s = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k,
                                  &alpha, w, CUDA_R_16BF, k, a, CUDA_R_16BF, k,
                                  &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS)
    return Status::Error(who + "cublasGemmEx failed: " + cublasGetStatusString(s));
  return Status::Ok();
}

}  // namespace servesim::kernels
