// P:D sizing table and report data (see pd_sizing.h).
#include <cstdio>
#include <string>

#include "sim/analysis/capacity_plan.h"
#include "sim/analysis/pd_sizing.h"
#include "sim/analysis/report_data.h"

namespace servesim {
namespace {

std::string Percent(double x) { return Fmt("%.0f%%", 100 * x); }

}  // namespace

void WritePdSizingTable(const Scenario& sc, const PdSizingResult& r, std::ostream& os) {
  os << "servesim capacity (P:D sizing): " << sc.file << " (" << sc.model.Label() << ", "
     << sc.ArrivalDescription() << " shape, at " << Fmt("%g", r.target_rate)
     << " req/s)\nprefill pool " << r.prefill_gpu << " tp" << r.prefill_tp << ", decode pool "
     << r.decode_gpu << " tp" << r.decode_tp << "; SLO:";
  for (const SloTerm& t : r.slo) os << " " << t.name << " <= " << Fmt("%g", t.limit_ms) << " ms";
  os << "\na split passes when every replication is stable and each SLO percentile's upper "
        "95% bound is within its limit; splits tried cheapest first, up to the cheapest "
        "passing one and the others of its cost\nprices: "
     << r.prices.file << " (" << r.prices.note << ")\n\n";
  char line[400];
  std::snprintf(line, sizeof line, "%-5s %4s %9s | %-11s", "P:D", "gpus", "fleet $/h",
                "verdict");
  os << line;
  for (const SloTerm& t : r.slo) {
    std::snprintf(line, sizeof line, " %18s", (t.name + " ms").c_str());
    os << line;
  }
  os << " | prefill decode  link busy | to prefill end  decode wait | transfer/TTFT\n";
  for (const PdSplit& s : r.splits) {
    if (!s.evaluated) continue;
    const std::string pd = std::to_string(s.prefill) + ":" + std::to_string(s.decode);
    const std::string usd = s.usd_per_hour ? Fmt("%.2f", *s.usd_per_hour) : "-";
    std::snprintf(line, sizeof line, "%-5s %4d %9s | %-11s", pd.c_str(), s.gpus, usd.c_str(),
                  s.at.feasible ? "PASS" : (std::string("fail ") + RateStopName(s.at.stop)).c_str());
    os << line;
    for (const SloCheck& c : s.at.checks) {
      std::snprintf(line, sizeof line, " %18s",
                    (Fmt("%.0f", c.value_ms.mean) + " [" + Fmt("%.0f", c.value_ms.hi) + "]").c_str());
      os << line;
    }
    std::snprintf(line, sizeof line, " | %7s %6s %5s      | %11.0f ms %9.0f ms | %s\n",
                  Percent(s.prefill_busy).c_str(), Percent(s.decode_busy).c_str(),
                  Percent(s.link_busy).c_str(), s.prefill_ms, s.decode_wait_ms,
                  Percent(s.transfer_share_of_mean_ttft).c_str());
    os << line;
  }
  if (r.cheapest) {
    const PdSplit& c = r.splits[*r.cheapest];
    os << "\ncheapest: " << c.prefill << " prefill + " << c.decode << " decode instances, "
       << c.gpus << " GPUs"
       << (c.usd_per_hour ? ", $" + Fmt("%.2f", *c.usd_per_hour) + "/h" : std::string(""))
       << " (" << c.at.point.replications << " replications of " << c.at.requests_per_run
       << " requests, MSER-5 warm-up " << Fmt("%.0f", c.at.mean_truncated)
       << " requests/run)\n";
  } else {
    os << "\nno split up to " << r.splits.back().prefill << ":" << r.splits.back().decode
       << " meets the SLO at this rate (raise --max-prefill/--max-decode)\n";
  }
  os << r.evaluations << " splits evaluated; SLO columns: mean over replications "
        "[upper 95% bound]; from one more run of each split (replication 0): busy = share "
        "of the run each pool's GPUs (mean over the pool) and the decode links spent "
        "working (time in steps, not spare capacity: a decode instance steps whenever "
        "one sequence decodes), mean ms from send to prefill done and from KV arrived "
        "to decode admission (the pool that binds queues), transfer/TTFT = mean KV "
        "transfer / mean TTFT\n";
}

nlohmann::json PdSizingReportJson(const Scenario& sc, const PdSizingResult& r) {
  nlohmann::json slo = nlohmann::json::object();
  for (const SloTerm& t : r.slo) slo[t.name + "_ms"] = t.limit_ms;
  nlohmann::json splits = nlohmann::json::array();
  for (const PdSplit& s : r.splits) {
    if (!s.evaluated) continue;
    nlohmann::json row = {{"prefill", s.prefill},
                          {"decode", s.decode},
                          {"gpus", s.gpus},
                          {"fleet_usd_per_hour", s.usd_per_hour ? nlohmann::json(*s.usd_per_hour)
                                                                : nlohmann::json(nullptr)},
                          {"at_target", RateEvaluationJson(s.at)},
                          {"prefill_busy", s.prefill_busy},
                          {"decode_busy", s.decode_busy},
                          {"link_busy", s.link_busy},
                          {"mean_prefill_ms", s.prefill_ms},
                          {"mean_decode_wait_ms", s.decode_wait_ms},
                          {"transfer_share_of_mean_ttft", s.transfer_share_of_mean_ttft}};
    splits.push_back(row);
  }
  nlohmann::json data;
  data["title"] = "servesim capacity (P:D sizing): " + sc.file;
  data["context"] = CapacityContextJson(sc, sc.ArrivalDescription(),
                                        "the target rate into the whole deployment",
                                        r.target_rate, r.prices);
  nlohmann::json cheapest = nullptr;
  if (r.cheapest) {
    cheapest = {{"prefill", r.splits[*r.cheapest].prefill},
                {"decode", r.splits[*r.cheapest].decode}};
  }
  data["pd_sizing"] = {{"slo", slo},
                       {"prefill_gpu", r.prefill_gpu},
                       {"prefill_tp", r.prefill_tp},
                       {"decode_gpu", r.decode_gpu},
                       {"decode_tp", r.decode_tp},
                       {"evaluations", r.evaluations},
                       {"cheapest", cheapest},
                       {"splits", splits}};
  return data;
}

}  // namespace servesim
