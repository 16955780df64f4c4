// GPU names against measured-table folders (see data_folders.h).
#include "calibrate/data_folders.h"

#include <filesystem>
#include <stdexcept>
#include <utility>

#include "calibrate/data_manifest.h"

namespace servesim::calibrate {
namespace {

// models/gpu name -> the data's directory.
const std::vector<std::pair<std::string, std::string>>& GpuDirs() {
  static const std::vector<std::pair<std::string, std::string>> dirs = {
      {"h100-sxm", "h100_sxm"}, {"h200", "h200_sxm"},
      {"b200", "b200_sxm"},     {"a100-80gb", "a100_sxm"},
      {"l40s", "l40s"},         {"rtx-pro-6000", "rtx_pro_6000_server"}};
  return dirs;
}

bool ListsGpu(const nlohmann::json& manifest, const std::string& gpu_dir) {
  for (const nlohmann::json& e : manifest) {
    if (e.value("gpu", "") == gpu_dir) return true;
  }
  return false;
}

}  // namespace

std::string DataGpuDir(const std::string& gpu) {
  std::string known;
  for (const auto& [name, dir] : GpuDirs()) {
    if (name == gpu) return dir;
    known += (known.empty() ? "" : ", ") + name;
  }
  throw std::runtime_error("no measured tables for GPU " + gpu + " (" + known +
                           ")");
}

const std::vector<std::string>& EngineDataFolders(const std::string& engine) {
  static const std::vector<std::string> vllm = {
      "aiconfigurator-vllm-0.24.0", "aiconfigurator-vllm-more-gpus"};
  static const std::vector<std::string> sglang = {"aiconfigurator-sglang"};
  if (engine == "vllm") return vllm;
  if (engine == "sglang") return sglang;
  throw std::runtime_error("engine \"" + engine + "\": expected vllm or sglang");
}

std::string FindDataDir(const std::string& root, const std::string& gpu,
                        const std::string& gpu_dir0,
                        const std::string& engine) {
  const std::string gpu_dir = gpu_dir0.empty() ? DataGpuDir(gpu) : gpu_dir0;
  std::string searched;
  for (const std::string& f : EngineDataFolders(engine)) {
    const std::string dir = root + "/" + f;
    searched += (searched.empty() ? "" : ", ") + f;
    if (!std::filesystem::exists(dir + "/manifest.json")) continue;
    if (ListsGpu(ReadManifest(dir), gpu_dir)) return dir;
  }
  throw std::runtime_error(root + ": no manifest.json lists " + gpu_dir +
                           " (GPU " + gpu + "); searched " + searched);
}

}  // namespace servesim::calibrate
