// Candidates, fleet sizing, cost and ranking (see capacity_plan.h).
#include "sim/analysis/capacity_plan.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/analysis/runs.h"

namespace servesim {
namespace {

// Output tokens/s one replica delivers at its SLO-constrained rate.
double OutputRate(const PlanRow& r) {
  return r.result.at_max.point.output_tokens_per_s.mean;
}

void Price(const CapacityPlan& plan, PlanRow* row) {
  row->usd_per_gpu_hour = plan.prices.Price(row->candidate.gpu);
  if (!row->usd_per_gpu_hour || row->result.max_rate <= 0 || OutputRate(*row) <= 0) {
    return;
  }
  const double usd_per_replica_hour = *row->usd_per_gpu_hour * row->candidate.tp;
  row->cost_per_million_output_tokens =
      usd_per_replica_hour / (OutputRate(*row) * 3600) * 1e6;
  const double input = row->result.at_max.point.input_tokens_per_s.mean;
  if (input > 0) {
    row->cost_per_million_input_tokens = usd_per_replica_hour / (input * 3600) * 1e6;
  }
  row->cost_per_million_tokens =
      usd_per_replica_hour / ((OutputRate(*row) + input) * 3600) * 1e6;
}

double RankKey(const CapacityPlan& plan, const PlanRow& r) {
  if (!r.fits || r.replicas == 0 || !r.cost_per_million_output_tokens) {
    return INFINITY;
  }
  return plan.target_rate > 0 ? r.gpus * *r.usd_per_gpu_hour
                              : *r.cost_per_million_output_tokens;
}

}  // namespace

StatusOr<std::vector<Candidate>> ParseCandidates(const std::string& text) {
  std::vector<Candidate> cs;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    Candidate c;
    const size_t colon = item.find(':');
    c.gpu = item.substr(0, colon);
    bool ok = !c.gpu.empty();
    if (ok && colon != std::string::npos) {
      const std::string tp = item.substr(colon + 1);
      ok = !tp.empty() && tp.size() < 5 &&
           tp.find_first_not_of("0123456789") == std::string::npos;
      if (ok) c.tp = std::stoi(tp);
      ok = ok && c.tp >= 1;
    }
    if (!ok) {
      return Status::Error("--candidates " + text + ": expected GPU:TP items "
                           "like h200:2, got \"" + item + "\"");
    }
    cs.push_back(c);
  }
  if (cs.empty()) return Status::Error("--candidates: expected GPU:TP items");
  return cs;
}

int ReplicasFor(double target_rate, double max_rate) {
  if (max_rate <= 0) return 0;
  if (target_rate <= 0) return 1;
  // A hair of slack so 40 / (40 / 3) is 3, not 4.
  return static_cast<int>(std::ceil(target_rate / max_rate - 1e-9));
}

StatusOr<CapacityPlan> PlanCapacity(const Scenario& base,
                                    const std::vector<Candidate>& candidates,
                                    const CapacityOptions& o, double target_rate,
                                    PriceTable prices) {
  CapacityPlan plan;
  plan.slo = o.slo;
  plan.target_rate = target_rate;
  plan.prices = std::move(prices);
  std::vector<Candidate> cs = candidates;
  if (cs.empty()) cs.push_back({base.gpu.name, base.tp});
  for (const Candidate& c : cs) {
    PlanRow row;
    row.candidate = c;
    StatusOr<Scenario> sc = EditScenario(base, [&c](nlohmann::json& j) {
      j["hardware"]["gpu"] = c.gpu;
      j["hardware"]["tp"] = c.tp;
    });
    if (!sc.ok() && sc.status().message().find("does not fit") != std::string::npos) {
      row.fits = false;
      row.note = sc.status().message();
      plan.rows.push_back(row);
      continue;
    }
    if (!sc.ok()) return sc.status();
    StatusOr<CapacityResult> r = FindCapacity(*sc, o);
    if (!r.ok()) return r.status();
    row.result = *r;
    row.cost_error = sc->cost_model->Error();
    if (row.cost_error.known()) {
      row.max_rate_if_slower = MaxRateIfStepsSlower(*r, row.cost_error.worst());
    }
    row.replicas = ReplicasFor(target_rate, r->max_rate_lo);  // the lower end
    row.gpus = row.replicas * c.tp;
    if (r->where == BisectionResult::Where::kBelowRange) {
      row.note = "SLO not met even at 2% of saturation";
    } else if (r->where == BisectionResult::Where::kAboveRange) {
      row.note = "SLO holds up to the lower 95% bound of saturation: "
                 "throughput, not latency, binds";
    }
    Price(plan, &row);
    if (!row.usd_per_gpu_hour) row.note += (row.note.empty() ? "" : "; ") +
                                           std::string("no price for ") + c.gpu;
    plan.rows.push_back(row);
  }
  std::stable_sort(plan.rows.begin(), plan.rows.end(),
                   [&plan](const PlanRow& a, const PlanRow& b) {
                     return RankKey(plan, a) < RankKey(plan, b);
                   });
  return plan;
}

}  // namespace servesim
