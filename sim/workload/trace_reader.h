// Streaming readers of request logs and traces: one record at a time, so a
// million-line log is never held in memory twice. Malformed lines are never
// silently dropped: they are counted, the first few are kept with their line
// numbers, and Finish() fails when more than max_bad_fraction of the data
// lines were bad. What a reader decided on its own (the unit of numeric
// timestamps, 0-token rows read as 1 token, rows filtered out) is in its
// TraceNotes, for the run to report.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/json_view.h"

namespace servesim {

enum class TraceFormat {
  kJsonl,        // request logs: {"prompt_tokens": .., "completion_tokens": .., "timestamp": ..}
  kAzureCsv,     // TIMESTAMP,ContextTokens,GeneratedTokens
  kMooncake,     // {"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}
  kLengthTable,  // CSV with num_prefill_tokens,num_decode_tokens[,arrived_at]
  kBurstGpt,     // Timestamp,Model,Request tokens,Response tokens,...
  kSessions,     // JSONL turns: {"chat_id", "parent_chat_id", "timestamp", ...}
};

// The unit of numeric timestamps (JSONL, a length table's arrived_at,
// BurstGPT, Mooncake). kAuto: detected from the values (see
// DetectTimestampUnit) and reported.
enum class TimestampUnit { kAuto, kSeconds, kMillis, kMicros };

struct TraceOptions {
  std::string path;  // as resolved (ResolveDataPath)
  TraceFormat format = TraceFormat::kJsonl;
  // JSONL field names (configurable: logs differ).
  std::string prompt_field = "prompt_tokens";
  std::string completion_field = "completion_tokens";
  std::string timestamp_field = "timestamp";  // optional in each record
  std::string priority_field = "priority";    // JSONL: optional in each record
  // Sessions (defaults: the Alibaba Qwen/Bailian traces' names; ParseTrace-
  // Options sets the length fields to input_length / output_length).
  std::string request_id_field = "chat_id";
  std::string parent_id_field = "parent_chat_id";
  std::string session_id_field = "session_id";
  std::string think_time_field = "time_to_parent_chat";
  // kAuto: the format's documented unit (Mooncake ms, BurstGPT s), else
  // detected from the values.
  TimestampUnit timestamp_unit = TimestampUnit::kAuto;
  // BurstGPT: keep only rows of this Model / Log Type ("" = all); the rows
  // left out are counted in TraceNotes::filtered_lines.
  std::string model_filter, log_type_filter;
  double max_bad_fraction = 0.0;  // share of data lines allowed to be bad
  std::string origin;  // "<scenario file>: /workload/trace", for messages
  // Replay: use the trace's timestamps (multiplied by time_scale: 2 = twice
  // as slow), or only its lengths with workload.arrival drawing arrivals.
  bool use_timestamps = true;
  double time_scale = 1.0;
};

// What every reader accepts (the choices are documented in trace_reader.cc):
// prompt and output counts are integers >= 0, a 0 read as 1 token and
// counted in TraceNotes (real logs hold failed requests; the engine needs a
// prompt token and produces at least one); a timestamp earlier than the
// previous good record's is a bad line; blank lines between data lines are
// bad lines.
struct TraceRecord {
  int64_t line = 0;              // 1-based line number in the file
  // Seconds from the trace's first good record, as written in the trace:
  // readers never apply time_scale or use_timestamps (replay does). NaN if
  // the format or the record has none.
  double timestamp_s = NAN;
  int32_t input_tokens = 0;
  int32_t output_tokens = 0;
  std::vector<uint64_t> hash_ids;  // Mooncake only
  // JSONL only: the record's vLLM request priority (lower is served first
  // by the priority policy), 0 when it gives none, as vLLM's default.
  int32_t priority = 0;
  bool has_priority = false;
  // Sessions only. Records are numbered 0, 1, ... in the order returned.
  int64_t parent = -1;  // the record this turn follows; -1: a first turn
  int64_t root = -1;    // the session's first record (itself for a root)
  double think_time_s = NAN;  // given gap from the parent's answer; NaN none
};

// What a reader decided that the run must report (never silently).
struct TraceNotes {
  // Good records whose prompt / output count was 0, read as 1 token.
  int64_t zero_prompt_records = 0, zero_output_records = 0;
  int64_t filtered_lines = 0;  // BurstGPT rows of other models / log types
  int64_t priority_records = 0;  // JSONL records that gave a priority
  std::string filter;          // "Model ChatGPT, Log Type API log", or ""
  // Numeric timestamps: the unit used and why ("given", the format's
  // documented unit, or the auto rule with the figures it saw).
  bool numeric_timestamps = false;
  TimestampUnit unit = TimestampUnit::kSeconds;
  std::string unit_reason;
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  // Next good record; false at end of file. Bad lines are counted, not
  // returned.
  virtual bool Next(TraceRecord* out) = 0;
  // good + bad + filtered, excluding the header
  virtual int64_t data_lines() const = 0;
  virtual int64_t bad_lines() const = 0;
  virtual int64_t good_records() const = 0;
  // Complete once Next() has returned false (the unit once the first
  // record is returned).
  virtual const TraceNotes& notes() const = 0;
  // Up to 5 messages "<path>:<line>: <what was wrong>".
  virtual const std::vector<std::string>& first_errors() const = 0;
  // Tokens per hash id (Mooncake: 512), 0 when the format has no hashes.
  virtual int32_t block_tokens() const = 0;
  // Call at end of file: throws ConfigError when the bad share exceeds
  // max_bad_fraction or the file had no good record; the message names the
  // file, the count and the first bad line numbers.
  virtual void Finish() const = 0;
};

// Opens the file and reads any header; throws ConfigError (missing file,
// empty file, missing column) naming the file.
std::unique_ptr<TraceReader> OpenTrace(const TraceOptions& options);

// Parses /workload/trace: {"path", "format": "jsonl"|"azure"|"mooncake"|
// "lengths"|"burstgpt"|"sessions", "fields": {"prompt_tokens",
// "completion_tokens", "timestamp"; sessions also "request_id",
// "parent_id", "session_id", "think_time"}, "timestamp_unit":
// "auto"|"s"|"ms"|"us", "model", "log_type", "max_bad_fraction",
// "use_timestamps", "time_scale"}. Throws ConfigError.
TraceOptions ParseTraceOptions(const JsonView& cfg);
// The sessions format's length fields: input_length, output_length (the
// Alibaba traces' names).
void SetSessionFieldDefaults(TraceOptions* options);

// "jsonl", "azure", "mooncake", "lengths", "burstgpt", "sessions".
const char* TraceFormatName(TraceFormat format);
// The inverse; false for an unknown name.
bool TraceFormatFromName(const std::string& name, TraceFormat* format);
// "auto", "s", "ms", "us" and the inverse (false for an unknown name).
const char* TimestampUnitName(TimestampUnit unit);
bool TimestampUnitFromName(const std::string& name, TimestampUnit* unit);

// The auto rule, on the first good records' raw numeric timestamps (in
// file order, at least one): a first value of at least 1e8 is an epoch
// time, its magnitude giving the unit (s below 1e11, ms below 1e14, us
// above: 2001-2286 in each); otherwise (stamps relative to a start) the
// median positive gap g between consecutive values decides, on the
// assumption that a serving log's median inter-arrival is at most 10 s:
// g <= 10 seconds, g <= 1e4 ms, else us; no positive gap: seconds.
// `reason` says which and with what figures.
TimestampUnit DetectTimestampUnit(const std::vector<double>& stamps,
                                  std::string* reason);

// What the notes say, as one clause list for reports ("" when nothing to
// say): "timestamps in ms (auto: ...); 3 completions of 0 tokens read as
// 1 token; 12 rows filtered out (model ChatGPT)".
std::string DescribeTraceNotes(const TraceNotes& notes);

// Guesses the format from the first non-blank line: a JSON object with
// "hash_ids" is Mooncake, any other object JSONL; a CSV header with
// TIMESTAMP is Azure, one with num_prefill_tokens a length table, one with
// "Request tokens" BurstGPT. Throws ConfigError (missing or empty file, or
// no match) naming the file.
TraceFormat GuessTraceFormat(const std::string& path);

}  // namespace servesim
