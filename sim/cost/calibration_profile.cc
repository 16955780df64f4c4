// Calibration profile evaluation and strict reading (see
// calibration_profile.h).
#include "sim/cost/calibration_profile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/core/status.h"
#include "sim/cost/kernel_time.h"

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

double LogBase(const GridBase& b, double outer, double inner) {
  return b.empty() ? 0 : std::log(b.Seconds(outer, inner));
}

// Log seconds along one line at x (> 0); flags points outside the line.
double LineLogT(const GridLine& l, const GridBase& base, double x,
                bool* extrapolated) {
  const bool has_base = !base.empty();
  const size_t n = l.x.size();
  const double lx = std::log(x), lbase = LogBase(base, l.at, x);
  auto point = [&](size_t i) {
    return GridLogPoint{std::log(l.x[i]), std::log(l.t_s[i]),
                        LogBase(base, l.at, l.x[i])};
  };
  const GridLogPoint first = point(0);
  if (x == l.x.front()) return first.ly;
  if (n == 1 || x < l.x.front()) {
    if (std::fabs(lx - first.lx) > 1e-12) *extrapolated = true;
    return GridLogBeyond(first, nullptr, lx, lbase, has_base,
                         x > l.x.front());
  }
  if (x >= l.x.back()) {
    const GridLogPoint last = point(n - 1);
    if (x == l.x.back()) return last.ly;
    if (lx > last.lx + 1e-12) *extrapolated = true;
    const GridLogPoint next = point(n - 2);
    return GridLogBeyond(last, &next, lx, lbase, has_base, true);
  }
  const size_t hi = static_cast<size_t>(
      std::upper_bound(l.x.begin(), l.x.end(), x) - l.x.begin());
  return GridLogBetween(point(hi - 1), point(hi), lx, lbase, has_base);
}

double Coefficient(const JsonView& v, const char* key) {
  return v.RequireNumber(key, Range::NonNegative());
}

std::array<double, 3> Polynomial(const JsonView& v, const char* key) {
  const std::vector<double> c = v.Numbers(key, {0, 0, 0}, Range::NonNegative());
  if (c.size() != 3) v.Fail(key, "3 non-negative numbers (c0, c1, c2)");
  return {c[0], c[1], c[2]};
}

GridBase ParseBase(const JsonView& v) {
  v.AllowKeys({"source", "pieces"});
  GridBase b;
  b.source = v.String("source", "");
  for (const JsonView& e : v.Array("pieces")) {
    e.AllowKeys({"from", "floor_s", "s_per_flop", "s_per_byte", "s_per_item",
                 "crossover_p", "flops", "bytes", "items"});
    GridBasePiece p;
    p.from = e.Number("from", 0, Range::NonNegative());
    if (b.pieces.empty() ? p.from != 0 : !(p.from > b.pieces.back().from)) {
      e.Fail("from", b.pieces.empty() ? "0 for the first piece"
                                      : "a value above the previous piece's");
    }
    // A floor keeps the base positive, so its logarithm exists everywhere.
    p.floor_s = e.RequireNumber("floor_s", Range::Positive());
    p.s_per_flop = Coefficient(e, "s_per_flop");
    p.s_per_byte = Coefficient(e, "s_per_byte");
    p.s_per_item = Coefficient(e, "s_per_item");
    p.crossover_p = e.Number("crossover_p", 0, Range::NonNegative());
    p.flops = Polynomial(e, "flops");
    p.bytes = Polynomial(e, "bytes");
    p.items = Polynomial(e, "items");
    b.pieces.push_back(p);
  }
  if (b.pieces.empty()) v.FailMessage("pieces", "expected at least one piece");
  return b;
}

