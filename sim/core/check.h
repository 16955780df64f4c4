// SERVESIM_CHECK(condition, format, args...): an internal invariant of the
// engine. When it does not hold the program has a bug, not bad input (input
// errors exit 2 with a message naming the field): it prints
// "servesim: <message>" and aborts, so a test or fuzzer sees the crash.
#pragma once

namespace servesim {

[[noreturn]] void CheckFailed(const char* format, ...)
    __attribute__((format(printf, 1, 2)));

}  // namespace servesim

#define SERVESIM_CHECK(condition, ...)                         \
  do {                                                         \
    if (__builtin_expect(!(condition), 0)) {                   \
      ::servesim::CheckFailed(__VA_ARGS__);                    \
    }                                                          \
  } while (0)
