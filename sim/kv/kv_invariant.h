// One way for the KV structures (BlockPool, KvCache, CpuTier) to stop on a
// broken invariant: a bug in the simulator, never bad input, so it aborts
// with what broke and the values that show it.
#pragma once

namespace servesim {

// Prints "servesim: <where> invariant broken: <what> (a, b)" and aborts.
[[noreturn]] void KvInvariantBroken(const char* where, const char* what,
                                    long long a, long long b);
// ... with one value: "(a)".
[[noreturn]] void KvInvariantBroken(const char* where, const char* what,
                                    long long a);

}  // namespace servesim
