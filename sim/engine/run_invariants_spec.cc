// Run-level invariants of speculative decoding (see run_invariants.cc's
// list, "spec"): read from the requests and the engine's counters only.
#include "sim/engine/run_invariants_violations.h"
#include "sim/engine/simulation.h"

#include <algorithm>

namespace servesim {
namespace {
using ll = long long;
}  // namespace

bool SpecOn(const SimulationInput& in, int32_t replica) {
  if (replica < 0) return false;
  const int32_t n = std::max(1, in.num_replicas);
  return EngineOfReplica(in, std::min(replica, n - 1)).spec.on();
}

void CheckSpecInvariants(const SimulationInput& in, const SimulationOutput& out,
                         Violations* v) {
  for (int32_t k = 0; k < std::max(1, in.num_replicas); ++k) {
    const EngineConfig& e = EngineOfReplica(in, k);
    if (e.spec.on() && e.async_scheduling) {
      v->Add("spec", "replica %d decodes speculatively with async scheduling", k);
    }
  }
  int64_t extra = 0;  // tokens beyond the first of each delivery
  for (const Request& r : out.requests) {
    const bool on = SpecOn(in, r.replica);
    if (!on) {
      if (r.deliveries != 0 || r.max_delivered != 0) {
        v->Add("spec", "request %lld counted %d deliveries without speculative decoding",
               (ll)r.id, r.deliveries);
      }
      continue;
    }
    const int32_t k1 = EngineOfReplica(in, r.replica).spec.num_speculative_tokens + 1;
    if (r.deliveries > r.num_output || (r.num_output > 0) != (r.deliveries > 0) ||
        static_cast<int64_t>(r.num_output) > static_cast<int64_t>(k1) * r.deliveries ||
        r.max_delivered > k1 || (r.num_output > 0 && r.max_delivered < 1)) {
      v->Add("spec", "request %lld: %d tokens in %d deliveries, at most %d in one "
             "(k + 1 = %d)", (ll)r.id, r.num_output, r.deliveries, r.max_delivered, k1);
    }
    extra += r.num_output - r.deliveries;
  }
  const SpecDecodeStats& s = out.spec;
  int32_t max_k = 0;
  for (int32_t k = 0; k < std::max(1, in.num_replicas); ++k) {
    max_k = std::max(max_k, EngineOfReplica(in, k).spec.num_speculative_tokens);
  }
  if (s.drafts < 0 || s.accepted < 0 || s.accepted > s.draft_tokens ||
      s.draft_tokens > static_cast<int64_t>(max_k) * s.drafts ||
      (s.drafts > 0) != (s.draft_tokens > 0) || s.draft_s < 0) {
    v->Add("spec", "counters: %lld drafts, %lld draft tokens, %lld accepted, k %d",
           (ll)s.drafts, (ll)s.draft_tokens, (ll)s.accepted, max_k);
  }
  if (extra != s.accepted) {
    v->Add("spec", "requests received %lld tokens beyond one per delivery; the "
           "engine accepted %lld drafts", (ll)extra, (ll)s.accepted);
  }
}

}  // namespace servesim
