// Goodput as `vllm bench serve --goodput` defines it: a completed request is
// good when it meets every given SLO (TTFT, TPOT, E2E latency, in ms; a
// request meets one when its value is at most the limit), and
// request_goodput = good requests / the benchmark's duration. TPOT is
// (E2E - TTFT) / (output tokens - 1), and 0 for a one-token answer (vLLM
// counts such a request as meeting any TPOT SLO).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace servesim {

struct GoodputSlo {
  std::optional<double> ttft_ms, tpot_ms, e2el_ms;  // absent: not judged
  bool empty() const { return !ttft_ms && !tpot_ms && !e2el_ms; }
};

// TPOT of one request (ms), vLLM's: 0 when it produced at most one token.
double GoodputTpotMs(double ttft_ms, double e2el_ms, int64_t output_tokens);

// Whether one completed request meets every SLO of `slo`.
bool MeetsGoodput(const GoodputSlo& slo, double ttft_ms, double e2el_ms,
                  int64_t output_tokens);

// "TTFT <= 500 ms, TPOT <= 50 ms" (only the SLOs given).
std::string DescribeGoodput(const GoodputSlo& slo);

}  // namespace servesim
