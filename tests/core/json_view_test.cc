// Tests for JsonView: the error messages name the file, JSON path, what was
// expected and what was found; unknown keys and bad choices get suggestions.
#include "sim/core/json_view.h"

#include <gtest/gtest.h>

#include "tests/text_assertions.h"

#include <string>
#include <string_view>

#include "sim/core/status.h"

namespace servesim {
namespace {

// The message of the ConfigError that fn throws ("" if none).
template <typename Fn>
std::string ErrorOf(Fn fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// Passes when `text` contains every one of `parts`; prints `text` if not.
using testing::Contains;

TEST(JsonViewTest, UnknownKeySuggestsTheNearestAllowedKey) {
  const nlohmann::json j = {{"rate", 3}, {"burstines", 0.5}};
  const JsonView v(j, "s.json", "/workload/arrival");
  const std::string msg = ErrorOf([&] {
    v.AllowKeys({"process", "rate", "burstiness"});
  });
  EXPECT_TRUE(Contains(msg, {"s.json: /workload/arrival/burstines",
                             "unknown key", "did you mean \"burstiness\""}));
}

TEST(JsonViewTest, UnknownKeyFarFromAnyGetsNoSuggestion) {
  const nlohmann::json j = {{"zzzzzzzz", 1}};
  const JsonView v(j, "s.json");
  const std::string msg = ErrorOf([&] { v.AllowKeys({"rate"}); });
  EXPECT_TRUE(Contains(msg, {"/zzzzzzzz: unknown key"}));
  EXPECT_FALSE(Contains(msg, {"did you mean"}));
}

TEST(JsonViewTest, AllowedKeysPass) {
  const nlohmann::json j = {{"rate", 3}};
  EXPECT_NO_THROW(JsonView(j, "s.json").AllowKeys({"rate", "process"}));
}

TEST(JsonViewTest, RangeErrorNamesPathExpectationAndValue) {
  const nlohmann::json j = {{"rate", -3}};
  const JsonView v(j, "scenarios/x.json", "/workload/arrival");
  EXPECT_EQ(ErrorOf([&] { v.RequireNumber("rate", Range::Positive()); }),
            "scenarios/x.json: /workload/arrival/rate: expected a number > 0, "
            "got -3");
  const std::string closed =
      ErrorOf([&] { v.Number("rate", 1, Range::Closed(0, 1)); });
  EXPECT_TRUE(
      Contains(closed, {"/workload/arrival/rate", "in [0, 1]", "got -3"}));
}

TEST(JsonViewTest, MissingRequiredNumberSaysNothingWasGiven) {
  const nlohmann::json j = nlohmann::json::object();
  const JsonView v(j, "s.json", "/a");
  EXPECT_TRUE(Contains(ErrorOf([&] { v.RequireNumber("rate"); }),
                       {"/a/rate", "got nothing"}));
  EXPECT_EQ(v.Number("rate", 2.5), 2.5);
}

TEST(JsonViewTest, IntegerRejectsFractionsButAcceptsIntegralFloats) {
  const nlohmann::json j = {{"a", 12.5}, {"b", 12.0}, {"c", "12"}};
  const JsonView v(j, "s.json");
  EXPECT_TRUE(Contains(ErrorOf([&] { v.RequireInteger("a"); }),
                       {"/a: expected an integer", "got 12.5"}));
  EXPECT_EQ(v.RequireInteger("b"), 12);
  EXPECT_TRUE(
      Contains(ErrorOf([&] { v.RequireInteger("c"); }), {"got \"12\""}));
}

TEST(JsonViewTest, NumberRejectsStrings) {
  const nlohmann::json j = {{"rate", "fast"}};
  EXPECT_TRUE(
      Contains(ErrorOf([&] { JsonView(j, "s.json").RequireNumber("rate"); }),
               {"expected a number, got \"fast\""}));
}

TEST(JsonViewTest, ChoiceSuggestsTheNearestName) {
  const nlohmann::json j = {{"process", "gama"}};
  const JsonView v(j, "s.json", "/arrival");
  const std::string msg = ErrorOf([&] {
    v.Choice("process", "", {"poisson", "gamma"});
  });
  EXPECT_TRUE(Contains(
      msg, {"/arrival/process", "did you mean \"gamma\"", "got \"gama\""}));
  const nlohmann::json ok = {{"process", "gamma"}};
  EXPECT_EQ(JsonView(ok, "s.json").Choice("process", "", {"poisson", "gamma"}),
            "gamma");
}

TEST(JsonViewTest, NullTakesTheDefault) {
  const nlohmann::json j = {{"rate", nullptr}};
  const JsonView v(j, "s.json");
  EXPECT_FALSE(v.Has("rate"));
  EXPECT_EQ(v.Number("rate", 4), 4);
}

TEST(JsonViewTest, NestedObjectsCarryTheirPath) {
  const nlohmann::json j = {{"workload", {{"arrival", {{"rate", 0}}}}}};
  const JsonView root(j, "s.json");
  const JsonView arrival = root.Object("workload").Object("arrival");
  EXPECT_EQ(arrival.path(), "/workload/arrival");
  EXPECT_EQ(ErrorOf([&] { arrival.RequireNumber("rate", Range::Positive()); }),
            "s.json: /workload/arrival/rate: expected a number > 0, got 0");
}

TEST(JsonViewTest, NearestNameOnlySuggestsCloseNames) {
  EXPECT_EQ(NearestName("lognromal", {"normal", "lognormal"}), "lognormal");
  EXPECT_EQ(NearestName("xyz", {"lognormal", "exponential"}), "");
}

}  // namespace
}  // namespace servesim
