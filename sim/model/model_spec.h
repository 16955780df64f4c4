// Model and GPU specifications: plain data loaded from models/llm/*.json and
// models/gpu/*.json. Derived quantities (parameter count, bytes of weights
// and KV cache) are computed here so every cost model agrees on them.
#pragma once

#include <cstdint>
#include <string>

namespace servesim {

struct ModelSpec {
  std::string name;    // e.g. "llama-3.1-8b"
  std::string source;  // model card / config.json the numbers came from
  // The Hugging Face id a deployment serves (vLLM's `vllm serve <id>`):
  // the model file's served_hf_id (the instruct variant people serve),
  // else the repository in `source`, else `name`. The scenario's
  // model.served_hf_id overrides it.
  std::string served_hf_id;
  int num_layers = 0;
  int hidden_size = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;  // dense MLP, or per expert for MoE
  int vocab_size = 0;
  int num_experts = 1;        // 1 for dense models
  int experts_per_token = 1;  // top-k routing; 1 for dense models
  // DeepSeek-style MoE: shared experts of intermediate_size that every
  // token passes through beside its routed ones, and the first
  // dense_layers layers a dense MLP of dense_intermediate_size instead.
  int shared_experts = 0;
  int dense_layers = 0;
  int dense_intermediate_size = 0;
  // Multi-head latent attention (DeepSeek-V2/V3), when kv_lora_rank > 0.
  // The cache holds one latent of kv_lora_rank + qk_rope_head_dim values
  // per token and layer, shared by every head (so each tensor-parallel GPU
  // keeps all of it); head_dim is the query/key width (qk_nope_head_dim +
  // qk_rope_head_dim) and v_head_dim the value width of one head.
  int q_lora_rank = 0;  // 0: queries projected from the hidden state directly
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  // Sliding-window attention (gpt-oss, Gemma 2/3): sliding_window_layers of
  // the layers attend to the last sliding_window tokens only; the rest see
  // the whole context. At least one layer is full attention.
  int sliding_window = 0;
  int sliding_window_layers = 0;
  // A learned logit per head in the softmax's denominator (gpt-oss):
  // recorded; one scalar per head costs nothing servesim counts.
  bool attention_sinks = false;
  // The routed experts' weight format where it differs from the other
  // linear layers: "" (as weight_dtype) or "mxfp4" (gpt-oss: 4-bit values
  // with an 8-bit scale per 32, 4.25 bits a parameter).
  std::string expert_weight_dtype;
  bool tie_word_embeddings = false;
  int max_context = 0;  // max_position_embeddings
  int dtype_bytes = 2;  // bf16: activations, and by default weights and KV
  // Quantization as vLLM's --quantization fp8 / --kv-cache-dtype fp8 (set
  // by the scenario's model.weight_dtype and engine.kv_cache_dtype, see
  // SetWeightDtype / SetKvCacheDtype): bytes per parameter of the
  // transformer layers' linear weights (vLLM keeps the embedding, the LM
  // head and an MoE router in bf16) and per cached K or V element.
  std::string weight_dtype = "bf16";
  std::string kv_cache_dtype = "bf16";
  double weight_bytes = 2;
  double kv_bytes = 2;
  // Expert parallelism as deployed (the scenario's hardware.ep, vLLM's
  // --enable-expert-parallel): the experts are spread whole over this many
  // GPUs, tp of one replica times the data-parallel replicas that share
  // them; 1: every expert sharded tp ways, as without the flag.
  int expert_parallel = 1;
  // Pipeline parallelism (PipelineStage): whether these layers come with the
  // embedding (the first stage) and the LM head (the last). A whole model
  // has both.
  bool holds_embedding = true;
  bool holds_lm_head = true;

  bool fp8_weights() const { return weight_dtype == "fp8"; }
  bool fp8_kv() const { return kv_cache_dtype == "fp8"; }
  // The name, with the quantization when not bf16, e.g.
  // "llama-3.1-8b (fp8 weights, fp8 KV cache)": every report's model line.
  std::string Label() const;
  // "bf16" or "fp8"; anything else is the caller's error (checked by the
  // scenario parser, which names the JSON path).
  void SetWeightDtype(const std::string& dtype);
  void SetKvCacheDtype(const std::string& dtype);

