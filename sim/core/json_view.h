// JsonView: strict, path-aware reading of a JSON configuration object.
//
// Every getter knows the file and the JSON path of the value it reads, so an
// error names both: "scenarios/x.json: /workload/arrival/rate: expected a
// number > 0, got -3". AllowKeys() rejects unknown keys and suggests the
// nearest valid one. Absent and null values both take the documented default.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

// An interval of allowed numbers; Describe() words it for error messages.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;

  static Range Any() { return {}; }
  static Range Positive() { return {0, Range{}.hi, true, false}; }
  static Range NonNegative() { return {0, Range{}.hi, false, false}; }
  static Range AtLeast(double lo) { return {lo, Range{}.hi, false, false}; }
  static Range Closed(double lo, double hi) { return {lo, hi, false, false}; }
  static Range OpenClosed(double lo, double hi) { return {lo, hi, true, false}; }
  bool Contains(double x) const;
  std::string Describe() const;  // e.g. "> 0", "in [0, 1]"
};

class JsonView {
 public:
  JsonView(const nlohmann::json& j, std::string file, std::string path = "");

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  const nlohmann::json& raw() const { return j_; }
  std::string PathOf(std::string_view key) const;

  // True when the key is present and not null.
  bool Has(std::string_view key) const;
  // The object at key; an error if missing or not an object.
  JsonView Object(std::string_view key) const;
  // The array at key, one view per element; an error if not an array.
  std::vector<JsonView> Array(std::string_view key) const;

  double Number(std::string_view key, double def, Range r = Range::Any()) const;
  double RequireNumber(std::string_view key, Range r = Range::Any()) const;
  std::optional<double> OptionalNumber(std::string_view key,
                                       Range r = Range::Any()) const;
  int64_t Integer(std::string_view key, int64_t def,
                  Range r = Range::Any()) const;
  int64_t RequireInteger(std::string_view key, Range r = Range::Any()) const;
  std::optional<int64_t> OptionalInteger(std::string_view key,
                                         Range r = Range::Any()) const;
  bool Bool(std::string_view key, bool def) const;
  std::string String(std::string_view key, std::string_view def) const;
  std::string RequireString(std::string_view key) const;
  // A string that must be one of `choices`; suggests the nearest on error.
  std::string Choice(std::string_view key, std::string_view def,
                     std::initializer_list<std::string_view> choices) const;
  std::string Choice(std::string_view key, std::string_view def,
                     const std::vector<std::string>& choices) const;
  std::vector<double> Numbers(std::string_view key, std::vector<double> def,
                              Range r = Range::Any()) const;

  // Rejects any key not in `allowed`, suggesting the nearest allowed key.
  void AllowKeys(std::initializer_list<std::string_view> allowed) const;
  // Throws ConfigError "<file>: <path/key>: expected <expected>, got <value>".
  [[noreturn]] void Fail(std::string_view key, std::string_view expected) const;
  [[noreturn]] void FailMessage(std::string_view key,
                                std::string_view message) const;

 private:
  const nlohmann::json* Find(std::string_view key) const;
  double CheckedNumber(std::string_view key, const nlohmann::json& v,
                       Range r) const;
  int64_t CheckedInteger(std::string_view key, const nlohmann::json& v,
                         Range r) const;

  const nlohmann::json& j_;
  std::string file_;
  std::string path_;
};

// A short description of a JSON value for error messages: `-3`, `"abc"`,
// `an object`, `an array`, `null`.
std::string DescribeJson(const nlohmann::json& v);
// Nearest candidate by edit distance, or "" when none is close.
std::string NearestName(std::string_view name,
                        const std::vector<std::string>& candidates);

// Configuration JSON is parsed strictly: a key given twice in one object, a
// number beyond double's range (1e400) and nesting deeper than this are
// errors naming the JSON path, never silently last-wins, infinite or a
// crash. No configuration file needs more than a handful of levels.
inline constexpr int kMaxJsonDepth = 64;

struct JsonParseProblem {
  std::string path;  // "/a/b" for a duplicate, depth or range problem
  // "duplicate key: ...", or for a plain syntax error (path empty)
  // "invalid JSON: parse error at line 1, column 2: ...".
  std::string what;
  bool syntax = false;  // a plain syntax error (not duplicate/depth/range)
  // "/a/b: duplicate key: ..." or "invalid JSON: ..."; never the file name.
  std::string message() const { return path.empty() ? what : path + ": " + what; }
};
// Parses `text` into *out; on failure returns the problem and leaves *out
// unspecified.
std::optional<JsonParseProblem> ParseJsonStrict(std::string_view text,
                                                nlohmann::json* out);
// As ParseJsonStrict, throwing ConfigError "<label>: <problem>".
nlohmann::json ParseJsonOrThrow(std::string_view text, const std::string& label);
// Reads a JSON configuration file (see ReadInputFile: a regular file of at
// most max_bytes) and parses it strictly; `what` names it in errors
// ("scenario file", "model file"). Throws ConfigError.
nlohmann::json ReadJsonFile(const std::string& path, const std::string& what,
                            uintmax_t max_bytes = uintmax_t{16} << 20);

// True when `s` is well-formed UTF-8 (what nlohmann's dump() requires).
bool IsValidUtf8(std::string_view s);
// `s` made safe for a one-line message: control characters are written as
// \n, \t, \r or \xNN, bytes that are not valid UTF-8 as \xNN; valid
// UTF-8 text is kept as is.
std::string PrintableText(std::string_view s);
// The text of an output document (a result, a report, a profile). A string
// in it that is not UTF-8 -- a file name given as raw bytes, which names a
// real file -- has its bad bytes written as U+FFFD instead of throwing
// (nlohmann's dump() would, and the command would abort).
std::string DumpOutputJson(const nlohmann::json& j, int indent);

}  // namespace servesim