GridTable ParseGrid(const JsonView& v, const char* key) {
  GridTable g;
  if (v.Has("grid_base")) g.base = ParseBase(v.Object("grid_base"));
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
               "fit_points", "heldout_points", "grid_lines", "grid_base",
               "measured", "note"});
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
  if (fit.form == FitForm::kGrid) {
    fit.grid = ParseGrid(v, "grid_lines");
  } else if (v.Has("grid_base")) {
    v.Fail("grid_base", "no base unless the form is \"grid\"");
  }
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

double PieceSeconds(const GridBasePiece& p, double outer, double inner) {
  auto work = [&](const std::array<double, 3>& c) {
    return outer * (c[0] + inner * (c[1] + inner * c[2]));
  };
  return p.floor_s + p.s_per_item * work(p.items) +
         SmoothMax(p.s_per_flop * work(p.flops), p.s_per_byte * work(p.bytes),
                   p.crossover_p);
}

double GridBase::Seconds(double outer, double inner) const {
  const GridBasePiece* p = &pieces.front();
  for (const GridBasePiece& q : pieces) {
    if (inner >= q.from) p = &q;
  }
  return PieceSeconds(*p, outer, inner);
}

double GridLogBetween(const GridLogPoint& a, const GridLogPoint& b, double lx,
                      double lbase, bool has_base) {
  if (lx == a.lx) return a.ly;
  if (lx == b.lx) return b.ly;
  if (!has_base) return a.ly + (b.ly - a.ly) / (b.lx - a.lx) * (lx - a.lx);
  const double ra = a.ly - a.lbase, rb = b.ly - b.lbase;
  const double r = ra + (rb - ra) / (b.lx - a.lx) * (lx - a.lx);
  return std::clamp(lbase + r, std::min(a.ly, b.ly), std::max(a.ly, b.ly));
}

double GridLogBeyond(const GridLogPoint& e, const GridLogPoint* next,
                     double lx, double lbase, bool has_base, bool above) {
  if (has_base) return e.ly + (lbase - e.lbase);
  if (!above || next == nullptr) return e.ly;
  const double slope = (e.ly - next->ly) / (e.lx - next->lx);
  return e.ly + std::clamp(slope, 1.0, 2.0) * (lx - e.lx);
}

double EvalGrid(const GridTable& g, double outer, double inner,
                bool* extrapolated) {
  bool flag = false;
  const double x = std::max(inner, 1e-300);
  const std::vector<GridLine>& ls = g.lines;
  const bool has_base = !g.base.empty();
  auto point = [&](const GridLine& l) {
    return GridLogPoint{std::log(l.at), LineLogT(l, g.base, x, &flag),
                        LogBase(g.base, l.at, x)};
  };
  double log_t;
  if (ls.size() == 1 || outer <= ls.front().at) {
    if (ls.size() > 1 && outer < ls.front().at * (1 - 1e-12)) flag = true;
    const GridLogPoint first = point(ls.front());
    log_t = ls.size() > 1 && outer < ls.front().at
                ? GridLogBeyond(first, nullptr, std::log(outer),
                                LogBase(g.base, outer, x), has_base, false)
                : first.ly;
  } else {
    size_t hi = std::upper_bound(ls.begin(), ls.end(), outer,
                                 [](double o, const GridLine& l) {
                                   return o < l.at;
                                 }) -
                ls.begin();
    if (hi == ls.size()) hi = ls.size() - 1;
    const GridLogPoint a = point(ls[hi - 1]);
    if (outer == ls[hi - 1].at) {
      log_t = a.ly;
    } else {
      const GridLogPoint b = point(ls[hi]);
      const double lo = std::log(outer), lbase = LogBase(g.base, outer, x);
      if (outer > ls[hi].at) {
        if (outer > ls[hi].at * (1 + 1e-12)) flag = true;
        log_t = GridLogBeyond(b, &a, lo, lbase, has_base, true);
      } else {
        log_t = GridLogBetween(a, b, lo, lbase, has_base);
      }
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
    a.AllowKeys({"grid_lines", "grid_base", "heldout_mape_pct", "source"});
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
