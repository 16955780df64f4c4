// The failure path of SERVESIM_CHECK (check.h).
#include "sim/core/check.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace servesim {

void CheckFailed(const char* format, ...) {
  std::fputs("servesim: ", stderr);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::abort();
}

}  // namespace servesim
