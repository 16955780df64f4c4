// A full sample of HTML report data: every section, with synthetic numbers
// shaped like a real sweep (an M/M/1-like queue in front of a ~10 req/s
// replica), so the browser test and a human looking at the page see charts
// that behave like real ones.
#pragma once

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace servesim::testing {

inline nlohmann::json Interval(double mean, double rel) {
  return {{"mean", mean}, {"lo", mean * (1 - rel)}, {"hi", mean * (1 + rel)}};
}

// Lognormal CDF on a geometric grid from median/16 to median*16.
inline nlohmann::json LognormalCdf(double median, double sigma) {
  nlohmann::json out = nlohmann::json::array();
  for (int i = 0; i <= 80; ++i) {
    const double x = median * std::pow(2.0, -4 + 8.0 * i / 80);
    const double z = std::log(x / median) / sigma;
    out.push_back({x, 0.5 * std::erfc(-z / std::sqrt(2.0))});
  }
  return out;
}

inline nlohmann::json SampleSweep() {
  constexpr double kMu = 10.0;  // service rate, req/s
  nlohmann::json points = nlohmann::json::array();
  for (int r = 1; r <= 10; ++r) {
    const double rate = r * 0.95;
    const double rho = rate / kMu;
    const double wait_ms = 1000 * rho / (kMu - rate);  // M/M/1 mean wait
    const double rel = 0.04 + 0.25 * rho * rho;        // wider near saturation
    nlohmann::json m;
    m["ttft_ms"] = {{"p50", Interval(45 + 0.7 * wait_ms, rel)},
                    {"p90", Interval(60 + 1.6 * wait_ms, rel)},
                    {"p99", Interval(80 + 2.8 * wait_ms, rel)}};
    m["tpot_ms"] = {{"p50", Interval(9 + 4 * rho, rel / 2)},
                    {"p90", Interval(11 + 6 * rho, rel / 2)},
                    {"p99", Interval(13 + 9 * rho, rel / 2)}};
    m["e2el_ms"] = {{"p50", Interval(2100 + 0.7 * wait_ms, rel)},
                    {"p90", Interval(4200 + 2.3 * wait_ms, rel)},
                    {"p99", Interval(7500 + 4.6 * wait_ms, rel)}};
    m["queue_ms"] = {{"mean", Interval(wait_ms * 1.1, rel)}};
    points.push_back({{"rate", rate},
                      {"utilization", rho},
                      {"replications", 5},
                      {"stable_fraction", rho < 0.9 ? 1.0 : 0.6},
                      {"unstable", rho >= 0.9},
                      {"throughput_rps", Interval(std::min(rate, 9.3), 0.02)},
                      {"metrics", m}});
  }
  nlohmann::json mm1 = nlohmann::json::array(), mg1 = nlohmann::json::array();
  for (double rate = 0.25; rate < 9.8; rate += 0.25) {
    const double rho = rate / kMu;
    mm1.push_back({rate, 1000 * rho / (kMu - rate)});
    mg1.push_back({rate, 0.6 * 1000 * rho / (kMu - rate)});  // Cs^2 = 0.2
  }
  return {{"saturation_rps", 9.3},
          {"knee_rate", 4.75},  // first rate with TTFT p99 > 3x p50
          {"points", points},
          {"theory", {{"mm1_wait_ms", mm1}, {"mg1_wait_ms", mg1}}}};
}

inline nlohmann::json SampleTimeseries() {
  nlohmann::json t = nlohmann::json::array(), kv = t, waiting = t, running = t;
  for (int i = 0; i < 600; ++i) {
    const double s = i * 0.5;
    const double fill = 1 - std::exp(-s / 30);
    t.push_back(s);
    kv.push_back(std::min(1.0, 0.78 * fill + 0.06 * std::sin(s / 7)));
    waiting.push_back(std::max(0.0, std::round(6 * fill + 5 * std::sin(s / 11))));
    running.push_back(std::round(40 * fill + 4 * std::sin(s / 5)));
  }
  return {{"t_s", t}, {"kv_usage", kv}, {"waiting", waiting},
          {"running", running}};
}

inline nlohmann::json SampleLoops() {
  nlohmann::json points = nlohmann::json::array();
  for (int n : {1, 2, 4, 8, 16, 32, 64}) {
    const double x = 9.3 * n / (n + 6.0);  // closed-loop throughput saturates
    const double rho = x / 10.0;
    auto mode = [&](double burst) {
      const double wait = 1000 * burst * rho / (10.0 - x);
      return nlohmann::json{{"ttft_p50_ms", 45 + 0.7 * wait},
                            {"ttft_p99_ms", 80 + 4.6 * wait},
                            {"queue_mean_ms", 1 + wait}};
    };
    points.push_back({{"concurrency", n},
                      {"throughput_rps", x},
                      {"utilization", rho},
                      {"mm1_wait_ms", 100 * rho / (1 - rho)},
                      {"closed", mode(0.15)},
                      {"open_poisson", mode(1.0)},
                      {"open_gamma", mode(2.5)}});
  }
  // M/M/1 with mean service 100 ms (mu = 10 req/s).
  nlohmann::json mm1 = nlohmann::json::array();
  for (double rho = 0.05; rho < 0.99; rho += 0.05) mm1.push_back({10 * rho, 100 * rho / (1 - rho)});
  return {{"points", points},
          {"saturation_rps", 10.0},
          {"theory", {{"mm1_wait_ms", mm1}}},
          {"explanation",
           "A closed loop sends a new request only when one finishes, so it "
           "can never build a queue: at the same throughput, open-loop "
           "arrivals (Poisson, and bursty gamma) see far longer waits."}};
}

// A capacity bisection's rates with each SLO term's interval: passes
// below the answer, fails above it (as RateEvaluationJson writes them).
inline nlohmann::json SampleTrail(const std::vector<std::pair<std::string, double>>& terms,
                                  double max_rate) {
  nlohmann::json trail = nlohmann::json::array();
  for (double f : {0.02, 0.5, 0.75, 0.9, 0.97, 1.0, 1.03, 1.1}) {
    const double rate = max_rate * f;
    nlohmann::json slo = nlohmann::json::object();
    for (const auto& [name, limit] : terms) {
      const double v = limit * 0.2 / std::max(0.05, 1.05 - f);
      slo[name] = {{"limit_ms", limit},
                   {"value_ms", {{"mean", v}, {"lo", 0.8 * v}, {"hi", 1.25 * v}}}};
    }
    trail.push_back({{"rate", rate}, {"feasible", f <= 1.0}, {"slo", slo}});
  }
  return trail;
}

// Four evaluated candidates (two on each front), one pruned, one too big.
inline nlohmann::json SampleSearch() {
  auto row = [](const char* gpu, int tp, int seqs, double tps_gpu, double tps_user,
                double usd, double ttft, bool front_t, bool front_c) {
    return nlohmann::json{{"gpu", gpu}, {"tp", tp}, {"max_num_seqs", seqs},
                          {"max_num_batched_tokens", 8192}, {"chunked_prefill", true},
                          {"status", "evaluated"}, {"note", ""}, {"saturation_rps", 40.0},
                          {"max_rate_per_replica", 38.0}, {"replicas", 2}, {"gpus", 2 * tp},
                          {"fleet_usd_per_hour", 7.0 * tp}, {"usd_per_million_output_tokens", usd},
                          {"output_tokens_per_s_per_gpu", tps_gpu},
                          {"tokens_per_s_per_user", tps_user}, {"ttft_p99_ms_at_max", ttft},
                          {"pareto_throughput", front_t}, {"pareto_cost", front_c}};
  };
  nlohmann::json first = row("h200", 1, 256, 13000, 70, 0.074, 130, true, true);
  first["evaluations"] = SampleTrail({{"ttft_p99", 2000}}, 38.0);
  nlohmann::json rows = {first,
                         row("h200", 2, 256, 10000, 100, 0.097, 120, true, true),
                         row("h100-sxm", 1, 64, 5600, 90, 0.124, 1300, false, false),
                         row("h100-sxm", 2, 64, 4300, 80, 0.159, 1100, false, false),
                         {{"gpu", "h100-sxm"}, {"tp", 1}, {"status", "pruned"},
                          {"note", "cannot beat the cheapest fleet found"}},
                         {{"gpu", "l40s"}, {"tp", 1}, {"status", "does not fit"},
                          {"note", "weights exceed memory"}}};
  return {{"slo", {{"ttft_p99_ms", 2000}}},
          {"rows", rows},
          {"cheapest", {{"index", 0}, {"name", "h200 tp1 seqs256"},
                        {"vllm_serve", "vllm serve meta-llama/Llama-3.1-8B"}}}};
}

inline nlohmann::json SampleReportData() {
  nlohmann::json hist = nlohmann::json::array();
  for (int b = 1; b <= 64; ++b) {
    const double z = (b - 38) / 9.0;
    hist.push_back({b, std::round(900 * std::exp(-z * z / 2)) + (b == 1 ? 120 : 0)});
  }
  nlohmann::json capacity = {
      {"slo", {{"ttft_p99_ms", 500}, {"tpot_p99_ms", 50}}},
      {"rows",
       {{{"gpu", "h200"}, {"tp", 1}, {"max_rate_per_replica", 7.4},
         {"replicas", 14}, {"gpus", 14}, {"cost_per_million_output_tokens", 1.82},
         {"goodput_rps", {{"mean", 7.3}, {"lo", 7.1}, {"hi", 7.5}}},
         {"saturation_ci", {{"mean", 8.0}, {"lo", 7.8}, {"hi", 8.2}}},
         {"utilization_at_max", 0.93}, {"fleet_usd_per_hour", 49.0},
         {"evaluations", SampleTrail({{"ttft_p99", 500}, {"tpot_p99", 50}}, 7.4)}},
        {{"gpu", "h100"}, {"tp", 1}, {"max_rate_per_replica", 5.1},
         {"replicas", 20}, {"gpus", 20}, {"cost_per_million_output_tokens", 2.35},
         {"goodput_rps", {{"mean", 5.0}, {"lo", 4.9}, {"hi", 5.1}}}},
        {{"gpu", "a100-80g"}, {"tp", 2}, {"max_rate_per_replica", 4.2},
         {"replicas", 24}, {"gpus", 48}, {"cost_per_million_output_tokens", 3.9},
         {"goodput_rps", {{"mean", 4.1}}}},
        {{"gpu", "l40s"}, {"tp", 1}, {"fits", false},
         {"note", "llama-3.1-70b does not fit: weights 141 GiB > 48 GiB"}}}}};
  return {{"title", "servesim report: chat at 85% load"},
          {"context",
           {{"scenario", "scenarios/chat_85.json"},
            {"model", "llama-3.1-8b"},
            {"gpu", "h200"},
            {"tp", 1},
            {"arrival", "poisson, 8.1 req/s (sweep 0.95-9.5 req/s)"},
            {"seed", 42},
            {"percentiles", {50, 90, 99}},
            {"warmup", "first 60 s (512 requests)"},
            {"prefix_hit_rate", 0.31},
            {"utilization", "0.85 of saturation (9.3 req/s)"}}},
          {"sweep", SampleSweep()},
          {"cdfs",
           {{"ttft_ms", LognormalCdf(120, 0.9)},
            {"tpot_ms", LognormalCdf(11, 0.3)},
            {"e2el_ms", LognormalCdf(2600, 0.8)}}},
          {"timeseries", SampleTimeseries()},
          {"batch_size_hist", hist},
          {"loops", SampleLoops()},
          {"capacity", capacity},
          {"search", SampleSearch()}};
}

}  // namespace servesim::testing
