// Internal to the trace readers: the line-oriented base class that does the
// bookkeeping every format shares (line numbers, blank lines, bad-line
// counting, the timestamp origin and order, the Finish() policy), the small
// parsers the formats share, and one factory per format. Code outside
// sim/workload calls OpenTrace() instead.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/workload/trace_reader.h"

namespace servesim {

// A timestamp as a format writes it, before it is made relative to the first
// good record. Calendar times are kept as exact integer nanoseconds so that
// differences of 7-digit fractions do not pick up rounding.
struct RawTimestamp {
  enum class Kind { kNone, kNumber, kCalendar };
  Kind kind = Kind::kNone;
  double number = 0;  // kNumber: in the format's unit (seconds, ms)
  int64_t nanos = 0;  // kCalendar: nanoseconds since 1970-01-01 00:00
};

// Invariant: data_lines_ == good records returned + bad_lines_, and a blank
// line counts as a (bad) data line only when a data line follows it.
class LineTraceReader : public TraceReader {
 public:
  // Opens options.path; throws ConfigError if it cannot be opened or holds
  // nothing but blank lines. `units_per_second` converts kNumber stamps.
  LineTraceReader(const TraceOptions& options, double units_per_second);

  bool Next(TraceRecord* out) final;
  int64_t data_lines() const final { return data_lines_; }
  int64_t bad_lines() const final { return bad_lines_; }
  const std::vector<std::string>& first_errors() const final {
    return first_errors_;
  }
  int32_t block_tokens() const override { return 0; }
  void Finish() const final;

 protected:
  // Parses one non-blank data line; returns "" on success or what was
  // wrong. `out->line` is already set; `stamp` starts as kNone.
  virtual std::string ParseLine(std::string_view line, TraceRecord* out,
                                RawTimestamp* stamp) = 0;
  // Consumes the first non-blank line as a header (CSV formats call this
  // from their constructor); throws ConfigError naming the file.
  std::string ReadHeader();
  const TraceOptions& options() const { return options_; }

 private:
  bool ReadLine(std::string* line);  // false at end of file
  void RecordBad(int64_t line, const std::string& what);
  std::string CheckTimestamp(const RawTimestamp& stamp, TraceRecord* out);

  TraceOptions options_;
  double units_per_second_;
  std::ifstream in_;
  std::string lookahead_;  // the first non-blank line, read at open
  bool has_lookahead_ = false;
  bool has_header_ = false;
  int64_t line_no_ = 0;
  int64_t pending_blank_ = 0;  // first of a run of blank lines, 0 if none
  int64_t pending_blank_count_ = 0;
  int64_t data_lines_ = 0;
  int64_t bad_lines_ = 0;
  int64_t good_records_ = 0;
  std::vector<std::string> first_errors_;
  // The first good record fixes whether stamps exist and their kind.
  bool origin_set_ = false;
  RawTimestamp origin_, last_;
};

// "'abc'" for messages: at most 40 characters, control and non-ASCII bytes
// shown as '?', so an error stays one printable line.
std::string QuoteField(std::string_view s);
// A token count >= 1 (a request has at least one prompt token and produces
// at least one token) and at most kMaxLengthTokens; integral decimals
// ("12.0") pass.
bool ParseTokenCount(std::string_view s, int32_t* out);
// "an integer token count in [1, 16777216]", for messages.
std::string TokenCountExpectation();
std::string JsonTokenCount(const nlohmann::json& obj, const std::string& key,
                           int32_t* out);  // "" or what was wrong
// "YYYY-MM-DD HH:MM:SS[.fffffffff]"; with allow_iso also a 'T' separator
// and a "Z" or "+HH:MM"/"-HH:MM" suffix (applied exactly). False if bad.
bool ParseCalendarTime(std::string_view s, bool allow_iso, int64_t* nanos);
// Parses one line as JSON; "" on success, else the parser's complaint.
std::string ParseJsonLine(std::string_view line, nlohmann::json* out);
// Comma-separated fields, each trimmed of spaces and one pair of quotes.
std::vector<std::string> SplitCsvFields(std::string_view line);
// The index of `name` in a CSV header; throws ConfigError (with the nearest
// name) when absent.
size_t CsvColumn(const std::string& path,
                 const std::vector<std::string>& header,
                 const std::string& name);

std::unique_ptr<TraceReader> MakeJsonlTraceReader(const TraceOptions& o);
std::unique_ptr<TraceReader> MakeAzureTraceReader(const TraceOptions& o);
std::unique_ptr<TraceReader> MakeMooncakeTraceReader(const TraceOptions& o);
std::unique_ptr<TraceReader> MakeLengthTableReader(const TraceOptions& o);

}  // namespace servesim
