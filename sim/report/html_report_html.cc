// The static HTML of the report: title, the context block that every number
// depends on, section frames with their reading notes, and the capacity
// table. Written here rather than by the page script so that the text reads
// even where scripts are blocked; the script only adds charts.
#include <cmath>
#include <cstdio>
#include <string>

#include "sim/report/html_report_internal.h"

namespace servesim::html_report_internal {
namespace {

using nlohmann::json;

}  // namespace

std::string FormatNumber(const json& v) {
  if (v.is_null()) return "&mdash;";
  if (v.is_number_integer()) return v.dump();
  if (!v.is_number()) return HtmlEscape(v.is_string() ? v.get<std::string>()
                                                      : v.dump());
  const double x = v.get<double>();
  char buf[64];
  const double a = std::fabs(x);
  std::snprintf(buf, sizeof buf, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.3g",
                x);
  return buf;
}

std::string FormatUtilization(const json& v, int digits) {
  if (!v.is_number()) return FormatNumber(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v.get<double>());
  return buf;
}

namespace {

// A table's note cell: its first words, without file paths, so the column
// stays narrow; the whole message opens from it (a <details> element).
std::string NoteCell(const std::string& full, const std::string& prefix = "") {
  if (full.empty()) return prefix.empty() ? "" : HtmlEscape(prefix);
  std::string head = full.substr(0, full.find_first_of(":;("));
  std::string shown;
  size_t i = 0;
  while (i < head.size()) {
    size_t j = head.find(' ', i);
    if (j == std::string::npos) j = head.size();
    const std::string word = head.substr(i, j - i);
    if (word.find('/') == std::string::npos) shown += (shown.empty() ? "" : " ") + word;
    i = j + 1;
  }
  if (shown.size() > 32) shown = shown.substr(0, shown.rfind(' ', 32)) + "&hellip;";
  if (!prefix.empty()) shown = prefix + (shown.empty() ? "" : ": " + shown);
  if (shown == full) return HtmlEscape(full);
  return "<details title=\"" + HtmlEscape(full) + "\"><summary>" +
         (shown.empty() ? std::string("note") : HtmlEscape(shown)) + "</summary>" +
         HtmlEscape(full) + "</details>";
}

std::string ContextValue(const std::string& key, const json& v) {
  if (key == "prefix_hit_rate" && v.is_number()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v.get<double>());
    return buf;
  }
  if (key == "percentiles" && v.is_array()) {
    std::string out;
    for (const json& p : v) out += (out.empty() ? "p" : ", p") + FormatNumber(p);
    return out;
  }
  return FormatNumber(v);
}

std::string Context(const json& c) {
  static const struct {
    const char* key;
    const char* label;
  } kKnown[] = {{"scenario", "Scenario"},
                {"model", "Model"},
                {"gpu", "GPU"},
                {"tp", "Tensor parallel"},
                {"arrival", "Arrival process and rate"},
                {"utilization", "Utilization"},
                {"prefix_hit_rate", "Prefix-cache hit rate"},
                {"warmup", "Warm-up excluded"},
                {"percentiles", "Percentiles"},
                {"seed", "Seed"}};
  std::string rows;
  auto add = [&](const std::string& label, const std::string& value) {
    rows += "<div><dt>" + HtmlEscape(label) + "</dt><dd>" + value +
            "</dd></div>\n";
  };
  for (const auto& k : kKnown) {
    if (c.contains(k.key) && !c[k.key].is_null()) {
      add(k.label, ContextValue(k.key, c[k.key]));
    }
  }
  for (auto it = c.begin(); it != c.end(); ++it) {
    bool known = false;
    for (const auto& k : kKnown) known = known || it.key() == k.key;
    if (!known && !it->is_null()) add(it.key(), ContextValue(it.key(), *it));
  }
  return "<dl class=\"context\">\n" + rows + "</dl>\n";
}

std::string CapacityTable(const json& cap) {
  std::string out;
  if (cap.contains("slo") && cap["slo"].is_object() && !cap["slo"].empty()) {
    out += "<p class=\"note\">SLO: ";
    bool first = true;
    for (auto it = cap["slo"].begin(); it != cap["slo"].end(); ++it) {
      out += (first ? "" : ", ") + HtmlEscape(it.key()) + " &le; " +
             FormatNumber(*it);
      first = false;
    }
    out += "</p>\n";
  }
  // Rows come ranked (fleet $/h for a target, else $/M tokens): the first
  // one with a cost is the planner's answer.
  int best = -1;
  const json& rows = cap["rows"];
  for (size_t i = 0; i < rows.size() && best < 0; ++i) {
    if (rows[i].value("cost_per_million_output_tokens", json()).is_number()) {
      best = static_cast<int>(i);
    }
  }
  // A number, or "mean [lo, hi]" for an interval object.
  auto cell = [](const json& v) {
    if (!v.is_object()) return FormatNumber(v);
    std::string t = FormatNumber(v.value("mean", json()));
    if (v.contains("lo") && v.contains("hi")) {
      t += " [" + FormatNumber(v["lo"]) + ", " + FormatNumber(v["hi"]) + "]";
    }
    return t;
  };
  static const char* kCols[][2] = {
      {"gpu", "GPU"},
      {"tp", "TP"},
      {"saturation_ci", "Saturation &mu; (req/s) [95%]"},
      {"max_rate_per_replica", "SLO max per replica (req/s)"},
      {"utilization_at_max", "&rho; at SLO max"},
      {"goodput_rps", "Goodput (req/s) [95%]"},
      {"replicas", "Replicas"},
      {"gpus", "GPUs"},
      {"usd_per_gpu_hour", "$/GPU-h"},
      {"fleet_usd_per_hour", "Fleet $/h"},
      {"cost_per_million_output_tokens", "$ per 1M output tokens"},
      {"cost_per_million_input_tokens", "$ per 1M input tokens"},
      {"cost_per_million_tokens", "$ per 1M tokens (all)"},
      {"max_rate_if_steps_slower", "SLO max if steps are slower by the error bar"},
      {"note", "Note"}};
  out += "<table class=\"capacity\">\n<tr>";
  for (const auto& col : kCols) out += std::string("<th>") + col[1] + "</th>";
  out += "</tr>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    out += static_cast<int>(i) == best ? "<tr class=\"best\">" : "<tr>";
    const bool fits = rows[i].value("fits", true);
    for (const auto& col : kCols) {
      const json v = rows[i].value(col[0], json());
      if (std::string(col[0]) == "note") {
        out += "<td class=\"note\">" +
               NoteCell(v.is_string() ? v.get<std::string>() : "", fits ? "" : "does not fit") +
               "</td>";
        continue;
      }
      const std::string text = v.is_string() ? HtmlEscape(v.get<std::string>()) : cell(v);
      out += "<td>" + text + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
  if (best >= 0) {
    out += "<p class=\"note\">Highlighted: the cheapest (first-ranked) configuration "
           "meeting the SLO. Saturation &mu; is throughput flat out (no SLO); the SLO max "
           "never exceeds its lower bound; &rho; = SLO max / &mu;; goodput and "
           "throughput are over the arrival window. Each $ per 1M tokens charges the "
           "whole replica-hour to that kind of token (one GPU-hour buys both). The "
           "slower-steps column is the SLO max if every step takes the cost model's "
           "error bar longer (exact time scaling of the rates evaluated).</p>\n";
  }
  return out;
}

// The P:D splits tried for a disaggregated deployment, the cheapest
// passing one highlighted.
std::string PdSizingTable(const json& pd) {
  std::string out;
  const json cheapest = pd.value("cheapest", json());
  out += cheapest.is_object()
             ? "<p class=\"note\">Cheapest split meeting the SLO at the target rate: <b>" +
                   FormatNumber(cheapest.value("prefill", json())) + " prefill : " +
                   FormatNumber(cheapest.value("decode", json())) + " decode</b> instances.</p>\n"
             : std::string("<p class=\"note\">No split tried meets the SLO at the target "
                           "rate.</p>\n");
  std::vector<std::string> slo;
  for (auto it = pd["slo"].begin(); it != pd["slo"].end(); ++it) {
    std::string name = it.key();
    if (name.size() > 3 && name.compare(name.size() - 3, 3, "_ms") == 0) {
      name.resize(name.size() - 3);
    }
    slo.push_back(name);
  }
  out += "<table class=\"capacity\">\n<tr><th>P:D</th><th>GPUs</th><th>Fleet $/h</th>"
         "<th>Verdict</th>";
  for (const std::string& n : slo) out += "<th>" + HtmlEscape(n) + " ms [upper 95%]</th>";
  out += "<th>Prefill busy</th><th>Decode busy</th><th>Transfer / TTFT</th></tr>\n";
  auto percent = [](const json& v) {
    return v.is_number() ? FormatNumber(json(100 * v.get<double>())) + "%" : std::string("");
  };
  for (const json& s : pd["splits"]) {
    const bool best = cheapest.is_object() && s.value("prefill", 0) == cheapest.value("prefill", -1) &&
                      s.value("decode", 0) == cheapest.value("decode", -1);
    out += best ? "<tr class=\"best\">" : "<tr>";
    out += "<td>" + FormatNumber(s.value("prefill", json())) + ":" +
           FormatNumber(s.value("decode", json())) + "</td><td>" +
           FormatNumber(s.value("gpus", json())) + "</td><td>" +
           FormatNumber(s.value("fleet_usd_per_hour", json())) + "</td>";
    const json at = s.value("at_target", json::object());
    out += std::string("<td>") + (at.value("feasible", false) ? "pass" : "fail") + "</td>";
    for (const std::string& n : slo) {
      const json v = at["slo"].value(n, json()).value("value_ms", json());
      out += "<td>" + (v.is_object() ? FormatNumber(v.value("mean", json())) + " [" +
                                           FormatNumber(v.value("hi", json())) + "]"
                                     : std::string("")) +
             "</td>";
    }
    out += "<td>" + percent(s.value("prefill_busy", json())) + "</td><td>" +
           percent(s.value("decode_busy", json())) + "</td><td>" +
           percent(s.value("transfer_share_of_mean_ttft", json())) + "</td></tr>\n";
  }
  out += "</table>\n<p class=\"note\">Each split is judged at the full target rate by "
         "capacity's rules (replications, MSER-5 warm-up, upper 95% bounds). Splits are tried "
         "cheapest first, up to the cheapest passing one and the others of its cost. Busy "
         "shares (time in steps, not spare capacity) come from one more run of each "
         "split.</p>\n";
  return out;
}

// The search's candidates, the cheapest one highlighted, with why each
// row that was not evaluated was left out.
std::string SearchTable(const json& search) {
  std::string out;
  const json& rows = search["rows"];
  long best = -1;
  if (search.contains("cheapest") && search["cheapest"].is_object()) {
    best = search["cheapest"].value("index", -1L);
    out += "<p class=\"note\">Cheapest meeting the SLO: <b>" +
           HtmlEscape(search["cheapest"].value("name", std::string())) + "</b><br><code>" +
           HtmlEscape(search["cheapest"].value("vllm_serve", std::string())) + "</code>";
    // What the serve line cannot carry, or caps (e.g. --max-model-len).
    for (const json& note : search["cheapest"].value("vllm_serve_notes", json::array())) {
      if (note.is_string()) out += "<br># " + HtmlEscape(note.get<std::string>());
    }
    out += "</p>\n";
  } else {
    out += "<p class=\"note\">No candidate meets the SLO at the target rate.</p>\n";
  }
  static const char* kCols[][2] = {
      {"gpu", "GPU"}, {"tp", "TP"}, {"max_num_seqs", "seqs"},
      {"max_num_batched_tokens", "tokens/step"}, {"chunked_prefill", "Chunked"},
      {"status", "Status"}, {"saturation_rps", "&mu; (req/s)"},
      {"max_rate_per_replica", "SLO max (req/s)"}, {"replicas", "Replicas"}, {"gpus", "GPUs"},
      {"fleet_usd_per_hour", "Fleet $/h"}, {"usd_per_million_output_tokens", "$ per 1M out"},
      {"output_tokens_per_s_per_gpu", "tok/s per GPU"}, {"tokens_per_s_per_user", "tok/s per user"},
      {"pareto", "Pareto"}, {"note", "Note"}};
  // "#" numbers the rows: a chart label that has no room for the
  // deployment's name shows its number instead.
  out += "<table class=\"capacity\" id=\"table-search\">\n<tr><th>#</th>";
  for (const auto& col : kCols) out += std::string("<th>") + col[1] + "</th>";
  out += "</tr>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    out += static_cast<long>(i) == best ? "<tr class=\"best\">" : "<tr>";
    out += "<td>" + std::to_string(i + 1) + "</td>";
    for (const auto& col : kCols) {
      const std::string key = col[0];
      if (key == "pareto") {
        const bool t = rows[i].value("pareto_throughput", false) == true;
        const bool c = rows[i].value("pareto_cost", false) == true;
        out += std::string("<td class=\"pareto\">") +
               (t && c ? "yes (both)" : t ? "yes (tok/s)" : c ? "yes ($)" : "no") + "</td>";
        continue;
      }
      if (key == "note") {
        out += "<td class=\"note\">" +
               NoteCell(rows[i].value("note", json()).is_string()
                            ? rows[i]["note"].get<std::string>() : "") + "</td>";
        continue;
      }
      const json v = rows[i].value(col[0], json());
      out += "<td>" +
             (v.is_string() ? HtmlEscape(v.get<std::string>())
              : v.is_boolean() ? std::string(v.get<bool>() ? "yes" : "no")
                               : FormatNumber(v)) +
             "</td>";
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
  out += "<p class=\"note\">Pareto fronts among evaluated candidates (all figures at each "
         "candidate's SLO max): tok/s = throughput per GPU vs tok/s per user, $ = cost vs "
         "TTFT p99; the charts label each front point GPU&times;TP, max_num_seqs, "
         "tokens per step. Pruned rows could not beat the cheapest fleet even at "
         "saturation.</p>\n";
  return out;
}

// `after` follows the charts: the data table that reads with them.
std::string Section(const std::string& id, const std::string& title,
                    const std::string& inner, const std::string& after = "") {
  return "<section id=\"sec-" + id + "\">\n<h2>" + title + "</h2>\n" + inner +
         "<div class=\"charts\"></div>\n" + after + "</section>\n";
}

std::string Note(const std::string& text) {
  return "<p class=\"note\">" + text + "</p>\n";
}

// A sweep point is unstable when it says so, or (older data) when not all
// of its replications were stable.
bool UnstablePoint(const json& p) {
  if (p.contains("unstable") && p["unstable"].is_boolean()) return p["unstable"].get<bool>();
  return p.contains("stable_fraction") && p["stable_fraction"].is_number() &&
         p["stable_fraction"].get<double>() < 1;
}

// The unstable points and why, as a list after the sweep's reading note.
std::string UnstablePoints(const json& sweep) {
  std::string items;
  if (!sweep.contains("points") || !sweep["points"].is_array()) return items;
  for (const json& p : sweep["points"]) {
    if (!UnstablePoint(p)) continue;
    items += "<li>" + FormatNumber(p.value("rate", json())) + " req/s (&rho; = " +
             FormatUtilization(p.value("utilization", json()), 2) + ")";
    const std::string why = p.value("unstable_reason", std::string());
    items += (why.empty() ? std::string() : ": " + HtmlEscape(why)) + "</li>\n";
  }
  if (items.empty()) return items;
  return "<p class=\"note unstable\"><b>UNSTABLE</b> (marked &times; on the "
         "charts; their figures depend on the run length, not on the load "
         "alone):</p>\n<ul class=\"unstable\">\n" +
         items + "</ul>\n";
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string RenderBody(const json& data) {
  const std::string title = StringOr(data, "title", "servesim report");
  std::string out = "<header>\n<h1>" + HtmlEscape(title) + "</h1>\n";
  if (data.contains("context")) out += Context(data["context"]);
  out += "</header>\n";
  if (data.contains("sweep")) {
    const json& s = data["sweep"];
    std::string facts;
    if (s.contains("saturation_rps") && s["saturation_rps"].is_number()) {
      facts += "Saturation: " + FormatNumber(s["saturation_rps"]) + " req/s. ";
    }
    out += Section(
        "sweep", "Latency vs offered load",
        Note(facts + "Solid lines: mean over replications of each statistic; "
             "shaded bands: its confidence interval. Dashed: queueing "
             "theory. Dotted vertical line: the knee, the first rate whose "
             "TTFT p99 exceeds 3&times; its value at the lightest rate. "
             "Latency axes are logarithmic.") +
            UnstablePoints(s),
        SweepTable(s));
  }
  // The distributions below come from one run of a sweep: say which.
  std::string one_run;
  if (data.contains("representative") && data["representative"].is_object()) {
    const json& rep = data["representative"];
    one_run = "From one run: replication " + FormatNumber(rep.value("replication", json(0))) +
              " (seed " + FormatNumber(rep.value("seed", json())) + ") at " +
              FormatNumber(rep.value("rate", json())) + " req/s (&rho; = " +
              FormatUtilization(rep.value("utilization", json()), 2) + "). ";
  }
  if (data.contains("cdfs")) {
    out += Section("cdfs", "Latency distributions (CDF)",
                   Note(one_run + "Fraction of measured requests (warm-up excluded) "
                        "at or below each latency; x axes are logarithmic."));
  }
  if (data.contains("timeseries")) {
    out += Section("timeseries", "KV cache and queues over time",
                   Note(one_run + "Sampled over simulated time, warm-up included, so "
                        "the fill-up is visible."));
  }
  if (data.contains("batch_size_hist")) {
    out += Section("batch", "Batch size distribution",
                   Note(one_run + "Engine steps by the number of sequences they ran."));
  }
  if (data.contains("loops")) {
    const std::string why = StringOr(data["loops"], "explanation", "");
    out += Section("loops", "Open vs closed loop",
                   Note(why.empty() ? "Same throughput, different arrivals."
                                    : HtmlEscape(why)),
                   LoopsTable(data["loops"]));
  }
  if (data.contains("search")) {
    out += Section("search", "Deployment search", SearchTable(data["search"]));
  }
  if (data.contains("capacity")) {
    out += Section("capacity", "Capacity plan", CapacityTable(data["capacity"]));
  }
  if (data.contains("pd_sizing")) {
    out += Section("pd_sizing", "Prefill:decode sizing", PdSizingTable(data["pd_sizing"]));
  }
  // Hidden: the browser test reads it from the DOM; readers need not see it.
  out += "<pre id=\"servesim-check\" hidden>pending</pre>\n";
  return out;
}

const char kReportStyle[] = R"css(
body { font: 14px/1.45 system-ui, sans-serif; color: #222; margin: 0 auto;
       max-width: 1200px; padding: 16px 24px; }
h1 { font-size: 24px; margin: 8px 0 12px; }
h2 { font-size: 18px; margin: 28px 0 6px; border-bottom: 1px solid #ddd; }
.context { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr));
           gap: 4px 16px; margin: 0; padding: 10px 12px; background: #f5f7fa;
           border: 1px solid #dde3ea; border-radius: 6px; }
.context div { display: flex; gap: 8px; min-width: 0; }
.context dt { color: #555; flex: 0 0 150px; }
.context dd { margin: 0; font-weight: 600; min-width: 0; overflow-wrap: anywhere; }
.note { color: #444; margin: 4px 0 10px; }
.unstable { color: #b00; }
.charts { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 18px; }
.chart { position: relative; height: 340px; min-width: 0; }
.chart.wide { grid-column: 1 / -1; }
table.capacity, table.data { border-collapse: collapse; margin: 6px 0; font-size: 13px; }
table.capacity th, table.capacity td, table.data th, table.data td {
  border: 1px solid #ccd; padding: 3px 8px; text-align: right; }
table.capacity th, table.data th { background: #eef1f5; }
table.data td.unstable, table.data tr.unstable td { color: #b00; }
table.capacity tr.best td { background: #e6f4e6; font-weight: 600; }
td details summary { cursor: pointer; }
td details[open] { text-align: left; max-width: 40em; }
.chart-labels { display: none; }
/* Narrow windows and paper: tables shrink and wrap rather than run off the
   right edge; charts keep their grid but lose height. */
@media print, (max-width: 900px) {
  body { padding: 8px; max-width: none; }
  .context { grid-template-columns: 1fr; }
  table.capacity, table.data { font-size: 10px; width: 100%; }
  table.capacity th, table.capacity td, table.data th, table.data td { padding: 2px 3px; }
  table.capacity td, table.data td { white-space: nowrap; }
  table.capacity th, table.data th { overflow-wrap: anywhere; }
  .charts { grid-template-columns: minmax(0, 1fr); }
  .chart { height: 300px; }
}
@media print {
  @page { margin: 12mm; }
  body { font-size: 11px; }
  .chart, tr { break-inside: avoid; }
  td details { display: inline; }
}
#servesim-check { color: #999; font-size: 11px; margin-top: 32px; }
)css";

}  // namespace servesim::html_report_internal
