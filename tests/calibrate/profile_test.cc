// Tests of profile writing and the simulator's strict profile reader.
#include "calibrate/profile.h"

#include <gtest/gtest.h>

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

TEST(ProfileTest, ReadProfileNamesAMissingFile) {
  StatusOr<CalibrationProfile> p = ReadProfile("/no/such/profile.json");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("/no/such/profile.json: cannot open"),
            std::string::npos);
}

}  // namespace
}  // namespace servesim::calibrate
