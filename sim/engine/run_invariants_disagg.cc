// Run-level invariants of a disaggregated run (SimulationInput::disagg),
// read from its output only, each able to fail on its own
// (tests/engine/disagg_test.cc):
//  pools      the prefill copy of every request sent is routed to a prefill
//             instance, the request itself (once its prefill ended) to a
//             decode instance; per-instance routed counts agree; a copy
//             has output_len 1 and finishes with exactly that token.
//  order      per request: the copy sent when the request reached the
//             engines (its engine_arrival) <= prefill's first
//             scheduling < prefill end (= the copy's finish and token, at
//             the end of a step of its prefill instance) <= transfer start
//             < transfer end <= the decode's first scheduling < its first
//             token; a finished request had its prefill and transfer; a
//             transfer's length is latency + its bytes / bandwidth.
//  links      per decode instance, transfers in prefill-end order (FIFO)
//             and never overlapping; each link's busy time is the sum of
//             its transfers.
//  conservation  prefills ended == transfers started >= transfers ended
//             == requests submitted to decode >= decodes finished;
//             transfers and bytes moved agree with the per-request record.
//  kv         a prefill copy holds blocks only while its transfer has not
//             ended; at the end of a run that was not cut short no request
//             of either pool holds a block.
#include <algorithm>
#include <cmath>

#include "sim/engine/run_invariants_violations.h"
#include "sim/engine/simulation.h"

