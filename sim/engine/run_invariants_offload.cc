// Run-level invariants of KV offload (engine.kv_offload, engine.preemption
// swap), read from the run's output only (see run_invariants.h):
//  offload  without a CPU tier nothing moves, no request is served from or
//           swapped to it; without swap preemption nothing is swapped,
//           without prefix caching no prefix block moves;
//           per step: the transfer stall is what its recorded blocks cost
//           on the host link (each direction that moved anything: latency +
//           blocks x block bytes / bandwidth; evicted prefix blocks copied
//           to CPU overlap compute) and lies within the step (end - start);
//           the steps' stalls sum to the run's, their blocks to at most the
//           run's (an empty batch's transfers land on the next step; none
//           may follow the last), bytes = blocks x block bytes x GPUs;
//           blocks swapped in <= swapped out, every swap preemption moved a
//           block, swap preemptions + fallbacks <= preemptions;
//           per request: CPU-tier prefix tokens <= its cached tokens, whole
//           blocks; a finished request holds no swap space.
#include <algorithm>
#include <cmath>

#include "sim/engine/run_invariants_violations.h"
#include "sim/engine/simulation.h"

namespace servesim {
namespace {

using ll = long long;

SimTime ExpectedStall(const EngineConfig& e, const StepRecord& s) {
  const auto one = [&](int64_t blocks) {
    return blocks == 0 ? 0
                       : FromSeconds(e.pcie_latency_s + static_cast<double>(blocks) *
                                                            e.kv_block_bytes / e.pcie_bytes_per_s);
  };
  return one(s.swap_out_blocks) + one(s.swap_in_blocks + s.load_blocks);
}

void CheckOffloadSteps(const SimulationInput& in, const SimulationOutput& out,
                       Violations* v) {
  const int32_t replicas = std::max(1, in.num_replicas);
  OffloadStats sum;
  for (size_t k = 0; k < out.steps.size(); ++k) {
    const StepRecord& s = out.steps[k];
    const EngineConfig& e = EngineOfReplica(in, std::clamp(s.replica, 0, replicas - 1));
    const ll i = static_cast<ll>(k);
    const bool tier = e.cpu_blocks > 0;
    if (s.swap_out_blocks < 0 || s.swap_in_blocks < 0 || s.load_blocks < 0 ||
        s.store_blocks < 0 || s.transfer_stall < 0 ||
        (!tier && (s.swap_out_blocks | s.swap_in_blocks | s.load_blocks |
                   s.store_blocks | s.transfer_stall) != 0) ||
        (!e.swap_preemption && (s.swap_out_blocks | s.swap_in_blocks) != 0) ||
        (!e.prefix_caching && (s.load_blocks | s.store_blocks) != 0)) {
      v->Add("offload", "step %lld (replica %d): moved swap %lld out / %lld in, prefix "
             "%lld stored / %lld loaded (CPU tier %lld blocks, swap %d, prefix caching %d)",
             i, s.replica, (ll)s.swap_out_blocks, (ll)s.swap_in_blocks, (ll)s.store_blocks,
             (ll)s.load_blocks, (ll)e.cpu_blocks, e.swap_preemption, e.prefix_caching);
    }
    if (tier && (s.transfer_stall != ExpectedStall(e, s) ||
                 s.transfer_stall > s.end - s.start)) {
      v->Add("offload", "step %lld (replica %d): stalled %lld ns for %lld blocks out, %lld "
             "in; the link costs %lld ns; the step lasts %lld ns", i, s.replica,
             (ll)s.transfer_stall, (ll)s.swap_out_blocks,
             (ll)(s.swap_in_blocks + s.load_blocks), (ll)ExpectedStall(e, s),
             (ll)(s.end - s.start));
    }
    sum.swap_out_blocks += s.swap_out_blocks;
    sum.swap_in_blocks += s.swap_in_blocks;
    sum.load_blocks += s.load_blocks;
    sum.store_blocks += s.store_blocks;
    sum.stall += s.transfer_stall;
  }
  const OffloadStats& o = out.offload;
  if (sum.stall != o.stall || sum.swap_out_blocks > o.swap_out_blocks ||
      sum.swap_in_blocks > o.swap_in_blocks || sum.load_blocks > o.load_blocks ||
      sum.store_blocks > o.store_blocks) {
    v->Add("offload", "steps record %lld ns of stall, blocks swap %lld/%lld, prefix "
           "%lld/%lld; the run %lld ns, %lld/%lld, %lld/%lld", (ll)sum.stall,
           (ll)sum.swap_out_blocks, (ll)sum.swap_in_blocks, (ll)sum.store_blocks,
           (ll)sum.load_blocks, (ll)o.stall, (ll)o.swap_out_blocks, (ll)o.swap_in_blocks,
           (ll)o.store_blocks, (ll)o.load_blocks);
  }
}

void CheckOffloadTotals(const SimulationInput& in, const SimulationOutput& out,
                        Violations* v) {
  const OffloadStats& o = out.offload;
  const EngineConfig& e = in.engine;
  const double block = e.kv_block_bytes * e.offload_gpus;
  const double to_cpu = static_cast<double>(o.swap_out_blocks + o.store_blocks) * block;
  const double to_gpu = static_cast<double>(o.swap_in_blocks + o.load_blocks) * block;
  const auto near = [](double a, double b) {
    return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
  };
  if (!near(o.bytes_to_cpu, to_cpu) || !near(o.bytes_to_gpu, to_gpu)) {
    v->Add("offload", "bytes moved %.0f to CPU, %.0f to GPU; blocks x %.0f bytes give "
           "%.0f, %.0f", o.bytes_to_cpu, o.bytes_to_gpu, block, to_cpu, to_gpu);
  }
  int64_t preemptions = 0;
  for (const Request& r : out.requests) preemptions += r.preemptions;
  if (o.swap_in_blocks > o.swap_out_blocks || o.swap_out_blocks < o.swap_preemptions ||
      o.swap_preemptions + o.swap_fallbacks > preemptions ||
      (!e.swap_preemption && o.swap_preemptions + o.swap_fallbacks > 0) ||
      (e.cpu_blocks == 0 && (o.cpu_evictions > 0 || o.stall > 0))) {
    v->Add("offload", "swap: %lld preemptions (%lld fell back to recompute) of %lld, "
           "%lld blocks out, %lld in; CPU tier %lld blocks, %lld evictions",
           (ll)o.swap_preemptions, (ll)o.swap_fallbacks, (ll)preemptions,
           (ll)o.swap_out_blocks, (ll)o.swap_in_blocks, (ll)e.cpu_blocks,
           (ll)o.cpu_evictions);
  }
  for (const Request& r : out.requests) {
    const bool bad_hit =
        r.cpu_cached_tokens < 0 || r.cpu_cached_tokens % std::max(1, e.block_size) != 0 ||
        (r.cpu_cached_tokens > 0 && r.cpu_cached_tokens > r.cached_tokens) ||
        (r.cpu_cached_tokens > 0 && (e.cpu_blocks == 0 || !e.prefix_caching));
    const bool bad_swap = r.swapped_tokens < 0 || r.swap_blocks < 0 ||
                          (r.status == RequestStatus::kFinished && r.swap_blocks != 0) ||
                          (!e.swap_preemption && r.swap_blocks != 0);
    if (bad_hit || bad_swap) {
      v->Add("offload", "request %lld: %d CPU-tier prefix tokens of %d cached; %d swapped "
             "tokens in %d CPU blocks (status %d)", (ll)r.id, r.cpu_cached_tokens,
             r.cached_tokens, r.swapped_tokens, r.swap_blocks, static_cast<int>(r.status));
    }
  }
}

}  // namespace

void CheckOffloadInvariants(const SimulationInput& in, const SimulationOutput& out,
                            Violations* v) {
  CheckOffloadSteps(in, out, v);
  if (!in.disagg) CheckOffloadTotals(in, out, v);
}

}  // namespace servesim
