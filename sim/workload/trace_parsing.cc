// Field parsers shared by the trace formats: token counts, calendar times,
// one JSON line, CSV fields and header columns. Each returns failure rather
// than throwing, because a bad field makes one bad line, not a failed file.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "sim/core/json_view.h"
#include "sim/core/status.h"
#include "sim/workload/length_distribution.h"
#include "sim/workload/trace_reader_internal.h"

namespace servesim {
namespace {

constexpr int64_t kMaxCount = kMaxLengthTokens;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// Exactly `n` decimal digits at s[pos..pos+n).
bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30,
                                  31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Days since 0000-03-01 in the proleptic Gregorian calendar. Counting years
// from March puts the leap day last, so the month offset is a closed form:
// the days before month m (March = 0) are (153 m + 2) / 5.
int64_t DaysFromCivil(int y, int m, int d) {
  if (m <= 2) --y;
  const int mar = (m + 9) % 12;
  return 365LL * y + y / 4 - y / 100 + y / 400 + (153 * mar + 2) / 5 + d - 1;
}

// Parses a UTC offset into seconds east of UTC: "Z" or "UTC", or a sign
// and hours with optional minutes: "+HH:MM", "+HHMM", "+HH" (ISO 8601's
// forms; Python's isoformat and pandas write "+00:00", as the Azure 2024
// traces do). One leading space is allowed ("... 18:15:46 +00:00").
bool ParseZone(std::string_view z, int64_t* offset_s) {
  if (!z.empty() && z.front() == ' ') z.remove_prefix(1);
  if (z == "Z" || z == "UTC") {
    *offset_s = 0;
    return true;
  }
  int hh = 0, mm = 0;
  if (z.size() < 3 || (z[0] != '+' && z[0] != '-') || !Digits(z, 1, 2, &hh)) {
    return false;
  }
  const bool ok = z.size() == 3 ||
                  (z.size() == 5 && Digits(z, 3, 2, &mm)) ||
                  (z.size() == 6 && z[3] == ':' && Digits(z, 4, 2, &mm));
  if (!ok || hh > 23 || mm > 59) return false;
  *offset_s = (z[0] == '-' ? -1 : 1) * (hh * 3600LL + mm * 60LL);
  return true;
}

std::string Figure(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

}  // namespace

std::string QuoteField(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c < 0x20 || c >= 0x7f) ? '?' : static_cast<char>(c);
  }
  return out + (s.size() > kMax ? "...'" : "'");
}

std::string TokenCountExpectation() {
  return "an integer token count in [0, " + std::to_string(kMaxCount) + "]";
}

bool ParseStampNumber(std::string_view s, double* out) {
  s = Trim(s);
  if (s.empty()) return false;
  double x = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec != std::errc() || p != s.data() + s.size() ||
      !(std::fabs(x) <= kMaxStampMagnitude)) {
    return false;
  }
  *out = x;
  return true;
}

TimestampUnit DetectTimestampUnit(const std::vector<double>& stamps,
                                  std::string* reason) {
  const double first = stamps.empty() ? 0.0 : stamps[0];
  if (std::fabs(first) >= 1e8) {
    // Epoch times of 2001-2286 are 1e9-1e10 s, 1e12-1e13 ms, 1e15-1e16 us.
    const TimestampUnit unit = std::fabs(first) < 1e11   ? TimestampUnit::kSeconds
                               : std::fabs(first) < 1e14 ? TimestampUnit::kMillis
                                                         : TimestampUnit::kMicros;
    *reason = "the first timestamp, " + Figure(first) + ", is an epoch time in " +
              TimestampUnitName(unit);
    return unit;
  }
  std::vector<double> gaps;
  for (size_t i = 1; i < stamps.size(); ++i) {
    if (stamps[i] > stamps[i - 1]) gaps.push_back(stamps[i] - stamps[i - 1]);
  }
  if (gaps.empty()) {
    *reason = "no two distinct timestamps among the first " +
              std::to_string(stamps.size()) + " records; read as s";
    return TimestampUnit::kSeconds;
  }
  const size_t mid = gaps.size() / 2;
  std::nth_element(gaps.begin(), gaps.begin() + mid, gaps.end());
  const double median = gaps[mid];
  const TimestampUnit unit = median <= 10    ? TimestampUnit::kSeconds
                             : median <= 1e4 ? TimestampUnit::kMillis
                                             : TimestampUnit::kMicros;
  *reason = "median gap " + Figure(median) + " between the first " +
            std::to_string(stamps.size()) + " timestamps is " +
            Figure(median / (unit == TimestampUnit::kSeconds  ? 1.0
                             : unit == TimestampUnit::kMillis ? 1e3
                                                              : 1e6)) +
            " s read as " + TimestampUnitName(unit) +
            " (a median inter-arrival above 10 s is taken as a smaller unit)";
  return unit;
}

bool ParseTokenCount(std::string_view s, int32_t* out) {
  s = Trim(s);
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  int64_t n = 0;
  auto [p, ec] = std::from_chars(s.data(), end, n);
  if (ec != std::errc() || p != end) {
    // Some exporters write counts as floats: "1730.0".
    double x = 0;
    auto [q, ec2] = std::from_chars(s.data(), end, x);
    if (ec2 != std::errc() || q != end || !(x == std::floor(x)) ||
        !(std::fabs(x) <= kMaxCount)) {
      return false;
    }
    n = static_cast<int64_t>(x);
  }
  if (n < 0 || n > kMaxCount) return false;
  *out = static_cast<int32_t>(n);
  return true;
}

