// compare-engines (calibrate/compare_engines.h) on the shipped H200
// Llama-3.1-70B tp=4 profiles: a profile against itself is 1.00 in every
// part; with its all-reduce grid doubled, only the all-reduce column and
// the step move; vLLM's against SGLang's prices each step with each
// profile's own kernels (the same numbers CalibratedCostModel gives).
#include "calibrate/compare_engines.h"

#include <gtest/gtest.h>

#include "calibrate/compare_models.h"
#include "sim/core/paths.h"
#include "sim/model/model_loader.h"

namespace servesim::calibrate {
namespace {

struct Deployment {
  ModelSpec m = LoadModelSpec("llama-3.1-70b");
  GpuSpec g = LoadGpuSpec("h200");
  CalibrationProfile Load(const std::string& name) const {
    return LoadCalibrationProfile(RepoRoot() + "/models/profiles/" + name);
  }
  CalibratedCostModel Model(const CalibrationProfile& p) const {
    return CalibratedCostModel(p, "p.json", m, g, g, 4);
  }
};

TEST(CompareEnginesTest, SameProfileIsOneEverywhere) {
  const Deployment d;
  const CalibrationProfile p = d.Load("h200-llama-3.1-70b-tp4-sglang.json");
  const std::vector<EngineRow> rows = CompareEngines(d.Model(p), d.Model(p));
  ASSERT_EQ(rows.size(), CompareGrid().size());
  const std::string t = EngineTable(rows, "t", "A", "B");
  EXPECT_NE(t.find("decode   step B/A 1.00-1.00"), std::string::npos) << t;
  EXPECT_NE(t.find("prefill  step B/A 1.00-1.00"), std::string::npos) << t;
  // A decode step has no prefill attention in either: "-".
  const size_t at = t.find("batch 64 x ctx 1024 ");
  ASSERT_NE(at, std::string::npos) << t;
  const std::string line = t.substr(at, t.find('\n', at) - at);
  EXPECT_NE(line.find("1.00   1.00      -   1.00"), std::string::npos) << line;
}

TEST(CompareEnginesTest, DoubledAllReduceMovesOnlyItsColumn) {
  const Deployment d;
  const CalibrationProfile p = d.Load("h200-llama-3.1-70b-tp4-sglang.json");
  CalibrationProfile q = p;
  for (GridLine& l : q.allreduce.lines) {
    for (double& s : l.t_s) s *= 2;
  }
  const std::vector<EngineRow> rows = CompareEngines(d.Model(p), d.Model(q));
  for (const EngineRow& r : rows) {
    EXPECT_DOUBLE_EQ(r.b.gemm_s, r.a.gemm_s) << r.shape;
    EXPECT_NEAR(r.b.comm_s / r.a.comm_s, 2, 1e-9) << r.shape;
    EXPECT_GT(r.b.Total(), r.a.Total()) << r.shape;
  }
}

TEST(CompareEnginesTest, EachSideIsItsOwnProfilesPrice) {
  const Deployment d;
  const CalibrationProfile v = d.Load("h200-llama-3.1-70b-tp4.json");
  const CalibrationProfile s = d.Load("h200-llama-3.1-70b-tp4-sglang.json");
  const CalibratedCostModel mv = d.Model(v), ms = d.Model(s);
  const std::vector<EngineRow> rows = CompareEngines(mv, ms);
  const std::vector<CompareShape> grid = CompareGrid();
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_DOUBLE_EQ(rows[i].a.Total(), mv.StepTime(grid[i].batch).Total());
    EXPECT_DOUBLE_EQ(rows[i].b.Total(), ms.StepTime(grid[i].batch).Total());
  }
  // The engines' kernels differ: some step is priced differently.
  bool differ = false;
  for (const EngineRow& r : rows) differ |= r.a.Total() != r.b.Total();
  EXPECT_TRUE(differ);
}

}  // namespace
}  // namespace servesim::calibrate
