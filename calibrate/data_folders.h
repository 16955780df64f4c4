// Which measured-table folder holds a GPU's tables: servesim's GPU names
// (models/gpu/) against the data's directory names, and the folders under
// ../shared/calibration-data/ that hold each engine's kernel tables.
#pragma once

#include <string>
#include <vector>

namespace servesim::calibrate {

// The data's directory of a models/gpu name (h200 -> h200_sxm,
// rtx-pro-6000 -> rtx_pro_6000_server); throws naming the GPUs it knows.
std::string DataGpuDir(const std::string& gpu);

// The table folders of an engine ("vllm", "sglang") under the
// calibration-data root, searched in this order (vLLM:
// aiconfigurator-vllm-0.24.0 first: H100-SXM, H200, B200; SGLang:
// aiconfigurator-sglang); throws on another engine.
const std::vector<std::string>& EngineDataFolders(const std::string& engine);

// <root>/<folder> of the first EngineDataFolders(engine) entry whose
// manifest.json lists the GPU's data directory (gpu_dir: another of its
// directories, e.g. one vLLM version's tables); throws naming the folders
// searched.
std::string FindDataDir(const std::string& root, const std::string& gpu,
                        const std::string& gpu_dir = "",
                        const std::string& engine = "vllm");

}  // namespace servesim::calibrate
