// Candidates, fleet sizing, cost and ranking (see capacity_plan.h).
#include "sim/analysis/capacity_plan.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/analysis/runs.h"
#include "sim/core/json_view.h"
#include "sim/model/model_loader.h"

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
  const double usd_per_replica_hour = *row->usd_per_gpu_hour * row->candidate.gpus();
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

// Each candidate's scenario: the base with its hardware, parsed with the fit
// check deferred, so every memory plan is known before any simulation runs
// and a model that fits none of them is one line.
StatusOr<std::vector<Scenario>> CandidateScenarios(const Scenario& base,
                                                   const std::vector<Candidate>& cs,
                                                   bool given) {
  std::vector<Scenario> out;
  std::string unfit;
  for (const Candidate& c : cs) {
    Deployment d;
    d.gpu = c.gpu;
    d.tp = c.tp;
    d.pp = c.pp;
    StatusOr<Scenario> sc = WithDeployment(base, d);
    if (!sc.ok()) return sc.status();
    if (sc->no_room) {
      unfit += (unfit.empty() ? "" : "; ") + c.gpu + ":" + c.Layout() + " " +
               sc->no_room->note;
    }
    out.push_back(std::move(*sc));
  }
  if (std::any_of(out.begin(), out.end(), [](const Scenario& sc) { return !sc.no_room; })) {
    return out;
  }
  if (!given) return Status::Error(out[0].no_room->message);  // the scenario's own
  return Status::Error("--candidates: " + base.model.name + " fits none of them (" + unfit +
                       "); expected a larger tp or a bigger GPU");
}

}  // namespace

std::string Candidate::Layout() const {
  return std::to_string(tp) + (pp > 1 ? "x" + std::to_string(pp) : "");
}

StatusOr<std::vector<Candidate>> ParseCandidates(const std::string& text) {
  // A GPU name or file goes into the candidate's scenario JSON, which must
  // be UTF-8.
  if (!IsValidUtf8(text)) {
    return Status::Error("--candidates " + text +
                         ": invalid UTF-8; expected GPU:TP or GPU:TP:PP items like h200:2");
  }
  std::vector<Candidate> cs;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    Candidate c;
    const size_t colon = item.find(':');
    c.gpu = item.substr(0, colon);
    bool ok = !c.gpu.empty();
    // A positive count of at most 4 digits.
    const auto count = [](const std::string& s, int* out) {
      if (s.empty() || s.size() >= 5 || s.find_first_not_of("0123456789") != std::string::npos) {
        return false;
      }
      *out = std::stoi(s);
      return *out >= 1;
    };
    if (ok && colon != std::string::npos) {
      const std::string rest = item.substr(colon + 1);
      const size_t second = rest.find(':');
      ok = count(rest.substr(0, second), &c.tp);
      if (ok && second != std::string::npos) ok = count(rest.substr(second + 1), &c.pp);
    }
    if (!ok) {
      return Status::Error("--candidates " + text + ": expected GPU:TP or GPU:TP:PP items "
                           "like h200:2 or h100-sxm:2:2, got \"" + item + "\"");
    }
    const std::string gpu = FindGpuName(c.gpu);  // "h100" -> "h100-sxm"
    if (gpu.empty()) return Status::Error("--candidates " + text + ": " + UnknownGpuText(c.gpu));
    c.gpu = gpu;
    cs.push_back(c);
  }
  if (cs.empty()) return Status::Error("--candidates: expected GPU:TP or GPU:TP:PP items");
  return cs;
}

int64_t ReplicasFor(double target_rate, double max_rate) {
  if (!(max_rate > 0)) return 0;
  if (!(target_rate > 0)) return 1;
  // A hair of slack so 40 / (40 / 3) is 3, not 4; a target far below one
  // replica's rate still needs one, and one far above it is counted in 64
  // bits (doubles hold every integer up to 2^53 exactly).
  const double n = std::ceil(target_rate / max_rate - 1e-9);
  if (!(n < static_cast<double>(kMaxReplicas))) return kMaxReplicas;
  return std::max<int64_t>(1, static_cast<int64_t>(n));
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
  for (Candidate& c : cs) {
    if (c.pp == 0) c.pp = base.pp;  // the scenario's stages unless named
  }
  StatusOr<std::vector<Scenario>> scenarios = CandidateScenarios(base, cs, !candidates.empty());
  if (!scenarios.ok()) return scenarios.status();
  for (size_t i = 0; i < cs.size(); ++i) {
    const Candidate& c = cs[i];
    const Scenario& sc = (*scenarios)[i];
    PlanRow row;
    row.candidate = c;
    if (sc.no_room) {
      row.fits = false;
      row.note = sc.no_room->note;  // the table and HTML say "does not fit"
      row.detail = sc.no_room->message;
      plan.rows.push_back(row);
      continue;
    }
    CapacityOptions co = o;
    if (cs.size() > 1) {
      co.progress_context = "candidate " + std::to_string(i + 1) + "/" + std::to_string(cs.size());
    }
    StatusOr<CapacityResult> r = FindCapacity(sc, co);
    if (!r.ok()) return r.status();
    row.result = *r;
    row.cost_error = sc.cost_model->Error();
    if (row.cost_error.known()) {
      row.max_rate_if_slower = MaxRateIfStepsSlower(*r, row.cost_error.worst());
    }
    row.replicas = ReplicasFor(target_rate, r->max_rate_lo);  // the lower end
    row.gpus = row.replicas * c.gpus();
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