std::string JsonTimestamp(const nlohmann::json& value, const std::string& key,
                          RawTimestamp* stamp) {
  if (value.is_number() && std::fabs(value.get<double>()) <= kMaxStampMagnitude) {
    stamp->kind = RawTimestamp::Kind::kNumber;
    stamp->number = value.get<double>();
    return "";
  }
  if (value.is_string() && ParseCalendarTime(value.get<std::string>(), true, &stamp->nanos)) {
    stamp->kind = RawTimestamp::Kind::kCalendar;
    return "";
  }
  return "field \"" + key +
         "\": expected a number (in timestamp_unit) or a time like "
         "\"2024-05-01T12:00:00.25Z\", got " +
         DescribeJson(value);
}

std::string JsonPriority(const nlohmann::json& obj, const std::string& key,
                         TraceRecord* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "";
  const nlohmann::json& v = *it;
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    const int64_t p = v.get<int64_t>();
    if (p >= INT32_MIN && p <= INT32_MAX) {
      out->priority = static_cast<int32_t>(p);
      out->has_priority = true;
      return "";
    }
  } else if (v.is_number_unsigned() && v.get<uint64_t>() <= INT32_MAX) {
    out->priority = static_cast<int32_t>(v.get<uint64_t>());
    out->has_priority = true;
    return "";
  }
  return "field \"" + key + "\": expected an integer priority in [-2^31, 2^31) "
         "(vLLM's request priority; lower is served first), got " + DescribeJson(v);
}

std::string JsonTokenCount(const nlohmann::json& obj, const std::string& key,
                           int32_t* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "missing field \"" + key + "\"";
  const nlohmann::json& v = *it;
  bool ok = false;
  if (v.is_number_integer()) {
    const int64_t n = v.is_number_unsigned()
                          ? static_cast<int64_t>(std::min<uint64_t>(
                                v.get<uint64_t>(), kMaxCount + 1ULL))
                          : v.get<int64_t>();
    ok = n >= 0 && n <= kMaxCount;
    if (ok) *out = static_cast<int32_t>(n);
  } else if (v.is_number_float()) {
    const double x = v.get<double>();
    ok = x == std::floor(x) && x >= 0 && x <= kMaxCount;
    if (ok) *out = static_cast<int32_t>(x);
  }
  if (ok) return "";
  return "field \"" + key + "\": expected " + TokenCountExpectation() +
         ", got " + DescribeJson(v);
}

bool ParseCalendarTime(std::string_view s, bool allow_iso, int64_t* nanos) {
  s = Trim(s);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!Digits(s, 0, 4, &y) || s.size() < 19 || s[4] != '-' ||
      !Digits(s, 5, 2, &mo) || s[7] != '-' || !Digits(s, 8, 2, &d) ||
      !(s[10] == ' ' || (allow_iso && s[10] == 'T')) || !Digits(s, 11, 2, &h) ||
      s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' ||
      !Digits(s, 17, 2, &sec)) {
    return false;
  }
  // Years are bounded so that nanoseconds since 1970 fit int64 (which
  // reaches 2262); leap seconds (60) are not accepted.
  if (y < 1900 || y > 2200 || mo < 1 || mo > 12 || d < 1 ||
      d > DaysInMonth(y, mo) || h > 23 || mi > 59 || sec > 59) {
    return false;
  }
  size_t pos = 19;
  int64_t frac_ns = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100000000;
    const size_t first = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (pos - first >= 9) return false;  // below a nanosecond
      frac_ns += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == first) return false;
  }
  int64_t offset_s = 0;
  if (pos < s.size() && !(allow_iso && ParseZone(s.substr(pos), &offset_s))) {
    return false;
  }
  const int64_t days = DaysFromCivil(y, mo, d) - DaysFromCivil(1970, 1, 1);
  const int64_t secs = days * 86400 + h * 3600LL + mi * 60LL + sec - offset_s;
  *nanos = secs * 1000000000LL + frac_ns;
  return true;
}

std::string ParseJsonLine(std::string_view line, nlohmann::json* out) {
  // Strict, as configuration: a duplicate field, nesting deeper than
  // kMaxJsonDepth or a number out of range is a bad line, named by its path.
  const std::optional<JsonParseProblem> problem = ParseJsonStrict(line, out);
  if (!problem) return "";
  // The parser's reason ("unexpected end of input" for a truncated line).
  std::string what = problem->syntax ? problem->what
                                     : "invalid JSON: " + problem->message();
  if (what.size() > 160) what = what.substr(0, 157) + "...";
  for (char& c : what) {
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  }
  return what;
}

std::vector<std::string> SplitCsvFields(std::string_view line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string_view f = Trim(line.substr(start, comma == std::string_view::npos
                                                     ? std::string_view::npos
                                                     : comma - start));
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') {
      f = f.substr(1, f.size() - 2);
    }
    fields.emplace_back(f);
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

size_t CsvColumn(const std::string& path,
                 const std::vector<std::string>& header,
                 const std::string& name) {
  std::string list;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) {
      // Two columns of one name: which one the trace means is a guess.
      for (size_t j = i + 1; j < header.size(); ++j) {
        if (header[j] != name) continue;
        throw ConfigError(path + ":1: column \"" + name + "\" appears twice (columns " +
                          std::to_string(i + 1) + " and " + std::to_string(j + 1) +
                          "); expected one");
      }
      return i;
    }
    list += (i ? ", " : "") + QuoteField(header[i]);
  }
  const std::string near = NearestName(name, header);
  throw ConfigError(path + ":1: no column named \"" + name + "\"" +
                    (near.empty() ? "" : " (did you mean \"" + near + "\"?)") +
                    "; the header has: " + list);
}

}  // namespace servesim
