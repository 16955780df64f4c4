// Which speculative decode group a configuration gets (see spec_group.h).
#include "sim/engine/spec_group.h"

#include "sim/core/check.h"
#include "sim/engine/spec_calendar_group.h"
#include "sim/engine/spec_entries_group.h"

namespace servesim {

bool SpecJoins(const Request& r, const BlockMath& blocks) {
  if (r.status != RequestStatus::kRunning || !r.spec_ready || r.num_output == 0 ||
      r.num_output >= r.output_len) {
    return false;
  }
  SERVESIM_CHECK(r.in_flight == 0 && r.stale == 0 && r.placeholders == 0 &&
                     r.num_computed == r.known_tokens() - 1 &&
                     r.blocks.size() == blocks.Blocks(r.num_computed),
                 "request %lld joins the speculative decode group in a bad state",
                 static_cast<long long>(r.id));
  return true;
}

float SpecDrawRate(const SpecDecodeConfig& c, const Request& r) {
  return r.spec_rate >= 0 ? r.spec_rate : static_cast<float>(SpecAcceptanceRate(c, r.id));
}

std::unique_ptr<SpecGroup> MakeSpecGroup(const EngineConfig& config, const BlockMath& blocks,
                                         RequestTable* requests,
                                         std::vector<int64_t>* running, KvCache* kv,
                                         SpecDecodeStats* stats) {
  if (SpecCalendarGroup::Fits(config)) {
    return std::make_unique<SpecCalendarGroup>(config, blocks, requests, running, kv, stats);
  }
  return std::make_unique<SpecEntriesGroup>(config, blocks, requests, running, kv, stats);
}

}  // namespace servesim
