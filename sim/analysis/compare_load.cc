// Saturation, rates and overload of compared variants (see compare_load.h).
#include "sim/analysis/compare_load.h"

#include "sim/analysis/parallel.h"
#include "sim/analysis/runs.h"
#include "sim/analysis/saturation.h"
#include "sim/analysis/stability.h"

namespace servesim {
namespace {

// "" when the variant is stable, else why.
std::string OverloadReason(const VariantInfo& v, int replications) {
  if (v.mu_rps) {
    const std::string load = LoadInstability(v.offered_rate, v.mu);
    if (!load.empty()) return load;
  }
  if (v.unstable == 0) return "";
  return std::to_string(v.unstable) + " of " + std::to_string(replications) +
         " replications unstable, e.g. " + v.unstable_reason;
}

}  // namespace

void EstimateLoads(const Scenario& a, const Scenario& b, int jobs,
                   Comparison* c) {
  const Scenario* variants[2] = {&a, &b};
  VariantInfo* infos[2] = {&c->a, &c->b};
  ParallelFor(
      2, jobs,
      [&](int i) {
        StatusOr<SaturationEstimate> s = EstimateSaturation(*variants[i]);
        if (s.ok() && s->mu_rps > 0) {
          infos[i]->mu_rps = s->mu_rps;
          infos[i]->mu = s->mu;
        }
      },
      nullptr);
}

Status SetRateFromUtilization(double utilization, const std::string& a_label,
                              Scenario* a, Scenario* b, Comparison* c) {
  if (!c->a.mu_rps) {
    return Status::Error("--utilization: the saturation run of A (" + a_label +
                         ") measured no throughput; expected a rate instead");
  }
  const double rate = utilization * *c->a.mu_rps;
  for (Scenario* sc : {a, b}) {
    StatusOr<Scenario> at = WithRate(*sc, rate);
    if (!at.ok()) return at.status();
    *sc = std::move(at.value());
  }
  c->utilization = utilization;
  c->a.offered_rate = c->b.offered_rate = rate;
  c->a.arrival = a->ArrivalDescription();
  c->b.arrival = b->ArrivalDescription();
  return Status::Ok();
}

bool JudgeOverload(Comparison* c) {
  c->a.overload_reason = OverloadReason(c->a, c->replications);
  c->b.overload_reason = OverloadReason(c->b, c->replications);
  const bool a = c->a.overloaded(), b = c->b.overloaded();
  c->overload = a && b ? CompareVerdict::kBothOverloaded
                : a    ? CompareVerdict::kAOverloaded
                : b    ? CompareVerdict::kBOverloaded
                       : CompareVerdict::kNoDifference;
  return a || b;
}

}  // namespace servesim
