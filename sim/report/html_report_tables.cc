// The sweep's and the loops' data tables: every number their charts plot,
// with units, written as static HTML so that a printout or a page with
// scripts blocked still carries the figures.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/report/html_report_internal.h"

namespace servesim::html_report_internal {
namespace {

using nlohmann::json;

const json& Field(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

// The mean of an Interval object, or the number itself.
json Mean(const json& v) { return v.is_object() ? Field(v, "mean") : v; }

std::string Cell(const std::string& text, const char* cls = nullptr) {
  return std::string(cls ? "<td class=\"" + std::string(cls) + "\">" : "<td>") + text +
         "</td>";
}

// Sweep metric columns in the charts' order, then any others.
std::vector<std::string> MetricOrder(const json& points) {
  std::vector<std::string> keys = {"ttft_ms", "tpot_ms", "e2el_ms", "itl_ms", "queue_ms"};
  std::vector<std::string> out;
  auto present = [&](const std::string& k) {
    for (const json& p : points) {
      if (Field(p, "metrics").contains(k)) return true;
    }
    return false;
  };
  for (const std::string& k : keys) {
    if (present(k)) out.push_back(k);
  }
  for (const json& p : points) {
    const json& m = Field(p, "metrics");
    if (!m.is_object()) continue;
    for (auto it = m.begin(); it != m.end(); ++it) {
      bool seen = false;
      for (const std::string& k : out) seen = seen || k == it.key();
      if (!seen) out.push_back(it.key());
    }
  }
  return out;
}

std::string MetricLabel(const std::string& key) {
  if (key == "ttft_ms") return "TTFT";
  if (key == "tpot_ms") return "TPOT";
  if (key == "e2el_ms") return "E2E";
  if (key == "itl_ms") return "ITL";
  if (key == "queue_ms") return "Queue wait";
  return HtmlEscape(key);
}

std::string Unit(const std::string& key) {
  auto ends = [&](const char* s) {
    const std::string t = s;
    return key.size() > t.size() && key.compare(key.size() - t.size(), t.size(), t) == 0;
  };
  return ends("_ms") ? "ms" : ends("_s") ? "s" : "";
}

}  // namespace

std::string SweepTable(const json& sweep) {
  const json& points = Field(sweep, "points");
  if (!points.is_array() || points.empty()) return "";
  const std::vector<std::string> metrics = MetricOrder(points);
  // Each metric's statistics as the chart draws them: mean first, then
  // percentiles in increasing order.
  std::vector<std::pair<std::string, std::string>> cols;
  for (const std::string& m : metrics) {
    std::vector<std::string> stats;
    for (const json& p : points) {
      const json& s = Field(Field(p, "metrics"), m.c_str());
      if (!s.is_object()) continue;
      for (auto it = s.begin(); it != s.end(); ++it) {
        bool seen = false;
        for (const std::string& x : stats) seen = seen || x == it.key();
        if (!seen) stats.push_back(it.key());
      }
    }
    std::sort(stats.begin(), stats.end(), [](const std::string& a, const std::string& b) {
      auto rank = [](const std::string& s) {
        return s.size() > 1 && s[0] == 'p' ? std::atof(s.c_str() + 1) : -1.0;
      };
      return rank(a) < rank(b);
    });
    for (const std::string& s : stats) cols.emplace_back(m, s);
  }
  const json& theory = Field(sweep, "theory");
  std::vector<std::string> theories;
  if (theory.is_object()) {
    for (const char* t : {"mg1_wait_ms", "mm1_wait_ms"}) {
      if (theory.contains(t)) theories.push_back(t);
    }
  }
  std::string out = "<table class=\"data\" id=\"table-sweep\">\n<tr><th>Offered rate (req/s)</th>"
                    "<th>&rho;</th><th>Stable reps</th><th>Throughput (req/s)</th>";
  for (const auto& [m, s] : cols) {
    const std::string unit = Unit(m);
    out += "<th>" + MetricLabel(m) + " " + HtmlEscape(s) + (unit.empty() ? "" : " (" + unit + ")") +
           "</th>";
  }
  for (const std::string& t : theories) {
    out += t == "mm1_wait_ms" ? "<th>M/M/1 wait (ms)</th>" : "<th>M/G/1 wait (ms)</th>";
  }
  out += "</tr>\n";
  for (const json& p : points) {
    const json& rate = Field(p, "rate");
    const bool unstable = Field(p, "unstable").is_boolean()
                              ? Field(p, "unstable").get<bool>()
                              : Field(p, "stable_fraction").is_number() &&
                                    Field(p, "stable_fraction").get<double>() < 1;
    out += unstable ? "<tr class=\"unstable\">" : "<tr>";
    out += Cell(FormatNumber(rate) + (unstable ? " &times;" : ""));
    out += Cell(FormatUtilization(Field(p, "utilization"), 2));
    const json& reps = Field(p, "replications");
    const json& frac = Field(p, "stable_fraction");
    out += Cell(reps.is_number() && frac.is_number()
                    ? FormatNumber(json(static_cast<long>(
                          frac.get<double>() * reps.get<double>() + 0.5))) +
                          "/" + FormatNumber(reps)
                    : "&mdash;");
    out += Cell(FormatNumber(Mean(Field(p, "throughput_rps"))));
    for (const auto& [m, s] : cols) {
      out += Cell(FormatNumber(Mean(Field(Field(Field(p, "metrics"), m.c_str()), s.c_str()))));
    }
    for (const std::string& t : theories) {
      json v;
      for (const json& q : theory[t]) {
        if (q.is_array() && q.size() == 2 && q[0] == rate) v = q[1];
      }
      out += Cell(FormatNumber(v));
    }
    out += "</tr>\n";
  }
  out += "</table>\n<p class=\"note\">Means over replications (the charts shade their "
         "confidence intervals); &rho; = offered rate / saturation &mu;; &times; = "
         "unstable; &mdash; = no value (no steady state, or nothing measured).</p>\n";
  return out;
}

std::string LoopsTable(const json& loops) {
  const json& points = Field(loops, "points");
  if (!points.is_array() || points.empty()) return "";
  static const char* kModes[][2] = {{"closed", "Closed loop"},
                                    {"open_poisson", "Open, Poisson"},
                                    {"open_gamma", "Open, gamma (bursty)"}};
  bool mm1 = false, mg1 = false;
  for (const json& p : points) {
    mm1 = mm1 || p.contains("mm1_wait_ms");
    mg1 = mg1 || p.contains("mg1_wait_ms");
  }
  const int theory_cols = (mm1 ? 1 : 0) + (mg1 ? 1 : 0);
  std::string out = "<table class=\"data\" id=\"table-loops\">\n<tr><th rowspan=\"2\">N</th>"
                    "<th rowspan=\"2\">Throughput (req/s)</th><th rowspan=\"2\">&rho;</th>";
  if (theory_cols) {
    out += "<th colspan=\"" + std::to_string(theory_cols) + "\">Theory: mean wait (ms)</th>";
  }
  for (const auto& m : kModes) out += std::string("<th colspan=\"3\">") + m[1] + " (ms)</th>";
  out += "</tr>\n<tr>";
  if (mm1) out += "<th>M/M/1</th>";
  if (mg1) out += "<th>M/G/1</th>";
  for (size_t i = 0; i < 3; ++i) out += "<th>queue mean</th><th>TTFT p50</th><th>TTFT p99</th>";
  out += "</tr>\n";
  for (const json& p : points) {
    out += "<tr>" + Cell(FormatNumber(Field(p, "concurrency"))) +
           Cell(FormatNumber(Field(p, "throughput_rps"))) +
           Cell(FormatUtilization(Field(p, "utilization"), 3));
    if (mm1) out += Cell(FormatNumber(Field(p, "mm1_wait_ms")));
    if (mg1) out += Cell(FormatNumber(Field(p, "mg1_wait_ms")));
    for (const auto& m : kModes) {
      const json& k = Field(p, m[0]);
      const bool unstable = Field(k, "unstable").is_boolean() && Field(k, "unstable").get<bool>();
      const char* cls = unstable ? "unstable" : nullptr;
      for (const char* key : {"queue_mean_ms", "ttft_p50_ms", "ttft_p99_ms"}) {
        out += Cell(FormatNumber(Field(k, key)) + (unstable ? "!" : ""), cls);
      }
    }
    out += "</tr>\n";
  }
  out += "</table>\n<p class=\"note\">Means over replications. &rho; = throughput / "
         "saturation &mu;; the theory columns are a single server's mean wait at that "
         "&rho; (a reference only under continuous batching); ! = unstable (the figure "
         "depends on the run length).</p>\n";
  return out;
}

}  // namespace servesim::html_report_internal
