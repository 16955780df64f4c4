// LinearCostModel (see linear_cost_model.h).
#include "sim/cost/linear_cost_model.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "sim/core/check.h"

namespace servesim {

LinearCostModel::LinearCostModel(const LinearParams& p) : p_(p) {}

std::unique_ptr<CostModel> LinearCostModel::FromConfig(const JsonView& cfg) {
  cfg.AllowKeys(
      {"type", "step_s", "prefill_token_s", "decode_seq_s", "kv_token_s"});
  LinearParams p;
  // Bounded so that a step stays a step: a minute at most per step, a second
  // per token or sequence (real GPUs: ~1e-3 s and ~1e-5 s). Larger values
  // (step_s 1e12) sent the clock past int64 nanoseconds.
  p.step_s = cfg.Number("step_s", 0, Range::Closed(0, 60));
  p.prefill_token_s = cfg.Number("prefill_token_s", 0, Range::Closed(0, 1));
  p.decode_seq_s = cfg.Number("decode_seq_s", 0, Range::Closed(0, 1));
  p.kv_token_s = cfg.Number("kv_token_s", 0, Range::Closed(0, 1));
  // An all-zero model makes every step free and the simulated clock stall.
  if (p.step_s + p.prefill_token_s + p.decode_seq_s + p.kv_token_s <= 0) {
    cfg.FailMessage("",
                    "expected at least one of step_s, prefill_token_s, "
                    "decode_seq_s, kv_token_s to be > 0");
  }
  return std::make_unique<LinearCostModel>(p);
}

StepCost LinearCostModel::StepTime(const BatchShape& batch) const {
  // Integer sums: decodes one by one or as an aggregate cost the same.
  int64_t prefill_tokens = 0, decode_seqs = batch.decode_seqs;
  int64_t prefill_kv = 0, decode_kv = batch.decode_context + batch.decode_seqs;
  SERVESIM_CHECK(batch.runs.empty(), "LinearCostModel: runs of sequences are not priced here");
  for (const SeqWork& s : batch.seqs) {
    if (s.new_tokens < 0 || s.context_tokens < 0) {
      std::fprintf(stderr, "LinearCostModel: bad SeqWork new=%d context=%d\n",
                   s.new_tokens, s.context_tokens);
      std::abort();
    }
    if (s.new_tokens == 0) continue;  // scheduled but computes nothing
    const int64_t attended = int64_t{s.context_tokens} + s.new_tokens;
    if (IsDecode(s)) {
      decode_seqs += 1;
      decode_kv += attended;
    } else {
      prefill_tokens += s.new_tokens;
      prefill_kv += attended;
    }
  }
  StepCost c;
  if (prefill_tokens + decode_seqs == 0) return c;  // nothing to run
  c.overhead_s = p_.step_s;
  c.gemm_s = p_.prefill_token_s * static_cast<double>(prefill_tokens) +
             p_.decode_seq_s * static_cast<double>(decode_seqs);
  c.attn_prefill_s = p_.kv_token_s * static_cast<double>(prefill_kv);
  c.attn_decode_s = p_.kv_token_s * static_cast<double>(decode_kv);
  return c;
}

std::string LinearCostModel::Describe() const {
  std::ostringstream os;
  os << "linear (step " << p_.step_s << " s, prefill " << p_.prefill_token_s
     << " s/token, decode " << p_.decode_seq_s << " s/seq, kv " << p_.kv_token_s
     << " s/token)";
  return os.str();
}

}  // namespace servesim
