// Where servesim finds its data (models/, scenarios/) and the shared traces.
#pragma once

#include <string>

namespace servesim {

// The repository root: $SERVESIM_ROOT if set, else the source directory the
// binary was built from.
std::string RepoRoot();
// Resolves a relative path: as given if it exists from the working
// directory, else relative to RepoRoot(). Absolute paths are returned as is.
std::string ResolveDataPath(const std::string& path);

}  // namespace servesim
