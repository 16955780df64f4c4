// The deployment search (see search.h).
#include "sim/analysis/search.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/analysis/capacity_plan.h"
#include "sim/analysis/parallel.h"
#include "sim/analysis/runs.h"

namespace servesim {
namespace {

// The base with the candidate's values; a memory plan that leaves no KV
// block is recorded in no_room, not an error (the row does not fit).
StatusOr<Scenario> CandidateScenario(const Scenario& base, const SearchCandidate& c) {
  return WithDeployment(base, {.gpu = c.gpu,
                               .tp = c.tp,
                               .max_num_seqs = c.max_num_seqs,
                               .max_num_batched_tokens = c.max_num_batched_tokens,
                               .chunked_prefill = c.chunked_prefill});
}

// When no candidate can run: the first invalid one's error, else why none
// fits (the first few named).
Status NothingToRun(const Scenario& base, const std::vector<SearchRow>& rows) {
  for (const SearchRow& row : rows) {
    if (row.status == SearchRow::Status::kInvalid) return Status::Error(row.note);
  }
  std::string unfit;
  for (size_t i = 0; i < rows.size() && i < 3; ++i) {
    unfit += (i == 0 ? "" : "; ") + rows[i].candidate.Name() + ": " + rows[i].note;
  }
  if (rows.size() > 3) unfit += "; and " + std::to_string(rows.size() - 3) + " more";
  return Status::Error("search: " + base.model.name + " fits no candidate (" + unfit +
                       "); expected a larger --tp or a bigger GPU in --gpus");
}

// The candidate's scenario, and what deploying it takes (row->deploy).
// With chunked prefill off, vLLM refuses a max_num_batched_tokens below
// --max-model-len (and the simulation rejects every request longer than the
// budget), so the budget is raised: to the least B whose own max_model_len
// is <= B. A larger budget grows the activation reserve, which can only
// shrink the KV cache and with it max_model_len (non-increasing in B), and
// B = max_model_len(asked) qualifies, so bisection finds it (~15 scenario
// parses; with a trace each one reads it again).
StatusOr<Scenario> FitCandidate(const Scenario& base, SearchRow* row) {
  SearchCandidate& c = row->candidate;
  StatusOr<Scenario> sc = CandidateScenario(base, c);
  if (!sc.ok() || sc->no_room) return sc;  // no KV cache: nothing to deploy
  row->deploy = PlanMaxModelLen(*sc);
  // (SGLang has no such rule: without chunking its first request may pass
  // max_prefill_tokens.)
  // (0: vLLM's default budget for the candidate's GPU, resolved in sc.)
  const int asked = sc->engine.max_num_batched_tokens;
  if (c.chunked_prefill || asked >= row->deploy.tokens ||
      base.engine.kind == EngineKind::kSglang) {
    return sc;
  }
  int lo = asked;  // below its own max_model_len
  c.max_num_batched_tokens = static_cast<int>(row->deploy.tokens);  // <= max_context
  sc = CandidateScenario(base, c);
  if (!sc.ok() || sc->no_room) return sc;
  row->deploy = PlanMaxModelLen(*sc);
  while (c.max_num_batched_tokens - lo > 1) {
    SearchCandidate mid = c;
    mid.max_num_batched_tokens = lo + (c.max_num_batched_tokens - lo) / 2;
    StatusOr<Scenario> at = CandidateScenario(base, mid);  // fits: less than c needs
    if (!at.ok()) return at;
    if (at->no_room) {  // cannot happen (c fits with a larger budget); be safe
      lo = mid.max_num_batched_tokens;
      continue;
    }
    const MaxModelLen m = PlanMaxModelLen(*at);
    if (mid.max_num_batched_tokens >= m.tokens) {
      c = mid;
      sc = std::move(at);
      row->deploy = m;
    } else {
      lo = mid.max_num_batched_tokens;
    }
  }
  row->asked_max_num_batched_tokens = asked;
  row->note = "max_num_batched_tokens raised from " + std::to_string(asked) +
              ": with chunked prefill off vLLM needs it >= --max-model-len";
  return sc;
}

void AddNote(SearchRow* row, const std::string& note) {
  row->note = row->note.empty() ? note : row->note + "; " + note;
}

bool SameCandidate(const SearchCandidate& a, const SearchCandidate& b) {
  return a.gpu == b.gpu && a.tp == b.tp && a.max_num_seqs == b.max_num_seqs &&
         a.max_num_batched_tokens == b.max_num_batched_tokens &&
         a.chunked_prefill == b.chunked_prefill;
}

// A raised budget can make a candidate repeat an earlier one: the later is
// listed as a duplicate, not run.
void MarkRepeats(std::vector<SearchRow>* rows) {
  for (size_t i = 0; i < rows->size(); ++i) {
    SearchRow& row = (*rows)[i];
    if (row.status != SearchRow::Status::kEvaluated || row.asked_max_num_batched_tokens == 0) {
      continue;
    }
    for (size_t k = 0; k < i; ++k) {
      const SearchRow& other = (*rows)[k];
      if (other.status == SearchRow::Status::kEvaluated &&
          SameCandidate(other.candidate, row.candidate)) {
        row.status = SearchRow::Status::kDuplicate;
        AddNote(&row, "the same candidate as row " + std::to_string(k + 1));
        break;
      }
    }
  }
}

std::vector<SearchCandidate> Grid(const SearchSpace& s, int pp) {
  std::vector<SearchCandidate> cs;
  for (const std::string& gpu : s.gpus)
    for (int tp : s.tps)
      for (int seqs : s.max_num_seqs)
        for (int tokens : s.max_num_batched_tokens)
          for (bool chunked : s.chunked_prefill) cs.push_back({gpu, tp, seqs, tokens, chunked, pp});
  return cs;
}

// Figures at the SLO max that the fronts and the table use.
void Fill(const SearchResult& r, SearchRow* row) {
  const CapacityResult& c = row->capacity;
  row->replicas = ReplicasFor(r.target_rate, c.max_rate_lo);  // the lower end
  row->gpus = row->replicas * row->candidate.gpus();
  const PointStats& p = c.at_max.point;
  if (c.max_rate > 0 && c.at_max.feasible) {
    row->output_tokens_per_s_per_gpu = p.output_tokens_per_s.mean / row->candidate.gpus();
    row->tokens_per_s_per_user = p.tpot_ms.p50.mean > 0 ? 1000 / p.tpot_ms.p50.mean : 0;
    row->ttft_p99_ms = p.ttft_ms.p99.mean;
  }
  const std::optional<double> price = r.prices.Price(row->candidate.gpu);
  if (!price) {
    AddNote(row, "no price for " + row->candidate.gpu);
    return;
  }
  if (row->replicas > 0) row->fleet_usd_per_hour = row->gpus * *price;
  if (p.output_tokens_per_s.mean > 0 && c.max_rate > 0) {
    row->usd_per_million_output_tokens =
        *price * row->candidate.gpus() / (p.output_tokens_per_s.mean * 3600) * 1e6;
  }
}

// a dominates b when it is at least as good in both and better in one.
template <typename A, typename B>
void MarkFront(std::vector<SearchRow>& rows, A better_x, B better_y, bool SearchRow::*flag) {
  std::vector<SearchRow*> pts;
  for (SearchRow& r : rows) {
    if (r.status == SearchRow::Status::kEvaluated && r.capacity.max_rate > 0 &&
        r.capacity.at_max.feasible) {
      pts.push_back(&r);
    }
  }
  for (SearchRow* a : pts) {
    bool dominated = false;
    for (SearchRow* b : pts) {
      const int bx = better_x(*b, *a), by = better_y(*b, *a);
      dominated = dominated || (bx >= 0 && by >= 0 && (bx > 0 || by > 0));
    }
    a->*flag = !dominated;
  }
}

int Cmp(double better, double worse) { return better > worse ? 1 : better < worse ? -1 : 0; }

// The fleet of n replicas behind `router` at the full target rate.
StatusOr<RateEvaluation> FleetVerdict(const Scenario& one, int n, const std::string& router,
                                      const SearchOptions& o) {
  StatusOr<Scenario> fleet = WithFleet(one, n, router);
  // The same requests per replica as the per-replica search ran.
  if (fleet.ok() && one.workload.num_requests > 0) {
    fleet = WithNumRequests(*fleet, one.workload.num_requests * n);
  }
  if (!fleet.ok()) return fleet.status();
  return EvaluateRate(*fleet, o.target_rate, o.capacity);
}

StatusOr<RouterCheck> CheckRouter(const Scenario& one, int ideal, const std::string& router,
                                  const SearchOptions& o) {
  RouterCheck c;
  c.router = router;
  c.ideal_replicas = ideal;
  auto judge = [&](int n) -> StatusOr<bool> {
    StatusOr<RateEvaluation> e = FleetVerdict(one, n, router, o);
    if (!e.ok()) return e.status();
    c.tried.emplace_back(n, e->feasible);
    if (e->feasible || c.replicas == 0) c.at = *e;
    return e->feasible;
  };
  StatusOr<bool> ok = judge(ideal);
  if (!ok.ok()) return ok.status();
  if (*ok) {
    c.replicas = ideal;
    for (int n = ideal - 1; n >= 1; --n) {  // fewer may do behind a load-aware router
      StatusOr<bool> fewer = judge(n);
      if (!fewer.ok()) return fewer.status();
      if (!*fewer) break;
      c.replicas = n;
    }
    return c;
  }
  for (int n = ideal + 1; n <= o.max_replicas; ++n) {
    StatusOr<bool> more = judge(n);
    if (!more.ok()) return more.status();
    if (*more) {
      c.replicas = n;
      break;
    }
  }
  return c;
}

// Every router's check of one evaluated candidate (from its even-split
// count), and the cheapest that passes.
Status RankRouters(const Scenario& one, const std::vector<std::string>& routers,
                   const SearchOptions& o, const PriceTable& prices, SearchRow* row) {
  const std::optional<double> price = prices.Price(row->candidate.gpu);
  for (const std::string& router : routers) {
    // (row->replicas <= --max-replicas here: larger fleets are not routed.)
    StatusOr<RouterCheck> c = CheckRouter(one, static_cast<int>(row->replicas), router, o);
    if (!c.ok()) return c.status();
    row->routed.push_back(*c);
    if (c->replicas == 0 || !price) continue;
    const double usd = c->replicas * row->candidate.gpus() * *price;
    if (!row->routed_fleet_usd_per_hour || usd < *row->routed_fleet_usd_per_hour) {
      row->routed_fleet_usd_per_hour = usd;
      row->best_router = row->routed.size() - 1;
    }
  }
  return Status::Ok();
}

}  // namespace

SearchSpace CompleteSpace(SearchSpace s, const Scenario& base) {
  if (s.gpus.empty()) s.gpus = {base.gpu.name};
  if (s.tps.empty()) s.tps = {base.tp};
  // Both engines' defaults depend on the GPU (SGLang's chunk on its memory,
  // its request limit on its pool; vLLM's on memory and name,
  // vllm_batch_defaults.h): a limit the scenario leaves to the engine stays
  // the engine's on every candidate (0).
  const bool sglang = base.engine.kind == EngineKind::kSglang;
  const nlohmann::json* g = nullptr;
  if (sglang && base.json.contains("engine") && base.json["engine"].contains("sglang")) {
    g = &base.json["engine"]["sglang"];
  }
  const auto given = [&](const char* key) { return g != nullptr && g->contains(key); };
  if (s.max_num_seqs.empty()) {
    const bool left = sglang ? !given("max_running_requests") : !base.max_num_seqs_given;
    s.max_num_seqs = {left ? 0 : base.engine.max_num_seqs};
  }
  if (s.max_num_batched_tokens.empty()) {
    const SglangConfig& c = base.engine.sglang;
    const bool chunked = c.chunked_prefill_size > 0;
    if (!sglang) {
      s.max_num_batched_tokens = {
          base.max_num_batched_tokens_given ? base.engine.max_num_batched_tokens : 0};
    } else if (given(chunked ? "chunked_prefill_size" : "max_prefill_tokens")) {
      s.max_num_batched_tokens = {
          static_cast<int>(chunked ? c.chunked_prefill_size : c.max_prefill_tokens)};
    } else {
      s.max_num_batched_tokens = {0};
    }
  }
  if (s.chunked_prefill.empty()) s.chunked_prefill = {base.engine.chunked_prefill};
  return s;
}

std::string SearchCandidate::Name() const {
  const auto n = [](int x) { return x > 0 ? std::to_string(x) : std::string("-default"); };
  return gpu + " tp" + std::to_string(tp) + (pp > 1 ? " pp" + std::to_string(pp) : "") + " seqs" + n(max_num_seqs) + " tokens" +
         n(max_num_batched_tokens) + (chunked_prefill ? " chunked" : " unchunked");
}

StatusOr<SearchResult> SearchDeployments(const Scenario& base, const SearchSpace& space,
                                         const SearchOptions& o, PriceTable prices) {
  if (Status st = CheckOpenLoop(base, "search"); !st.ok()) return st;
  if (!(o.target_rate > 0)) {
    return Status::Error("search: --target-rate: expected the fleet's requests/s > 0");
  }
  SearchResult r;
  const bool routed = !space.routers.empty();
  r.routed = routed;
  r.slo = o.capacity.slo;
  r.target_rate = o.target_rate;
  r.prices = std::move(prices);
  for (const SearchCandidate& c : Grid(CompleteSpace(space, base), base.pp)) {
    SearchRow row;
    row.candidate = c;
    r.rows.push_back(row);
  }
  // Fit (each candidate's scenario and deployment limits), then mu and the
  // lower bound on each candidate's fleet cost. Both are independent per
  // candidate: all at once, on `jobs` threads (the saturating runs on
  // executor tasks, runs.h); the first error in grid order wins.
  const int n = static_cast<int>(r.rows.size());
  std::vector<Scenario> scenarios(r.rows.size());
  std::vector<double> bound(r.rows.size(), INFINITY);
  std::vector<Status> errors(r.rows.size(), Status::Ok());
  ParallelFor(
      n, o.capacity.jobs,
      [&](int i) {
        SearchRow& row = r.rows[i];
        StatusOr<Scenario> sc = FitCandidate(base, &row);
        if (!sc.ok()) {
          row.status = SearchRow::Status::kInvalid;
          AddNote(&row, sc.status().message());
          return;
        }
        if (sc->no_room) {
          row.status = SearchRow::Status::kDoesNotFit;
          row.note = sc->no_room->note;
          row.detail = sc->no_room->message;
          return;
        }
        scenarios[i] = std::move(*sc);
      },
      nullptr);
  MarkRepeats(&r.rows);
  ProgressBar saturation_bar("search", n, 0);
  saturation_bar.SetUnit("candidates' saturation runs");
  ParallelFor(
      n, o.capacity.jobs,
      [&](int i) {
        SearchRow& row = r.rows[i];
        if (row.status != SearchRow::Status::kEvaluated) return;
        StatusOr<SaturationEstimate> sat = EstimateSaturation(scenarios[i]);
        if (!sat.ok()) {
          errors[i] = sat.status();
          return;
        }
        row.saturation = *sat;
      },
      o.capacity.progress ? &saturation_bar : nullptr);
  saturation_bar.Finish();
  for (const Status& st : errors) {
    if (!st.ok()) return st;
  }
  if (std::none_of(r.rows.begin(), r.rows.end(), [](const SearchRow& row) {
        return row.status == SearchRow::Status::kEvaluated;
      })) {
    return NothingToRun(base, r.rows);
  }
  for (size_t i = 0; i < r.rows.size(); ++i) {
    SearchRow& row = r.rows[i];
    if (row.status != SearchRow::Status::kEvaluated) continue;
    const int64_t min_replicas =
        ReplicasFor(o.target_rate, std::min(row.saturation.mu.lo, row.saturation.mu_rps));
    const std::optional<double> price = r.prices.Price(row.candidate.gpu);
    if (min_replicas == 0 || min_replicas > o.max_replicas) {
      row.status = SearchRow::Status::kPruned;
      AddNote(&row, "needs more than " + std::to_string(o.max_replicas) +
                        " replicas even at saturation");
      continue;
    }
    bound[i] = price ? min_replicas * row.candidate.gpus() * *price : INFINITY;
    if (routed) {  // a routed fleet may beat the even split, never n x mu
      const double mu_hi = std::max(row.saturation.mu.hi, row.saturation.mu_rps);
      bound[i] = price ? ReplicasFor(o.target_rate, mu_hi) * row.candidate.gpus() * *price : INFINITY;
    }
  }
  std::vector<size_t> order(r.rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&bound](size_t a, size_t b) { return bound[a] < bound[b]; });
  // Exhaustive with an executor (Ray, runs.h): every candidate left is
  // evaluated whatever the others give, and simulations cost this process
  // nothing, so the candidates' capacity searches run at once, up to `jobs`
  // of them, each with its own `jobs` threads waiting on tasks. Locally
  // they stay one after another (each one's replications on `jobs` threads:
  // -j bounds the simulations in memory at once), and pruning needs the
  // cheapest fleet so far, so without --exhaustive they go in bound order.
  std::vector<std::optional<StatusOr<CapacityResult>>> evaluated(r.rows.size());
  if (o.exhaustive && HasRunExecutor()) {
    std::vector<size_t> todo;
    for (size_t i : order) {
      if (r.rows[i].status == SearchRow::Status::kEvaluated) todo.push_back(i);
    }
    const int jobs = o.capacity.jobs > 0 ? o.capacity.jobs : DefaultJobs();
    const int outer = std::max(1, std::min(jobs, static_cast<int>(todo.size())));
    ProgressBar candidates_bar("search", static_cast<int>(todo.size()), 0);
    candidates_bar.SetUnit("candidates");
    ParallelFor(
        static_cast<int>(todo.size()), outer,
        [&](int k) {
          const size_t i = todo[k];
          CapacityOptions co = o.capacity;
          co.saturation = r.rows[i].saturation;
          co.validation.window_requests = 0;  // validated below, if it can win
          co.jobs = jobs;
          co.progress = false;  // one bar per candidate would interleave
          evaluated[i] = FindCapacity(scenarios[i], co);
        },
        o.capacity.progress ? &candidates_bar : nullptr);
    candidates_bar.Finish();
  }
  double best = INFINITY;
  const int64_t to_evaluate = std::count_if(r.rows.begin(), r.rows.end(), [](const SearchRow& row) {
    return row.status == SearchRow::Status::kEvaluated;
  });
  int64_t reached = 0;  // candidates evaluated or pruned, for progress
  for (size_t i : order) {
    SearchRow& row = r.rows[i];
    if (row.status != SearchRow::Status::kEvaluated) continue;
    const std::string context = "candidate " + std::to_string(++reached) + "/" +
                                std::to_string(to_evaluate) + " by bound";
    if (!o.exhaustive && bound[i] > best) {
      row.status = SearchRow::Status::kPruned;
      AddNote(&row, "cannot beat the cheapest fleet found: even at saturation it needs $" +
                        std::to_string(static_cast<int>(std::ceil(bound[i]))) + "/h");
      continue;
    }
    CapacityOptions co = o.capacity;
    co.saturation = row.saturation;
    co.validation.window_requests = 0;
    co.progress_context = context;
    StatusOr<CapacityResult> c =
        evaluated[i] ? std::move(*evaluated[i]) : FindCapacity(scenarios[i], co);
    if (!c.ok()) return c.status();
    row.capacity = *c;
    row.cost_error = scenarios[i].cost_model->Error();
    if (row.cost_error.known()) {
      row.max_rate_if_slower = MaxRateIfStepsSlower(*c, row.cost_error.worst());
    }
    Fill(r, &row);
    // Long-window validation only where it could change the choice: the
    // screening answer is biased upward, so a candidate whose screening
    // fleet already costs more than the best validated one cannot win.
    const bool could_win = !row.fleet_usd_per_hour || *row.fleet_usd_per_hour < best;
    if (o.capacity.validation.window_requests > 0 && !scenarios[i].workload.trace &&
        row.capacity.max_rate > 0 && could_win) {
      CapacityOptions vo = o.capacity;
      vo.progress_context = context;
      if (Status st = ValidateAnswer(scenarios[i], vo, &row.capacity); !st.ok()) {
        return st;
      }
      if (row.cost_error.known()) {
        row.max_rate_if_slower = MaxRateIfStepsSlower(row.capacity, row.cost_error.worst());
      }
      Fill(r, &row);
    }
    if (row.replicas > o.max_replicas) {
      AddNote(&row, "needs " + std::to_string(row.replicas) + " replicas (more than " +
                        std::to_string(o.max_replicas) + ")");
    } else if (routed && row.replicas > 0) {
      if (Status st = RankRouters(scenarios[i], space.routers, o, r.prices, &row); !st.ok()) {
        return st;
      }
      if (row.routed_fleet_usd_per_hour && *row.routed_fleet_usd_per_hour < best) {
        best = *row.routed_fleet_usd_per_hour;
        r.cheapest = i;
      }
    } else if (!routed && row.fleet_usd_per_hour && *row.fleet_usd_per_hour < best) {
      best = *row.fleet_usd_per_hour;
      r.cheapest = i;
    }
    if (row.replicas == 0) AddNote(&row, "the SLO is met at no rate");
  }
  MarkFront(
      r.rows,
      [](const SearchRow& a, const SearchRow& b) {
        return Cmp(a.output_tokens_per_s_per_gpu, b.output_tokens_per_s_per_gpu);
      },
      [](const SearchRow& a, const SearchRow& b) {
        return Cmp(a.tokens_per_s_per_user, b.tokens_per_s_per_user);
      },
      &SearchRow::pareto_throughput);
  MarkFront(
      r.rows,
      [](const SearchRow& a, const SearchRow& b) {
        const double x = a.usd_per_million_output_tokens.value_or(INFINITY);
        const double y = b.usd_per_million_output_tokens.value_or(INFINITY);
        return Cmp(-x, -y);
      },
      [](const SearchRow& a, const SearchRow& b) { return Cmp(-a.ttft_p99_ms, -b.ttft_p99_ms); },
      &SearchRow::pareto_cost);
  return r;
}

int64_t SearchResult::CheapestReplicas() const {
  if (!cheapest) return 0;
  const SearchRow& row = rows[*cheapest];
  return routed ? row.routed[*row.best_router].replicas : row.replicas;
}

std::string SearchResult::CheapestRouter() const {
  if (!cheapest || !routed) return "";
  const SearchRow& row = rows[*cheapest];
  return row.routed[*row.best_router].router;
}

}  // namespace servesim
