// vllm bench serve's load flags as scenario edits (see bench_flags.h).
#include "sim/cli/bench_flags.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "sim/cli/commands.h"
#include "sim/core/json_view.h"
#include "sim/report/format.h"

namespace servesim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool IsInf(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return t == "inf" || t == "infinity";  // what Python's float() reads as inf
}

// A number > 0 or inf (as vLLM's float() reads them); NaN when neither.
double RateOrInf(const std::string& text) {
  if (IsInf(text)) return kInf;
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  const bool whole = !text.empty() && end == text.c_str() + text.size();
  return whole && std::isfinite(x) && x > 0 ? x : std::nan("");
}

CLI::Validator PositiveOrInf() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (!std::isnan(RateOrInf(value))) return "";
        return "expected a number > 0 or inf, got \"" + value + "\"";
      },
      "", "number > 0 or inf");
}

// vLLM's RandomDataset takes range_ratio in [0, 1), SGLang's in [0, 1]
// (CheckBenchFlags tells them apart).
CLI::Validator RangeRatio() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(value.c_str(), &end);
        const bool whole = !value.empty() && end == value.c_str() + value.size();
        if (whole && x >= 0 && x <= 1) return "";
        return "expected a number in [0, 1], got \"" + value + "\"";
      },
      "", "number in [0, 1]");
}

bool SglangStyle(const BenchFlags& f) { return f.range_ratio_style.value_or("vllm") == "sglang"; }

template <typename T>
void Optional(CLI::App* app, const std::string& name, std::optional<T>* into,
              const std::string& help, const CLI::Validator& check) {
  app->add_option_function<T>(name, [into](const T& v) { *into = v; }, help)
      ->check(check)
      ->group("vllm bench serve flags");
}

// A length flag's distribution: fixed, or uniform integers as vLLM's
// RandomDataset draws them, [floor(L(1-r)), ceil(L(1+r))], the output's
// low end at least 1; an input range reaching 0 is an error, as in vLLM.
// SGLang's bench_serving draws [max(floor(L r), 1), L] (its output's low
// end may be 0 there; a request here generates at least one token), so
// its default r = 0 is uniform in [1, L] and r = 1 is fixed.
StatusOr<nlohmann::json> Lengths(const std::string& flag, int64_t len, double ratio,
                                 bool output, bool sglang) {
  if (sglang) {
    const int64_t lo = std::max<int64_t>(
        1, static_cast<int64_t>(std::floor(static_cast<double>(len) * ratio)));
    if (lo >= len) return nlohmann::json{{"dist", "fixed"}, {"value", len}};
    return nlohmann::json{{"dist", "uniform"}, {"min", lo}, {"max", len}};
  }
  if (ratio == 0) return nlohmann::json{{"dist", "fixed"}, {"value", len}};
  int64_t lo = static_cast<int64_t>(std::floor(static_cast<double>(len) * (1 - ratio)));
  const int64_t hi = static_cast<int64_t>(std::ceil(static_cast<double>(len) * (1 + ratio)));
  if (output) lo = std::max<int64_t>(lo, 1);
  if (lo < 1) {
    return Status::Error(flag + " " + std::to_string(len) + " with --random-range-ratio " +
                         Fmt("%g", ratio) + ": the shortest prompt would be " +
                         std::to_string(lo) +
                         " tokens; expected floor(len * (1 - ratio)) >= 1");
  }
  return nlohmann::json{{"dist", "uniform"}, {"min", lo}, {"max", hi}};
}

nlohmann::json& ObjectAt(nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_object()) j[key] = nlohmann::json::object();
  return j[key];
}

// A positive integer at key, else 0.
int64_t PositiveInteger(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return 0;
  return std::max<int64_t>(0, j[key].get<int64_t>());
}

}  // namespace

bool BenchFlags::any() const {
  return request_rate || burstiness || num_prompts || max_concurrency || random_input_len ||
         random_output_len || isl || osl || random_range_ratio || range_ratio_style ||
         !goodput.empty();
}

