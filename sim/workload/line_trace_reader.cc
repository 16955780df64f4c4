// The bookkeeping shared by every trace format: line numbers, blank lines,
// bad-line counting, the timestamp origin and order, and the Finish()
// policy. Formats only say what one line means.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "sim/core/paths.h"
#include "sim/core/status.h"
#include "sim/workload/trace_reader_internal.h"

namespace servesim {
namespace {

constexpr size_t kMaxKeptErrors = 5;

bool IsBlank(std::string_view s) {
  return s.find_first_not_of(" \t\r") == std::string_view::npos;
}

std::string Percent(double share) {
  std::ostringstream os;
  os.precision(3);
  os << share * 100 << "%";
  return os.str();
}

}  // namespace

LineTraceReader::LineTraceReader(const TraceOptions& options,
                                 TimestampUnit documented_unit)
    : options_(options), documented_unit_(documented_unit) {
  if (!options_.model_filter.empty()) {
    notes_.filter = "Model " + options_.model_filter;
  }
  if (!options_.log_type_filter.empty()) {
    notes_.filter += (notes_.filter.empty() ? "" : ", ") +
                     std::string("Log Type ") + options_.log_type_filter;
  }
  // A directory, /dev/zero or /dev/urandom is refused here: read as lines
  // they never end. A pipe is a stream of a finite log.
  CheckInputFile(options_.path, "trace", /*allow_fifo=*/true);
  in_.open(options_.path, std::ios::binary);
  if (!in_) {
    throw ConfigError(options_.path +
                      ": cannot open trace: " + std::strerror(errno));
  }
  // Read ahead to the first non-blank line so that an empty file fails at
  // open, not later as "0 records".
  if (!ReadLine(&lookahead_)) {
    throw ConfigError(options_.path + ": empty trace file");
  }
  has_lookahead_ = true;
}

bool LineTraceReader::ReadLine(std::string* line) {
  if (has_lookahead_) {
    has_lookahead_ = false;
    *line = std::move(lookahead_);
    return true;
  }
  while (ReadInputLine(in_, line, options_.path, line_no_ + 1)) {
    ++line_no_;
    if (line_no_ == 1 && line->rfind("\xEF\xBB\xBF", 0) == 0) {
      line->erase(0, 3);  // a UTF-8 byte-order mark is not data
    }
    if (!line->empty() && line->back() == '\r') line->pop_back();
    if (IsBlank(*line)) {
      if (!pending_blank_) pending_blank_ = line_no_;
      ++pending_blank_count_;
      continue;
    }
    // Blank lines followed by data are bad lines: a log writer that leaves
    // holes may have lost records there. Leading and trailing blank lines
    // are not data.
    if (line_no_ == pending_blank_count_ + 1) pending_blank_count_ = 0;
    for (int64_t i = 0; i < pending_blank_count_; ++i) {
      ++data_lines_;
      RecordBad(pending_blank_ + i, "blank line between data lines");
    }
    pending_blank_ = pending_blank_count_ = 0;
    return true;
  }
  return false;
}

std::string LineTraceReader::ReadHeader() {
  std::string line;
  ReadLine(&line);  // the constructor saw a non-blank line
  has_header_ = true;
  return line;
}

void LineTraceReader::RecordBad(int64_t line, const std::string& what) {
  ++bad_lines_;
  if (first_errors_.size() < kMaxKeptErrors) {
    first_errors_.push_back(options_.path + ":" + std::to_string(line) + ": " +
                            what);
  }
}

bool LineTraceReader::NextGood(TraceRecord* out) {
  std::string line;
  while (ReadLine(&line)) {
    ++data_lines_;
    TraceRecord rec;
    rec.line = line_no_;
    RawTimestamp stamp;
    bool filtered = false;
    std::string error = ParseLine(line, &rec, &stamp, &filtered);
    if (filtered) {
      ++notes_.filtered_lines;
      continue;
    }
    if (error.empty()) error = CheckTimestamp(stamp, &rec);
    if (!error.empty()) {
      RecordBad(line_no_, error);
      continue;
    }
    ++good_records_;
    notes_.priority_records += rec.has_priority;
    Accepted(&rec);
    // Real logs hold failed requests with 0 tokens; the engine needs one
    // prompt token and produces at least one, so a 0 is read as 1 and
    // counted for the report.
    if (rec.input_tokens == 0) {
      rec.input_tokens = 1;
      ++notes_.zero_prompt_records;
    }
    if (rec.output_tokens == 0) {
      rec.output_tokens = 1;
      ++notes_.zero_output_records;
    }
    if (!unit_known_ && stamp.kind == RawTimestamp::Kind::kNumber) {
      sample_.push_back(stamp.number);
    }
    *out = std::move(rec);
    return true;
  }
  return false;
}

void LineTraceReader::SetUnit(TimestampUnit unit, std::string reason) {
  unit_known_ = true;
  notes_.unit = unit;
  notes_.unit_reason = std::move(reason);
  units_per_second_ = unit == TimestampUnit::kMillis   ? 1e3
                      : unit == TimestampUnit::kMicros ? 1e6
                                                       : 1.0;
  sample_.clear();
  sample_.shrink_to_fit();
}

void LineTraceReader::DecideUnitFromHeld() {
  std::string reason;
  const TimestampUnit unit = DetectTimestampUnit(sample_, &reason);
  SetUnit(unit, "auto: " + reason);
}

bool LineTraceReader::Next(TraceRecord* out) {
  while (held_.empty() || !unit_known_) {
    TraceRecord rec;
    const bool got = NextGood(&rec);
    if (!got) {
      if (!unit_known_ && !sample_.empty()) DecideUnitFromHeld();
      unit_known_ = true;
      break;
    }
    const bool first = good_records_ == 1;
    held_.push_back(std::move(rec));
    if (!first) {
      if (!unit_known_ && sample_.size() >= kUnitSample) DecideUnitFromHeld();
      continue;
    }
    // The first good record says whether stamps are numbers at all.
    notes_.numeric_timestamps = !sample_.empty();
    if (!notes_.numeric_timestamps) {
      unit_known_ = true;  // none, or calendar times: no unit to choose
    } else if (options_.timestamp_unit != TimestampUnit::kAuto) {
      SetUnit(options_.timestamp_unit, "given (timestamp_unit)");
    } else if (documented_unit_ != TimestampUnit::kAuto) {
      SetUnit(documented_unit_, std::string("the ") +
                                    TraceFormatName(options_.format) +
                                    " format's unit");
    } else if (std::fabs(sample_[0]) >= 1e8) {
      DecideUnitFromHeld();  // an epoch time: its magnitude decides
    }
  }
  if (held_.empty()) return false;
  *out = std::move(held_.front());
  held_.pop_front();
  if (notes_.numeric_timestamps) out->timestamp_s /= units_per_second_;
  return true;
}

std::string LineTraceReader::CheckTimestamp(const RawTimestamp& stamp,
                                            TraceRecord* out) {
  using Kind = RawTimestamp::Kind;
  if (!origin_set_) {
    origin_ = last_ = stamp;
    origin_set_ = true;
    out->timestamp_s = stamp.kind == Kind::kNone ? NAN : 0.0;
    return "";
  }
  if (stamp.kind != origin_.kind) {
    if (stamp.kind == Kind::kNone) {
      return "missing timestamp (the first record has one)";
    }
    if (origin_.kind == Kind::kNone) {
      return "has a timestamp but the first record has none";
    }
    return "timestamp is written differently (number vs date) from the "
           "first record's";
  }
  if (stamp.kind == Kind::kNone) {
    out->timestamp_s = NAN;
    return "";
  }
  // A request log is in arrival order; a record that goes back in time is
  // a merge or clock problem, so it is counted as a bad line (equal stamps
  // are fine: many arrivals share a millisecond).
  const bool backwards = stamp.kind == Kind::kNumber
                             ? stamp.number < last_.number
                             : stamp.nanos < last_.nanos;
  if (backwards)
    return "timestamp goes backwards (earlier than the previous record's)";
  // Numbers stay in the file's unit here: Next() divides once the unit is
  // known.
  out->timestamp_s =
      stamp.kind == Kind::kNumber
          ? stamp.number - origin_.number
          : static_cast<double>(stamp.nanos - origin_.nanos) / 1e9;
  last_ = stamp;
  return "";
}

void LineTraceReader::Finish() const {
  const std::string& path = options_.path;
  const std::string from =
      options_.origin.empty() ? "" : " (from " + options_.origin + ")";
  if (data_lines_ == 0) {
    throw ConfigError(path + ": no data lines" +
                      (has_header_ ? " after the header" : "") + from);
  }
  std::string first;
  for (const std::string& e : first_errors_) {
    first += (first.empty() ? "" : ", ") + e;
  }
  const double share =
      static_cast<double>(bad_lines_) / static_cast<double>(data_lines_);
  const std::string counts = std::to_string(bad_lines_) + " of " +
                             std::to_string(data_lines_) +
                             " data lines malformed";
  if (bad_lines_ > 0 && share > options_.max_bad_fraction) {
    throw ConfigError(
        path + ": " + counts + " (" + Percent(share) + " > max_bad_fraction " +
        Percent(options_.max_bad_fraction) + "); first: " + first + from);
  }
  if (good_records_ == 0) {
    throw ConfigError(path + ": no good records (" + counts +
                      "); first: " + first + from);
  }
}

}  // namespace servesim
