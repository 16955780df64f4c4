// Schema checks for the HTML report data (schema in html_report.h). The page
// script trusts these shapes, so a malformed section becomes an error naming
// its JSON path here rather than a broken chart in the browser.
#include <string>

#include "sim/core/json_view.h"
#include "sim/core/status.h"
#include "sim/report/html_report_internal.h"

namespace servesim::html_report_internal {
namespace {

// A number, or null for a gap in a series (NaN is written as null).
void NumberOrNull(const JsonView& v, std::string_view key) {
  v.OptionalNumber(key);
}

void Interval(const JsonView& parent, std::string_view key) {
  if (!parent.Has(key)) return;
  const JsonView iv = parent.Object(key);
  for (const char* k : {"mean", "lo", "hi"}) NumberOrNull(iv, k);
}

// [[x, y], ...] with a number x and a number-or-null y.
void Pairs(const JsonView& parent, std::string_view key) {
  for (const JsonView& e : parent.Array(key)) {
    const nlohmann::json& p = e.raw();
    const bool ok = p.is_array() && p.size() == 2 && p[0].is_number() &&
                    (p[1].is_number() || p[1].is_null());
    if (!ok) {
      e.FailMessage("", "expected [number, number], got " + DescribeJson(p) +
                            (p.is_array() ? " of " + std::to_string(p.size())
                                          : ""));
    }
  }
}

void Context(const JsonView& c) {
  for (const char* k : {"scenario", "model", "gpu", "arrival", "warmup",
                        "utilization"}) {
    c.String(k, "");
  }
  c.OptionalInteger("tp", Range::AtLeast(1));
  c.OptionalInteger("seed");
  c.Numbers("percentiles", {}, Range::Closed(0, 100));
  c.OptionalNumber("prefix_hit_rate", Range::Closed(0, 1));
  for (auto it = c.raw().begin(); it != c.raw().end(); ++it) {
    if (it->is_object() || it->is_array()) {
      if (it.key() != "percentiles") c.Fail(it.key(), "a string or a number");
    }
  }
}

void Sweep(const JsonView& s) {
  s.OptionalNumber("saturation_rps", Range::NonNegative());
  s.OptionalNumber("knee_rate", Range::NonNegative());
  for (const JsonView& p : s.Array("points")) {
    p.RequireNumber("rate", Range::NonNegative());
    NumberOrNull(p, "utilization");
    p.OptionalInteger("replications", Range::AtLeast(0));
    p.OptionalNumber("stable_fraction", Range::Closed(0, 1));
    p.Bool("unstable", false);
    p.String("unstable_reason", "");
    Interval(p, "throughput_rps");
    if (!p.Has("metrics")) continue;
    const JsonView metrics = p.Object("metrics");
    for (auto m = metrics.raw().begin(); m != metrics.raw().end(); ++m) {
      const JsonView stats = metrics.Object(m.key());
      for (auto st = stats.raw().begin(); st != stats.raw().end(); ++st) {
        Interval(stats, st.key());
      }
    }
  }
  if (!s.Has("theory")) return;
  const JsonView theory = s.Object("theory");
  for (auto t = theory.raw().begin(); t != theory.raw().end(); ++t) {
    Pairs(theory, t.key());
  }
}

void Timeseries(const JsonView& t) {
  const size_t n = t.Numbers("t_s", {}).size();
  if (n == 0) t.Fail("t_s", "a non-empty array of numbers");
  const struct {
    const char* key;
    Range range;
  } series[] = {{"kv_usage", Range::Closed(0, 1)},
                {"waiting", Range::NonNegative()},
                {"running", Range::NonNegative()}};
  for (const auto& s : series) {
    const size_t m = t.Numbers(s.key, {}, s.range).size();
    if (t.Has(s.key) && m != n) {
      t.Fail(s.key, "an array as long as t_s (" + std::to_string(n) + ")");
    }
  }
}

void Loops(const JsonView& l) {
  for (const JsonView& p : l.Array("points")) {
    p.RequireNumber("concurrency", Range::AtLeast(1));
    p.RequireNumber("throughput_rps", Range::NonNegative());
    for (const char* mode : {"closed", "open_poisson", "open_gamma"}) {
      if (!p.Has(mode)) continue;
      const JsonView m = p.Object(mode);
      for (const char* k : {"ttft_p50_ms", "ttft_p99_ms", "queue_mean_ms"}) {
        NumberOrNull(m, k);
      }
    }
  }
  l.String("explanation", "");
}

void Capacity(const JsonView& c) {
  if (c.Has("slo")) {
    const JsonView slo = c.Object("slo");
    for (auto it = slo.raw().begin(); it != slo.raw().end(); ++it) {
      slo.RequireNumber(it.key());
    }
  }
  for (const JsonView& r : c.Array("rows")) {
    r.RequireString("gpu");
    for (const char* k : {"tp", "replicas", "gpus"}) {
      r.OptionalInteger(k, Range::AtLeast(0));
    }
    for (const char* k : {"max_rate_per_replica", "cost_per_million_output_tokens",
                          "fleet_usd_per_hour", "usd_per_gpu_hour", "utilization_at_max"}) {
      if (r.Has(k)) NumberOrNull(r, k);
    }
    Interval(r, "goodput_rps");
    Interval(r, "saturation_ci");
  }
}

}  // namespace

void ValidateReportData(const nlohmann::json& data) {
  const JsonView root(data, kDataName);
  root.AllowKeys({"title", "context", "sweep", "cdfs", "timeseries",
                  "batch_size_hist", "loops", "capacity", "representative", "search",
                  "pd_sizing"});
  if (root.Has("pd_sizing")) {
    const JsonView pd = root.Object("pd_sizing");
    pd.Object("slo");
    for (const JsonView& s : pd.Array("splits")) {
      s.RequireInteger("prefill", Range::AtLeast(1));
      s.RequireInteger("decode", Range::AtLeast(1));
      s.Object("at_target");
      if (s.Has("fleet_usd_per_hour")) NumberOrNull(s, "fleet_usd_per_hour");
    }
  }
  if (root.Has("search")) {
    for (const JsonView& r : root.Object("search").Array("rows")) {
      r.RequireString("gpu");
      r.RequireString("status");
      for (const char* k : {"saturation_rps", "max_rate_per_replica", "fleet_usd_per_hour",
                            "usd_per_million_output_tokens", "output_tokens_per_s_per_gpu",
                            "tokens_per_s_per_user", "ttft_p99_ms_at_max"}) {
        if (r.Has(k)) NumberOrNull(r, k);
      }
    }
  }
  if (root.Has("representative")) {
    const JsonView rep = root.Object("representative");
    rep.AllowKeys({"rate", "utilization", "replication", "seed"});
    rep.RequireNumber("rate", Range::NonNegative());
  }
  root.String("title", "");
  if (root.Has("context")) Context(root.Object("context"));
  if (root.Has("sweep")) Sweep(root.Object("sweep"));
  if (root.Has("cdfs")) {
    const JsonView cdfs = root.Object("cdfs");
    for (auto it = cdfs.raw().begin(); it != cdfs.raw().end(); ++it) {
      Pairs(cdfs, it.key());
    }
  }
  if (root.Has("timeseries")) Timeseries(root.Object("timeseries"));
  if (root.Has("batch_size_hist")) Pairs(root, "batch_size_hist");
  if (root.Has("loops")) Loops(root.Object("loops"));
  if (root.Has("capacity")) Capacity(root.Object("capacity"));
}

}  // namespace servesim::html_report_internal