void AddBenchFlags(CLI::App* run, BenchFlags* f) {
  Optional(run, "--request-rate", &f->request_rate,
           "vllm bench serve: arrivals at R req/s (poisson, or gamma with --burstiness); "
           "inf: every request at t = 0 (workload.arrival)",
           PositiveOrInf());
  Optional(run, "--burstiness", &f->burstiness,
           "vllm bench serve: gamma shape of the gaps (1 = poisson, inf = constant; "
           "workload.arrival.burstiness)",
           PositiveOrInf());
  Optional(run, "--num-prompts", &f->num_prompts,
           "vllm bench serve: requests to send (workload.num_requests)", NumberIn(1, 1e9));
  Optional(run, "--max-concurrency", &f->max_concurrency,
           "vllm bench serve: at most N requests in flight, the rest wait for a slot "
           "(workload.max_concurrency; with --request-rate inf a closed loop of N)",
           NumberIn(1, 1e6));
  const double max_len = 16777216;
  Optional(run, "--random-input-len", &f->random_input_len,
           "vllm bench serve: prompt tokens (workload.input_len)", NumberIn(1, max_len));
  Optional(run, "--isl", &f->isl, "The same as --random-input-len", NumberIn(1, max_len));
  Optional(run, "--random-output-len", &f->random_output_len,
           "vllm bench serve: output tokens (workload.output_len)", NumberIn(1, max_len));
  Optional(run, "--osl", &f->osl, "The same as --random-output-len", NumberIn(1, max_len));
  Optional(run, "--random-range-ratio", &f->random_range_ratio,
           "vllm bench serve: lengths uniform in [floor(L(1-r)), ceil(L(1+r))], r < 1; 0: "
           "fixed",
           RangeRatio());
  Optional(run, "--range-ratio-style", &f->range_ratio_style,
           "How --random-range-ratio spreads lengths: vllm (vllm bench serve, the default) or "
           "sglang (python -m sglang.bench_serving, and vLLM's benchmark_serving.py before "
           "0.9, as InferenceMAX runs it): uniform in [max(floor(L r), 1), L]; r = 1: fixed, "
           "r = 0 or none: [1, L]",
           CLI::IsMember({"vllm", "sglang"}));
  run->add_option("--goodput", f->goodput,
                  "vllm bench serve: SLOs in ms, e.g. --goodput ttft:500 tpot:50 e2el:2000; "
                  "fills request_goodput (metrics.goodput)")
      ->check(NotAnOption())
      ->group("vllm bench serve flags");
}

StatusOr<GoodputSlo> ParseGoodputFlag(const std::vector<std::string>& specs) {
  GoodputSlo slo;
  for (const std::string& spec : specs) {
    const std::string what = "--goodput " + spec + ": ";
    const size_t colon = spec.find(':');
    if (colon == std::string::npos || spec.find(':', colon + 1) != std::string::npos) {
      return Status::Error(what + "expected KEY:VALUE, e.g. ttft:500 (milliseconds)");
    }
    const std::string key = spec.substr(0, colon), text = spec.substr(colon + 1);
    std::optional<double>* into = key == "ttft"   ? &slo.ttft_ms
                                  : key == "tpot" ? &slo.tpot_ms
                                  : key == "e2el" ? &slo.e2el_ms
                                                  : nullptr;
    if (!into) {
      const std::string near = NearestName(key, {"ttft", "tpot", "e2el"});
      return Status::Error(what + "unknown key \"" + key + "\"" +
                           (near.empty() ? "" : " (did you mean \"" + near + "\"?)") +
                           "; expected one of ttft, tpot, e2el");
    }
    char* end = nullptr;
    const double ms = std::strtod(text.c_str(), &end);
    const bool whole = !text.empty() && end == text.c_str() + text.size();
    if (!whole || !std::isfinite(ms) || ms < 0) {
      return Status::Error(what + "expected a number of milliseconds >= 0, got \"" + text +
                           "\"");
    }
    if (*into) return Status::Error(what + key + " given twice");
    *into = ms;
  }
  return slo;
}

