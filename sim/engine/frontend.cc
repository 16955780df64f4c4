// The API servers' work and queues (see frontend.h).
#include "sim/engine/frontend.h"

#include <algorithm>

#include "sim/core/rng.h"

namespace servesim {

SimTime ApiWork(const FrontendConfig& config, uint64_t seed, int64_t id,
                int32_t prompt_len) {
  double work = config.request_s + config.prompt_token_s * prompt_len;
  const double cv = config.work_cv;
  if (cv > 0) {
    Rng rng(seed ^ (static_cast<uint64_t>(id) * 0x9e3779b97f4a7c15ULL), "api-work");
    work *= rng.Gamma(1 / (cv * cv), cv * cv);  // mean 1, CV cv
  }
  return FromSeconds(work);
}

ApiServers::ApiServers(const FrontendConfig& config, int32_t count)
    : hop_(FromSeconds(config.engine_hop_s)),
      free_at_(static_cast<size_t>(std::max(1, count)), 0) {}

SimTime ApiServers::EngineArrival(SimTime now, SimTime work) {
  auto server = std::min_element(free_at_.begin(), free_at_.end());
  *server = std::max(*server, now) + work;
  busy_ += work;
  return *server + hop_;
}

SimTime ApiServers::BusyUntil(SimTime end) const {
  SimTime past_end = 0;
  for (SimTime free : free_at_) past_end += std::max<SimTime>(0, free - end);
  return busy_ - past_end;
}

}  // namespace servesim
