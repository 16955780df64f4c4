// The request path outside the scheduler, as a vLLM OpenAI-compatible
// server runs it and as `vllm bench serve` measures it: the API server
// parses, applies the chat template and tokenizes each request on one
// thread (serving_engine.py's tokenizer executor has max_workers=1, vLLM
// issue #25301), hands it to the engine core over ZMQ, and streams each
// token back after detokenizing it. Requests sent together therefore reach
// the engine one tokenization apart, which is what keeps closed-loop
// clients from staying in phase on a real server.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/core/time.h"

namespace servesim {

struct FrontendConfig {
  bool enabled = false;  // a scenario turns it on unless told not to
  // API server, per request: HTTP, validation, chat template and the
  // tokenizer call; and per prompt token (tokenization). One FIFO per
  // server. A DGX H100's CPU tokenizes about 1k tokens a ms (10.7 ms for a
  // 10k-token input; vllm-project/vllm issue 19012); 131-token chat
  // prompts took 1.3-2.8 ms (tenstorrent/tt-inference-server issue 2173),
  // so about 1.2 ms is per request.
  double request_s = 0.0012;
  double prompt_token_s = 1e-6;
  // The work varies from request to request (the same prompt length takes
  // 1.3-2.8 ms in tenstorrent/tt-inference-server issue 2173's log): a
  // gamma factor of mean 1 and this coefficient of variation. Without it,
  // clients that finish together keep their exact spacing; with it they
  // may leave a fixed-length closed loop's lockstep, but only where the
  // spread is a fair part of a step (docs/engine/frontend.md).
  double work_cv = 0.3;
  int32_t api_servers = 0;       // 0: one per replica (one `vllm serve` each)
  double engine_hop_s = 0.0002;  // API server -> engine core
  // Engine core -> client, every token alike: output processing,
  // detokenization, the SSE chunk. Not contended (a constant shift).
  double output_s = 0.0003;
  // Closed loop and sessions: the client's time from reading an answer to
  // sending its next request, plus a uniform draw in [0, client_jitter_s).
  double client_turnaround_s = 0.0005;
  double client_jitter_s = 0;
};

// The API-server work of request `id` of prompt_len tokens (ns): request_s
// + prompt_token_s x prompt_len, times the work_cv draw. A function of
// (seed, id) alone, so the run's checks can recompute it.
SimTime ApiWork(const FrontendConfig& config, uint64_t seed, int64_t id,
                int32_t prompt_len);

// API servers in a deployment whose front replicas (the prefill pool's
// when disaggregated) number `front_replicas`: as given, else one each
// (one `vllm serve` per replica).
inline int32_t ApiServerCount(const FrontendConfig& config, int32_t front_replicas) {
  return config.api_servers > 0 ? config.api_servers : std::max(1, front_replicas);
}

// The API servers: each takes the requests it is given first come, first
// served; a request goes to the one free soonest (ties: the lowest index).
class ApiServers {
 public:
  ApiServers(const FrontendConfig& config, int32_t count);

  // A request sent at `now` needing `work` of an API server: when the
  // engine core has it. Requests must be given in order of `now`.
  SimTime EngineArrival(SimTime now, SimTime work);
  // API-server work done by `end`, summed over servers. Every request was
  // sent by then, so a server's work past `end` runs without a gap from
  // `end` to its free time; an overloaded run leaves that part out.
  SimTime BusyUntil(SimTime end) const;

 private:
  SimTime hop_;
  std::vector<SimTime> free_at_;
  SimTime busy_ = 0;
};

}  // namespace servesim
