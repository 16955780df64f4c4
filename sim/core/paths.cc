// Data-path resolution (see paths.h).
#include "sim/core/paths.h"

#include <cstdlib>
#include <filesystem>

namespace servesim {

std::string RepoRoot() {
  if (const char* env = std::getenv("SERVESIM_ROOT"); env && *env) return env;
  return SERVESIM_SOURCE_DIR;
}

std::string ResolveDataPath(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute()) return path;
  std::error_code ec;
  if (fs::exists(path, ec)) return path;
  const fs::path rooted = fs::path(RepoRoot()) / path;
  if (fs::exists(rooted, ec)) return rooted.string();
  return path;
}

}  // namespace servesim
