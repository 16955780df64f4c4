// Price table loading (see prices.h).
#include "sim/analysis/prices.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/core/paths.h"
#include "sim/model/model_loader.h"

namespace servesim {

std::optional<double> PriceTable::Price(const std::string& gpu) const {
  auto it = usd_per_gpu_hour.find(gpu);
  if (it == usd_per_gpu_hour.end()) return std::nullopt;
  return it->second;
}

StatusOr<PriceTable> ParsePriceTable(const std::string& text,
                                     const std::string& label) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Error(label + ": invalid JSON: expected an object with "
                                 "\"usd_per_gpu_hour\"");
  }
  PriceTable t;
  t.file = label;
  for (auto [key, field] : {std::pair{"note", &t.note}, std::pair{"source", &t.source},
                            std::pair{"date", &t.date}}) {
    if (j.contains(key) && j[key].is_string()) *field = j[key].get<std::string>();
  }
  if (!j.contains("usd_per_gpu_hour") || !j["usd_per_gpu_hour"].is_object()) {
    return Status::Error(label + ": /usd_per_gpu_hour: expected an object of "
                                 "GPU name -> $ per GPU-hour");
  }
  for (auto it = j["usd_per_gpu_hour"].begin(); it != j["usd_per_gpu_hour"].end();
       ++it) {
    if (!it->is_number() || it->get<double>() <= 0) {
      return Status::Error(label + ": /usd_per_gpu_hour/" + it.key() +
                           ": expected a number > 0, got " + it->dump());
    }
    // Keyed by the shipped name, so "h100" prices h100-sxm; a name that
    // ships nothing (a GPU file of one's own) is kept as given.
    const std::string gpu = FindGpuName(it.key());
    const std::string key = gpu.empty() ? it.key() : gpu;
    if (!t.usd_per_gpu_hour.emplace(key, it->get<double>()).second) {
      return Status::Error(label + ": /usd_per_gpu_hour/" + it.key() +
                           ": expected one price per GPU, got a second for " + key);
    }
  }
  return t;
}

StatusOr<PriceTable> LoadPriceTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Error(path + ": cannot open the price table");
  std::ostringstream text;
  text << in.rdbuf();
  return ParsePriceTable(text.str(), path);
}

std::string DefaultPriceTablePath() {
  return ResolveDataPath("models/gpu_prices.json");
}

}  // namespace servesim
