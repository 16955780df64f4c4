// $/GPU-hour table for the capacity planner's cost column
// (models/gpu_prices.json, or --prices FILE):
//   {"note": str, "source": str, "date": str,
//    "usd_per_gpu_hour": {"<gpu name>": number > 0, ...}}
#pragma once

#include <map>
#include <optional>
#include <string>

#include "sim/core/status.h"

namespace servesim {

struct PriceTable {
  std::string file, note, source, date;
  std::map<std::string, double> usd_per_gpu_hour;

  std::optional<double> Price(const std::string& gpu) const;
};

// Errors name the file and the JSON path: unreadable file, invalid JSON,
// missing or non-object usd_per_gpu_hour, a price that is not a number > 0.
StatusOr<PriceTable> ParsePriceTable(const std::string& text,
                                     const std::string& label);
StatusOr<PriceTable> LoadPriceTable(const std::string& path);
// models/gpu_prices.json in the repository.
std::string DefaultPriceTablePath();

}  // namespace servesim
