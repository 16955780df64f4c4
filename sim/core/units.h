// Binary memory units, and bytes written as GiB for messages.
#pragma once

#include <cstdio>
#include <string>

namespace servesim {

inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * kMiB;

// "12.3 GiB"
inline std::string FormatGib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / kGiB);
  return buf;
}

}  // namespace servesim
