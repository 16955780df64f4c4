// The golden-trace fixtures of a conformance test: the *.json files of one
// folder, by name (sorted, without the extension), and one read whole.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

inline std::vector<std::string> FixtureNamesIn(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline nlohmann::json LoadFixture(const std::string& dir, const std::string& name) {
  std::ifstream in(dir + "/" + name + ".json");
  return nlohmann::json::parse(in);
}

}  // namespace servesim
