// Disaggregated runs' report (see disagg_report.h).
#include "sim/report/disagg_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/core/check.h"

#include "sim/report/format.h"
#include "sim/report/writers.h"

namespace servesim {
namespace {

double ToMs(SimTime t) { return static_cast<double>(t) * 1e-6; }

double PoolBusy(const SimulationOutput& out, size_t first, size_t count) {
  if (count == 0 || out.end_time <= 0) return 0;
  double busy = 0;
  for (size_t k = first; k < first + count && k < out.replicas.size(); ++k) {
    busy += out.replicas[k].busy_in_run_s;
  }
  return busy / (static_cast<double>(count) * ToSeconds(out.end_time));
}

std::string Row(const char* name, const SampleStats& st) {
  std::string s = std::string("    ") + name;
  s.resize(std::max<size_t>(s.size(), 38), ' ');
  s += "mean " + Fmt("%.2f", st.mean) + ", median " + Fmt("%.2f", st.median);
  for (const auto& [p, v] : st.percentiles) {
    if (p == 99) s += ", p99 " + Fmt("%.2f", v);
  }
  return s + "\n";
}

nlohmann::json Stats(const SampleStats& st) {
  nlohmann::json j = {{"count", st.count}, {"mean", st.mean}, {"median", st.median},
                      {"max", st.max}};
  for (const auto& [p, v] : st.percentiles) j["p" + PercentileName(p)] = v;
  return j;
}

nlohmann::json PoolJson(const PoolSpec& p, double busy) {
  return {{"gpu", p.gpu.name},
          {"tp", p.tp},
          {"replicas", p.replicas},
          {"router", p.router.name},
          {"num_gpu_blocks", p.engine.num_gpu_blocks},
          {"max_num_seqs", p.engine.max_num_seqs},
          {"max_num_batched_tokens", p.engine.max_num_batched_tokens},
          {"busy_fraction", busy}};
}

}  // namespace

void DisaggDigest::Add(const Request& r, const DisaggRequest& t) {
  if (!r.measured || r.status != RequestStatus::kFinished) return;
  const SimTime ttft = r.first_token - r.send;
  const SimTime moved = t.transfer_end - t.prefill_end;
  const SimTime prefill = t.prefill_end - r.send, wait = t.transfer_start - t.prefill_end;
  const SimTime decode = r.first_scheduled - t.transfer_end;
  SERVESIM_CHECK(prefill >= 0 && wait >= 0 && moved >= wait && decode >= 0 && ttft >= 0,
                 "request %lld's disaggregated path runs backwards",
                 static_cast<long long>(r.id));
  prefill_.Add(prefill);
  transfer_.Add(moved);
  wait_.Add(wait);
  decode_.Add(decode);
  share_.Add(ttft > 0 ? std::llround(1e9 * static_cast<double>(moved) / static_cast<double>(ttft))
                      : 0);
  ttft_sum_ += ToMs(ttft);
  transfer_sum_ += ToMs(moved);
}

DisaggDigest DisaggDigest::FromOutput(const SimulationOutput& out) {
  DisaggDigest d;
  if (!out.disagg) return d;
  for (size_t i = 0; i < out.requests.size(); ++i) d.Add(out.requests[i], out.disagg->requests[i]);
  return d;
}

DisaggSummary SummarizeDisagg(const SimulationOutput& out, const SimulationInput& in,
                              DisaggDigest digest,
                              const std::vector<double>& percentiles) {
  DisaggSummary d;
  if (!out.disagg || !in.disagg) return d;
  const DisaggOutput& o = *out.disagg;
  d.prefill_replicas = in.disagg->prefill.num_replicas;
  d.decode_replicas = in.disagg->decode.num_replicas;
  d.prefill_busy = PoolBusy(out, 0, d.prefill_replicas);
  d.decode_busy = PoolBusy(out, d.prefill_replicas, d.decode_replicas);
  if (out.end_time > 0 && !o.link_busy_in_run.empty()) {
    SimTime sum = 0;
    for (SimTime b : o.link_busy_in_run) sum += b;
    d.link_busy = static_cast<double>(sum) / (static_cast<double>(o.link_busy_in_run.size()) *
                                              static_cast<double>(out.end_time));
  }
  d.transfers = o.transfers;
  d.bytes_moved = o.bytes_moved;
  if (digest.ttft_sum_ > 0) d.transfer_share_of_mean_ttft = digest.transfer_sum_ / digest.ttft_sum_;
  d.prefill_ms = SummarizeHistogram(digest.prefill_, percentiles, 1e-6);
  d.transfer_ms = SummarizeHistogram(digest.transfer_, percentiles, 1e-6);
  d.link_wait_ms = SummarizeHistogram(digest.wait_, percentiles, 1e-6);
  d.decode_wait_ms = SummarizeHistogram(digest.decode_, percentiles, 1e-6);
  d.transfer_share = SummarizeHistogram(digest.share_, percentiles, 1e-9);
  return d;
}

void WriteDisaggReport(const Scenario& sc, const DisaggSummary& d, std::ostream& os) {
  if (!sc.disagg) return;
  const DisaggSpec& ds = *sc.disagg;
  const auto pool = [&](const char* name, const PoolSpec& p, double busy) {
    os << "  " << name << ": " << p.replicas << " x " << p.tp << "x " << p.gpu.name
       << " (tp=" << p.tp << "), " << p.engine.num_gpu_blocks << " KV blocks each, "
       << "max_num_seqs " << p.engine.max_num_seqs << ", max_num_batched_tokens "
       << p.engine.max_num_batched_tokens << ", router " << p.router.name << "; busy "
       << Fmt("%.1f", 100 * busy) << "% of the run\n";
  };
  os << "\nDisaggregated prefill/decode (vLLM disaggregated prefill: the prefill "
        "instance runs the prompt with max_tokens=1, the decode instance pulls its KV "
        "and produces every token the client sees; TTFT includes the transfer):\n";
  pool("prefill pool", ds.prefill, d.prefill_busy);
  pool("decode pool ", ds.decode, d.decode_busy);
  os << "  link " << ds.link.name << ": " << Fmt("%.1f", ds.link.bytes_per_s / 1e9)
     << " GB/s and " << Fmt("%.1f", ds.link.latency_s * 1e6)
     << " us per decode GPU, one FIFO link per decode instance; busy "
     << Fmt("%.1f", 100 * d.link_busy) << "% of the run\n";
  os << "  " << d.transfers << " KV transfers, " << Fmt("%.3f", d.bytes_moved / 1e9)
     << " GB moved (" << Fmt("%.1f", d.transfers ? d.bytes_moved / d.transfers / 1e6 : 0)
     << " MB each on average)\n";
  os << "  per request (ms, " << d.transfer_ms.count << " measured):\n";
  os << Row("send -> prefill done", d.prefill_ms);
  os << Row("prefill done -> KV arrived", d.transfer_ms);
  os << Row("  of which waiting for the link", d.link_wait_ms);
  os << Row("KV arrived -> decode admitted", d.decode_wait_ms);
  double p99 = 0;
  for (const auto& [p, v] : d.transfer_share.percentiles) {
    if (p == 99) p99 = v;
  }
  os << "  transfer share of TTFT: mean " << Fmt("%.1f", 100 * d.transfer_share.mean)
     << "% per request (p99 " << Fmt("%.1f", 100 * p99) << "%), "
     << Fmt("%.1f", 100 * d.transfer_share_of_mean_ttft) << "% of mean TTFT\n";
}

nlohmann::json DisaggJson(const Scenario& sc, const DisaggSummary& d) {
  if (!sc.disagg) return nullptr;
  const DisaggSpec& ds = *sc.disagg;
  return {{"model", "vllm disaggregated prefill (proxy; prefill max_tokens=1; first "
                    "token from the decode instance; TTFT includes the KV transfer)"},
          {"prefill", PoolJson(ds.prefill, d.prefill_busy)},
          {"decode", PoolJson(ds.decode, d.decode_busy)},
          {"link", {{"name", ds.link.name},
                    {"gb_per_s", ds.link.bytes_per_s / 1e9},
                    {"latency_us", ds.link.latency_s * 1e6},
                    {"busy_fraction", d.link_busy}}},
          {"transfers", d.transfers},
          {"bytes_moved", d.bytes_moved},
          {"prefill_ms", Stats(d.prefill_ms)},
          {"transfer_ms", Stats(d.transfer_ms)},
          {"link_wait_ms", Stats(d.link_wait_ms)},
          {"decode_wait_ms", Stats(d.decode_wait_ms)},
          {"transfer_share_of_ttft", Stats(d.transfer_share)},
          {"transfer_share_of_mean_ttft", d.transfer_share_of_mean_ttft}};
}

}  // namespace servesim
