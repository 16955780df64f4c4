// The API servers' work, queues and tokenizer micro-batches (see frontend.h).
#include "sim/engine/frontend.h"

#include <algorithm>

#include "sim/core/rng.h"

namespace servesim {

ApiWork ApiWorkOf(const FrontendConfig& config, uint64_t seed, int64_t id,
                  int32_t prompt_len) {
  double factor = 1;
  const double cv = config.work_cv;
  if (cv > 0) {
    Rng rng(seed ^ (static_cast<uint64_t>(id) * 0x9e3779b97f4a7c15ULL), "api-work");
    factor = rng.Gamma(1 / (cv * cv), cv * cv);  // mean 1, CV cv
  }
  return {FromSeconds(config.request_s * factor),
          FromSeconds(config.prompt_token_s * prompt_len * factor)};
}

namespace {
// A window's handle: its server and the generation its close was set at.
constexpr int kServerBits = 20;
int64_t WindowHandle(size_t server, int64_t generation) {
  return (generation << kServerBits) | static_cast<int64_t>(server);
}
size_t ServerOf(int64_t window) {
  return static_cast<size_t>(window & ((int64_t{1} << kServerBits) - 1));
}
}  // namespace

ApiServers::ApiServers(const FrontendConfig& config, int32_t count)
    : hop_(FromSeconds(config.engine_hop_s)),
      windows_(HasTokenizerWindow(config)),
      wait_(FromSeconds(config.tokenizer_batch_wait_s)),
      max_batch_(static_cast<size_t>(std::max(1, config.tokenizer_max_batch))),
      servers_(static_cast<size_t>(std::max(1, count))) {}

const ApiServers::Due& ApiServers::Submit(SimTime now, int64_t id, const ApiWork& work) {
  due_.handoffs.clear();
  due_.close_at = -1;
  const auto soonest = std::min_element(
      servers_.begin(), servers_.end(),
      [](const Server& a, const Server& b) { return a.loop_free < b.loop_free; });
  const size_t s = static_cast<size_t>(soonest - servers_.begin());
  Server& server = *soonest;
  if (!windows_) {
    // One piece on the server's one thread, tokenization last.
    const SimTime start = std::max(server.loop_free, now);
    server.loop_free = start + work.Total();
    server.loop_busy += work.Total();
    due_.handoffs.push_back({id, start + work.request, server.loop_free + hop_});
    return due_;
  }
  const SimTime ready = std::max(server.loop_free, now) + work.request;
  server.loop_free = ready;
  server.loop_busy += work.request;
  server.waiting.push_back({ready, id, work.tokenize});
  if (server.close < 0) {
    OpenWindow(s);
  } else if (server.waiting.size() == max_batch_) {
    // The batch fills when this prompt is ready, if that is sooner.
    const SimTime full = std::max(server.opened, ready);
    if (full < server.close) SetClose(s, full);
  }
  return due_;
}

// The batcher takes the first prompt waiting once its last batch is
// tokenized and waits wait_ for more (none if the batch is already full).
void ApiServers::OpenWindow(size_t s) {
  Server& server = servers_[s];
  server.opened = std::max(server.waiting.front().ready, server.tokenizer_free);
  SimTime close = server.opened + wait_;
  if (server.waiting.size() >= max_batch_) {
    close = std::min(close, std::max(server.opened, server.waiting[max_batch_ - 1].ready));
  }
  SetClose(s, close);
}

void ApiServers::SetClose(size_t s, SimTime close) {
  Server& server = servers_[s];
  server.close = close;
  ++server.generation;
  due_.close_at = close;
  due_.window = WindowHandle(s, server.generation);
}

bool ApiServers::IsLive(int64_t window) const {
  const Server& server = servers_[ServerOf(window)];
  return server.close >= 0 && window >> kServerBits == server.generation;
}

const ApiServers::Due& ApiServers::CloseWindow(int64_t window, SimTime now) {
  due_.handoffs.clear();
  due_.close_at = -1;
  const size_t s = ServerOf(window);
  Server& server = servers_[s];
  if (!IsLive(window)) return due_;  // a live window closes at its `close`
  // Every prompt ready by now, up to a full batch, in one tokenizer call.
  SimTime end = now;
  size_t taken = 0;
  while (taken < server.waiting.size() && taken < max_batch_ &&
         server.waiting[taken].ready <= now) {
    end += server.waiting[taken++].tokenize;
  }
  for (size_t i = 0; i < taken; ++i) {
    due_.handoffs.push_back({server.waiting.front().id, now, end + hop_});
    server.waiting.pop_front();
  }
  server.tokenizer_busy += end - now;
  server.tokenizer_free = end;
  server.close = server.opened = -1;
  if (!server.waiting.empty()) OpenWindow(s);
  return due_;
}

SimTime ApiServers::BusyUntil(SimTime end) const {
  SimTime busy = 0;
  for (const Server& server : servers_) {
    busy += std::max(server.loop_busy - std::max<SimTime>(0, server.loop_free - end),
                     server.tokenizer_busy - std::max<SimTime>(0, server.tokenizer_free - end));
  }
  return busy;
}

}  // namespace servesim
