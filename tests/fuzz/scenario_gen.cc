// Random valid scenarios (see scenario_gen.h). Each section is one function;
// the workload is drawn first because the KV cache is sized from the longest
// request it can produce.
#include "tests/fuzz/scenario_gen.h"

#include <algorithm>
#include <string>

#include "sim/engine/engine_support.h"
#include "sim/model/model_loader.h"
#include "sim/scenario/scenario.h"

namespace servesim::fuzz {
namespace {

using nlohmann::json;

constexpr const char* kTraces = "../shared/traces/";

// What the workload can produce, for sizing the cache and the run.
struct Shape {
  int64_t max_prompt = 0;    // longest prompt it can produce (0: unknown)
  int64_t max_output = 0;    // longest output
  double mean_output = 0;    // rough, for bounding the work
  double mean_prompt = 0;    // rough
  int64_t requests = 0;      // the request bound (rough with duration_s)
  bool prefix_caching_useful = false;
};

// A length distribution with an upper clamp `cap` (always given, so the
// cache can be sized); `scale` is its typical size.
json Lengths(Choices& c, double scale, int64_t cap, bool output, double* mean) {
  json d;
  switch (c.Below(6)) {
    case 0: {
      const int64_t v = c.LogInt(1, static_cast<int64_t>(scale * 2));
      d = {{"dist", "fixed"}, {"value", v}};
      *mean = static_cast<double>(v);
      break;
    }
    case 1: {
      // Its "max" is also the clamp: at most `cap`.
      const int64_t lo = c.LogInt(1, static_cast<int64_t>(scale));
      const int64_t hi = std::min(cap, lo + c.LogInt(0, static_cast<int64_t>(scale * 3)));
      d = {{"dist", "uniform"}, {"min", lo}, {"max", hi}};
      *mean = (lo + hi) / 2.0;
      break;
    }
    case 2: {
      const double m = c.LogUniform(1, scale * 2);
      d = {{"dist", "normal"}, {"mean", m}, {"std", c.LogUniform(0.1, m + 1)}};
      *mean = m;
      break;
    }
    case 3: {
      const double med = c.LogUniform(1, scale);
      d = {{"dist", "lognormal"}, {"median", med}, {"p99", med * c.Uniform(1.01, 30)}};
      *mean = med * 2;
      break;
    }
    case 4: {
      const double m = c.LogUniform(1, scale * 2);
      d = {{"dist", "exponential"}, {"mean", m}};
      *mean = m;
      break;
    }
    default: {
      const char* file = c.Chance(0.5) ? "sharegpt_8k_filtered_stats_llama2_tokenizer.csv"
                                       : "bwb_stats_llama2_tokenizer_filtered_v2.csv";
      d = {{"dist", "empirical"},
           {"path", std::string(kTraces) + file},
           {"column", output ? "num_decode_tokens" : "num_prefill_tokens"}};
      *mean = output ? 400 : 800;
    }
  }
  if (!d.contains("max")) d["max"] = cap;
  *mean = std::min<double>(*mean, static_cast<double>(cap));
  return d;
}

json Arrival(Choices& c, double rate) {
  switch (c.Below(3)) {
    case 0: return {{"process", "poisson"}, {"rate", rate}};
    case 1:
      return {{"process", "gamma"}, {"rate", rate}, {"burstiness", c.LogUniform(0.05, 10)}};
    default: return {{"process", "constant"}, {"rate", rate}};
  }
}

// A shared-prefix model; sets *defines when it supplies the lengths itself.
json Prefix(Choices& c, Shape* shape, bool* defines) {
  *defines = false;
  shape->prefix_caching_useful = true;
  switch (c.Below(5)) {
    case 0: {
      const int64_t len = c.LogInt(0, 2000);
      shape->max_prompt += len;
      shape->mean_prompt += static_cast<double>(len);
      return {{"model", "random_prefix"}, {"prefix_len", len}};
    }
    case 1: {
      const int64_t len = c.LogInt(16, 2000);
      shape->max_prompt += len;
      shape->mean_prompt += static_cast<double>(len);
      return {{"model", "zipf"}, {"num_prefixes", c.LogInt(1, 50)}, {"prefix_len", len},
              {"s", c.Uniform(0.3, 2)}};
    }
    case 2: return {{"model", "target_hit_rate"}, {"hit_rate", c.Unit()}};
    case 3: {
      *defines = true;
      const int64_t p = c.LogInt(1, 2000), s = c.LogInt(0, 500), o = c.LogInt(1, 300);
      shape->max_prompt = p + s;
      shape->mean_prompt = static_cast<double>(p + s);
      shape->max_output = o;
      shape->mean_output = static_cast<double>(o);
      return {{"model", "prefix_repetition"}, {"num_prefixes", c.LogInt(1, 20)},
              {"prefix_len", p}, {"suffix_len", s}, {"output_len", o}};
    }
    default: {
      *defines = true;
      const int64_t p = c.LogInt(1, 2000), q = c.LogInt(1, 300), o = c.LogInt(1, 300);
      shape->max_prompt = p + q;
      shape->mean_prompt = static_cast<double>(p + q);
      shape->max_output = o;
      shape->mean_output = static_cast<double>(o);
      return {{"model", "generated_shared_prefix"}, {"num_groups", c.LogInt(1, 16)},
              {"prompts_per_group", c.LogInt(1, 16)}, {"system_prompt_len", p},
              {"question_len", q}, {"output_len", o}};
    }
  }
}

// A slice of one of the shared traces (the request bound is set later).
json Trace(Choices& c, json* w, Shape* shape) {
  bool timed = c.Chance(0.7);
  json t;
  switch (c.Below(5)) {
    case 4:
      // Multi-turn / agentic sessions (a tests fixture: no shared trace has
      // parent links): later turns wait for their parents' answers.
      t = {{"path", "tests/workload/data/agentic_sessions.jsonl"},
           {"format", "sessions"}, {"time_scale", c.LogUniform(0.01, 3)}};
      timed = true;  // the format replays its own clock
      shape->max_prompt = 2500;
      shape->mean_prompt = 600;
      shape->prefix_caching_useful = true;
      break;
    case 0:
      t = {{"path", std::string(kTraces) + "AzureLLMInferenceTrace_conv.csv"},
           {"format", "azure"}, {"time_scale", c.LogUniform(0.02, 3)}};
      shape->max_prompt = 16000;  // the conversation trace's prompts stay below
      shape->mean_prompt = 1200;
      break;
    case 1:
      t = {{"path", std::string(kTraces) + "synthetic_trace.jsonl"},
           {"format", "mooncake"}, {"time_scale", c.LogUniform(0.3, 10)}};
      shape->max_prompt = 4096;  // longer ones exist; tight caches reject them
      shape->mean_prompt = 12000;
      shape->prefix_caching_useful = true;
      break;
    case 2:
      t = {{"path", std::string(kTraces) + "synthetic_trace.jsonl"},
           {"format", "jsonl"}, {"time_scale", c.LogUniform(0.3, 10)},
           {"fields", {{"prompt_tokens", "input_length"},
                       {"completion_tokens", "output_length"},
                       {"timestamp", "timestamp"}}}};
      // Its milliseconds detected (auto) or given.
      if (c.Chance(0.5)) t["timestamp_unit"] = "ms";
      shape->max_prompt = 4096;
      shape->mean_prompt = 12000;
      break;
    default:
      t = {{"path", std::string(kTraces) + "sharegpt_8k_filtered_stats_llama2_tokenizer.csv"},
           {"format", "lengths"}, {"use_timestamps", false}};
      shape->max_prompt = 4096;
      shape->mean_prompt = 300;
  }
  shape->max_output = 2048;
  shape->mean_output = 300;
  if (!timed || t["format"] == "lengths") {
    // The trace gives lengths only; arrivals open or closed.
    t["use_timestamps"] = false;
    (*w)["arrival"] = c.Chance(0.25) ? json{{"process", "closed"},
                                            {"concurrency", c.LogInt(1, 100)}}
                                     : Arrival(c, c.LogUniform(0.5, 200));
  }
  const bool closed = w->contains("arrival") && (*w)["arrival"]["process"] == "closed";
  if (!closed && c.Chance(0.2)) {
    (*w)["max_concurrency"] = c.LogInt(1, 64);
  }
  return t;
}

// Lengths, arrivals and the mode; returns the workload section.
json Workload(Choices& c, const GeneratorLimits& limits, Shape* shape) {
  json w;
  const int mode = static_cast<int>(c.Below(5));  // open, capped, closed, sessions, trace
  if (mode == 4) {
    w["trace"] = Trace(c, &w, shape);
  } else {
    bool defines = false;
    if (c.Chance(0.45)) w["prefix"] = Prefix(c, shape, &defines);
    // Sessions draw later turns' lengths from input_len/output_len, so a
    // prefix model that defines the lengths is refused with them (the fuzzer
    // found such turns getting output_len 0 and never stopping).
    if (defines && mode == 3) {
      w.erase("prefix");
      defines = false;
      *shape = Shape();
    }
    if (!defines) {
      const int64_t in_cap = c.Pick<int64_t>({64, 512, 2048, 8192});
      const int64_t out_cap = c.Pick<int64_t>({4, 64, 256, 512});
      double mean_in = 0;
      w["input_len"] = Lengths(c, static_cast<double>(in_cap) / 4, in_cap, false, &mean_in);
      w["output_len"] = Lengths(c, static_cast<double>(out_cap) / 4, out_cap, true,
                                &shape->mean_output);
      shape->max_prompt += in_cap;
      shape->mean_prompt += mean_in;
      shape->max_output = out_cap;
    }
    const double rate = c.LogUniform(0.5, 300);
    if (mode == 2) {
      w["arrival"] = {{"process", "closed"}, {"concurrency", c.LogInt(1, 300)},
                      {"think_time_s", c.Chance(0.5) ? 0.0 : c.LogUniform(1e-3, 2)}};
    } else {
      w["arrival"] = Arrival(c, rate);
    }
    if (mode == 1 || (mode == 3 && c.Chance(0.2))) w["max_concurrency"] = c.LogInt(1, 64);
    if (mode == 3) {
      json turns = c.Chance(0.5) ? json{{"dist", "fixed"}, {"value", c.Int(1, 6)}}
                                 : json{{"dist", "uniform"}, {"min", 1}, {"max", c.Int(1, 8)}};
      w["sessions"] = {{"turns", turns},
                       {"think_time_s", c.Chance(0.3) ? 0.0 : c.LogUniform(0.01, 5)}};
      // Each turn resends the history: up to 8 x (prompt + output).
      shape->max_prompt = 8 * (shape->max_prompt + shape->max_output);
      shape->mean_prompt = 3 * (shape->mean_prompt + shape->mean_output);
      shape->prefix_caching_useful = true;
    }
  }
  // Bound the work.
  const double per_request = std::max(1.0, shape->mean_output);
  const int64_t most = std::clamp<int64_t>(
      static_cast<int64_t>(limits.max_output_tokens / per_request), 1, limits.max_requests);
  const int64_t n = c.LogInt(1, most);
  shape->requests = n;
  if (mode != 4 && mode != 2 && c.Chance(0.25)) {
    const double rate = w["arrival"]["rate"].get<double>();
    w["duration_s"] = std::max(0.01, static_cast<double>(n) / rate);
    if (c.Chance(0.5)) w["num_requests"] = n;
  } else {
    w["num_requests"] = n;
  }
  return w;
}

json Engine(Choices& c, const Shape& shape, bool* prefix_caching) {
  json e;
  const int64_t seqs = c.Pick<int64_t>({1, 2, 4, 8, 16, 64, 256});
  e["max_num_seqs"] = seqs;
  e["max_num_batched_tokens"] = c.Pick<int64_t>({16, 64, 256, 1024, 2048, 8192});
  e["chunked_prefill"] = c.Chance(0.8);
  const int64_t bs = c.Pick<int64_t>({8, 16, 16, 32});
  e["block_size"] = bs;
  *prefix_caching = c.Chance(shape.prefix_caching_useful ? 0.6 : 0.25);
  e["prefix_caching"] = *prefix_caching;
  if (c.Chance(0.3)) e["policy"] = "shortest-prompt-first";
  // vLLM 0.33 engine settings (defaults: async on, full-prompt admission on).
  if (c.Chance(0.4)) e["async_scheduling"] = c.Chance(0.5);
  if (c.Chance(0.3)) e["reserve_full_prompt"] = c.Chance(0.5);
  if (c.Chance(0.2)) e["long_prefill_token_threshold"] = c.LogInt(1, 4096);
  if (c.Chance(0.2)) e["watermark"] = c.Uniform(0, 0.2);
  // vLLM 0.33 engine knobs (defaults: async on, full-prompt admission on).
  e["async_scheduling"] = c.Chance(0.7);
  if (c.Chance(0.3)) e["reserve_full_prompt"] = false;
  if (c.Chance(0.2)) e["long_prefill_token_threshold"] = c.Pick<int64_t>({16, 64, 512});
  if (c.Chance(0.2)) e["watermark"] = c.Pick<double>({0.01, 0.05, 0.2});
  const int64_t longest = std::max<int64_t>(1, shape.max_prompt + shape.max_output);
  const int64_t blocks = (longest + bs - 1) / bs;
  // Derived from memory (tens of thousands of blocks) only for small runs:
  // the per-step check walks every block.
  const bool small = shape.requests * std::max(1.0, shape.mean_output) <= 5000;
  switch (c.Below(4)) {
    case 0:
      if (small) {
        if (c.Chance(0.5)) e["gpu_memory_utilization"] = c.Uniform(0.5, 0.95);
        break;
      }
      [[fallthrough]];
    case 1:  // tight: just above the largest request
      e["num_gpu_blocks"] = blocks + c.Int(0, 3);
      break;
    default:
      e["num_gpu_blocks"] = std::min<int64_t>(blocks * c.LogInt(2, 40), 200000);
  }
  return e;
}

// BoundTheWork assumes a cache derived from memory holds at most kDerived
// blocks. Drawn after it, pipeline stages (each GPU holds a stage's
// weights), fp8 KV and the large deployments derive up to millions (6.2 M
// for gpt-oss-120b at pp 4), and the per-step check over them ran the
// fuzzer out of CPU time (seeds 922725, 952455, 954583): such a cache is
// given as kDerived blocks (or SGLang tokens) instead.
constexpr double kDerived = 1e6;

void CapTheDerivedCache(json* s) {
  const json& e = (*s)["engine"];
  const bool sglang = e.value("kind", "") == "sglang";
  if (sglang ? e["sglang"].contains("max_total_tokens") : e.contains("num_gpu_blocks")) return;
  // The cache does not depend on the workload: a one-request one (no trace
  // read twice).
  json probe = *s;
  probe["workload"] = {{"arrival", {{"process", "poisson"}, {"rate", 1}}},
                       {"input_len", {{"dist", "fixed"}, {"value", 1}}},
                       {"output_len", {{"dist", "fixed"}, {"value", 1}}},
                       {"num_requests", 1}};
  StatusOr<Scenario> sc = ParseScenario(probe.dump(), "<fuzz>", {});
  if (!sc.ok()) return;  // the check reports the scenario's own refusal
  if (sglang) {
    const SglangConfig& g = sc->engine.sglang;
    if (static_cast<double>(g.max_total_tokens) / g.page_size <= kDerived) return;
    (*s)["engine"]["sglang"]["max_total_tokens"] = static_cast<int64_t>(kDerived) * g.page_size;
    return;
  }
  if (sc->engine.num_gpu_blocks <= kDerived) return;
  (*s)["engine"]["num_gpu_blocks"] = static_cast<int64_t>(kDerived);
  (*s)["engine"].erase("gpu_memory_utilization");
}

// The per-step KV check walks every block of the cache, so a run costs about
// steps x blocks: fewer requests (or a shorter duration) when that is large.
// Steps: each prompt in chunks of the token budget (or the long-prefill
// threshold), each output token in a batch of a few.
void BoundTheWork(const Shape& shape, const GeneratorLimits& limits, json* engine_json,
                  json* w) {
  const json& engine = *engine_json;
  const double kBlockSteps = limits.max_block_steps, kSteps = 2e5;
  // A prompt's chunk is at most the token budget, and at most
  // long_prefill_token_threshold when that is set.
  double budget = engine["max_num_batched_tokens"].get<double>();
  if (engine.contains("long_prefill_token_threshold")) {
    budget = std::min(budget, engine["long_prefill_token_threshold"].get<double>());
  }
  const double batch = std::min(4.0, engine["max_num_seqs"].get<double>());
  const double per_request = std::ceil(std::max(1.0, shape.mean_prompt) / budget) +
                             std::max(1.0, shape.mean_output) / batch;
  // Derived from memory: at most kDerived blocks (CapTheDerivedCache).
  const bool derived = !engine.contains("num_gpu_blocks");
  const double blocks = derived ? kDerived : engine["num_gpu_blocks"].get<double>();
  const double n = static_cast<double>(std::max<int64_t>(1, shape.requests));
  const double steps = n * per_request;
  const double scale = std::min({1.0, kBlockSteps / (steps * blocks), kSteps / steps});
  if (scale >= 1) return;
  const double bs = engine["block_size"].get<double>();
  const double need = std::ceil(static_cast<double>(shape.max_prompt + shape.max_output) / bs);
  if (kBlockSteps / (per_request * blocks) < 1 && blocks > need + 1) {
    // Too big even for one request: a smaller cache (still one that holds
    // the longest request), then fewer requests.
    (*engine_json)["num_gpu_blocks"] = static_cast<int64_t>(
        std::clamp(kBlockSteps / per_request, need + 1, blocks - 1));
    engine_json->erase("gpu_memory_utilization");
    BoundTheWork(shape, limits, engine_json, w);
    return;
  }
  if (w->contains("num_requests")) {
    (*w)["num_requests"] = std::max<int64_t>(1, static_cast<int64_t>(n * scale));
  }
  if (w->contains("duration_s")) {
    (*w)["duration_s"] = std::max(0.01, (*w)["duration_s"].get<double>() * scale);
  }
}

json CostModel(Choices& c) {
  if (c.Chance(0.5)) {
    json m = {{"type", "roofline"}};
    if (c.Chance(0.3)) m["step_overhead_s"] = c.LogUniform(1e-5, 5e-3);
    return m;
  }
  return {{"type", "linear"},
          {"step_s", c.Chance(0.2) ? 0.0 : c.LogUniform(1e-4, 5e-3)},
          {"prefill_token_s", c.LogUniform(1e-7, 1e-4)},
          {"decode_seq_s", c.Chance(0.2) ? 0.0 : c.LogUniform(1e-6, 1e-3)},
          {"kv_token_s", c.Chance(0.5) ? 0.0 : c.LogUniform(1e-10, 1e-7)}};
}

// Splits a workload with input_len/output_len (no trace, no sessions) into
// 1-4 classes: the first keeps the drawn lengths, the others draw their own
// under the same clamps (so the cache sized for the workload still holds
// every request), each with a share, a priority and maybe SLOs.
void Classes(Choices& c, json* w) {
  if (!w->contains("input_len") || w->contains("sessions") || w->contains("trace")) {
    return;
  }
  const int64_t in_cap = (*w)["input_len"]["max"].get<int64_t>();
  const int64_t out_cap = (*w)["output_len"]["max"].get<int64_t>();
  const int n = c.Int(1, 4);
  // Clamps too small to draw from (a uniform's max may be 1): the other
  // classes reuse the first class's lengths.
  const bool own = in_cap >= 4 && out_cap >= 4;
  json classes = json::array();
  for (int k = 0; k < n; ++k) {
    json cl = {{"name", "c" + std::to_string(k)}, {"share", c.LogUniform(0.01, 10)}};
    double unused = 0;
    cl["input_len"] = k == 0 || !own ? (*w)["input_len"]
                             : Lengths(c, static_cast<double>(in_cap) / 4, in_cap, false, &unused);
    cl["output_len"] = k == 0 || !own ? (*w)["output_len"]
                              : Lengths(c, static_cast<double>(out_cap) / 4, out_cap, true, &unused);
    if (c.Chance(0.7)) cl["priority"] = c.Int(-3, 3);
    if (c.Chance(0.6)) cl["ttft_slo_ms"] = c.LogUniform(1, 10000);
    if (c.Chance(0.4)) cl["tpot_slo_ms"] = c.LogUniform(1, 500);
    classes.push_back(cl);
  }
  w->erase("input_len");
  w->erase("output_len");
  (*w)["classes"] = classes;
}

}  // namespace

uint64_t SeededChoices::Bits() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t ByteChoices::Bits() {
  uint32_t x = 0;
  for (int i = 0; i < 4 && pos_ < size_; ++i) x |= uint32_t{data_[pos_++]} << (8 * i);
  // The same 32 bits feed both ends: Below() reads the low bits, Unit() the
  // high ones.
  return uint64_t{x} | (uint64_t{x} << 32);
}

// A KV cache larger than the GPU minus its weights is an input error
// (sim/scenario/memory_plan.cc): a given num_gpu_blocks stays within it.
std::string ModelName(const json& s) {
  const json& m = s["model"];
  return m.is_object() ? m["name"].get<std::string>() : m.get<std::string>();
}

// `engine` is /engine or a disaggregated pool's (which inherits /engine's
// block size when it sets none).
void CapToTheGpu(const json& s, json* engine) {
  if (!engine->contains("num_gpu_blocks")) return;
  const ModelSpec m = LoadModelSpec(ModelName(s));
  const GpuSpec g = LoadGpuSpec(s["hardware"]["gpu"].get<std::string>());
  const int tp = s["hardware"]["tp"].get<int>();
  const json& sized = engine->contains("block_size") ? *engine : s["engine"];
  const double block = m.KvBytesPerTokenPerGpu(tp) * sized["block_size"].get<double>();
  const auto cap = static_cast<int64_t>((g.memory_bytes - m.WeightBytesPerGpu(tp)) / block);
  (*engine)["num_gpu_blocks"] = std::min((*engine)["num_gpu_blocks"].get<int64_t>(), cap);
}

// CapToTheGpu for /engine and each disaggregated pool's engine.
void CapEveryEngine(json* s) {
  CapToTheGpu(*s, &(*s)["engine"]);
  if (!s->contains("disaggregation")) return;
  for (const char* role : {"prefill", "decode"}) {
    json& pool = (*s)["disaggregation"][role];
    if (pool.contains("engine")) CapToTheGpu(*s, &pool["engine"]);
  }
}

// Restates the drawn vLLM engine in SGLang's words (engine.kind sglang):
// its limits as max_running_requests, chunked_prefill_size (or -1) and
// max_prefill_tokens, its cache as max_total_tokens or mem_fraction_static,
// with either page size, any of the five queue orders, either event loop,
// and requests with or without ignore_eos.
void ToSglang(Choices& c, json* s) {
  const json v = (*s)["engine"];
  json g;
  g["max_running_requests"] = v["max_num_seqs"];
  const int64_t bs = v["block_size"].get<int64_t>();
  const int64_t page = c.Chance(0.5) ? 1 : bs;
  g["page_size"] = page;
  // (SGLang requires a chunk of whole pages.)
  const int64_t budget = v["max_num_batched_tokens"].get<int64_t>();
  const int64_t chunk = (budget + page - 1) / page * page;
  g["chunked_prefill_size"] = v["chunked_prefill"].get<bool>() ? chunk : -1;
  if (c.Chance(0.5)) g["max_prefill_tokens"] = budget * c.Int(1, 4);
  if (v.contains("num_gpu_blocks")) {
    g["max_total_tokens"] = v["num_gpu_blocks"].get<int64_t>() * bs;
  } else if (v.contains("gpu_memory_utilization")) {
    g["mem_fraction_static"] = v["gpu_memory_utilization"];
  }
  // Without chunking SGLang reserves activations for a whole
  // max_prefill_tokens extend (1.5 MiB a token), more than a 48 GB GPU has
  // at 32768 tokens: its default fraction would be negative (refused), so
  // such an engine states its fraction.
  if (!v["chunked_prefill"].get<bool>() && !g.contains("mem_fraction_static")) {
    g["mem_fraction_static"] = 0.85;
  }
  if (c.Chance(0.5)) {
    g["schedule_policy"] = c.Pick<const char*>({"lof", "lpm", "dfs-weight", "random"});
  }
  g["disable_overlap_schedule"] = c.Chance(0.5);
  if (c.Chance(0.3)) g["ignore_eos"] = false;
  if (c.Chance(0.2)) g["schedule_conservativeness"] = c.Uniform(0.3, 2);
  if (c.Chance(0.2)) g["new_token_ratio_decay_steps"] = c.LogInt(1, 1000);
  json e = {{"kind", "sglang"}, {"sglang", g}};
  if (v.contains("kv_cache_dtype")) e["kv_cache_dtype"] = v["kv_cache_dtype"];
  (*s)["engine"] = e;
  // Routing by cached prefixes needs vLLM's prefix caching.
  if (s->contains("cluster") && (*s)["cluster"].value("router", "") == "prefix_affinity") {
    (*s)["cluster"]["router"] = "round_robin";
  }
}

// Turns the deployment into prefill and decode pools (the scenario's
// /hardware and /engine are their defaults): 1-3 instances each with any
// router, a named or made-up link (slow ones too, so transfers queue), and
// sometimes a pool with a smaller cache (the prefill pool's held blocks then
// stall its admissions) or the other scheduling mode.
void Disaggregate(Choices& c, bool prefix_caching, json* s) {
  const auto pool = [&]() {
    const char* router = c.Pick<const char*>(
        {"round_robin", "least_outstanding", "power_of_two", "prefix_affinity"});
    if (!prefix_caching && std::string(router) == "prefix_affinity") router = "round_robin";
    json p = {{"replicas", c.Int(1, 3)}, {"router", router}};
    json e = json::object();
    const json& top = (*s)["engine"];
    if (c.Chance(0.3) && top.contains("num_gpu_blocks")) {
      e["num_gpu_blocks"] =
          std::max<int64_t>(2, top["num_gpu_blocks"].get<int64_t>() / c.Int(1, 4));
    }
    if (c.Chance(0.2)) e["async_scheduling"] = c.Chance(0.5);
    if (!e.empty()) p["engine"] = e;
    return p;
  };
  json d;
  d["prefill"] = pool();
  d["decode"] = pool();
  if (c.Chance(0.5)) {
    d["link"] = c.Pick<const char*>({"nvlink-4", "infiniband-ndr-400g",
                                     "infiniband-hdr-200g", "roce-200g", "roce-400g"});
  } else {
    d["link"] = {{"gb_per_s", c.LogUniform(0.05, 500)}, {"latency_us", c.LogInt(0, 5000)}};
  }
  s->erase("cluster");
  (*s)["disaggregation"] = d;
}

json GenerateScenario(Choices& c, const GeneratorLimits& limits) {
  json s;
  s["seed"] = c.Int(0, 1000000);
  // Deployments known to fit (weights + activations within memory).
  switch (c.Below(8)) {
    case 0: s["model"] = "llama-3.1-8b"; s["hardware"] = {{"gpu", "h100-sxm"}, {"tp", 1}}; break;
    case 1: s["model"] = "llama-3.1-8b"; s["hardware"] = {{"gpu", "l40s"}, {"tp", 1}}; break;
    case 2: s["model"] = "llama-3.1-8b"; s["hardware"] = {{"gpu", "a100-80gb"}, {"tp", 2}}; break;
    case 3: s["model"] = "qwen2.5-7b"; s["hardware"] = {{"gpu", "h200"}, {"tp", 1}}; break;
    case 4: s["model"] = "mixtral-8x7b"; s["hardware"] = {{"gpu", "h200"}, {"tp", 2}}; break;
    case 5: s["model"] = "llama-3.1-70b"; s["hardware"] = {{"gpu", "h200"}, {"tp", 4}}; break;
    default: s["model"] = "llama-3.1-8b"; s["hardware"] = {{"gpu", "h200"}, {"tp", 1}};
  }
  Shape shape;
  json w = Workload(c, limits, &shape);
  bool prefix_caching = false;
  s["engine"] = Engine(c, shape, &prefix_caching);
  s["cost_model"] = CostModel(c);
  BoundTheWork(shape, limits, &s["engine"], &w);
  CapToTheGpu(s, &s["engine"]);
  s["workload"] = std::move(w);
  // Warm-up: at most a third of the requests and of the arrivals' span, so
  // that something is measured (`servesim run` refuses a run that measured
  // nothing).
  const json& wl = s["workload"];
  const int64_t n = wl.value("num_requests", int64_t{0});
  const json arrival = wl.value("arrival", json::object());
  double span = wl.value("duration_s", 0.0);
  if (span == 0 && arrival.contains("rate") && n > 0) {
    span = static_cast<double>(n) / arrival["rate"].get<double>();
  }
  json m = json::object();
  if (c.Chance(0.2) && span > 0) m["warmup_s"] = c.Uniform(0, span / 3);
  if (c.Chance(0.2) && n >= 3) m["warmup_requests"] = c.LogInt(0, n / 3);
  if (!m.empty()) s["metrics"] = m;
  if (c.Chance(0.25)) s["limits"] = {{"max_queued", c.LogInt(5, 2000)}};
  if (c.Chance(0.4)) {
    const char* router = c.Pick<const char*>(
        {"round_robin", "least_outstanding", "power_of_two", "prefix_affinity"});
    if (!prefix_caching && std::string(router) == "prefix_affinity") router = "round_robin";
    s["cluster"] = {{"replicas", c.Int(1, 4)}, {"router", router}};
    if (c.Chance(0.3)) s["cluster"]["load_slack"] = c.Uniform(0, 2);
  }
  // fp8 weights and KV cache (drawn last, so earlier seeds keep their
  // other choices; the bf16 cap on num_gpu_blocks above stays valid, fp8
  // only frees memory).
  if (c.Chance(0.25)) s["model"] = {{"name", s["model"]}, {"weight_dtype", "fp8"}};
  if (c.Chance(0.25)) {
    s["engine"]["kv_cache_dtype"] = c.Pick<const char*>({"fp8", "fp8_e4m3", "fp8_e5m2"});
  }
  // Request classes and the policies that read them (drawn last, likewise).
  if (c.Chance(0.3)) Classes(c, &s["workload"]);
  if (c.Chance(0.3)) s["engine"]["policy"] = "priority";
  if (c.Chance(0.3)) s["engine"]["policy"] = c.Chance(0.5) ? "edf" : "lpm";
  // Disaggregated prefill/decode in ~20% of cases (drawn last, like fp8).
  if (c.Chance(0.2)) Disaggregate(c, prefix_caching, &s);
  // Speculative decoding in ~25% of cases (drawn last, likewise): k from 0
  // (off) to 6, a constant acceptance rate (the edges 0 and 1 too) or
  // per-request Beta rates, a draft cost or none; synchronous scheduling
  // wherever it is set.
  if (c.Chance(0.25)) {
    json sd = {{"num_speculative_tokens", c.Int(0, 6)}};
    if (c.Chance(0.6)) {
      const double edge = c.Pick<double>({0.0, 1.0});
      sd["acceptance_rate"] = c.Chance(0.3) ? edge : c.Uniform(0, 1);
    } else {
      sd["acceptance_beta"] = {{"a", c.LogUniform(0.2, 20)}, {"b", c.LogUniform(0.2, 20)}};
    }
    if (c.Chance(0.5)) sd["draft_cost_fraction"] = c.Uniform(0, 0.5);
    s["engine"]["speculative_decoding"] = sd;
    s["engine"]["async_scheduling"] = false;
    if (s.contains("disaggregation")) {
      for (const char* pool : {"prefill", "decode"}) {
        json& p = s["disaggregation"][pool];
        if (p.contains("engine") && p["engine"].contains("async_scheduling")) {
          p["engine"]["async_scheduling"] = false;
        }
      }
    }
  }
  // KV offload to CPU and swap preemption (drawn last, likewise; only
  // where the engine runs them: EngineRules). 0.02 GiB holds a block of
  // every model here over all its GPUs (at most 10.5 MB: llama-3.1-70b at
  // tp 4, bf16, block size 32), so tiers run from one block to thousands.
  const EngineFeatures with_tier{
      .speculative_decoding = s["engine"].contains("speculative_decoding"),
      .kv_offload = true,
      .swap_preemption = true,
      .disaggregation = s.contains("disaggregation"),
  };
  if (!Unsupported(with_tier) && c.Chance(0.3)) {
    json o = {{"cpu_gib", c.LogUniform(0.02, 8)}};
    if (c.Chance(0.5)) o["pcie_gb_per_s"] = c.LogUniform(1, 64);
    if (c.Chance(0.5)) o["latency_us"] = c.Uniform(0, 50);
    s["engine"]["kv_offload"] = o;
    if (c.Chance(0.6)) s["engine"]["preemption"] = "swap";
  }
  // The frontend in ~25% of cases (drawn last, likewise): any API-server
  // work and count, hop, output delay, turnaround, jitter and tokenizer
  // window, zero too.
  if (c.Chance(0.25)) {
    json f = {{"enabled", true}};
    if (c.Chance(0.5)) f["request_s"] = c.Chance(0.2) ? 0.0 : c.LogUniform(1e-5, 0.05);
    if (c.Chance(0.5)) f["prompt_token_s"] = c.Chance(0.2) ? 0.0 : c.LogUniform(1e-7, 1e-4);
    if (c.Chance(0.5)) f["work_cv"] = c.Uniform(0, 2);
    if (c.Chance(0.4)) f["api_servers"] = c.Int(0, 4);
    if (c.Chance(0.5)) f["engine_hop_s"] = c.Uniform(0, 0.005);
    if (c.Chance(0.5)) f["output_s"] = c.Uniform(0, 0.01);
    if (c.Chance(0.5)) f["client_turnaround_s"] = c.Uniform(0, 0.01);
    if (c.Chance(0.5)) f["client_jitter_s"] = c.Uniform(0, 0.05);
    if (c.Chance(0.5)) f["tokenizer_batch_wait_s"] = c.Chance(0.3) ? 0.0 : c.Uniform(0, 0.02);
    if (c.Chance(0.3)) f["tokenizer_max_batch"] = c.Int(1, 40);
    s["frontend"] = f;
  }
  // Expert parallelism for the MoE deployment in half its co-located
  // cases (drawn last, likewise): ep = tp (the experts over one replica's
  // GPUs) or 2 or 4 x tp over data-parallel replicas, cluster.replicas a
  // whole number of such groups.
  const std::string name = ModelName(s);
  if (name == "mixtral-8x7b" && !s.contains("disaggregation") && c.Chance(0.5)) {
    const int tp = s["hardware"]["tp"].get<int>();
    const int dp = c.Pick<int>({1, 2, 4});
    s["hardware"]["ep"] = tp * dp;
    if (dp > 1) {
      if (!s.contains("cluster")) s["cluster"] = {{"router", "round_robin"}};
      s["cluster"]["replicas"] = dp * c.Int(1, 2);
    }
  }
  // The architectures beyond GQA over the whole context in ~15% of cases
  // (drawn last, likewise): MLA with shared experts and dense first layers
  // (deepseek-v3, fp8 as published, on 8 H200s, its experts spread over
  // them or over 2 replicas' 16 GPUs), and sliding-window layers with
  // sinks and MXFP4 experts (gpt-oss-120b on one H100 or H200, or 2 H200s
  // with expert parallelism). A num_gpu_blocks drawn for the first model
  // is capped again for this one.
  if (c.Chance(0.15)) {
    const bool fp8 = s["model"].is_object();  // weight_dtype fp8 was drawn
    s["hardware"].erase("ep");
    if (c.Chance(0.5)) {
      s["model"] = "deepseek-v3";
      s["hardware"] = {{"gpu", "h200"}, {"tp", 8}};
      const int ep = c.Pick<int>({1, 8, 16});
      if (ep > 1 && !s.contains("disaggregation")) s["hardware"]["ep"] = ep;
      if (ep == 16 && !s.contains("disaggregation")) {
        if (!s.contains("cluster")) s["cluster"] = {{"router", "round_robin"}};
        s["cluster"]["replicas"] = 2 * c.Int(1, 2);
      }
    } else {
      s["model"] = fp8 ? json{{"name", "gpt-oss-120b"}, {"weight_dtype", "fp8"}}
                       : json("gpt-oss-120b");
      const int tp = c.Pick<int>({1, 2});
      s["hardware"] = {{"gpu", tp == 1 && c.Chance(0.5) ? "h100-sxm" : "h200"}, {"tp", tp}};
      if (tp == 2 && !s.contains("disaggregation") && c.Chance(0.5)) s["hardware"]["ep"] = 2;
    }
    // Their weights need the default 90% of memory (a lower share was
    // drawn for the first model).
    s["engine"].erase("gpu_memory_utilization");
    CapEveryEngine(&s);
  }
  // Pipeline parallelism in ~15% of the scenarios it runs (drawn last,
  // likewise): 2-4 stages of the drawn tp under a roofline (a linear model
  // prices whole steps), any engine settings EngineRules allows with it.
  const json& eng = s["engine"];
  const EngineFeatures as_pipeline{
      .speculative_decoding = eng.contains("speculative_decoding"),
      .kv_offload = eng.contains("kv_offload"),
      .swap_preemption = eng.value("preemption", "") == "swap",
      .pipeline_parallel = true,
  };
  // (Disaggregated pools are refused with stages by the scenario itself.)
  const bool pipelined =
      !s.contains("disaggregation") && !Unsupported(as_pipeline) && c.Chance(0.15);
  if (pipelined) {
    s["hardware"]["pp"] = c.Int(2, 4);
    if (c.Chance(0.5)) s["engine"]["pipeline_decode_balance"] = true;
    if (s["cost_model"].value("type", "") == "linear") s["cost_model"] = {{"type", "roofline"}};
  }
  // SGLang's engine in ~15% of the scenarios it runs (drawn last,
  // likewise; EngineRules says which).
  const json& wl2 = s["workload"];
  const bool mooncake = wl2.contains("trace") && wl2["trace"].value("format", "") == "mooncake";
  const EngineFeatures as_sglang{
      .disaggregation = s.contains("disaggregation"),
      .sglang = true,
      .hashed_trace = mooncake,
      .sliding_window = LoadModelSpec(ModelName(s)).WindowedKvBytesPerSeqPerGpu(
                            s["hardware"]["tp"].get<int>(), 16) > 0,
      .pipeline_parallel = pipelined,
  };
  if (c.Chance(0.15) && !Unsupported(as_sglang)) ToSglang(c, &s);
  CapTheDerivedCache(&s);
  return s;
}

}  // namespace servesim::fuzz
