// Loading of model and GPU specs from JSON files (see model_loader.h).
#include "sim/model/model_loader.h"

#include <algorithm>
#include <filesystem>
#include <limits>

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

// A file path as given (if it ends in .json), else the named file in `dir`;
// an unknown name lists what exists and suggests the nearest.
std::string Locate(const std::string& name_or_path, const std::string& dir,
                   const std::string& kind,
                   const std::vector<std::string>& available) {
  if (EndsWith(name_or_path, ".json")) return ResolveDataPath(name_or_path);
  const fs::path file = fs::path(RepoRoot()) / dir / (name_or_path + ".json");
  std::error_code ec;
  if (fs::exists(file, ec)) return file.string();
  std::string list;
  for (const auto& n : available) list += (list.empty() ? "" : ", ") + n;
  const std::string near = NearestName(name_or_path, available);
  throw ConfigError(dir + ": unknown " + kind + " \"" + name_or_path + "\"" +
                    (near.empty() ? "" : " (did you mean \"" + near + "\"?)") +
                    "; available: " + (list.empty() ? "none" : list));
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

}  // namespace

ModelSpec ParseModelSpec(const JsonView& v) {
  v.AllowKeys({"name", "source", "num_layers", "hidden_size", "num_heads",
               "num_kv_heads", "head_dim", "intermediate_size", "vocab_size",
               "num_experts", "experts_per_token", "tie_word_embeddings",
               "max_context", "dtype_bytes", "served_hf_id"});
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
  return m;
}

GpuSpec ParseGpuSpec(const JsonView& v) {
  v.AllowKeys({"name", "source", "memory_gib", "hbm_tb_per_s",
               "bf16_dense_tflops", "interconnect_gb_per_s",
               "interconnect_direction", "interconnect_topology",
               "pcie_gb_per_s", "fp8_dense_tflops"});
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
      Locate(name_or_path, "models/gpu", "GPU", AvailableGpus());
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

}  // namespace servesim
