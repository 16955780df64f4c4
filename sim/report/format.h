// One number through a printf format ("%.2f"), for the console and HTML
// reports.
#pragma once

#include <cstdio>
#include <string>

namespace servesim {

inline std::string Fmt(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

}  // namespace servesim
