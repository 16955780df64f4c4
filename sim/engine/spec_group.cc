// Which speculative decode group a configuration gets (see spec_group.h).
#include "sim/engine/spec_group.h"

#include "sim/engine/spec_calendar_group.h"
#include "sim/engine/spec_entries_group.h"

namespace servesim {

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
