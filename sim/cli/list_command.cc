// `servesim list models|gpus|profiles`: what ships, and for each model on
// each GPU the smallest tensor-parallel degree that fits and the KV cache it
// leaves, planned by the scenario loader itself (the embedded default
// scenario with the model, GPU and tp set), so the figures are the ones a
// run would use.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/core/paths.h"
#include "sim/model/model_loader.h"
#include "sim/report/format.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// The smallest tp of 1, 2, 4, 8 at which `model` fits `gpu` with room for
// KV blocks, and the KV tokens it leaves per replica: "tp2 1.23M"; "-"
// when none does (or no tp divides the model's heads).
std::string SmallestFit(const std::string& model, const std::string& gpu) {
  for (int tp : {1, 2, 4, 8}) {
    StatusOr<Scenario> sc = ParseScenario(
        EmbeddedDefaultScenario(), "<list>",
        {"model=" + model, "hardware.gpu=" + gpu, "hardware.tp=" + std::to_string(tp)},
        ScenarioParseOptions{.defer_fit = true});
    if (!sc.ok() || sc.value().no_room) continue;
    const Scenario& s = sc.value();
    const double tokens =
        static_cast<double>(s.engine.num_gpu_blocks) * s.engine.block_size;
    return "tp" + std::to_string(tp) + " " + Fmt("%.2fM", tokens / 1e6);
  }
  return "-";
}

void ListModels(std::ostream& os) {
  const std::vector<std::string> models = AvailableModels();
  const std::vector<std::string> gpus = AvailableGpus();
  // As wide as the longest name, so a long one does not run into its figures.
  size_t width = 16;
  for (const std::string& n : models) width = std::max(width, n.size() + 2);
  os << "models (models/llm; weights as published, bf16 KV cache; experts: routed per "
        "token/all; kv MLA: one latent cached; KV of full-attention layers, w/N: N "
        "layers windowed):\n  "
     << Pad("name", width) << Pad("params", 8) << Pad("layers", 8) << Pad("heads/kv", 10)
     << Pad("experts", 9) << Pad("weights", 15) << Pad("KV KiB/token", 14) << Pad("context", 9)
     << "Hugging Face id\n";
  for (const std::string& name : models) {
    const ModelSpec m = LoadModelSpec(name);
    const std::string experts =
        m.is_moe() ? std::to_string(m.experts_per_token) + "/" + std::to_string(m.num_experts)
                   : "-";
    const std::string kv = m.is_mla() ? "MLA" : std::to_string(m.num_kv_heads);
    const std::string weights =
        m.expert_weight_dtype.empty() ? m.weight_dtype : m.expert_weight_dtype + " experts";
    std::string kv_text = Fmt("%.1f", m.KvBytesPerTokenPerGpu(1) / 1024);
    if (m.has_sliding_window()) kv_text += " w/" + std::to_string(m.sliding_window_layers);
    os << "  " << Pad(name, width) << Pad(Fmt("%.1fB", m.ParamCount() / 1e9), 8)
       << Pad(std::to_string(m.num_layers), 8)
       << Pad(std::to_string(m.num_heads) + "/" + kv, 10) << Pad(experts, 9)
       << Pad(weights, 15) << Pad(kv_text, 14)
       << Pad(std::to_string(m.max_context), 9) << m.served_hf_id << "\n";
  }
  os << "\nsmallest tp (1, 2, 4, 8) that fits one GPU's memory, and the KV tokens "
        "left per replica (the default scenario's engine settings: vllm serve's "
        "batch limits for each GPU, gpu_memory_utilization 0.9):\n  " << Pad("", width);
  std::string header;
  for (const std::string& g : gpus) header += Pad(g, 14);
  os << header.substr(0, header.find_last_not_of(' ') + 1) << "\n";
  for (const std::string& name : models) {
    os << "  " << Pad(name, width);
    std::string row;
    for (const std::string& g : gpus) row += Pad(SmallestFit(name, g), 14);
    os << row.substr(0, row.find_last_not_of(' ') + 1) << "\n";
  }
}

void ListGpus(std::ostream& os) {
  os << "GPUs (models/gpu; dense tensor FLOP/s; interconnect per GPU, one direction):\n  "
     << Pad("name", 14) << Pad("memory", 10) << Pad("HBM TB/s", 10)
     << Pad("bf16 TFLOP/s", 14) << Pad("fp8 TFLOP/s", 13) << "interconnect\n";
  for (const std::string& name : AvailableGpus()) {
    const GpuSpec g = LoadGpuSpec(name);
    os << "  " << Pad(name, 14) << Pad(Fmt("%.0f GiB", g.memory_bytes / (1 << 30)), 10)
       << Pad(Fmt("%.2f", g.hbm_bytes_per_s / 1e12), 10)
       << Pad(Fmt("%.0f", g.bf16_flops / 1e12), 14)
       << Pad(g.fp8_flops > 0 ? Fmt("%.0f", g.fp8_flops / 1e12) : "-", 13)
       << g.interconnect_topology << " "
       << Fmt("%.0f GB/s", g.interconnect_bytes_per_s / 1e9) << "\n";
  }
  os << "aliases:";
  for (const auto& [alias, target] : GpuAliases()) os << " " << alias << " = " << target << ";";
  os << "\n";
}

void ListProfiles(std::ostream& os) {
  std::vector<std::string> names;
  const std::filesystem::path dir = RepoRoot() + "/models/profiles";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  os << "calibrated profiles (models/profiles; cost_model.type calibrated, "
        "cost_model.profile models/profiles/<name>.json; -fp8: fp8 weights and KV; "
        "-sglang: SGLang 0.5.14's kernels, the rest vLLM's):\n";
  for (const std::string& n : names) os << "  " << n << "\n";
  os << names.size() << " profiles\n";
}

}  // namespace

Command AddListCommand(CLI::App* app) {
  auto what = std::make_shared<std::string>();
  CLI::App* list = app->add_subcommand(
      "list", "What ships: models (with the tp that fits each GPU and the KV cache "
              "left), GPUs (with aliases) or calibrated profiles");
  list->add_option("what", *what, "models | gpus | profiles")
      ->required()
      ->check(CLI::IsMember({"models", "gpus", "profiles"}));
  return [list, what]() -> Status {
    if (!list->parsed()) return Status::Ok();
    if (*what == "models") ListModels(std::cout);
    if (*what == "gpus") ListGpus(std::cout);
    if (*what == "profiles") ListProfiles(std::cout);
    return Status::Ok();
  };
}

}  // namespace servesim