Status CheckBenchFlags(const BenchFlags& f) {
  if (f.isl && f.random_input_len) {
    return Status::Error("--isl and --random-input-len both given: expected one (synonyms)");
  }
  if (f.osl && f.random_output_len) {
    return Status::Error("--osl and --random-output-len both given: expected one (synonyms)");
  }
  if (f.random_range_ratio && !(f.isl || f.random_input_len || f.osl || f.random_output_len)) {
    return Status::Error(
        "--random-range-ratio: expected --random-input-len or --random-output-len to "
        "apply it to");
  }
  if (f.range_ratio_style && !(f.isl || f.random_input_len || f.osl || f.random_output_len)) {
    return Status::Error(
        "--range-ratio-style: expected --random-input-len or --random-output-len to "
        "apply it to");
  }
  if (f.random_range_ratio && *f.random_range_ratio >= 1 && !SglangStyle(f)) {
    return Status::Error("--random-range-ratio " + Fmt("%g", *f.random_range_ratio) +
                         ": expected a number in [0, 1) (vllm bench serve's lengths "
                         "[L(1-r), L(1+r)]); with --range-ratio-style sglang, r = 1 is fixed");
  }
  if (f.request_rate && std::isnan(RateOrInf(*f.request_rate))) {
    return Status::Error("--request-rate: expected a number > 0 or inf, got \"" +
                         *f.request_rate + "\"");
  }
  if (f.burstiness && std::isnan(RateOrInf(*f.burstiness))) {
    return Status::Error("--burstiness: expected a number > 0 or inf, got \"" + *f.burstiness +
                         "\"");
  }
  if (f.burstiness && f.request_rate && std::isinf(RateOrInf(*f.request_rate))) {
    return Status::Error(
        "--burstiness with --request-rate inf: every request is sent at t = 0, so there "
        "are no gaps to shape; expected a finite --request-rate");
  }
  if (!f.goodput.empty()) {
    if (auto slo = ParseGoodputFlag(f.goodput); !slo.ok()) return slo.status();
  }
  return Status::Ok();
}

