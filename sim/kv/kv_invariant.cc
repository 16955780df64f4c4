#include "sim/kv/kv_invariant.h"

#include <cstdio>
#include <cstdlib>

namespace servesim {

void KvInvariantBroken(const char* where, const char* what, long long a,
                       long long b) {
  std::fprintf(stderr, "servesim: %s invariant broken: %s (%lld, %lld)\n",
               where, what, a, b);
  std::abort();
}

void KvInvariantBroken(const char* where, const char* what, long long a) {
  std::fprintf(stderr, "servesim: %s invariant broken: %s (%lld)\n", where,
               what, a);
  std::abort();
}

}  // namespace servesim
