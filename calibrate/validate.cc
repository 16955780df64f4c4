// Predicted vs executed steps (see validate.h).
#include "calibrate/validate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "calibrate/step_sample.h"
#include "sim/metrics/stats.h"

namespace servesim::calibrate {
namespace {

// Step indices ordered by |error| of model m, worst first.
std::vector<size_t> WorstSteps(const ModelErrors& m, int worst) {
  std::vector<size_t> idx(m.error_pct.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return std::fabs(m.error_pct[a]) > std::fabs(m.error_pct[b]);
  });
  idx.resize(std::min<size_t>(idx.size(), std::max(worst, 0)));
  return idx;
}

std::string Context(const ValidationContext& c, size_t steps) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%zu steps sampled evenly from %lld steps of a simulated run of "
                "%s (seed %llu); %s tp=%d; measured by %s on %s%s; %d of %d "
                "layers with their own weights and KV",
                steps, static_cast<long long>(c.simulated_steps),
                c.scenario.c_str(), static_cast<unsigned long long>(c.seed),
                c.model.c_str(), c.tp, c.measured_by.c_str(), c.device.c_str(),
                c.synthetic ? " [SYNTHETIC: not a measurement]" : "",
                c.distinct_layers, c.total_layers);
  return buf;
}

}  // namespace

StepValidation ValidateSteps(const std::vector<BatchShape>& steps,
                             const std::vector<StepTiming>& measured,
                             const std::vector<NamedCostModel>& models) {
  if (steps.size() != measured.size() || steps.empty()) {
    throw std::invalid_argument("validate: " + std::to_string(steps.size()) +
                                " steps but " + std::to_string(measured.size()) +
                                " measurements");
  }
  for (size_t i = 0; i < measured.size(); ++i) {
    if (!(measured[i].median_s > 0) || !std::isfinite(measured[i].median_s)) {
      throw std::invalid_argument("validate: step " + std::to_string(i) +
                                  " has no positive measured time");
    }
  }
  StepValidation v{steps, measured, {}};
  for (const NamedCostModel& nm : models) {
    ModelErrors e;
    e.name = nm.name;
    e.description = nm.model->Describe();
    std::map<std::string, std::pair<double, int>> by_class;
    for (size_t i = 0; i < steps.size(); ++i) {
      const double pred = nm.model->StepTime(steps[i]).Kernels();
      const double err = 100 * (pred - measured[i].median_s) / measured[i].median_s;
      e.predicted_s.push_back(pred);
      e.error_pct.push_back(err);
      e.mape_pct += std::fabs(err) / steps.size();
      e.bias_pct += err / steps.size();
      auto& [sum, n] = by_class[StepClass(steps[i])];
      sum += std::fabs(err);
      ++n;
    }
    for (const auto& [cls, sn] : by_class) {
      e.class_mape_pct[cls] = sn.first / sn.second;
    }
    std::vector<double> abs_err;
    for (double x : e.error_pct) abs_err.push_back(std::fabs(x));
    std::sort(abs_err.begin(), abs_err.end());
    e.p50_abs_pct = PercentileOfSorted(abs_err, 50);
    e.p99_abs_pct = PercentileOfSorted(abs_err, 99);
    v.models.push_back(std::move(e));
  }
  return v;
}

nlohmann::json ValidationJson(const StepValidation& v,
                              const ValidationContext& c, int worst) {
  nlohmann::json models = nlohmann::json::object();
  for (const ModelErrors& m : v.models) {
    nlohmann::json w = nlohmann::json::array();
    for (size_t i : WorstSteps(m, worst)) {
      w.push_back({{"step", StepLabel(v.steps[i])},
                   {"measured_s", v.measured[i].median_s},
                   {"predicted_s", m.predicted_s[i]},
                   {"error_pct", m.error_pct[i]}});
    }
    models[m.name] = {{"cost_model", m.description},
                      {"mape_pct", m.mape_pct},
                      {"p50_abs_error_pct", m.p50_abs_pct},
                      {"p99_abs_error_pct", m.p99_abs_pct},
                      {"mean_signed_error_pct", m.bias_pct},
                      {"mape_pct_by_step_class", m.class_mape_pct},
                      {"worst_steps", w}};
  }
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < v.steps.size(); ++i) {
    nlohmann::json seqs = nlohmann::json::array();
    for (const SeqWork& s : v.steps[i].seqs) {
      seqs.push_back({s.new_tokens, s.context_tokens, s.samples});
    }
    nlohmann::json pred = nlohmann::json::object();
    for (const ModelErrors& m : v.models) pred[m.name] = m.predicted_s[i];
    steps.push_back({{"class", StepClass(v.steps[i])},
                     {"label", StepLabel(v.steps[i])},
                     {"seqs_new_context_samples", seqs},
                     {"measured_median_s", v.measured[i].median_s},
                     {"measured_p10_s", v.measured[i].p10_s},
                     {"measured_p90_s", v.measured[i].p90_s},
                     {"repetitions", v.measured[i].repetitions},
                     {"predicted_s", pred}});
  }
  return {{"context", Context(c, v.steps.size())},
          {"profile", c.profile_path},
          {"device", c.device},
          {"driver", c.driver},
          {"synthetic", c.synthetic},
          {"model", c.model},
          {"tp", c.tp},
          {"scenario", c.scenario},
          {"seed", c.seed},
          {"measured_by", c.measured_by},
          {"distinct_layers", c.distinct_layers},
          {"total_layers", c.total_layers},
          {"compared", "GPU kernel time of the forward pass; all-reduces and "
                       "host overhead excluded on both sides"},
          {"models", models},
          {"steps", steps}};
}

std::string ValidationTable(const StepValidation& v,
                            const ValidationContext& c, int worst) {
  std::string out = "  " + Context(c, v.steps.size()) + "\n";
  out += "  compared: GPU kernel time of the forward pass (all-reduces and "
         "host overhead excluded on both sides)\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-11s %8s %9s %9s %9s   %s\n", "cost model",
                "MAPE", "p50 |err|", "p99 |err|", "bias", "MAPE by step class");
  out += line;
  for (const ModelErrors& m : v.models) {
    std::string cls;
    for (const auto& [k, x] : m.class_mape_pct) {
      char b[48];
      std::snprintf(b, sizeof b, "%s%s %.2f%%", cls.empty() ? "" : ", ", k.c_str(), x);
      cls += b;
    }
    std::snprintf(line, sizeof line, "  %-11s %7.2f%% %8.2f%% %8.2f%% %+8.2f%%   %s\n",
                  m.name.c_str(), m.mape_pct, m.p50_abs_pct, m.p99_abs_pct,
                  m.bias_pct, cls.c_str());
    out += line;
  }
  for (const ModelErrors& m : v.models) {
    out += "  worst steps for " + m.name + " (measured ms, predicted ms, error):\n";
    for (size_t i : WorstSteps(m, worst)) {
      std::snprintf(line, sizeof line, "    %9.3f %9.3f %+8.2f%%  %s\n",
                    v.measured[i].median_s * 1e3, m.predicted_s[i] * 1e3,
                    m.error_pct[i], StepLabel(v.steps[i]).c_str());
      out += line;
    }
  }
  return out;
}

}  // namespace servesim::calibrate
