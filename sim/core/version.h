// servesim's version: `servesim --version`, the Python package's
// __version__ (servesim._core) and pyproject.toml's version, which a test
// holds equal to this one.
#pragma once

namespace servesim {

inline constexpr char kVersion[] = "0.1.0";

}  // namespace servesim
