// Run-level invariants of the request path outside the scheduler (see
// run_invariants.cc's list, "frontend"), read from the requests' times.
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "sim/engine/run_invariants_violations.h"
#include "sim/engine/simulation.h"

namespace servesim {
namespace {
using ll = long long;

// A tokenizer batch as the requests show it: its start and end (when its
// members reach the engine, less the hop). Batches of different servers
// can share both, so a key may hold several.
struct Batch {
  int64_t members = 0;
  SimTime tokenize = 0;  // its members' tokenization, summed
};
}  // namespace

void CheckFrontend(const SimulationInput& in, const SimulationOutput& out,
                   Violations* v) {
  const FrontendConfig& f = in.frontend;
  const bool stopped = out.stopped_at_queue_cap;
  const bool windows = HasTokenizerWindow(f);
  const SimTime hop = FromSeconds(f.engine_hop_s);
  const int32_t servers = ApiServerCount(in);
  std::vector<std::pair<SimTime, int>> busy;  // one thread's work: +1 / -1
  std::map<std::pair<SimTime, SimTime>, Batch> batches;
  for (const Request& r : out.requests) {
    if (r.send < 0 || r.status == RequestStatus::kRejected) continue;
    if (r.engine_arrival < 0) {
      if (!stopped) {
        v->Add("frontend", "request %lld sent at %lld ns never reached the engine",
               (ll)r.id, (ll)r.send);
      }
      continue;
    }
    if (!f.enabled) {
      if (r.engine_arrival != r.send) {
        v->Add("frontend", "request %lld: engine arrival %lld ns != send %lld ns "
               "without a frontend", (ll)r.id, (ll)r.engine_arrival, (ll)r.send);
      }
      continue;
    }
    // Its event-loop work ran between its send and its tokenization, and
    // its tokenization ended one hop before the engine had it.
    const ApiWork work = ApiWorkOf(f, in.seed, r.id, r.prompt_len);
    const SimTime start = r.tokenize_start;
    const SimTime end = r.engine_arrival - hop;
    if (start < 0 || start - work.request < r.send || end - start < work.tokenize) {
      v->Add("frontend", "request %lld: sent at %lld ns, tokenized from %lld ns, at the "
             "engine at %lld ns: less than its API-server work (%lld + %lld ns) and "
             "the hop", (ll)r.id, (ll)r.send, (ll)start, (ll)r.engine_arrival,
             (ll)work.request, (ll)work.tokenize);
      continue;
    }
    if (windows) {
      Batch& b = batches[{start, end}];
      ++b.members;
      b.tokenize += work.tokenize;
    } else {
      // One piece on one thread: the request's work, then its tokenization.
      if (end - start != work.tokenize) {
        v->Add("frontend", "request %lld: tokenized in %lld ns, its work is %lld ns",
               (ll)r.id, (ll)(end - start), (ll)work.tokenize);
      }
      busy.emplace_back(start - work.request, +1);
      busy.emplace_back(end, -1);
    }
  }
  if (!f.enabled) return;
  // A batch tokenizes its members back to back from its start: its span is
  // their work, and it holds at most tokenizer_max_batch of them (k
  // servers' batches sharing a span: k times each). Batches of no work
  // (an empty span) cannot be told apart: any number may share one.
  for (const auto& [span, b] : batches) {
    const SimTime length = span.second - span.first;
    if (length == 0 && b.tokenize == 0) continue;
    const int64_t k = length > 0 ? b.tokenize / length : 0;
    if (length <= 0 || b.tokenize % length != 0 || k < 1 || k > servers ||
        b.members > k * f.tokenizer_max_batch) {
      v->Add("frontend", "a tokenizer batch from %lld to %lld ns holds %lld requests "
             "of %lld ns of tokenization (at most %d a batch, %d API servers)",
             (ll)span.first, (ll)span.second, (ll)b.members, (ll)b.tokenize,
             f.tokenizer_max_batch, servers);
      continue;
    }
    busy.emplace_back(span.first, static_cast<int>(k));
    busy.emplace_back(span.second, -static_cast<int>(k));
  }
  // At most ApiServerCount threads at that work at once (an end frees its
  // server before a start at the same instant takes it).
  std::sort(busy.begin(), busy.end());
  int64_t now = 0, peak = 0;
  for (const auto& [t, d] : busy) peak = std::max(peak, now += d);
  if (peak > servers) {
    v->Add("frontend", "%lld requests %s at once, %d API servers", (ll)peak,
           windows ? "in tokenizer batches" : "in API-server work", servers);
  }
}

}  // namespace servesim
