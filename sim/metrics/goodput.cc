// Goodput as vllm bench serve defines it (see goodput.h).
#include "sim/metrics/goodput.h"

#include <cstdio>

namespace servesim {

double GoodputTpotMs(double ttft_ms, double e2el_ms, int64_t output_tokens) {
  if (output_tokens <= 1) return 0;
  return (e2el_ms - ttft_ms) / static_cast<double>(output_tokens - 1);
}

bool MeetsGoodput(const GoodputSlo& slo, double ttft_ms, double e2el_ms,
                  int64_t output_tokens) {
  // vLLM: good when slo >= value for every SLO given (a limit is inclusive).
  if (slo.ttft_ms && !(ttft_ms <= *slo.ttft_ms)) return false;
  if (slo.e2el_ms && !(e2el_ms <= *slo.e2el_ms)) return false;
  if (slo.tpot_ms && !(GoodputTpotMs(ttft_ms, e2el_ms, output_tokens) <= *slo.tpot_ms)) {
    return false;
  }
  return true;
}

std::string DescribeGoodput(const GoodputSlo& slo) {
  std::string out;
  auto add = [&](const char* name, const std::optional<double>& v) {
    if (!v) return;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s <= %g ms", name, *v);
    out += (out.empty() ? "" : ", ") + std::string(buf);
  };
  add("TTFT", slo.ttft_ms);
  add("TPOT", slo.tpot_ms);
  add("E2E", slo.e2el_ms);
  return out;
}

}  // namespace servesim
