// Profile validation on off-grid steps (see validate.h).
#include "calibrate/validate.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "calibrate/fit.h"

namespace servesim::calibrate {
namespace {

struct Term {
  OpPoint point;
  double count;  // how many times the kernel runs in the step
};

struct StepSpec {
  std::string name;
  std::vector<Term> terms;
};

// Kernels of a step with `decode` sequences at `ctx` and one prefill of
// `chunk` tokens after `cached` tokens (either part may be empty).
StepSpec Step(const ModelSpec& m, int64_t decode, int64_t ctx, int64_t chunk,
              int64_t cached) {
  StepSpec s;
  char buf[64];
  if (decode > 0) {
    std::snprintf(buf, sizeof buf, "decode b=%lld ctx=%lld",
                  static_cast<long long>(decode), static_cast<long long>(ctx));
    s.name = buf;
  }
  if (chunk > 0) {
    std::snprintf(buf, sizeof buf, "%sprefill %lld after %lld",
                  s.name.empty() ? "" : " + ", static_cast<long long>(chunk),
                  static_cast<long long>(cached));
    s.name += buf;
  }
  const double layers = m.num_layers;
  const int64_t tokens = decode + chunk;
  for (OpKind k : {OpKind::kGemmQkv, OpKind::kGemmO, OpKind::kGemmGateUp,
                   OpKind::kGemmDown, OpKind::kElementwise}) {
    s.terms.push_back({{k, tokens, 0, 0}, layers});
  }
  s.terms.push_back({{OpKind::kGemmLmHead, decode + (chunk > 0), 0, 0}, 1});
  if (decode > 0) {
    s.terms.push_back({{OpKind::kDecodeAttention, 0, decode, ctx}, layers});
  }
  if (chunk > 0) {
    s.terms.push_back({{OpKind::kPrefillAttention, chunk, 1, cached}, layers});
  }
  return s;
}

std::vector<StepSpec> Steps(const ModelSpec& m) {
  return {Step(m, 1, 700, 0, 0),      Step(m, 7, 3000, 0, 0),
          Step(m, 48, 1500, 0, 0),    Step(m, 200, 6000, 0, 0),
          Step(m, 384, 12000, 0, 0),  Step(m, 0, 0, 300, 0),
          Step(m, 0, 0, 3000, 0),     Step(m, 0, 0, 1500, 5000),
          Step(m, 0, 0, 6000, 20000), Step(m, 64, 2500, 768, 1200),
          Step(m, 160, 900, 2048, 0)};
}

struct PointLess {
  bool operator()(const OpPoint& a, const OpPoint& b) const {
    return std::tie(a.kind, a.tokens, a.batch, a.context) <
           std::tie(b.kind, b.tokens, b.batch, b.context);
  }
};

}  // namespace

double StepCheck::ErrorPct() const {
  return 100 * (predicted_s - measured_s) / measured_s;
}

ValidationReport ValidateProfile(const CalibrationProfile& profile,
                                 const ModelSpec& model, const TimeFn& time) {
  const std::vector<StepSpec> steps = Steps(model);
  std::vector<OpPoint> points;
  std::map<OpPoint, double, PointLess> measured;
  for (const StepSpec& s : steps) {
    for (const Term& t : s.terms) {
      if (measured.emplace(t.point, 0).second) points.push_back(t.point);
    }
  }
  for (const OpTiming& t : time(points)) measured[t.point] = t.median_s;
  ValidationReport r;
  for (const StepSpec& s : steps) {
    StepCheck c;
    c.name = s.name;
    for (const Term& t : s.terms) {
      const ProfileOp op = ToProfileOp(t.point.kind);
      c.measured_s += t.count * measured[t.point];
      c.predicted_s +=
          t.count * PredictOp(profile.Fit(op), FeaturesOf(op, ToShape(t.point),
                                                          model, profile.tp));
    }
    r.mape_pct += std::fabs(c.ErrorPct()) / steps.size();
    r.worst_abs_pct = std::max(r.worst_abs_pct, std::fabs(c.ErrorPct()));
    r.steps.push_back(c);
  }
  return r;
}

nlohmann::json ValidationJson(const ValidationReport& r,
                              const CalibrationProfile& profile,
                              const std::string& profile_path) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepCheck& c : r.steps) {
    steps.push_back({{"step", c.name},
                     {"measured_s", c.measured_s},
                     {"predicted_s", c.predicted_s},
                     {"error_pct", c.ErrorPct()}});
  }
  return {{"profile", profile_path},
          {"device", profile.device.name},
          {"synthetic", profile.synthetic},
          {"model", profile.model},
          {"tp", profile.tp},
          {"excluded", "host step overhead and tensor-parallel all-reduces"},
          {"steps", steps},
          {"mape_pct", r.mape_pct},
          {"worst_abs_error_pct", r.worst_abs_pct}};
}

std::string ValidationTable(const ValidationReport& r) {
  std::string out =
      "  step                                         measured ms  "
      "predicted ms   error\n";
  char line[160];
  for (const StepCheck& c : r.steps) {
    std::snprintf(line, sizeof line, "  %-44s %11.3f %13.3f %+7.2f%%\n",
                  c.name.c_str(), c.measured_s * 1e3, c.predicted_s * 1e3,
                  c.ErrorPct());
    out += line;
  }
  std::snprintf(line, sizeof line,
                "  step MAPE %.2f%%, worst |error| %.2f%% (kernels only: host "
                "overhead and all-reduces excluded)\n",
                r.mape_pct, r.worst_abs_pct);
  return out + line;
}

}  // namespace servesim::calibrate
