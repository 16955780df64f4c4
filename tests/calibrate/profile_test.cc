// Tests of profile writing and the simulator's strict profile reader.
#include "calibrate/profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "tests/calibrate/dry_run_profile.h"

namespace servesim::calibrate {
namespace {

TEST(ProfileTest, JsonRoundTripsExactly) {
  const CalibrationProfile p = testing::DryRunProfile("llama-3.1-8b", 1);
  const std::string path = testing::WriteTemp(p, "roundtrip.json");
  StatusOr<CalibrationProfile> back = ReadProfile(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->model, "llama-3.1-8b");
  EXPECT_EQ(back->tp, 1);
  EXPECT_TRUE(back->synthetic);
  EXPECT_EQ(back->device.name, kDryRunDeviceName);
  EXPECT_EQ(back->date, p.date);
  ASSERT_EQ(back->ops.size(), p.ops.size());
  for (size_t i = 0; i < p.ops.size(); ++i) {
    EXPECT_EQ(back->ops[i].form, p.ops[i].form);
    EXPECT_EQ(back->ops[i].coefficients, p.ops[i].coefficients);
    EXPECT_EQ(back->ops[i].knots_log_y, p.ops[i].knots_log_y);
    EXPECT_EQ(back->ops[i].heldout_mape_pct, p.ops[i].heldout_mape_pct);
    EXPECT_EQ(back->ops[i].candidate_mape_pct, p.ops[i].candidate_mape_pct);
  }
  ASSERT_EQ(back->timings.size(), p.timings.size());
  EXPECT_EQ(back->timings[7].median_s, p.timings[7].median_s);
  EXPECT_EQ(back->timings[7].shape.tokens, p.timings[7].shape.tokens);
  // Written again, the same bytes.
  EXPECT_EQ(ProfileToJson(*back).dump(), ProfileToJson(p).dump());
}

std::string ParseError(nlohmann::json j) {
  try {
    ParseCalibrationProfile(JsonView(j, "p.json"));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ProfileTest, ReaderRejectsUnknownKeysWithFileAndPath) {
  nlohmann::json j = ProfileToJson(testing::DryRunProfile("llama-3.1-8b", 1));
  j["ops"][2]["coeficients"] = j["ops"][2]["coefficients"];
  {
    const std::string e = ParseError(j);
    EXPECT_NE(e.find("p.json: /ops/2/coeficients: unknown key"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("did you mean \"coefficients\""), std::string::npos) << e;
  }
}

TEST(ProfileTest, ReaderRejectsMissingOpsAndBadFits) {
  nlohmann::json j = ProfileToJson(testing::DryRunProfile("llama-3.1-8b", 1));
  nlohmann::json missing = j;
  missing["ops"].erase(missing["ops"].begin() + 6);
  EXPECT_NE(
      ParseError(missing).find("/ops: missing a fit for prefill_attention"),
      std::string::npos)
      << ParseError(missing);
  nlohmann::json negative = j;
  negative["ops"][0]["form"] = "max";
  negative["ops"][0]["coefficients"] = {1e-6, -1, 2};
  EXPECT_NE(ParseError(negative).find("/ops/0/coefficients/1"),
            std::string::npos)
      << ParseError(negative);
  nlohmann::json features = j;
  features["ops"][5]["features"] = {"flops", "bytes"};
  EXPECT_NE(ParseError(features).find("/ops/5/features: expected [sequences, "
                                      "kv_bytes]"),
            std::string::npos)
      << ParseError(features);
  nlohmann::json format = j;
  format["format"] = "something-else";
  EXPECT_NE(ParseError(format).find("/format"), std::string::npos);
}

// A grid's residual base (GridBase) is read as strictly as the rest: each
// piece needs a positive floor (the base's logarithm must exist), the first
// piece starts at 0 and later ones above it, polynomials have 3 terms, and
// only a grid form may carry one.
TEST(ProfileTest, ReaderChecksGridBases) {
  nlohmann::json j = ProfileToJson(testing::DryRunProfile("llama-3.1-8b", 1));
  nlohmann::json& op = j["ops"][5];
  op["form"] = "grid";
  op.erase("coefficients");
  op["grid_lines"] = {{{"at", 1}, {"x", {1, 4}}, {"t_s", {4e-6, 15e-6}}}};
  nlohmann::json piece = {{"from", 0},         {"floor_s", 1e-6},
                          {"s_per_flop", 0},   {"s_per_byte", 1e-6},
                          {"s_per_item", 0},   {"crossover_p", 0},
                          {"flops", {0, 0, 0}}, {"bytes", {0, 1, 0}},
                          {"items", {0, 0, 0}}};
  op["grid_base"] = {{"source", "test"}, {"pieces", {piece}}};
  const CalibrationProfile p = ParseCalibrationProfile(JsonView(j, "p.json"));
  ASSERT_EQ(p.ops[5].grid.base.pieces.size(), 1u);
  OpFeatures f;
  f.size = 1;
  f.grid_inner = 2;  // residual sqrt(2 x 3) times base 3 us
  EXPECT_NEAR(PredictOp(p.ops[5], f), 3e-6 * std::sqrt(6.0), 1e-18);
  auto error_with = [&](const char* key, nlohmann::json value) {
    nlohmann::json bad = j;
    bad["ops"][5]["grid_base"]["pieces"][0][key] = value;
    return ParseError(bad);
  };
  EXPECT_NE(error_with("floor_s", 0).find("/ops/5/grid_base/pieces/0/floor_s"),
            std::string::npos)
      << error_with("floor_s", 0);
  EXPECT_NE(error_with("from", 5).find("/ops/5/grid_base/pieces/0/from"),
            std::string::npos);
  EXPECT_NE(error_with("bytes", {1, 2}).find("/ops/5/grid_base/pieces/0/bytes"),
            std::string::npos);
  EXPECT_NE(error_with("s_per_byte", -1).find("s_per_byte"), std::string::npos);
  EXPECT_NE(error_with("crossover", 2).find("unknown key"), std::string::npos);
  nlohmann::json second = j;
  second["ops"][5]["grid_base"]["pieces"].push_back(piece);  // from 0 again
  EXPECT_NE(ParseError(second).find("/ops/5/grid_base/pieces/1/from"),
            std::string::npos)
      << ParseError(second);
  nlohmann::json not_grid = ProfileToJson(testing::DryRunProfile("llama-3.1-8b", 1));
  not_grid["ops"][0]["grid_base"] = j["ops"][5]["grid_base"];
  EXPECT_NE(ParseError(not_grid).find("/ops/0/grid_base"), std::string::npos)
      << ParseError(not_grid);
  // Written again, the same bytes.
  EXPECT_EQ(ProfileToJson(p).dump(), ProfileToJson(
      ParseCalibrationProfile(JsonView(ProfileToJson(p), "q.json"))).dump());
}

TEST(ProfileTest, ReadProfileNamesAMissingFile) {
  StatusOr<CalibrationProfile> p = ReadProfile("/no/such/profile.json");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("/no/such/profile.json: cannot open"),
            std::string::npos);
}

}  // namespace
}  // namespace servesim::calibrate
