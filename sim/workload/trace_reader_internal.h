// Internal to the trace readers: the line-oriented base class that does the
// bookkeeping every format shares (line numbers, blank lines, bad-line
// counting, the timestamp origin and order, the Finish() policy), the small
// parsers the formats share, and one factory per format. Code outside
// sim/workload calls OpenTrace() instead.
#pragma once

#include <cstdint>
#include <deque>
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

// Invariant: data_lines_ == good_records_ + bad_lines_ + filtered lines,
// and a blank line counts as a (bad) data line only when a data line
// follows it. Good records are returned in file order; while the unit of
// numeric stamps is being detected (auto) up to kUnitSample of them wait in
// held_, their timestamp_s still in the file's units.
class LineTraceReader : public TraceReader {
 public:
  static constexpr size_t kUnitSample = 1000;
  // Opens options.path; throws ConfigError if it cannot be opened or holds
  // nothing but blank lines. `documented_unit` is the format's unit of
  // numeric stamps when options.timestamp_unit is kAuto (kAuto: detect).
  LineTraceReader(const TraceOptions& options, TimestampUnit documented_unit);

  bool Next(TraceRecord* out) final;
  int64_t data_lines() const final { return data_lines_; }
  int64_t bad_lines() const final { return bad_lines_; }
  int64_t good_records() const final { return good_records_; }
  const TraceNotes& notes() const final { return notes_; }
  const std::vector<std::string>& first_errors() const final {
    return first_errors_;
  }
  int32_t block_tokens() const override { return 0; }
  void Finish() const final;

 protected:
  // Parses one non-blank data line; returns "" on success or what was
  // wrong. `out->line` is already set; `stamp` starts as kNone. Token
  // counts may be 0 (the base class counts them and reads them as 1).
  // Sets *filtered (starts false) for a well-formed row the options leave
  // out; its return value is then ignored.
  virtual std::string ParseLine(std::string_view line, TraceRecord* out,
                                RawTimestamp* stamp, bool* filtered) = 0;
  // Called for each good record, in order, before it is returned (records
  // are numbered from 0 in this order); may complete it.
  virtual void Accepted(TraceRecord* /*rec*/) {}
  // Consumes the first non-blank line as a header (CSV formats call this
  // from their constructor); throws ConfigError naming the file.
  std::string ReadHeader();
  const TraceOptions& options() const { return options_; }

 private:
  bool ReadLine(std::string* line);  // false at end of file
  void RecordBad(int64_t line, const std::string& what);
  std::string CheckTimestamp(const RawTimestamp& stamp, TraceRecord* out);
  // The next good record, timestamp_s in file units; false at end of file.
  bool NextGood(TraceRecord* out);
  void SetUnit(TimestampUnit unit, std::string reason);
  void DecideUnitFromHeld();

  TraceOptions options_;
  TimestampUnit documented_unit_;
  double units_per_second_ = 1.0;
  bool unit_known_ = false;  // stamps of held_ need no more records
  std::deque<TraceRecord> held_;
  std::vector<double> sample_;  // raw numeric stamps of held_ (auto)
  TraceNotes notes_;
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
// A token count >= 0 (0: a failed or empty request, read as 1 token by the
// reader and counted) and at most kMaxLengthTokens; integral decimals
// ("12.0") pass.
bool ParseTokenCount(std::string_view s, int32_t* out);
// A number (a timestamp in the file's unit), finite and at most
// kMaxStampMagnitude in size.
bool ParseStampNumber(std::string_view s, double* out);
// Numbers beyond this are not plausible times in any supported unit
// (epoch microseconds are ~1.7e15), and keeping them bounded keeps
// differences between records finite.
inline constexpr double kMaxStampMagnitude = 1e17;
// "an integer token count in [0, 16777216]", for messages.
std::string TokenCountExpectation();
// The optional integer priority field `key` of a JSONL record into out
// (absent or null: none); else what is wrong.
std::string JsonPriority(const nlohmann::json& obj, const std::string& key,
                         TraceRecord* out);
std::string JsonTokenCount(const nlohmann::json& obj, const std::string& key,
                           int32_t* out);  // "" or what was wrong
// The value at `value` as a timestamp: a number in timestamp_unit, or a
// calendar time such as "2024-05-01T12:00:00.250Z" (an explicit offset is
// applied exactly). "" or what was wrong, naming `key`.
std::string JsonTimestamp(const nlohmann::json& value, const std::string& key,
                          RawTimestamp* stamp);
// "YYYY-MM-DD HH:MM:SS[.fffffffff]"; with allow_iso also a 'T' separator
// and a UTC offset suffix, optionally after one space: "Z", "UTC",
// "+HH:MM", "+HHMM" or "+HH" (or '-'), applied exactly. False if bad.
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
std::unique_ptr<TraceReader> MakeBurstGptReader(const TraceOptions& o);
std::unique_ptr<TraceReader> MakeSessionTraceReader(const TraceOptions& o);

}  // namespace servesim
