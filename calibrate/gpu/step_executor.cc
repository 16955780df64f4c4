// StepExecutor (see step_executor.h).
#include "calibrate/gpu/step_executor.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "calibrate/gpu/cuda_check.h"
#include "kernels/layer_ops.h"

namespace servesim::calibrate::gpu {
namespace {

using kernels::Bf16;
constexpr size_t kSlackBytes = size_t(1) << 30;  // cuBLAS, decode workspace, metadata

int64_t Blocks(int64_t tokens, int block_size) {
  return (tokens + block_size - 1) / block_size;
}

double LayerWeightBytes(const Shard& s) {
  return 2.0 * (double(s.hidden) * s.QkvWidth() + double(s.heads) * s.head_dim * s.hidden +
                double(s.hidden) * 2 * s.inter + double(s.inter) * s.hidden + 2.0 * s.hidden);
}

double ActivationBytes(const Shard& s, const StepLimits& lim) {
  const double t = double(lim.max_tokens);
  return 2.0 * t * (3.0 * s.hidden + s.QkvWidth() + 2.0 * s.heads * s.head_dim + 3.0 * s.inter) +
         2.0 * double(lim.max_samples) * s.vocab;
}

}  // namespace

StepLimits LimitsOf(const std::vector<BatchShape>& steps, int block_size) {
  StepLimits lim;
  for (const BatchShape& b : steps) {
    int64_t tokens = 0, blocks = 0, samples = 0;
    for (const SeqWork& w : b.seqs) {
      if (w.new_tokens == 0) continue;
      tokens += w.new_tokens;
      blocks += Blocks(int64_t(w.context_tokens) + w.new_tokens, block_size);
      samples += w.samples;
    }
    lim.max_tokens = std::max(lim.max_tokens, tokens);
    lim.max_kv_blocks = std::max(lim.max_kv_blocks, blocks);
    lim.max_samples = std::max(lim.max_samples, samples);
  }
  return lim;
}

int DistinctLayersThatFit(const ModelSpec& m, int tp, const StepLimits& lim,
                          int block_size, size_t free_bytes) {
  const Shard s(m, tp);
  const double kv_layer =
      4.0 * double(lim.max_kv_blocks) * block_size * s.kv_heads * s.head_dim;
  const double fixed = 2.0 * double(s.vocab) * s.hidden + 2.0 * s.hidden +
                       ActivationBytes(s, lim) + kSlackBytes;
  const double room = 0.92 * double(free_bytes) - fixed;
  const int fit = room <= 0 ? 0 : int(room / (LayerWeightBytes(s) + kv_layer));
  if (fit < 1) {
    throw std::runtime_error(
        "TimeSteps: one layer of " + m.name + " at tp=" + std::to_string(tp) +
        " with the largest step's KV cache does not fit in " +
        std::to_string(free_bytes >> 20) + " MiB of free device memory");
  }
  return std::min(fit, m.num_layers);
}

StepExecutor::StepExecutor(const ModelSpec& m, int tp, const StepLimits& lim,
                           int block_size, int distinct_layers,
                           cudaStream_t stream, cublasHandle_t cublas)
    : num_layers_(m.num_layers), block_size_(block_size), s_(m, tp),
      stream_(stream), cublas_(cublas) {
  const size_t h = s_.hidden, qkvw = s_.QkvWidth(), hd = size_t(s_.heads) * s_.head_dim,
               inter = s_.inter;
  // Weights ~ U(-1/sqrt(k), 1/sqrt(k)) keep activations O(1) through the stack.
  auto w = [&](size_t n, size_t k) { return arena_.Random(n * k, stream_, 1.f / std::sqrt(float(k))); };
  for (int l = 0; l < distinct_layers; ++l) {
    weights_.push_back({w(qkvw, h), w(h, hd), w(2 * inter, h), w(h, inter),
                        arena_.Random(h, stream_), arena_.Random(h, stream_)});
    // Random cache contents: attention over garbage costs what it costs
    // over real keys, and no unwritten memory is read.
    const size_t kv_elems = size_t(lim.max_kv_blocks) * block_size * s_.kv_heads * s_.head_dim;
    kv_.push_back({arena_.Random(kv_elems, stream_), arena_.Random(kv_elems, stream_)});
  }
  final_norm_ = arena_.Random(h, stream_);
  lm_head_ = w(s_.vocab, h);
  const size_t t = std::max<int64_t>(lim.max_tokens, 1);
  x_ = arena_.Alloc<Bf16>(t * h);
  residual_ = arena_.Alloc<Bf16>(t * h);
  normed_ = arena_.Alloc<Bf16>(t * h);
  qkv_ = arena_.Alloc<Bf16>(t * qkvw);
  q_ = arena_.Alloc<Bf16>(t * hd);
  attn_ = arena_.Alloc<Bf16>(t * hd);
  gate_up_ = arena_.Alloc<Bf16>(t * 2 * inter);
  act_ = arena_.Alloc<Bf16>(t * inter);
  logits_ = arena_.Alloc<Bf16>(std::max<int64_t>(lim.max_samples, 1) * size_t(s_.vocab));
  pool_.resize(std::max<int64_t>(lim.max_kv_blocks, 1));
  std::iota(pool_.begin(), pool_.end(), 0);
  std::mt19937 rng(12345);
  std::shuffle(pool_.begin(), pool_.end(), rng);
  SERVESIM_CUDA(cudaStreamSynchronize(stream_));
}

void StepExecutor::Prepare(const BatchShape& step) {
  std::vector<const SeqWork*> decodes, prefills;
  for (const SeqWork& w : step.seqs) {
    if (w.new_tokens == 0) continue;
    (IsDecode(w) ? decodes : prefills).push_back(&w);
  }
  decodes_ = int(decodes.size());
  prefills_ = int(prefills.size());
  tokens_ = samples_ = 0;
  decode_blocks_ = prefill_blocks_ = max_decode_len_ = max_new_ = max_total_ = 0;
  for (const SeqWork* w : decodes) {
    max_decode_len_ = std::max(max_decode_len_, w->context_tokens + 1);
  }
  for (const SeqWork* w : prefills) {
    max_new_ = std::max(max_new_, w->new_tokens);
    max_total_ = std::max(max_total_, w->context_tokens + w->new_tokens);
  }
  decode_blocks_ = int(Blocks(max_decode_len_, block_size_));
  prefill_blocks_ = int(Blocks(max_total_, block_size_));

  std::vector<int32_t> positions, slots, decode_table, decode_lens, prefill_table,
      q_start{0}, context_lens;
  size_t next = 0;
  order_.clear();
  seq_blocks_.clear();
  // Hands out blocks for one sequence and writes its table row, positions
  // and slots for its new tokens.
  auto place = [&](const SeqWork& w, int row_blocks, std::vector<int32_t>* table) {
    const int64_t total = int64_t(w.context_tokens) + w.new_tokens;
    const int64_t n = Blocks(total, block_size_);
    if (next + n > pool_.size()) throw std::runtime_error("StepExecutor: step exceeds its limits");
    std::vector<int32_t> row(row_blocks, pool_[next]);  // padding: never read
    for (int64_t i = 0; i < n; ++i) row[i] = pool_[next + i];
    for (int64_t p = w.context_tokens; p < total; ++p) {
      positions.push_back(int32_t(p));
      slots.push_back(row[p / block_size_] * block_size_ + int32_t(p % block_size_));
    }
    table->insert(table->end(), row.begin(), row.end());
    order_.push_back(w);
    seq_blocks_.emplace_back(row.begin(), row.begin() + n);
    next += n;
    tokens_ += w.new_tokens;
    samples_ += w.samples;
  };
  for (const SeqWork* w : decodes) {
    place(*w, decode_blocks_, &decode_table);
    decode_lens.push_back(w->context_tokens + 1);
  }
  for (const SeqWork* w : prefills) {
    place(*w, prefill_blocks_, &prefill_table);
    q_start.push_back(q_start.back() + w->new_tokens);
    context_lens.push_back(w->context_tokens);
  }
  meta_ = std::make_unique<Arena>();
  positions_ = meta_->Upload(positions);
  slots_ = meta_->Upload(slots);
  decode_table_ = meta_->Upload(decode_table);
  decode_lens_ = meta_->Upload(decode_lens);
  prefill_table_ = meta_->Upload(prefill_table);
  q_start_ = meta_->Upload(q_start);
  context_lens_ = meta_->Upload(context_lens);
  decode_ws_bytes_ = decodes_ > 0 ? kernels::DecodeAttentionWorkspaceBytes(
                                        decodes_, s_.heads, max_decode_len_, s_.head_dim)
                                  : 0;
  decode_ws_ = meta_->Alloc<char>(decode_ws_bytes_);
  // The same input embeddings every time a step is prepared (the layers
  // overwrite x in place), and a residual of zero, so layer 0's
  // "x + residual" is x, as in vLLM.
  Check(kernels::LaunchFillRandomBf16(x_, int64_t(tokens_) * s_.hidden, 777, 1.f, stream_),
        "fill input");
  SERVESIM_CUDA(cudaMemsetAsync(residual_, 0, size_t(tokens_) * s_.hidden * 2, stream_));
  SERVESIM_CUDA(cudaStreamSynchronize(stream_));
}

void StepExecutor::Enqueue() {
  const int t = tokens_, h = s_.hidden, hd = s_.heads * s_.head_dim;
  const float scale = 1.f / std::sqrt(float(s_.head_dim));
  cudaStream_t st = stream_;
  auto gemm = [&](const Bf16* a, const Bf16* w, Bf16* c, int m, int n, int k) {
    Check(kernels::LaunchGemmBf16(cublas_, a, w, c, m, n, k, st), "step gemm");
  };
  for (int l = 0; l < num_layers_; ++l) {
    const LayerWeights& w = weights_[l % weights_.size()];
    const LayerKv& c = kv_[l % kv_.size()];
    Check(kernels::LaunchAddRmsNorm(x_, residual_, w.norm1, t, h, kStepNormEps, normed_, st), "norm");
    gemm(normed_, w.qkv, qkv_, t, s_.QkvWidth(), h);
    Check(kernels::LaunchRotaryKvWrite(qkv_, positions_, slots_, t, s_.heads, s_.kv_heads,
                                       s_.head_dim, kStepRopeTheta, q_, c.k, c.v, st),
          "rotary");
    if (decodes_ > 0) {
      const kernels::PagedKvCache kv{c.k, c.v, decode_table_, block_size_, decode_blocks_,
                                     s_.kv_heads, s_.head_dim};
      Check(kernels::LaunchPagedDecodeAttention(q_, kv, decode_lens_, decodes_, s_.heads,
                                                max_decode_len_, scale, decode_ws_,
                                                decode_ws_bytes_, attn_, st),
            "decode attention");
    }
    if (prefills_ > 0) {
      const kernels::PagedKvCache kv{c.k, c.v, prefill_table_, block_size_, prefill_blocks_,
                                     s_.kv_heads, s_.head_dim};
      const size_t off = size_t(decodes_) * hd;
      Check(kernels::LaunchPrefillAttention(q_ + off, kv, q_start_, context_lens_, prefills_,
                                            s_.heads, max_new_, max_total_, scale,
                                            attn_ + off, st),
            "prefill attention");
    }
    gemm(attn_, w.o, x_, t, h, hd);
    Check(kernels::LaunchAddRmsNorm(x_, residual_, w.norm2, t, h, kStepNormEps, normed_, st), "norm");
    gemm(normed_, w.gate_up, gate_up_, t, 2 * s_.inter, h);
    Check(kernels::LaunchSiluMul(gate_up_, t, s_.inter, act_, st), "silu");
    gemm(act_, w.down, x_, t, h, s_.inter);
  }
  Check(kernels::LaunchAddRmsNorm(x_, residual_, final_norm_, t, h, kStepNormEps, normed_, st),
        "final norm");
  if (samples_ > 0) gemm(normed_, lm_head_, logits_, samples_, s_.vocab, h);
}

std::vector<Bf16> StepExecutor::DownloadHidden() const {
  std::vector<Bf16> out(size_t(tokens_) * s_.hidden);
  SERVESIM_CUDA(cudaStreamSynchronize(stream_));
  SERVESIM_CUDA(cudaMemcpy(out.data(), normed_, out.size() * sizeof(Bf16),
                           cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace servesim::calibrate::gpu
