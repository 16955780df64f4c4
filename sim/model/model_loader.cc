// Loading of model and GPU specs from JSON files (see model_loader.h).
#include "sim/model/model_loader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <regex>

#include "sim/core/paths.h"
#include "sim/core/status.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Stems of the *.json files in RepoRoot()/<dir>, sorted.
std::vector<std::string> JsonStems(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(RepoRoot()) / dir, ec)) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Other names users type for a shipped GPU, in lower case. An alias whose
// GPU does not ship is left out (GpuAliases), never resolved to nothing.
constexpr std::pair<const char*, const char*> kGpuAliases[] = {
    {"a100", "a100-80gb"}, {"a100-sxm", "a100-80gb"}, {"a100-40g", "a100-40gb"},
    {"h100", "h100-sxm"},
    {"h100-sxm5", "h100-sxm"}, {"h200-sxm", "h200"},
    {"rtxpro6000", "rtx-pro-6000"}, {"rtx-pro-6000-server", "rtx-pro-6000"},
    {"rtx-6000-pro", "rtx-pro-6000"}, {"rtx4090", "rtx-4090"},
    {"4090", "rtx-4090"}};

// "H100_SXM" -> "h100-sxm": the spelling the shipped names use.
std::string Normalized(const std::string& name) {
  std::string n = name;
  for (char& c : n) {
    c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return n;
}

bool Contains(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

std::string FindName(const std::string& name, const std::vector<std::string>& available,
                     const std::vector<std::pair<std::string, std::string>>& aliases) {
  if (EndsWith(name, ".json")) return name;
  if (Contains(available, name)) return name;
  const std::string n = Normalized(name);
  if (Contains(available, n)) return n;
  for (const auto& [alias, target] : aliases) {
    if (alias == n) return target;
  }
  return "";
}

size_t CommonPrefix(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

// The shipped names a mistyped one most likely meant (see UnknownGpuText).
std::vector<std::string> Suggestions(
    const std::string& name, const std::vector<std::string>& available,
    const std::vector<std::pair<std::string, std::string>>& aliases) {
  const std::string n = Normalized(name);
  std::vector<std::pair<std::string, std::string>> all;  // spelling, name
  for (const std::string& a : available) all.emplace_back(a, a);
  all.insert(all.end(), aliases.begin(), aliases.end());
  std::vector<std::string> spellings;
  for (const auto& [spelling, target] : all) spellings.push_back(spelling);
  const std::string near = NearestName(n, spellings);
  std::vector<std::string> out;
  if (!near.empty()) {
    for (const auto& [spelling, target] : all) {
      if (spelling == near) return {target};
    }
  }
  size_t best = 3;  // shorter shared prefixes ("h1") say little
  for (const auto& [spelling, target] : all) best = std::max(best, CommonPrefix(n, spelling));
  for (const auto& [spelling, target] : all) {
    if (CommonPrefix(n, spelling) == best && !Contains(out, target)) out.push_back(target);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string UnknownText(const std::string& name, const std::string& kind,
                        const std::vector<std::string>& available,
                        const std::vector<std::pair<std::string, std::string>>& aliases) {
  std::string text = "unknown " + kind + " \"" + name + "\"";
  const std::vector<std::string> near = Suggestions(name, available, aliases);
  for (size_t i = 0; i < near.size(); ++i) {
    text += (i == 0 ? " (did you mean \"" : i + 1 < near.size() ? ", \"" : " or \"") +
            near[i] + "\"";
  }
  if (!near.empty()) text += "?)";
  std::string list;
  for (const auto& n : available) list += (list.empty() ? "" : ", ") + n;
  text += "; available: " + (list.empty() ? std::string("none") : list);
  // Grouped by the GPU they name: "a100, a100-sxm = a100-80gb; h100 = ...".
  std::string also;
  for (const std::string& target : available) {
    std::string names;
    for (const auto& [alias, to] : aliases) {
      if (to == target) names += (names.empty() ? "" : ", ") + alias;
    }
    if (!names.empty()) also += (also.empty() ? "" : "; ") + names + " = " + target;
  }
  return also.empty() ? text : text + "; aliases: " + also;
}

// A file path as given (if it ends in .json), else the named file in `dir`
// (under an alias or in other case too); an unknown name lists what exists
// and suggests the nearest.
std::string Locate(const std::string& name_or_path, const std::string& dir,
                   const std::string& kind, const std::vector<std::string>& available,
                   const std::vector<std::pair<std::string, std::string>>& aliases = {}) {
  if (EndsWith(name_or_path, ".json")) return ResolveDataPath(name_or_path);
  const std::string name = FindName(name_or_path, available, aliases);
  if (name.empty()) {
    throw ConfigError(dir + ": " + UnknownText(name_or_path, kind, available, aliases));
  }
  return (fs::path(RepoRoot()) / dir / (name + ".json")).string();
}

// The Hugging Face repository named in a source URL
// ("https://huggingface.co/<org>/<name>/..."), or "".
std::string HfRepoOf(const std::string& source) {
  const std::string key = "huggingface.co/";
  const size_t at = source.find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size();
  const size_t slash = source.find('/', from);
  if (slash == std::string::npos) return "";
  const size_t end = source.find_first_of("/ ),", slash + 1);
  return source.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

int PositiveInt(const JsonView& v, std::string_view key) {
  return static_cast<int>(v.RequireInteger(
      key, Range::Closed(1, std::numeric_limits<int32_t>::max())));
}

// Optional (default 0) in [lo, hi]; required when lo > 0.
int IntIn(const JsonView& v, std::string_view key, int64_t lo, int64_t hi) {
  const Range r = Range::Closed(static_cast<double>(lo), static_cast<double>(hi));
  return static_cast<int>(lo > 0 ? v.RequireInteger(key, r) : v.Integer(key, 0, r));
}

// The keys of DeepSeek-style MoE, MLA, sliding windows and quantized
// experts (all optional; absent is the plain decoder).
void ParseArchitectureKeys(const JsonView& v, ModelSpec* m) {
  const int layers = m->num_layers;
  m->SetWeightDtype(v.Choice("weight_dtype", "bf16", {"bf16", "fp8"}));
  if (v.Has("expert_weight_dtype")) {
    m->expert_weight_dtype = v.Choice("expert_weight_dtype", "mxfp4", {"mxfp4"});
  }
  const int moe_max = m->is_moe() ? 4096 : 0;
  m->shared_experts = IntIn(v, "shared_experts", 0, moe_max);
  m->dense_layers = IntIn(v, "dense_layers", 0, m->is_moe() ? layers - 1 : 0);
  m->dense_intermediate_size =
      IntIn(v, "dense_intermediate_size", m->dense_layers > 0 ? 1 : 0,
            m->dense_layers > 0 ? std::numeric_limits<int32_t>::max() : 0);
  if (!m->expert_weight_dtype.empty() && !m->is_moe()) {
    v.Fail("expert_weight_dtype", "\"\" for a model without experts");
  }
  m->kv_lora_rank = IntIn(v, "kv_lora_rank", 0, 65536);
  const bool mla = m->kv_lora_rank > 0;
  m->q_lora_rank = IntIn(v, "q_lora_rank", 0, mla ? 65536 : 0);
  m->qk_rope_head_dim = IntIn(v, "qk_rope_head_dim", mla ? 1 : 0, mla ? m->head_dim - 1 : 0);
  m->v_head_dim = IntIn(v, "v_head_dim", mla ? 1 : 0, mla ? 65536 : 0);
  m->sliding_window_layers = IntIn(v, "sliding_window_layers", 0, layers - 1);
  const bool windowed = m->sliding_window_layers > 0;
  m->sliding_window = IntIn(v, "sliding_window", windowed ? 1 : 0,
                            windowed ? std::numeric_limits<int32_t>::max() : 0);
  m->attention_sinks = v.Bool("attention_sinks", false);
}

}  // namespace

ModelSpec ParseModelSpec(const JsonView& v) {
  v.AllowKeys({"name", "source", "num_layers", "hidden_size", "num_heads",
               "num_kv_heads", "head_dim", "intermediate_size", "vocab_size",
               "num_experts", "experts_per_token", "tie_word_embeddings",
               "max_context", "dtype_bytes", "served_hf_id", "weight_dtype",
               "expert_weight_dtype", "shared_experts", "dense_layers",
               "dense_intermediate_size", "q_lora_rank", "kv_lora_rank",
               "qk_rope_head_dim", "v_head_dim", "sliding_window",
               "sliding_window_layers", "attention_sinks"});
  ModelSpec m;
  m.name = v.RequireString("name");
  m.source = v.RequireString("source");
  const std::string repo = HfRepoOf(m.source);
  m.served_hf_id = v.String("served_hf_id", repo.empty() ? m.name : repo);
  if (m.served_hf_id.empty()) v.Fail("served_hf_id", "a Hugging Face model id");
  m.num_layers = PositiveInt(v, "num_layers");
  m.hidden_size = PositiveInt(v, "hidden_size");
  m.num_heads = PositiveInt(v, "num_heads");
  m.num_kv_heads = PositiveInt(v, "num_kv_heads");
  m.head_dim = PositiveInt(v, "head_dim");
  m.intermediate_size = PositiveInt(v, "intermediate_size");
  m.vocab_size = PositiveInt(v, "vocab_size");
  m.max_context = PositiveInt(v, "max_context");
  m.num_experts =
      static_cast<int>(v.Integer("num_experts", 1, Range::Closed(1, 4096)));
  m.experts_per_token = static_cast<int>(
      v.Integer("experts_per_token", 1, Range::Closed(1, 4096)));
  m.tie_word_embeddings = v.Bool("tie_word_embeddings", false);
  m.dtype_bytes =
      static_cast<int>(v.Integer("dtype_bytes", 2, Range::Closed(1, 8)));
  m.weight_bytes = m.kv_bytes = m.dtype_bytes;
  // Grouped-query attention shares each KV head among num_heads/num_kv_heads
  // query heads, so the ratio must be whole.
  if (m.num_heads % m.num_kv_heads != 0) {
    v.FailMessage("num_heads", "expected a multiple of num_kv_heads (" +
                                   std::to_string(m.num_kv_heads) + "), got " +
                                   std::to_string(m.num_heads));
  }
  if (m.experts_per_token > m.num_experts) {
    v.FailMessage("experts_per_token", "expected at most num_experts (" +
                                           std::to_string(m.num_experts) +
                                           "), got " +
                                           std::to_string(m.experts_per_token));
  }
  ParseArchitectureKeys(v, &m);
  return m;
}

GpuSpec ParseGpuSpec(const JsonView& v) {
  v.AllowKeys({"name", "source", "memory_gib", "hbm_tb_per_s",
               "bf16_dense_tflops", "interconnect_gb_per_s",
               "interconnect_direction", "interconnect_topology",
               "pcie_gb_per_s", "fp8_dense_tflops", "roofline_fit",
               "compute_capability"});
  GpuSpec g;
  g.name = v.RequireString("name");
  g.source = v.RequireString("source");
  // Capacity in binary GiB (datasheet "GB" of HBM is binary); rates decimal.
  // Each is bounded to what a GPU could plausibly have, a few orders of
  // magnitude either side of today's: 1e308 made every step free and the KV
  // block count overflow, 1e-308 made steps last past int64 nanoseconds.
  g.memory_bytes =
      v.RequireNumber("memory_gib", Range::Closed(1, 1e5)) * 1073741824.0;
  g.hbm_bytes_per_s =
      v.RequireNumber("hbm_tb_per_s", Range::Closed(0.01, 1e3)) * 1e12;
  g.bf16_flops =
      v.RequireNumber("bf16_dense_tflops", Range::Closed(0.1, 1e6)) * 1e12;
  // Optional: absent on GPUs without fp8 tensor cores.
  g.fp8_flops = v.Number("fp8_dense_tflops", 0, Range::Closed(0, 1e6)) * 1e12;
  const double link =
      v.RequireNumber("interconnect_gb_per_s", Range::Closed(0.1, 1e6)) * 1e9;
  // Datasheets quote NVLink as the sum of both directions; the cost model
  // needs what one GPU can send while it receives the same.
  const std::string dir = v.Choice("interconnect_direction", "",
                                   {"bidirectional_total", "per_direction"});
  g.interconnect_bytes_per_s = dir == "bidirectional_total" ? link / 2 : link;
  // Optional (older files have neither): an NVSwitch board, PCIe Gen4 x16.
  g.interconnect_topology =
      v.Choice("interconnect_topology", "nvswitch",
               {"nvswitch", "nvlink_pairs", "pcie"});
  g.pcie_bytes_per_s =
      v.Number("pcie_gb_per_s", 32, Range::Closed(0.1, 1e6)) * 1e9;
  // Optional (older files): Hopper's, the roofline's first fit.
  g.roofline_fit =
      v.Choice("roofline_fit", "hopper", {"ampere", "ada", "hopper", "blackwell", "blackwell-rtx"});
  // Optional: "major.minor".
  g.compute_capability = v.String("compute_capability", "");
  if (!g.compute_capability.empty() &&
      !std::regex_match(g.compute_capability, std::regex("[0-9]+\\.[0-9]+"))) {
    v.Fail("compute_capability", "a compute capability \"major.minor\", such as \"9.0\"");
  }
  return g;
}

ModelSpec LoadModelSpec(const std::string& name_or_path) {
  const std::string path =
      Locate(name_or_path, "models/llm", "model", AvailableModels());
  const nlohmann::json j = ReadJsonFile(path, "model file");
  return ParseModelSpec(JsonView(j, path));
}

GpuSpec LoadGpuSpec(const std::string& name_or_path) {
  const std::string path =
      Locate(name_or_path, "models/gpu", "GPU", AvailableGpus(), GpuAliases());
  const nlohmann::json j = ReadJsonFile(path, "GPU file");
  return ParseGpuSpec(JsonView(j, path));
}

LinkSpec ParseLinkSpec(const JsonView& v) {
  v.AllowKeys({"name", "source", "gb_per_s", "latency_us"});
  LinkSpec l;
  l.name = v.RequireString("name");
  l.source = v.RequireString("source");
  // Bounded a few orders of magnitude either side of today's links, so a
  // transfer's time stays far inside int64 nanoseconds.
  l.bytes_per_s = v.RequireNumber("gb_per_s", Range::Closed(0.01, 1e6)) * 1e9;
  l.latency_s = v.RequireNumber("latency_us", Range::Closed(0, 1e7)) * 1e-6;
  return l;
}

LinkSpec LoadLinkSpec(const std::string& name_or_path) {
  const std::string path =
      Locate(name_or_path, "models/links", "link", AvailableLinks());
  const nlohmann::json j = ReadJsonFile(path, "link file");
  return ParseLinkSpec(JsonView(j, path));
}

std::vector<std::string> AvailableModels() { return JsonStems("models/llm"); }
std::vector<std::string> AvailableGpus() { return JsonStems("models/gpu"); }
std::vector<std::string> AvailableLinks() { return JsonStems("models/links"); }

std::vector<std::pair<std::string, std::string>> GpuAliases() {
  const std::vector<std::string> gpus = AvailableGpus();
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [alias, target] : kGpuAliases) {
    if (Contains(gpus, target) && !Contains(gpus, alias)) out.emplace_back(alias, target);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string FindGpuName(const std::string& name_or_path) {
  return FindName(name_or_path, AvailableGpus(), GpuAliases());
}

// A shipped model's Hugging Face ids, lower case: the one vLLM serves
// (served_hf_id) and the repository its config.json came from (its source
// link, huggingface.co/<org>/<repo>/...). Read only when a name is not a
// shipped file's.
static std::vector<std::pair<std::string, std::string>> ModelAliases() {
  std::vector<std::pair<std::string, std::string>> aliases;
  for (const std::string& name : AvailableModels()) {
    const ModelSpec m = LoadModelSpec(name);
    auto add = [&](const std::string& id) {
      const std::string a = Normalized(id);
      if (a.empty() || a == name) return;
      for (const auto& [alias, target] : aliases) {
        if (alias == a) return;
      }
      aliases.emplace_back(a, name);
    };
    add(m.served_hf_id);
    const std::string host = "huggingface.co/";
    if (const size_t at = m.source.find(host); at != std::string::npos) {
      const size_t org = at + host.size();
      const size_t slash = m.source.find('/', org);
      const size_t end = slash == std::string::npos ? slash : m.source.find('/', slash + 1);
      if (slash != std::string::npos) add(m.source.substr(org, end - org));
    }
  }
  std::sort(aliases.begin(), aliases.end());
  return aliases;
}

std::string FindModelName(const std::string& name_or_path) {
  const std::string shipped = FindName(name_or_path, AvailableModels(), {});
  if (!shipped.empty() || name_or_path.find('/') == std::string::npos) return shipped;
  return FindName(name_or_path, AvailableModels(), ModelAliases());
}

std::string UnknownGpuText(const std::string& name) {
  return UnknownText(name, "GPU", AvailableGpus(), GpuAliases());
}

std::string UnknownModelText(const std::string& name) {
  return UnknownText(name, "model", AvailableModels(), ModelAliases());
}

}  // namespace servesim
