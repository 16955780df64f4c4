// Which rows of an engine's measured tables an import reads. The vLLM and
// SGLang folders (../shared/calibration-data/aiconfigurator-vllm-*,
// aiconfigurator-sglang) share a layout but not their kernels: each table
// has a kernel_source column, and where a folder times several kernels for
// one shape (SGLang: FlashAttention 3 and Triton on Hopper; TensorRT-LLM
// MHA, FlashInfer and Triton on B200) the import must read the one the
// engine runs by default, not a mean of all of them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace servesim::calibrate {

struct EngineKernels {
  std::string engine = "vllm";   // or "sglang": the profile-name suffix
  std::string display = "vLLM";  // or "SGLang": provenance text
  // kernel_source filters; "" reads every row (the vLLM folders time one
  // kernel per table and shape, so their import never filtered).
  std::string gemm_bf16, gemm_fp8, attention;
  // Prefill rows' attn_dtype must equal the KV cache dtype: SGLang's
  // context table times bf16 and fp8 compute (FA3 casts queries to fp8 on
  // an fp8 KV cache); false: the column is ignored (vLLM's is constant).
  bool prefill_compute_is_kv_dtype = false;
  // The CUDA-graph custom all-reduce rows of custom_allreduce.csv.
  std::string custom_allreduce = "vLLM_custom_graph";
  // Symmetric-memory all-reduce on by default (TableFilter::symm_mem):
  // vLLM's VLLM_ALLREDUCE_USE_SYMM_MEM=1; SGLang's --enable-torch-symm-mem
  // is off unless asked.
  bool symm_mem_allreduce = true;
};

// "vllm" or "sglang" from the manifest's entries for gpu_dir ("framework"
// of its gemm table: VLLM / vLLM / SGLang); "" when it names neither.
std::string ManifestEngine(const nlohmann::json& manifest,
                           const std::string& gpu_dir);

// The kernels `engine` runs on the GPU whose data directory is gpu_dir
// (SGLang: fa3 on h100_sxm and h200_sxm, trtllm_mha on b200_sxm, its
// default MHA backends there); throws naming the engine or GPU it lacks.
// attention_backend: a kernel_source to read instead of the default ("").
EngineKernels KernelsOf(const std::string& engine, const std::string& gpu_dir,
                        const std::string& attention_backend = "");

}  // namespace servesim::calibrate