  bool is_moe() const { return num_experts > 1; }
  bool is_mla() const { return kv_lora_rank > 0; }
  bool has_sliding_window() const { return sliding_window_layers > 0; }
  // Layers with the MoE block (all of an MoE's but the dense first ones).
  int MoeLayers() const { return is_moe() ? num_layers - dense_layers : 0; }
  int DenseMlpLayers() const { return num_layers - MoeLayers(); }
  // The dense MLP's width (intermediate_size unless an MoE's dense layers).
  int DenseIntermediate() const {
    return is_moe() && dense_intermediate_size > 0 ? dense_intermediate_size
                                                   : intermediate_size;
  }
  int FullAttentionLayers() const { return num_layers - sliding_window_layers; }
  // Bytes per parameter of a routed expert's weights.
  double ExpertWeightBytes() const {
    return expert_weight_dtype == "mxfp4" ? 4.25 / 8 : weight_bytes;
  }
  // Data-parallel replicas in one expert-parallel group (ep / tp).
  int ExpertDataParallel(int tp) const {
    return expert_parallel > tp ? expert_parallel / tp : 1;
  }
  // Parameters of one transformer layer's attention, and of its MLP: the
  // MoE block (all routed experts, shared experts, router) of an MoE
  // layer, else the dense MLP.
  int64_t AttentionParamsPerLayer() const;
  int64_t MlpParamsPerLayer() const;
  int64_t DenseMlpParamsPerLayer() const;
  // Embedding + LM head (once if tied) + layers. Norms and biases are
  // ignored (< 0.1%).
  int64_t ParamCount() const;
  // Parameters one token's forward pass multiplies: the layers with only
  // its top-k routed experts, and the LM head (the embedding is a lookup).
  int64_t ActiveParamCount() const;
  // Weight bytes held by one GPU at tensor-parallel degree tp.
  double WeightBytesPerGpu(int tp) const;
  // KV-cache values per token of one layer on one GPU: K and V of its KV
  // heads, or MLA's one latent.
  double KvElementsPerTokenPerLayer(int tp) const;
  // KV-cache bytes per token held by one GPU in the block pool: K and V of
  // every full-attention layer (windowed layers: WindowedKvBytesPerSeqPerGpu).
  double KvBytesPerTokenPerGpu(int tp) const;
  // The most KV one running sequence's sliding-window layers hold on one
  // GPU: window + one block of tokens (vLLM frees the blocks that fall out
  // of the window, keeping the one the window starts in). 0 without them.
  double WindowedKvBytesPerSeqPerGpu(int tp, int block_size) const;
  // KV heads one GPU holds at tensor-parallel degree tp: KV heads are split
  // across GPUs, and replicated once tp exceeds them (at least one per GPU).
  // MLA's latent counts as one head, which every GPU keeps.
  int KvHeadsPerGpu(int tp) const;
  // Stage `rank` of `pp` pipeline stages (vLLM's even split of the layers,
  // the remainder to the stages before the last): its layers, with the
  // dense first layers it holds and an even share of the sliding-window
  // ones, the embedding on the first and the LM head on the last. The
  // cost models and the memory plan price one stage as a model of its own.
  ModelSpec PipelineStage(int pp, int rank) const;
};

// The first layer of pipeline stage `rank` of `pp` over `layers` layers
// (rank == pp: `layers`), as vLLM's get_pp_indices: layers / pp each, the
// remainder one more each to the stages before the last.
int PipelineStageStart(int layers, int pp, int rank);

struct GpuSpec {
  std::string name;            // e.g. "h200"
  std::string source;          // datasheet the numbers came from
  double memory_bytes = 0;     // HBM capacity
  double hbm_bytes_per_s = 0;  // peak HBM bandwidth
  double bf16_flops = 0;       // dense (no sparsity) bf16 tensor FLOP/s
  // Dense fp8 tensor FLOP/s; 0 where the GPU has no fp8 tensor cores
  // (A100): vLLM then runs fp8 weights as weight-only W8A16 (Marlin), so
  // GEMMs read 1-byte weights but compute at the bf16 rate.
  double fp8_flops = 0;
  // The tensor rate a GEMM with these weights runs at.
  double GemmPeakFlops(bool fp8) const {
    return fp8 && fp8_flops > 0 ? fp8_flops : bf16_flops;
  }
  double interconnect_bytes_per_s = 0;  // per GPU, one direction
  // How the GPUs of one server are joined, which decides what bandwidth a
  // tensor-parallel all-reduce gets and whether vLLM's custom all-reduce
  // runs (sim/cost/kernel_time.h): "nvswitch" (every GPU pair at the full
  // link rate: HGX/DGX boards), "nvlink_pairs" (NVLink bridges join pairs;
  // traffic between pairs crosses PCIe), "pcie" (no NVLink).
  std::string interconnect_topology = "nvswitch";
  double pcie_bytes_per_s = 32e9;  // per GPU, one direction (Gen4 x16)
  // Which fit of measured kernel tables prices it in the roofline
  // (RooflineParams::Kernels), named by its GPU generation: "ampere"
  // (A100's tables), "ada" (L40S's), "hopper" (H100's and H200's),
  // "blackwell" (B200's, sm_100) or "blackwell-rtx" (RTX PRO 6000's,
  // sm_120). Usually the GPU's own generation; a GPU file may name another
  // where measured serving runs say it prices that GPU better.
  std::string roofline_fit = "hopper";
  // CUDA compute capability, e.g. "9.0" (H100, H200), "10.0" (B200); ""
  // where a GPU file does not say. vLLM picks its all-reduce backends by it
  // (sim/cost/kernel_time.h, SymmMemAllReduceMaxBytes).
  std::string compute_capability;
};

// A link that moves KV caches between instances (disaggregated prefill):
// models/links/*.json. Figures are per GPU (one NIC, or one NVLink port
// set, per GPU), one direction.
struct LinkSpec {
  std::string name;
  std::string source;
  double bytes_per_s = 0;  // one direction
  double latency_s = 0;    // fixed cost of one transfer
};

}  // namespace servesim
