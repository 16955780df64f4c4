// Sliding-window KV (gpt-oss's windowed layers): the memory plan sets aside
// max_num_seqs x (window + one block) tokens of their KV, and the block
// pool holds the full-attention layers'. That is sound only while no step
// runs more sequences than the reserve was sized for, each holding at most
// its bound: checked on every step's running count, so an engine that
// admitted past max_num_seqs (or a plan that shrank the reserve) fails
// here with the step named.
#include "sim/engine/run_invariants_violations.h"

namespace servesim {

void CheckWindowedKv(const SimulationInput& in, const SimulationOutput& out, Violations* v) {
  const EngineConfig& e = in.engine;
  // Disaggregated pools plan their own engines (their steps are checked by
  // the pools' block invariants, not here).
  if (e.windowed_kv_bytes_per_seq <= 0 || in.disagg) return;
  const double per_seq = e.windowed_kv_bytes_per_seq;
  if (e.windowed_kv_reserve_bytes < e.max_num_seqs * per_seq * (1 - 1e-12)) {
    v->Add("windowed KV", "reserve %.0f bytes < max_num_seqs %d x %.0f bytes a sequence",
           e.windowed_kv_reserve_bytes, e.max_num_seqs, per_seq);
  }
  for (const StepRecord& s : out.steps) {
    const double need = static_cast<double>(s.num_running) * per_seq;
    if (s.num_running > e.max_num_seqs || need > e.windowed_kv_reserve_bytes * (1 + 1e-12)) {
      v->Add("windowed KV",
             "replica %d step at %.6f s: %d running sequences need %.0f bytes of windowed KV, "
             "%.0f set aside (max_num_seqs %d)",
             s.replica, ToSeconds(s.start), s.num_running, need, e.windowed_kv_reserve_bytes,
             e.max_num_seqs);
    }
    if (s.kv_blocks_used > s.kv_blocks_total) {
      v->Add("windowed KV", "replica %d step at %.6f s: %d of %d pool blocks used",
             s.replica, ToSeconds(s.start), s.kv_blocks_used, s.kv_blocks_total);
    }
  }
}

}  // namespace servesim
