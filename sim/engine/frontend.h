// The request path outside the scheduler, as a vLLM OpenAI-compatible
// server runs it and as `vllm bench serve` measures it: the API server
// parses and validates each request and applies the chat template on its
// event loop, tokenizes it, hands it to the engine core over ZMQ, and
// streams each token back after detokenizing it. From vLLM 0.10 until
// mid-2026 (pull requests 19334 to 45759) tokenization went through a
// micro-batcher (AsyncMicrobatchTokenizer in vllm/utils/async_utils.py):
// the first prompt waiting opens a 2 ms window, every prompt ready before
// it closes (up to 32) is tokenized in one call on the tokenizer thread,
// and all of them reach the engine core together. Without the window
// (SGLang; vLLM before and after) each request is tokenized alone, one
// after another on the server's one thread (vLLM issue #25301).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
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
  // vLLM's tokenizer micro-batch: how long the first prompt waiting holds
  // the batch open for more, and the most prompts in one batch
  // (AsyncMicrobatchTokenizer's batch_wait_timeout_s and max_batch_size).
  // 0: no micro-batcher, every request's work in one piece on one thread.
  // A scenario sets 0 for engine.kind "sglang" (its dynamic batch
  // tokenizer is opt-in).
  double tokenizer_batch_wait_s = 0.002;
  int32_t tokenizer_max_batch = 32;
};

// Whether the API servers hold prompts for a tokenizer window (as read in
// ns: a window under 1 ns is none).
inline bool HasTokenizerWindow(const FrontendConfig& config) {
  return FromSeconds(config.tokenizer_batch_wait_s) > 0;
}

// One request's API-server work (ns): request_s on the event loop, and
// prompt_token_s x prompt_len of tokenization, both times one work_cv
// draw. A function of (seed, id) alone, so the run's checks can recompute it.
struct ApiWork {
  SimTime request = 0;
  SimTime tokenize = 0;
  SimTime Total() const { return request + tokenize; }
};

ApiWork ApiWorkOf(const FrontendConfig& config, uint64_t seed, int64_t id,
                  int32_t prompt_len);

// API servers in a deployment whose front replicas (the prefill pool's
// when disaggregated) number `front_replicas`: as given, else one each
// (one `vllm serve` per replica).
inline int32_t ApiServerCount(const FrontendConfig& config, int32_t front_replicas) {
  return config.api_servers > 0 ? config.api_servers : std::max(1, front_replicas);
}

// The API servers. A request goes to the one whose event loop is free
// soonest (ties: the lowest index) and is taken first come, first served.
// Without a tokenizer window its whole work runs there in one piece. With
// one, its event-loop part runs there, then it waits for its server's
// tokenizer micro-batch: the batcher takes the first prompt ready once its
// last batch is tokenized, closes the window tokenizer_batch_wait_s later
// (or when tokenizer_max_batch prompts are ready), tokenizes the batch's
// prompts one after another, and hands them all over together.
class ApiServers {
 public:
  ApiServers(const FrontendConfig& config, int32_t count);

  struct Handoff {
    int64_t id = 0;
    SimTime tokenize_start = 0;  // its tokenization (its batch's) began
    SimTime at_engine = 0;       // the engine core has it
  };
  // What the caller must do: hand these requests to the engine core, and
  // if close_at >= 0 call CloseWindow(window) then (a window opened or
  // closes sooner; a call for a window that moved is ignored).
  struct Due {
    std::vector<Handoff> handoffs;
    SimTime close_at = -1;
    int64_t window = 0;
  };

  // Request `id` sent at `now` with `work`. Requests must be given in
  // order of `now`.
  const Due& Submit(SimTime now, int64_t id, const ApiWork& work);
  // A window's close time came (`now`).
  const Due& CloseWindow(int64_t window, SimTime now);
  // Whether `window` still closes at the time it was given for (false
  // once it closed, or moved sooner).
  bool IsLive(int64_t window) const;
  // API-server work done by `end`, summed over servers, each server's the
  // busier of its event loop and its tokenizer thread (so a share of at
  // most 100% says how near the server is to its limit). Every request was
  // sent by then, so a thread's work past `end` runs without a gap from
  // `end` on; an overloaded run leaves that part out, and a prompt still
  // waiting for a window has none yet.
  SimTime BusyUntil(SimTime end) const;

 private:
  struct Waiting {
    SimTime ready = 0;  // its event-loop part is done
    int64_t id = 0;
    SimTime tokenize = 0;
  };
  struct Server {
    SimTime loop_free = 0;
    SimTime tokenizer_free = 0;
    SimTime loop_busy = 0;       // work given to each thread so far
    SimTime tokenizer_busy = 0;
    std::deque<Waiting> waiting;  // in order of `ready`
    SimTime opened = -1;          // the open window's first take (-1: none)
    SimTime close = -1;
    int64_t generation = 0;       // bumped whenever `close` is set
  };
  void OpenWindow(size_t s);
  void SetClose(size_t s, SimTime close);

  SimTime hop_;
  bool windows_;
  SimTime wait_;
  size_t max_batch_;
  std::vector<Server> servers_;
  Due due_;
};

}  // namespace servesim
