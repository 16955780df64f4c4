// The "empirical" length family: uniform resampling, with replacement, of a
// CSV column. The reader is strict because a silently dropped or misread row
// would bias every statistic computed downstream.
#include "sim/workload/empirical_lengths.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string_view>
#include <utility>

#include "sim/core/paths.h"
#include "sim/core/status.h"
#include "sim/workload/length_families.h"

namespace servesim {
namespace {

constexpr int64_t kMaxCount = kMaxLengthTokens;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Splits one CSV line. A field may be wrapped in double quotes, inside which
// commas are literal and "" is one quote; records spanning lines are not
// supported (token-count traces never need them). Returns false on an
// unterminated quote.
bool SplitCsvLine(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"' && Trim(field).empty()) {
      quoted = true;
      field.clear();
    } else if (c == ',') {
      fields.emplace_back(Trim(field));
      field.clear();
    } else {
      field += c;
    }
  }
  fields.emplace_back(Trim(field));
  return !quoted;
}

// Parses a whole field as a non-negative integer; integral decimals such as
// "1730.0" are accepted because some exporters write counts as floats.
bool ParseCount(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  int64_t n = 0;
  auto [p, ec] = std::from_chars(s.data(), end, n);
  if (ec == std::errc() && p == end) {
    out = n;
    return n >= 0 && n <= kMaxCount;
  }
  double x = 0;
  auto [q, ec2] = std::from_chars(s.data(), end, x);
  if (ec2 != std::errc() || q != end || !std::isfinite(x)) return false;
  if (x != std::floor(x) || x < 0 || x > kMaxCount) return false;
  out = static_cast<int64_t>(x);
  return true;
}

// The index of `column` in the header; an error naming what is there.
size_t FindColumn(const std::string& path,
                  const std::vector<std::string>& header,
                  const std::string& column) {
  size_t found = header.size();
  std::string list;
  for (size_t i = 0; i < header.size(); ++i) {
    list += (i ? ", " : "") + header[i];
    if (header[i] != column) continue;
    if (found != header.size()) {
      throw ConfigError(path + ":1: column " + column +
                        " appears more than once in the header");
    }
    found = i;
  }
  if (found != header.size()) return found;
  const std::string near = NearestName(column, header);
  throw ConfigError(path + ":1: no column named \"" + column + "\"" +
                    (near.empty() ? "" : " (did you mean \"" + near + "\"?)") +
                    "; the header (first line) has: " + list);
}

std::ifstream OpenCsv(const std::string& path) {
  CheckInputFile(path, "", /*allow_fifo=*/true);
  std::ifstream in(path);
  if (!in) {
    throw ConfigError(path + ": cannot open: " + std::strerror(errno));
  }
  return in;
}

class EmpiricalLengths : public LengthDistribution {
 public:
  EmpiricalLengths(std::string path, std::string column,
                   std::vector<int32_t> values, LengthClamp clamp)
      : path_(std::move(path)),
        column_(std::move(column)),
        values_(std::move(values)),
        clamp_(clamp) {}
  int32_t Sample(Rng& rng) const override {
    return clamp_.Apply(values_[rng.Below(values_.size())]);
  }
  int32_t Max() const override {
    return clamp_.Apply(*std::max_element(values_.begin(), values_.end()));
  }
  std::string Describe() const override;

 private:
  std::string path_, column_;
  std::vector<int32_t> values_;  // never empty
  LengthClamp clamp_;
};

std::string EmpiricalLengths::Describe() const {
  double sum = 0;
  int32_t lo = values_[0], hi = values_[0];
  for (int32_t v : values_) {
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return "empirical(" + path_ + " column " + column_ + ": " +
         std::to_string(values_.size()) +
         " rows, mean=" + FormatParam(sum / values_.size()) + ", range [" +
         std::to_string(lo) + ", " + std::to_string(hi) + "]), " +
         clamp_.Describe();
}

}  // namespace

std::vector<int32_t> ReadLengthColumn(const std::string& path,
                                      const std::string& column) {
  std::ifstream in = OpenCsv(path);
  std::string line;
  std::vector<std::string> header, fields;
  const bool read = ReadInputLine(in, &line, path, 1);
  // A UTF-8 byte-order mark (spreadsheet exports) is not part of the first
  // column's name.
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  if (!read || Trim(line).empty()) {
    throw ConfigError(path +
                      ": empty file; expected a header row naming "
                      "the columns");
  }
  if (!SplitCsvLine(line, header)) {
    throw ConfigError(path + ":1: unterminated quote in the header");
  }
  const size_t col = FindColumn(path, header, column);
  std::vector<int32_t> values;
  int64_t line_no = 1, blank_line = 0;
  while (ReadInputLine(in, &line, path, line_no + 1)) {
    ++line_no;
    if (Trim(line).empty()) {
      if (!blank_line) blank_line = line_no;
      continue;
    }
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    if (blank_line) {
      throw ConfigError(path + ":" + std::to_string(blank_line) +
                        ": blank line between data rows");
    }
    if (!SplitCsvLine(line, fields)) {
      throw ConfigError(where + "unterminated quote");
    }
    if (fields.size() != header.size()) {
      throw ConfigError(where + "expected " + std::to_string(header.size()) +
                        " fields (as in the header), got " +
                        std::to_string(fields.size()));
    }
    int64_t n = 0;
    if (!ParseCount(fields[col], n)) {
      throw ConfigError(where + "column " + column +
                        ": expected a non-negative integer (at most " +
                        std::to_string(kMaxCount) + "), got '" + fields[col] +
                        "'");
    }
    values.push_back(static_cast<int32_t>(n));
  }
  if (in.bad()) throw ConfigError(path + ": read error");
  if (values.empty()) {
    throw ConfigError(path + ": column " + column +
                      " has no data rows (only a header)");
  }
  return values;
}

std::unique_ptr<LengthDistribution> MakeEmpiricalLengths(const JsonView& cfg) {
  cfg.AllowKeys({"dist", "path", "column", "min", "max"});
  const LengthClamp clamp = ReadLengthClamp(cfg);
  const std::string path = ResolveDataPath(cfg.RequireString("path"));
  const std::string column = cfg.RequireString("column");
  try {
    return std::make_unique<EmpiricalLengths>(
        path, column, ReadLengthColumn(path, column), clamp);
  } catch (const ConfigError& e) {
    // Say which configuration pointed at the file.
    throw ConfigError(std::string(e.what()) + " (from " + cfg.file() + ": " +
                      (cfg.path().empty() ? "/" : cfg.path()) + ")");
  }
}

}  // namespace servesim
