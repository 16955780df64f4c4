// Calibration profile writing (see profile.h). The layout is the one
// ParseCalibrationProfile reads; empty arrays are omitted because the
// reader's number lists are non-empty by rule.
#include "calibrate/profile.h"

#include <ctime>
#include <fstream>

#include "calibrate/fit.h"
#include "calibrate/synthetic_source.h"
#include "sim/core/output_file.h"
#include "sim/core/json_view.h"

namespace servesim::calibrate {
namespace {

nlohmann::json GridJson(const GridTable& g) {
  nlohmann::json lines = nlohmann::json::array();
  for (const GridLine& l : g.lines) {
    lines.push_back({{"at", l.at}, {"x", l.x}, {"t_s", l.t_s}});
  }
  return lines;
}

nlohmann::json BaseJson(const GridBase& b) {
  nlohmann::json pieces = nlohmann::json::array();
  for (const GridBasePiece& p : b.pieces) {
    pieces.push_back({{"from", p.from},
                      {"floor_s", p.floor_s},
                      {"s_per_flop", p.s_per_flop},
                      {"s_per_byte", p.s_per_byte},
                      {"s_per_item", p.s_per_item},
                      {"crossover_p", p.crossover_p},
                      {"flops", p.flops},
                      {"bytes", p.bytes},
                      {"items", p.items}});
  }
  return {{"source", b.source}, {"pieces", pieces}};
}

nlohmann::json FitJson(const OpFit& f) {
  nlohmann::json j = {{"op", ProfileOpName(f.op)},
                      {"features", FeatureNames(f.op)},
                      {"form", FitFormName(f.form)}};
  if (!f.coefficients.empty()) j["coefficients"] = f.coefficients;
  if (!f.knots_log_x.empty()) {
    j["knots_log_x"] = f.knots_log_x;
    j["knots_log_y"] = f.knots_log_y;
  }
  if (f.form == FitForm::kGrid) {
    j["grid_lines"] = GridJson(f.grid);
    if (!f.grid.base.empty()) j["grid_base"] = BaseJson(f.grid.base);
  }
  if (!f.measured) j["measured"] = false;
  if (!f.note.empty()) j["note"] = f.note;
  j["heldout_mape_pct"] = f.heldout_mape_pct;
  j["candidate_mape_pct"] = f.candidate_mape_pct;
  j["fit_points"] = f.fit_points;
  j["heldout_points"] = f.heldout_points;
  return j;
}

nlohmann::json TimingJson(const ProfileTiming& t) {
  return {{"op", ProfileOpName(t.op)}, {"tokens", t.shape.tokens},
          {"batch", t.shape.batch},    {"context", t.shape.context},
          {"median_s", t.median_s},    {"p10_s", t.p10_s},
          {"p90_s", t.p90_s},          {"repetitions", t.repetitions}};
}

}  // namespace

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

CalibrationProfile BuildProfile(const ProfileInputs& in,
                                const std::vector<OpTiming>& timings,
                                std::vector<OpFit> fits) {
  CalibrationProfile p;
  const DeviceInfo& d = in.device;
  p.device = {
      d.name,         d.driver,        d.sm_count,         d.memory_bytes,
      d.sm_clock_mhz, d.mem_clock_mhz, d.copy_bytes_per_s, d.gemm_bf16_flops};
  p.synthetic = in.synthetic;
  p.gpu = in.gpu;
  p.date = in.date.empty() ? UtcNow() : in.date;
  p.model = in.model;
  p.tp = in.tp;
  p.step_overhead_s = in.step_overhead_s;
  p.step_overhead_source = in.step_overhead_source;
  p.holdout_every = in.holdout_every;
  p.ops = std::move(fits);
  for (const OpTiming& t : timings) {
    p.timings.push_back({ToProfileOp(t.point.kind), ToShape(t.point),
                         t.median_s, t.p10_s, t.p90_s, t.repetitions});
  }
  return p;
}

nlohmann::json ProfileToJson(const CalibrationProfile& p) {
  nlohmann::json j;
  j["format"] = "servesim-calibration-profile/1";
  j["synthetic"] = p.synthetic;
  if (p.synthetic) {
    j["note"] = std::string("NOT A MEASUREMENT: ") + kDryRunDeviceName +
                "; written by servesim-calibrate run --dry-run to exercise "
                "the pipeline";
  }
  const ProfileDevice& d = p.device;
  j["device"] = {{"name", d.name},
                 {"driver", d.driver},
                 {"sm_count", d.sm_count},
                 {"memory_bytes", d.memory_bytes},
                 {"sm_clock_mhz", d.sm_clock_mhz},
                 {"mem_clock_mhz", d.mem_clock_mhz},
                 {"copy_bytes_per_s", d.copy_bytes_per_s},
                 {"gemm_bf16_flops", d.gemm_bf16_flops}};
  j["gpu"] = p.gpu;
  j["date"] = p.date;
  j["model"] = p.model;
  j["dtype"] = p.dtype;
  j["kv_cache_dtype"] = p.kv_cache_dtype;
  j["tp"] = p.tp;
  j["step_overhead_s"] = p.step_overhead_s;
  j["step_overhead_source"] = p.step_overhead_source;
  j["holdout_every"] = p.holdout_every;
  nlohmann::json ops = nlohmann::json::array();
  for (const OpFit& f : p.ops) ops.push_back(FitJson(f));
  j["ops"] = ops;
  if (!p.timings.empty()) {
    nlohmann::json timings = nlohmann::json::array();
    for (const ProfileTiming& t : p.timings) timings.push_back(TimingJson(t));
    j["timings"] = timings;
  }
  if (!p.allreduce.empty()) {
    j["allreduce"] = {{"grid_lines", GridJson(p.allreduce)},
                      {"heldout_mape_pct", p.allreduce_heldout_mape_pct},
                      {"source", p.allreduce_source}};
    if (!p.allreduce.base.empty()) {
      j["allreduce"]["grid_base"] = BaseJson(p.allreduce.base);
    }
  }
  if (!p.import_info.is_null()) j["import"] = p.import_info;
  return j;
}

Status WriteProfile(const std::string& path, const CalibrationProfile& p) {
  return WriteTextFile(path, DumpOutputJson(ProfileToJson(p), 1) + "\n");
}

StatusOr<CalibrationProfile> ReadProfile(const std::string& path) {
  return CatchConfigErrors([&] { return LoadCalibrationProfile(path); });
}

}  // namespace servesim::calibrate
