// The table of scheduler policies by name.
#include "sim/engine/scheduler_policy.h"

namespace servesim {
namespace {

struct PolicyEntry {
  const char* name;
  std::unique_ptr<SchedulerPolicy> (*make)();
};

constexpr PolicyEntry kPolicies[] = {
    {"fcfs", MakeFcfsPolicy},
    {"shortest-prompt-first", MakeShortestPromptFirstPolicy},
    {"shortest-prompt-first-oracle", MakeShortestPromptFirstOraclePolicy},
    {"priority", MakePriorityPolicy},
    {"edf", MakeEdfPolicy},
    {"lpm", MakeLongestPrefixMatchPolicy},
};

}  // namespace

std::unique_ptr<SchedulerPolicy> MakeSchedulerPolicy(const std::string& name) {
  for (const auto& p : kPolicies) {
    if (name == p.name) return p.make();
  }
  return nullptr;
}

std::vector<std::string> SchedulerPolicyNames() {
  std::vector<std::string> names;
  for (const auto& p : kPolicies) names.emplace_back(p.name);
  return names;
}

}  // namespace servesim
