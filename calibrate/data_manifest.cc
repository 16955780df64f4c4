// Reading a measured-table folder's manifest.json (see data_manifest.h).
#include "calibrate/data_manifest.h"

#include <filesystem>
#include <stdexcept>

#include "sim/core/paths.h"

namespace servesim::calibrate {
namespace {

namespace fs = std::filesystem;

// "a/b/" and "a/b" alike: the directory itself.
fs::path Dir(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p;
}

std::string Text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

nlohmann::json ReadManifest(const std::string& data_dir) {
  const std::string path = (Dir(data_dir) / "manifest.json").string();
  try {
    nlohmann::json m = nlohmann::json::parse(
        ReadInputFile(path, "data manifest", uintmax_t{16} << 20));
    if (!m.is_array()) {
      throw std::runtime_error(path + ": expected a JSON array of tables");
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

const nlohmann::json* ManifestEntry(const nlohmann::json& manifest,
                                    const std::string& gpu_dir,
                                    const std::string& table) {
  for (const nlohmann::json& e : manifest) {
    if (e.value("gpu", "") == gpu_dir && e.value("table", "") == table) {
      return &e;
    }
  }
  return nullptr;
}

std::map<std::string, std::string> ConstantColumns(const std::string& gpu_dir,
                                                   const std::string& table) {
  const fs::path dir = Dir(gpu_dir);
  std::map<std::string, std::string> out;
  if (!fs::exists(dir.parent_path() / "manifest.json")) return out;
  const nlohmann::json m = ReadManifest(dir.parent_path().string());
  const nlohmann::json* e = ManifestEntry(m, dir.filename().string(), table);
  if (e == nullptr || !e->contains("constant_columns")) return out;
  for (const auto& [k, v] : (*e)["constant_columns"].items()) out[k] = Text(v);
  return out;
}

std::string TableVersion(const nlohmann::json& manifest,
                         const std::string& gpu_dir, const std::string& table) {
  const nlohmann::json* e = ManifestEntry(manifest, gpu_dir, table);
  if (e == nullptr) return "";
  if (e->contains("framework_version")) return Text((*e)["framework_version"]);
  if (e->contains("constant_columns") &&
      (*e)["constant_columns"].contains("version")) {
    return Text((*e)["constant_columns"]["version"]);
  }
  return "";
}

std::string TableDevice(const nlohmann::json& manifest,
                        const std::string& gpu_dir) {
  std::string device;
  for (const nlohmann::json& e : manifest) {
    if (e.value("gpu", "") != gpu_dir || !e.contains("constant_columns")) {
      continue;
    }
    device = e["constant_columns"].value("device", device);
  }
  return device;
}

}  // namespace servesim::calibrate