namespace servesim {
namespace {

using ll = long long;

void CheckPools(const SimulationInput& in, const SimulationOutput& out, Violations* v) {
  const DisaggOutput& d = *out.disagg;
  const int32_t np = in.disagg->prefill.num_replicas;
  const int32_t n = static_cast<int32_t>(out.replicas.size());
  if (d.num_prefill != np || n != np + in.disagg->decode.num_replicas ||
      d.prefill_requests.size() != out.requests.size() ||
      d.requests.size() != out.requests.size()) {
    v->Add("pools", "%d prefill of %d replicas (config %d + %d); %zu prefill copies, %zu "
           "transfer records for %zu requests", d.num_prefill, n, np,
           in.disagg->decode.num_replicas, d.prefill_requests.size(), d.requests.size(),
           out.requests.size());
    return;
  }
  std::vector<int64_t> routed(n, 0);
  for (size_t i = 0; i < out.requests.size(); ++i) {
    const Request& r = out.requests[i];
    const Request& p = d.prefill_requests[i];
    // At the engines: sent, and past any frontend (a run stopped early
    // may leave some at the API servers).
    const bool sent = r.engine_arrival >= 0 && r.status != RequestStatus::kRejected;
    if (p.id != r.id || p.output_len != 1 || p.prompt_len != r.prompt_len) {
      v->Add("pools", "request %lld: prefill copy id %lld, output_len %d, prompt %d of %d",
             (ll)r.id, (ll)p.id, p.output_len, p.prompt_len, r.prompt_len);
    }
    if (sent && (p.replica < 0 || p.replica >= np)) {
      v->Add("pools", "request %lld sent, prefill copy on replica %d, not in [0, %d)",
             (ll)r.id, p.replica, np);
    } else if (sent) {
      ++routed[p.replica];
    }
    if (r.replica >= 0 && (r.replica < np || r.replica >= n)) {
      v->Add("pools", "request %lld on decode replica %d, not in [%d, %d)", (ll)r.id,
             r.replica, np, n);
    } else if (r.replica >= 0) {
      ++routed[r.replica];
    }
    if (sent && r.replica < 0 && p.status == RequestStatus::kFinished) {
      v->Add("pools", "request %lld: prefill finished but no decode instance", (ll)r.id);
    }
    if (p.status == RequestStatus::kFinished && p.num_output != 1) {
      v->Add("pools", "prefill copy %lld finished with %d tokens", (ll)p.id, p.num_output);
    }
  }
  for (int32_t k = 0; k < n; ++k) {
    if (out.replicas[k].routed != routed[k]) {
      v->Add("routing", "replica %d: routed %lld, %lld requests carry it", k,
             (ll)out.replicas[k].routed, (ll)routed[k]);
    }
  }
}

// The transfer of a prompt of `tokens` tokens, as the configuration prices it.
SimTime TransferTime(const DisaggConfig& c, int32_t tokens) {
  const double per_gpu = c.kv_bytes_per_token_per_gpu * tokens;
  return std::max<SimTime>(1, FromSeconds(c.link_latency_s + per_gpu / c.link_bytes_per_s));
}

bool EndsAStep(const SimulationOutput& out, int32_t replica, SimTime t) {
  for (const StepRecord& s : out.steps) {
    if (s.replica == replica && s.end == t) return true;
  }
  return false;
}

void CheckOrder(const SimulationInput& in, const SimulationOutput& out, Violations* v) {
  const DisaggOutput& d = *out.disagg;
  const DisaggConfig& c = *in.disagg;
  int checked_steps = 0;  // step-end lookups are linear: a sample suffices
  for (size_t i = 0; i < out.requests.size(); ++i) {
    const Request& r = out.requests[i];
    const Request& p = d.prefill_requests[i];
    const DisaggRequest& t = d.requests[i];
    if (r.status == RequestStatus::kRejected) continue;
    // The prefill copy is sent when the request reaches the engines (its
    // send, or after the frontend's API server).
    if (p.send != r.engine_arrival) {
      v->Add("order", "request %lld: at the engines at %lld ns, its prefill copy sent "
             "at %lld ns", (ll)r.id, (ll)r.engine_arrival, (ll)p.send);
    }
    const bool prefilled = p.status == RequestStatus::kFinished;
    if (prefilled != (t.prefill_end >= 0) ||
        (prefilled && (t.prefill_end != p.finish || p.first_token != p.finish ||
                       p.first_scheduled < p.send || p.first_scheduled >= p.finish))) {
      v->Add("order", "request %lld: prefill status %d, scheduled %lld ns, token %lld "
             "ns, finish %lld ns, recorded end %lld ns", (ll)r.id,
             static_cast<int>(p.status), (ll)p.first_scheduled, (ll)p.first_token,
             (ll)p.finish, (ll)t.prefill_end);
    }
    if (prefilled && checked_steps < 200) {
      ++checked_steps;
      if (!EndsAStep(out, p.replica, p.finish)) {
        v->Add("order", "request %lld: prefill ended at %lld ns, not at the end of a "
               "step of replica %d", (ll)r.id, (ll)p.finish, p.replica);
      }
    }
    if ((t.transfer_start >= 0) != prefilled ||
        (prefilled && (t.transfer_start < t.prefill_end ||
                       t.transfer_end - t.transfer_start != TransferTime(c, r.prompt_len)))) {
      v->Add("transfer", "request %lld: prefill end %lld ns, transfer [%lld, %lld] ns, "
             "expected length %lld ns", (ll)r.id, (ll)t.prefill_end, (ll)t.transfer_start,
             (ll)t.transfer_end, (ll)TransferTime(c, r.prompt_len));
    }
    const bool arrived = t.transfer_end >= 0 && t.transfer_end <= out.end_time;
    if (r.first_scheduled >= 0 && (!arrived || r.first_scheduled < t.transfer_end)) {
      v->Add("order", "request %lld: decode admitted at %lld ns, transfer ended %lld ns",
             (ll)r.id, (ll)r.first_scheduled, (ll)t.transfer_end);
    }
    if (r.first_token >= 0 && r.first_token <= r.first_scheduled) {
      v->Add("order", "request %lld: first token %lld ns at or before decode admission "
             "%lld ns", (ll)r.id, (ll)r.first_token, (ll)r.first_scheduled);
    }
    if (r.status == RequestStatus::kFinished && !arrived) {
      v->Add("order", "request %lld finished without a completed transfer", (ll)r.id);
    }
  }
}

void CheckLinks(const SimulationInput& in, const SimulationOutput& out, Violations* v) {
  const DisaggOutput& d = *out.disagg;
  const int32_t np = d.num_prefill;
  const size_t nd = static_cast<size_t>(in.disagg->decode.num_replicas);
  std::vector<std::vector<const DisaggRequest*>> links(nd);
  for (size_t i = 0; i < out.requests.size(); ++i) {
    const int32_t k = out.requests[i].replica - np;
    if (d.requests[i].transfer_start < 0) continue;
    if (k < 0 || static_cast<size_t>(k) >= nd) continue;  // CheckPools says so
    links[k].push_back(&d.requests[i]);
  }
  if (d.link_busy.size() != nd) {
    v->Add("links", "%zu link records for %zu decode instances", d.link_busy.size(), nd);
    return;
  }
  for (size_t k = 0; k < nd; ++k) {
    auto& l = links[k];
    std::sort(l.begin(), l.end(), [](const DisaggRequest* a, const DisaggRequest* b) {
      return a->transfer_start < b->transfer_start;
    });
    SimTime busy = 0, in_run = 0;
    for (size_t j = 0; j < l.size(); ++j) {
      busy += l[j]->transfer_end - l[j]->transfer_start;
      in_run += std::min(l[j]->transfer_end, out.end_time) -
                std::min(l[j]->transfer_start, out.end_time);
      if (j == 0) continue;
      if (l[j]->transfer_start < l[j - 1]->transfer_end) {
        v->Add("links", "decode link %zu: a transfer starts at %lld ns before the "
               "previous ends at %lld ns", k, (ll)l[j]->transfer_start,
               (ll)l[j - 1]->transfer_end);
      }
      if (l[j]->prefill_end < l[j - 1]->prefill_end) {
        v->Add("links", "decode link %zu: not first come, first served (prefill ends "
               "%lld ns after %lld ns)", k, (ll)l[j]->prefill_end,
               (ll)l[j - 1]->prefill_end);
      }
    }
    // The share the report prints (in_run / end_time) is a share.
    if (k >= d.link_busy_in_run.size() || in_run != d.link_busy_in_run[k] ||
        in_run > out.end_time) {
      v->Add("links", "decode link %zu: busy before the end %lld ns, transfers before it "
             "%lld ns, run %lld ns", k,
             (ll)(k < d.link_busy_in_run.size() ? d.link_busy_in_run[k] : -1), (ll)in_run,
             (ll)out.end_time);
    }
    if (busy != d.link_busy[k]) {
      v->Add("links", "decode link %zu: busy %lld ns, transfers sum to %lld ns", k,
             (ll)d.link_busy[k], (ll)busy);
    }
  }
}

void CheckConservation(const SimulationInput& in, const SimulationOutput& out,
                       Violations* v) {
  const DisaggOutput& d = *out.disagg;
  const bool stopped = StoppedEarly(in, out);
  int64_t prefilled = 0, started = 0, ended = 0, submitted = 0, decoded = 0;
  double bytes = 0;
  for (size_t i = 0; i < out.requests.size(); ++i) {
    const Request& r = out.requests[i];
    const Request& p = d.prefill_requests[i];
    const DisaggRequest& t = d.requests[i];
    prefilled += p.status == RequestStatus::kFinished;
    started += t.transfer_start >= 0;
    // A run stopped early ends at the event that stopped it: a transfer
    // ending at that same instant may or may not have been handled, and
    // handling it frees the prefill copy's blocks (fuzzer seed 961129).
    const bool at_stop = stopped && t.transfer_end == out.end_time;
    const bool arrived = t.transfer_end >= 0 && t.transfer_end <= out.end_time &&
                         (!at_stop || p.blocks.empty());
    ended += arrived;
    if (arrived) bytes += t.bytes;
    submitted += r.status == RequestStatus::kWaiting || r.status == RequestStatus::kRunning ||
                 r.status == RequestStatus::kFinished;
    decoded += r.status == RequestStatus::kFinished;
    // A prefill instance frees a request's blocks when its transfer ends.
    if (!p.blocks.empty() && (arrived || p.status != RequestStatus::kFinished)) {
      if (p.status == RequestStatus::kFinished || !stopped) {
        v->Add("kv", "prefill copy %lld (status %d) holds %d blocks, transfer ended %d",
               (ll)p.id, static_cast<int>(p.status), p.blocks.size(), arrived);
      }
    }
    if (!stopped && !r.blocks.empty()) {
      v->Add("kv", "request %lld (status %d) holds %d blocks at the end of the run",
             (ll)r.id, static_cast<int>(r.status), r.blocks.size());
    }
  }
  if (prefilled != started || ended > started || submitted != ended || decoded > ended ||
      ended != d.transfers) {
    v->Add("conservation", "%lld prefills ended, %lld transfers started, %lld ended "
           "(counted %lld), %lld submitted to decode, %lld decoded", (ll)prefilled,
           (ll)started, (ll)ended, (ll)d.transfers, (ll)submitted, (ll)decoded);
  }
  if (std::abs(bytes - d.bytes_moved) > 1e-9 * std::max(1.0, bytes)) {
    v->Add("conservation", "%.0f bytes moved, transfers sum to %.0f", d.bytes_moved, bytes);
  }
  if (!stopped && (started != ended)) {
    v->Add("conservation", "%lld transfers still in flight at the end of a complete run",
           (ll)(started - ended));
  }
}

}  // namespace

void CheckDisaggInvariants(const SimulationInput& in, const SimulationOutput& out,
                           Violations* v) {
  if (!in.disagg || !out.disagg) {
    v->Add("pools", "a disaggregated input without a disaggregated output");
    return;
  }
  CheckPools(in, out, v);
  if (out.disagg->requests.size() != out.requests.size() ||
      out.disagg->prefill_requests.size() != out.requests.size()) {
    return;
  }
  CheckOrder(in, out, v);
  CheckLinks(in, out, v);
  CheckConservation(in, out, v);
}

}  // namespace servesim
