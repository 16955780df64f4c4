// The failure path of SERVESIM_CHECK (check.h).
#include "sim/core/check.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "sim/core/temp_files.h"

namespace servesim {

void CheckFailed(const char* format, ...) {
  std::fputs("servesim: ", stderr);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  RemoveTempFiles();  // a half-written output must not outlive the run
  std::abort();
}

}  // namespace servesim
