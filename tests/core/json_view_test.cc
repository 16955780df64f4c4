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

TEST(JsonViewTest, BoundsAndValuesAreQuotedExactly) {
  // Six significant digits would misquote 2^24 as 1.67772e+07.
  EXPECT_EQ(Range::Closed(1, 1 << 24).Describe(), "in [1, 16777216]");
  EXPECT_EQ(Range::Closed(1e-6, 1e9).Describe(), "in [1e-06, 1e+09]");
  EXPECT_EQ(Range::Closed(1, 1e5).Describe(), "in [1, 100000]");
  EXPECT_EQ(DescribeJson(nlohmann::json(1e12)), "1e+12");
  EXPECT_EQ(DescribeJson(nlohmann::json(2147483638.0)), "2147483638");
  EXPECT_EQ(DescribeJson(nlohmann::json(0.1)), "0.1");
  EXPECT_EQ(DescribeJson(nlohmann::json(-3)), "-3");
}

// The problem ParseJsonStrict reports for `text` ("" if it parses).
std::string ProblemOf(std::string_view text) {
  nlohmann::json j;
  auto p = ParseJsonStrict(text, &j);
  return p ? p->message() : "";
}

TEST(JsonViewTest, StrictParseBuildsTheSameDocument) {
  const std::string text =
      R"({"a": [1, -2, 3.5, 18446744073709551615, "x", null, true, {}],
          "b": {"c": [[]], "d": "é"}})";
  nlohmann::json j;
  ASSERT_FALSE(ParseJsonStrict(text, &j));
  EXPECT_EQ(j, nlohmann::json::parse(text));
  ASSERT_FALSE(ParseJsonStrict("42", &j));
  EXPECT_EQ(j, 42);
}

TEST(JsonViewTest, StrictParseRejectsDuplicateKeysWithTheirPath) {
  EXPECT_EQ(ProblemOf(R"({"w": {"a": {"rate": 1, "rate": 2}}})"),
            "/w/a/rate: duplicate key: \"rate\" is given twice in the same "
            "object; expected each key once");
  EXPECT_TRUE(Contains(ProblemOf(R"({"w": [{"x": 1}, {"y": 1, "y": 2}]})"),
                       {"/w/1/y: duplicate key"}));
  // The same key in different objects is fine.
  EXPECT_EQ(ProblemOf(R"({"a": {"k": 1}, "b": {"k": 1}})"), "");
}

TEST(JsonViewTest, StrictParseBoundsTheDepth) {
  std::string ok(kMaxJsonDepth, '[');
  ok += std::string(kMaxJsonDepth, ']');
  EXPECT_EQ(ProblemOf(ok), "");
  // 100,000 levels used to overflow the stack when the DOM was copied.
  const std::string deep = "{\"a\": " + std::string(100000, '[');
  const std::string p = ProblemOf(deep);
  EXPECT_TRUE(Contains(p, {"/a/0/0/0", "nesting deeper than 64 levels"})) << p;
}

TEST(JsonViewTest, StrictParseNamesNumbersOutOfRange) {
  EXPECT_EQ(ProblemOf("{\"x\": {\"rate\":\n  1e400}}"),
            "/x/rate: number out of range: 1e400 (line 2, column 7); expected "
            "a finite number");
  EXPECT_TRUE(Contains(ProblemOf("[1, -1e999]"), {"/1: number out of range"}));
}

TEST(JsonViewTest, StrictParseKeepsSyntaxErrorsApart) {
  nlohmann::json j;
  auto p = ParseJsonStrict("{\"seed\": 1,,}", &j);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->syntax);
  EXPECT_TRUE(Contains(p->message(), {"invalid JSON: parse error at line 1"}));
  p = ParseJsonStrict("{\"a\": 1, \"a\": 2}", &j);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->syntax);
  EXPECT_EQ(ErrorOf([] { ParseJsonOrThrow("[1,", "f.json"); }).rfind(
                "f.json: invalid JSON: parse error", 0),
            0u);
}

TEST(JsonViewTest, Utf8AndPrintableText) {
  EXPECT_TRUE(IsValidUtf8("plain \xc3\xa9 \xe2\x89\xa5 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));          // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));  // surrogate
  EXPECT_EQ(PrintableText("a\nb\tc\rd\x01\x7f"), "a\\nb\\tc\\rd\\x01\\x7F");
  EXPECT_EQ(PrintableText("x\xffy \xc3\xa9"), "x\\xFFy \xc3\xa9");
}

TEST(JsonViewTest, NearestNameOnlySuggestsCloseNames) {
  EXPECT_EQ(NearestName("lognromal", {"normal", "lognormal"}), "lognormal");
  EXPECT_EQ(NearestName("xyz", {"lognormal", "exponential"}), "");
}

}  // namespace
}  // namespace servesim
