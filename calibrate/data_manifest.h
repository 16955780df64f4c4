// What a measured-table folder's manifest.json says about its tables
// (../shared/calibration-data/aiconfigurator-vllm-*/manifest.json: one
// entry per converted table, keyed by "gpu" (the data's directory, e.g.
// a100_sxm) and "table" (gemm, context_attention, ...)).
//
// The conversion dropped every column that held one value in a whole table
// and listed it under "constant_columns"; readers look a missing column up
// there (A100's gemm.csv has no gemm_dtype: all bfloat16).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace servesim::calibrate {

// <data_dir>/manifest.json; throws std::runtime_error naming the file when
// it is missing or not JSON.
nlohmann::json ReadManifest(const std::string& data_dir);

// The manifest entry of `table` for `gpu_dir`; nullptr when none.
const nlohmann::json* ManifestEntry(const nlohmann::json& manifest,
                                    const std::string& gpu_dir,
                                    const std::string& table);

// Constant columns of <gpu_dir>/<table>.csv from the manifest of the folder
// holding gpu_dir (.../<data>/<gpu>); empty when that folder has no
// manifest.json (a hand-made table must then carry every column).
std::map<std::string, std::string> ConstantColumns(const std::string& gpu_dir,
                                                   const std::string& table);

// The engine version a table was measured with: the entry's
// "framework_version", else its constant "version" column (the vLLM
// 0.24.0 folder's manifest has no framework_version); "" when neither.
std::string TableVersion(const nlohmann::json& manifest,
                         const std::string& gpu_dir, const std::string& table);

// The device string (constant column "device") of gpu_dir's tables; ""
// when none names one.
std::string TableDevice(const nlohmann::json& manifest,
                        const std::string& gpu_dir);

}  // namespace servesim::calibrate
