// Calibration profile evaluation and strict reading (see
// calibration_profile.h).
#include "sim/cost/calibration_profile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/core/status.h"

namespace servesim {
namespace {

double InterpLog(const OpFit& fit, double log_x) {
  const std::vector<double>& xs = fit.knots_log_x;
  const std::vector<double>& ys = fit.knots_log_y;
  const size_t n = xs.size();
  if (n == 1 || log_x <= xs.front()) return ys.front();
  if (log_x >= xs.back()) {
    const double slope =
        std::clamp((ys[n - 1] - ys[n - 2]) / (xs[n - 1] - xs[n - 2]), 0.0, 2.0);
    return ys.back() + slope * (log_x - xs.back());
  }
  const size_t hi = std::upper_bound(xs.begin(), xs.end(), log_x) - xs.begin();
  const double w = (log_x - xs[hi - 1]) / (xs[hi] - xs[hi - 1]);
  return ys[hi - 1] + w * (ys[hi] - ys[hi - 1]);
}

// Log seconds along one line at log x; flags points outside the line.
double LineLogT(const GridLine& l, double log_x, bool* extrapolated) {
  const size_t n = l.x.size();
  const double x0 = std::log(l.x.front());
  if (n == 1 || log_x <= x0) {
    if (log_x < x0 - 1e-12) *extrapolated = true;
    return std::log(l.t_s.front());
  }
  const double xn = std::log(l.x.back());
  const size_t hi =
      log_x >= xn ? n - 1
                  : static_cast<size_t>(
                        std::upper_bound(l.x.begin(), l.x.end(),
                                         std::exp(log_x)) -
                        l.x.begin());
  const double xa = std::log(l.x[hi - 1]), xb = std::log(l.x[hi]);
  const double ya = std::log(l.t_s[hi - 1]), yb = std::log(l.t_s[hi]);
  double slope = (yb - ya) / (xb - xa);
  if (log_x > xn) {
    if (log_x > xn + 1e-12) *extrapolated = true;
    return yb + std::clamp(slope, 1.0, 2.0) * (log_x - xn);
  }
  return ya + slope * (log_x - xa);
}

GridTable ParseGrid(const JsonView& v, const char* key) {
  GridTable g;
  double prev_at = 0;
  for (const JsonView& e : v.Array(key)) {
    e.AllowKeys({"at", "x", "t_s"});
    GridLine l;
    l.at = e.RequireNumber("at", Range::Positive());
    if (!g.lines.empty() && !(l.at > prev_at)) {
      e.Fail("at", "lines in strictly increasing order of \"at\"");
    }
    prev_at = l.at;
    l.x = e.Numbers("x", {}, Range::Positive());
    l.t_s = e.Numbers("t_s", {}, Range::Positive());
    if (l.x.empty() || l.x.size() != l.t_s.size()) {
      e.FailMessage("x", "expected x and t_s of equal, non-zero length");
    }
    for (size_t i = 1; i < l.x.size(); ++i) {
      if (!(l.x[i] > l.x[i - 1])) e.Fail("x", "strictly increasing numbers");
    }
    g.lines.push_back(std::move(l));
  }
  if (g.lines.empty()) v.FailMessage(key, "expected at least one grid line");
  return g;
}

void CheckFit(const JsonView& v, const OpFit& fit, size_t num_features) {
  if (fit.form == FitForm::kGrid) return;  // checked by ParseGrid
  if (fit.form == FitForm::kInterp) {
    if (fit.knots_log_x.empty() ||
        fit.knots_log_x.size() != fit.knots_log_y.size()) {
      v.FailMessage("knots_log_x",
                    "expected knots_log_x and knots_log_y of equal, non-zero "
                    "length for form \"interp\"");
    }
    for (size_t i = 1; i < fit.knots_log_x.size(); ++i) {
      if (!(fit.knots_log_x[i] > fit.knots_log_x[i - 1])) {
        v.Fail("knots_log_x", "strictly increasing numbers");
      }
      if (fit.knots_log_y[i] < fit.knots_log_y[i - 1]) {
        v.Fail("knots_log_y", "non-decreasing numbers (a monotone model)");
      }
    }
    return;
  }
  const size_t want = fit.form == FitForm::kMax ? 3 : num_features + 1;
  if (fit.form == FitForm::kMax && num_features != 2) {
    v.Fail("form", "\"sum\" or \"interp\" for an op with one feature");
  }
  if (fit.coefficients.size() != want) {
    v.Fail("coefficients",
           std::to_string(want) + " non-negative numbers (constant first)");
  }
}

OpFit ParseOpFit(const JsonView& v) {
  v.AllowKeys({"op", "features", "form", "coefficients", "knots_log_x",
               "knots_log_y", "heldout_mape_pct", "candidate_mape_pct",
               "fit_points", "heldout_points", "grid_lines", "measured",
               "note"});
  OpFit fit;
  const std::string name = v.RequireString("op");
  if (!ProfileOpFromName(name, &fit.op)) v.Fail("op", "an operation name");
  const std::vector<std::string> want = FeatureNames(fit.op);
  std::vector<std::string> got;
  for (const JsonView& e : v.Array("features")) {
    if (!e.raw().is_string()) e.FailMessage("", "expected a feature name");
    got.push_back(e.raw().get<std::string>());
  }
  if (got != want) {
    std::string list;
    for (const auto& w : want) list += (list.empty() ? "" : ", ") + w;
    v.Fail("features", "[" + list + "] for " + name +
                           " (the features this simulator evaluates)");
  }
  const std::string form =
      v.Choice("form", "", {"sum", "max", "interp", "grid"});
  fit.form = form == "sum"      ? FitForm::kSum
             : form == "max"    ? FitForm::kMax
             : form == "interp" ? FitForm::kInterp
                                : FitForm::kGrid;
  if (fit.form == FitForm::kGrid) fit.grid = ParseGrid(v, "grid_lines");
  fit.measured = v.Bool("measured", true);
  fit.note = v.String("note", "");
  fit.coefficients = v.Numbers("coefficients", {}, Range::NonNegative());
  fit.knots_log_x = v.Numbers("knots_log_x", {});
  fit.knots_log_y = v.Numbers("knots_log_y", {});
  CheckFit(v, fit, want.size());
  fit.heldout_mape_pct =
      v.RequireNumber("heldout_mape_pct", Range::NonNegative());
  if (v.Has("candidate_mape_pct")) {
    const JsonView c = v.Object("candidate_mape_pct");
    c.AllowKeys({"sum", "max", "interp", "grid"});
    for (const char* f : {"sum", "max", "interp", "grid"}) {
      if (c.Has(f)) {
        fit.candidate_mape_pct[f] = c.RequireNumber(f, Range::NonNegative());
      }
    }
  }
  fit.fit_points =
      static_cast<int>(v.RequireInteger("fit_points", Range::AtLeast(1)));
  fit.heldout_points =
      static_cast<int>(v.Integer("heldout_points", 0, Range::NonNegative()));
  return fit;
}

ProfileDevice ParseDevice(const JsonView& v) {
  v.AllowKeys({"name", "driver", "sm_count", "memory_bytes", "sm_clock_mhz",
               "mem_clock_mhz", "copy_bytes_per_s", "gemm_bf16_flops"});
  ProfileDevice d;
  const Range nn = Range::NonNegative();
  d.name = v.RequireString("name");
  d.driver = v.String("driver", "");
  d.sm_count = static_cast<int>(v.Integer("sm_count", 0, nn));
  d.memory_bytes = v.Number("memory_bytes", 0, nn);
  d.sm_clock_mhz = v.Number("sm_clock_mhz", 0, nn);
  d.mem_clock_mhz = v.Number("mem_clock_mhz", 0, nn);
  d.copy_bytes_per_s = v.Number("copy_bytes_per_s", 0, nn);
  d.gemm_bf16_flops = v.Number("gemm_bf16_flops", 0, nn);
  return d;
}

ProfileTiming ParseTiming(const JsonView& v) {
  v.AllowKeys({"op", "tokens", "batch", "context", "median_s", "p10_s", "p90_s",
               "repetitions"});
  ProfileTiming t;
  if (!ProfileOpFromName(v.RequireString("op"), &t.op)) {
    v.Fail("op", "an operation name");
  }
  const Range nn = Range::NonNegative();
  t.shape.tokens = v.Integer("tokens", 0, nn);
  t.shape.batch = v.Integer("batch", 0, nn);
  t.shape.context = v.Integer("context", 0, nn);
  t.median_s = v.RequireNumber("median_s", Range::Positive());
  t.p10_s = v.Number("p10_s", t.median_s, nn);
  t.p90_s = v.Number("p90_s", t.median_s, nn);
  t.repetitions = static_cast<int>(v.Integer("repetitions", 0, nn));
  return t;
}

}  // namespace

const char* FitFormName(FitForm form) {
  switch (form) {
    case FitForm::kSum:
      return "sum";
    case FitForm::kMax:
      return "max";
    case FitForm::kInterp:
      return "interp";
    case FitForm::kGrid:
      return "grid";
  }
  return "unknown";
}

double EvalGrid(const GridTable& g, double outer, double inner,
                bool* extrapolated) {
  bool flag = false;
  const double lx = std::log(std::max(inner, 1e-300));
  const std::vector<GridLine>& ls = g.lines;
  double log_t;
  if (ls.size() == 1 || outer <= ls.front().at) {
    if (ls.size() > 1 && outer < ls.front().at * (1 - 1e-12)) flag = true;
    log_t = LineLogT(ls.front(), lx, &flag);
  } else {
    size_t hi = std::upper_bound(ls.begin(), ls.end(), outer,
                                 [](double o, const GridLine& l) {
                                   return o < l.at;
                                 }) -
                ls.begin();
    if (hi == ls.size()) hi = ls.size() - 1;
    const GridLine& a = ls[hi - 1];
    const GridLine& b = ls[hi];
    const double ya = LineLogT(a, lx, &flag);
    if (outer == a.at) {
      log_t = ya;
    } else {
      const double yb = LineLogT(b, lx, &flag);
      const double la = std::log(a.at), lb = std::log(b.at);
      const double lo = std::log(outer);
      double slope = (yb - ya) / (lb - la);
      if (lo > lb) {
        if (outer > b.at * (1 + 1e-12)) flag = true;
        slope = std::clamp(slope, 1.0, 2.0);
      }
      log_t = ya + slope * (lo - la);
    }
  }
  if (extrapolated != nullptr) *extrapolated = flag;
  return std::exp(log_t);
}

bool OpExtrapolates(const OpFit& fit, const OpFeatures& f) {
  if (fit.form != FitForm::kGrid || f.size <= 0) return false;
  bool flag = false;
  EvalGrid(fit.grid, f.grid_outer, f.grid_inner, &flag);
  return flag;
}

double PredictOp(const OpFit& fit, const OpFeatures& f) {
  if (f.size <= 0) return 0;  // no work, no kernel
  const std::vector<double>& c = fit.coefficients;
  switch (fit.form) {
    case FitForm::kSum: {
      double t = c[0];
      for (int i = 0; i < f.count; ++i) t += c[i + 1] * f.x[i];
      return t;
    }
    case FitForm::kMax:
      return c[0] + std::max(c[1] * f.x[0], c[2] * f.x[1]);
    case FitForm::kInterp:
      return std::exp(InterpLog(fit, std::log(f.size)));
    case FitForm::kGrid:
      return EvalGrid(fit.grid, f.grid_outer, f.grid_inner);
  }
  return 0;
}

double CalibrationProfile::WorstHeldoutMapePct() const {
  double worst = 0;
  for (const OpFit& f : ops) {
    if (f.measured) worst = std::max(worst, f.heldout_mape_pct);
  }
  if (!allreduce.empty()) worst = std::max(worst, allreduce_heldout_mape_pct);
  return worst;
}

CalibrationProfile ParseCalibrationProfile(const JsonView& v) {
  v.AllowKeys({"format", "synthetic", "note", "device", "gpu", "date", "model",
               "dtype", "kv_cache_dtype", "tp", "step_overhead_s", "step_overhead_source",
               "holdout_every", "ops", "timings", "allreduce", "import"});
  if (v.RequireString("format") != "servesim-calibration-profile/1") {
    v.Fail("format", "\"servesim-calibration-profile/1\"");
  }
  CalibrationProfile p;
  p.synthetic = v.Bool("synthetic", false);
  p.device = ParseDevice(v.Object("device"));
  p.gpu = v.RequireString("gpu");
  p.date = v.RequireString("date");
  p.model = v.RequireString("model");
  p.dtype = v.Choice("dtype", "bf16", {"bf16", "fp8"});
  p.kv_cache_dtype = v.Choice("kv_cache_dtype", "bf16", {"bf16", "fp8"});
  p.tp = static_cast<int>(v.RequireInteger("tp", Range::Closed(1, 1024)));
  p.step_overhead_s = v.RequireNumber("step_overhead_s", Range::NonNegative());
  p.step_overhead_source = v.String("step_overhead_source", "");
  p.holdout_every =
      static_cast<int>(v.Integer("holdout_every", 4, Range::AtLeast(2)));
  p.ops.resize(kNumProfileOps);
  std::vector<bool> seen(kNumProfileOps, false);
  for (const JsonView& e : v.Array("ops")) {
    OpFit fit = ParseOpFit(e);
    const int i = static_cast<int>(fit.op);
    if (seen[i]) e.Fail("op", "each operation once");
    seen[i] = true;
    p.ops[i] = std::move(fit);
  }
  for (int i = 0; i < kNumProfileOps; ++i) {
    if (!seen[i]) {
      v.FailMessage("ops", std::string("missing a fit for ") +
                               ProfileOpName(static_cast<ProfileOp>(i)));
    }
  }
  if (v.Has("timings")) {
    for (const JsonView& e : v.Array("timings")) {
      p.timings.push_back(ParseTiming(e));
    }
  }
  if (v.Has("allreduce")) {
    const JsonView a = v.Object("allreduce");
    a.AllowKeys({"grid_lines", "heldout_mape_pct", "source"});
    p.allreduce = ParseGrid(a, "grid_lines");
    p.allreduce_heldout_mape_pct =
        a.RequireNumber("heldout_mape_pct", Range::NonNegative());
    p.allreduce_source = a.String("source", "");
  }
  if (v.Has("import")) {
    if (!v.raw()["import"].is_object()) v.Fail("import", "an object");
    p.import_info = v.raw()["import"];
  }
  return p;
}

CalibrationProfile LoadCalibrationProfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open calibration profile");
  std::stringstream buf;
  buf << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(buf.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(path + ": invalid JSON: " + e.what());
  }
  return ParseCalibrationProfile(JsonView(j, path, ""));
}

}  // namespace servesim