Status ApplyBenchFlags(const BenchFlags& f, nlohmann::json* scenario) {
  if (Status st = CheckBenchFlags(f); !st.ok()) return st;
  if (!f.any()) return Status::Ok();
  nlohmann::json& j = *scenario;
  if (!j.is_object()) return Status::Ok();  // the loader says what is wrong
  nlohmann::json& w = ObjectAt(j, "workload");
  if (f.num_prompts) w["num_requests"] = *f.num_prompts;

  const double ratio = f.random_range_ratio.value_or(0);
  const bool sglang = SglangStyle(f);
  if (auto len = f.isl ? f.isl : f.random_input_len) {
    auto d = Lengths(f.isl ? "--isl" : "--random-input-len", *len, ratio, false, sglang);
    if (!d.ok()) return d.status();
    w["input_len"] = *d;
  }
  if (auto len = f.osl ? f.osl : f.random_output_len) {
    auto d = Lengths(f.osl ? "--osl" : "--random-output-len", *len, ratio, true, sglang);
    if (!d.ok()) return d.status();
    w["output_len"] = *d;
  }

  const double burstiness = f.burstiness ? RateOrInf(*f.burstiness) : 1;
  // vLLM: shape = burstiness; 1 is Poisson, inf constant gaps of 1 / rate.
  auto shape = [&](nlohmann::json& a) {
    a.erase("burstiness");
    if (burstiness == 1) {
      a["process"] = "poisson";
    } else if (std::isinf(burstiness)) {
      a["process"] = "constant";
    } else {
      a["process"] = "gamma";
      a["burstiness"] = burstiness;
    }
  };
  if (f.request_rate || f.burstiness) {
    // A replay at the trace's own clock has no arrival process to replace.
    const nlohmann::json* trace = w.contains("trace") ? &w["trace"] : nullptr;
    if (trace && trace->is_object() &&
        !(trace->contains("use_timestamps") && (*trace)["use_timestamps"] == false)) {
      return Status::Error(std::string(f.request_rate ? "--request-rate" : "--burstiness") +
                           ": the scenario replays its trace's timestamps; expected "
                           "--set workload.trace.use_timestamps=false with it");
    }
  }
  if (f.request_rate) {
    const double rate = RateOrInf(*f.request_rate);
    if (std::isinf(rate)) {
      // Everything at t = 0: a closed loop with no think time of N clients
      // (the --max-concurrency semaphore), or of one client per request.
      int64_t n = f.max_concurrency ? *f.max_concurrency : PositiveInteger(w, "max_concurrency");
      if (n == 0) n = PositiveInteger(w, "num_requests");
      if (n == 0) {
        return Status::Error(
            "--request-rate inf sends every request at t = 0: expected --num-prompts (or "
            "workload.num_requests) to say how many, or --max-concurrency");
      }
      w["arrival"] = {{"process", "closed"}, {"concurrency", n}, {"think_time_s", 0}};
      w.erase("max_concurrency");
    } else {
      nlohmann::json a = {{"rate", rate}};
      shape(a);
      w["arrival"] = std::move(a);
      if (f.max_concurrency) w["max_concurrency"] = *f.max_concurrency;
    }
  } else {
    if (f.burstiness) {
      nlohmann::json& a = ObjectAt(w, "arrival");
      if (!a.contains("rate") || a.value("process", "") == "closed") {
        return Status::Error(
            "--burstiness shapes an open-loop rate, and the scenario's arrivals have none; "
            "expected --request-rate with it");
      }
      shape(a);
    }
    if (f.max_concurrency) w["max_concurrency"] = *f.max_concurrency;
  }

  if (!f.goodput.empty()) {
    const StatusOr<GoodputSlo> slo = ParseGoodputFlag(f.goodput);
    nlohmann::json g = nlohmann::json::object();
    if (slo->ttft_ms) g["ttft_ms"] = *slo->ttft_ms;
    if (slo->tpot_ms) g["tpot_ms"] = *slo->tpot_ms;
    if (slo->e2el_ms) g["e2el_ms"] = *slo->e2el_ms;
    ObjectAt(j, "metrics")["goodput"] = std::move(g);
  }
  return Status::Ok();
}

Status CheckBenchFlagsAgainstSets(const BenchFlags& f,
                                  const std::vector<std::string>& sets) {
  const struct {
    bool given;
    const char* flag;
    const char* key;
  } aliases[] = {
      {f.request_rate.has_value(), "--request-rate", "workload.arrival"},
      {f.burstiness.has_value(), "--burstiness", "workload.arrival"},
      {f.num_prompts.has_value(), "--num-prompts", "workload.num_requests"},
      {f.max_concurrency.has_value(), "--max-concurrency", "workload.max_concurrency"},
      {f.random_input_len.has_value(), "--random-input-len", "workload.input_len"},
      {f.isl.has_value(), "--isl", "workload.input_len"},
      {f.random_output_len.has_value(), "--random-output-len", "workload.output_len"},
      {f.osl.has_value(), "--osl", "workload.output_len"},
      {f.random_range_ratio.has_value(), "--random-range-ratio", "workload.input_len"},
      {f.range_ratio_style.has_value(), "--range-ratio-style", "workload.input_len"},
      {!f.goodput.empty(), "--goodput", "metrics.goodput"},
  };
  for (const std::string& set : sets) {
    const std::string key = set.substr(0, set.find('='));
    for (const auto& a : aliases) {
      const std::string k = a.key;
      if (!a.given || key.compare(0, k.size(), k) != 0) continue;
      if (key.size() != k.size() && key[k.size()] != '.') continue;
      return Status::Error(std::string(a.flag) + " and --set " + set + " both set " + k +
                           "; expected one of them");
    }
  }
  return Status::Ok();
}

}  // namespace servesim
