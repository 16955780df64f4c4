// The summary's per-request part, one request at a time (see request_digest.h).
#include "sim/report/request_digest.h"

#include <algorithm>

namespace servesim {

RequestDigest::RequestDigest(const SimulationInput& in)
    : classes(in.workload.classes.size()), blocks_(in.engine.block_size) {
  frontend = in.frontend.enabled;
  client_lag_ = ClientLag(in);
}

void RequestDigest::Add(const Request& r) {
  ++created;
  if (r.request_class >= 0 && r.request_class < static_cast<int32_t>(classes.size())) {
    ClassCounts& c = classes[r.request_class];
    ++c.created;
    if (r.status == RequestStatus::kRejected) {
      ++c.rejected;
      c.failed += r.measured;
    } else if (r.status != RequestStatus::kFinished) {
      ++c.unfinished;
    } else if (!r.measured) {
      ++c.excluded_warmup;
    } else {
      ++c.completed;
      c.input_tokens += r.prompt_len;
      c.output_tokens += r.output_len;
      c.preemptions += r.preemptions;
    }
  }
  if (r.measured) {
    ++measured;
    first_measured = std::min(first_measured, r.arrival);
    last_measured = std::max(last_measured, r.arrival);
  }
  if (r.status == RequestStatus::kRejected) {
    failed += r.measured;
    if (std::find(reject_reasons.begin(), reject_reasons.end(), r.reject_reason) ==
        reject_reasons.end()) {
      reject_reasons.emplace_back(r.reject_reason);
    }
    return;
  }
  if (r.measured && r.cached_tokens >= 0) {
    prompt_tokens_admitted += r.prompt_len;
    cached_prompt_tokens += r.cached_tokens;
    cpu_cached_prompt_tokens += r.cpu_cached_tokens;
    prompt_full_blocks += blocks_.Full(r.prompt_len);
    cached_blocks += blocks_.Full(r.cached_tokens);
  }
  if (r.status == RequestStatus::kAborted) return;  // its client left (serve)
  if (r.status != RequestStatus::kFinished) {
    if (r.measured) unfinished_arrivals.push_back(r.arrival);
    return;
  }
  if (!r.measured) {
    ++excluded_warmup;
    return;
  }
  ++completed;
  total_input_tokens += r.prompt_len;
  total_output_tokens += r.output_len;
  preemptions += r.preemptions;
  preempted_requests += r.preemptions > 0;
  first_arrival = std::min(first_arrival, r.arrival);
  last_finish = std::max(last_finish, r.finish + client_lag_);
  slot_waits |= r.send != r.arrival;
  outcomes.push_back({r.arrival, r.send, r.first_scheduled, r.first_token + client_lag_,
                      r.finish + client_lag_, r.output_len, r.request_class});
  if (frontend) api_waits.push_back(r.engine_arrival - r.send);
}

std::vector<SimTime> RequestDigest::EngineTtfts() const {
  std::vector<SimTime> ttfts(api_waits.size());
  size_t i = 0;
  outcomes.ForEachChunk([&](const OutcomeTable::Chunk& c, size_t n) {
    for (size_t j = 0; j < n; ++j, ++i) {
      ttfts[i] = c.first_token[j] - client_lag_ - c.send[j] - api_waits[i];
    }
  });
  return ttfts;
}

}  // namespace servesim
