// The kernels each engine's import reads (see engine_kernels.h).
#include "calibrate/engine_kernels.h"

#include <stdexcept>

namespace servesim::calibrate {

std::string ManifestEngine(const nlohmann::json& manifest,
                           const std::string& gpu_dir) {
  for (const nlohmann::json& e : manifest) {
    if (e.value("gpu", "") != gpu_dir || e.value("table", "") != "gemm") {
      continue;
    }
    const std::string f = e.value("framework", "");
    if (f == "SGLang") return "sglang";
    if (f == "VLLM" || f == "vLLM") return "vllm";
    // The vLLM 0.24.0 manifest has no "framework" key: its constant column.
    const std::string c =
        e.contains("constant_columns")
            ? e["constant_columns"].value("framework", "")
            : "";
    if (c == "SGLang") return "sglang";
    if (c == "VLLM" || c == "vLLM") return "vllm";
  }
  return "";
}

EngineKernels KernelsOf(const std::string& engine, const std::string& gpu_dir,
                        const std::string& attention_backend) {
  EngineKernels k;
  k.engine = engine;
  if (engine == "vllm") {
    if (!attention_backend.empty()) {
      throw std::runtime_error(
          "--attention-backend " + attention_backend +
          ": the vLLM tables time one attention kernel per GPU; expected it "
          "with --engine sglang only");
    }
    k.display = "vLLM";
    return k;
  }
  if (engine != "sglang") {
    throw std::runtime_error("engine \"" + engine +
                             "\": expected vllm or sglang");
  }
  k.display = "SGLang";
  k.gemm_bf16 = "sglang_torch_linear";
  k.gemm_fp8 = "sglang_sgl_kernel_fp8_scaled_mm";
  k.prefill_compute_is_kv_dtype = true;
  k.custom_allreduce = "SGLang_CustomAllReduce_graph";
  k.symm_mem_allreduce = false;
  // SGLang's default attention backend for MHA models: FlashAttention 3 on
  // Hopper, TensorRT-LLM's MHA kernels on Blackwell (server_args.py).
  if (gpu_dir == "h100_sxm" || gpu_dir == "h200_sxm") {
    k.attention = "fa3";
  } else if (gpu_dir == "b200_sxm") {
    k.attention = "trtllm_mha";
  } else {
    throw std::runtime_error("no SGLang tables for " + gpu_dir +
                             " (h100_sxm, h200_sxm, b200_sxm)");
  }
  if (!attention_backend.empty()) k.attention = attention_backend;
  return k;
}

}  // namespace servesim::calibrate
