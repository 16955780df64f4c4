// Streaming readers of request logs and traces: one record at a time, so a
// million-line log is never held in memory twice. Malformed lines are never
// silently dropped: they are counted, the first few are kept with their line
// numbers, and Finish() fails when more than max_bad_fraction of the data
// lines were bad.
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
  kLengthTable,  // CSV with num_prefill_tokens,num_decode_tokens
};

struct TraceOptions {
  std::string path;  // as resolved (ResolveDataPath)
  TraceFormat format = TraceFormat::kJsonl;
  // JSONL field names (configurable: logs differ).
  std::string prompt_field = "prompt_tokens";
  std::string completion_field = "completion_tokens";
  std::string timestamp_field = "timestamp";  // optional in each record
  double max_bad_fraction = 0.0;  // share of data lines allowed to be bad
  std::string origin;  // "<scenario file>: /workload/trace", for messages
  // Replay: use the trace's timestamps (multiplied by time_scale: 2 = twice
  // as slow), or only its lengths with workload.arrival drawing arrivals.
  bool use_timestamps = true;
  double time_scale = 1.0;
};

// What every reader accepts (the choices are documented in trace_reader.cc):
// prompt and output counts are integers >= 1 (a request has a prompt and
// produces at least one token); a timestamp earlier than the previous good
// record's is a bad line; blank lines between data lines are bad lines.
struct TraceRecord {
  int64_t line = 0;              // 1-based line number in the file
  // Seconds from the trace's first good record, as written in the trace:
  // readers never apply time_scale or use_timestamps (replay does). NaN if
  // the format or the record has none.
  double timestamp_s = NAN;
  int32_t input_tokens = 0;
  int32_t output_tokens = 0;
  std::vector<uint64_t> hash_ids;  // Mooncake only
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  // Next good record; false at end of file. Bad lines are counted, not
  // returned.
  virtual bool Next(TraceRecord* out) = 0;
  virtual int64_t data_lines() const = 0;  // good + bad, excluding header
  virtual int64_t bad_lines() const = 0;
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
// "lengths", "fields": {"prompt_tokens", "completion_tokens", "timestamp"},
// "max_bad_fraction", "use_timestamps", "time_scale"}. Throws ConfigError.
TraceOptions ParseTraceOptions(const JsonView& cfg);

// "jsonl", "azure", "mooncake", "lengths".
const char* TraceFormatName(TraceFormat format);
// The inverse; false for an unknown name.
bool TraceFormatFromName(const std::string& name, TraceFormat* format);
// Guesses the format from the first non-blank line: a JSON object with
// "hash_ids" is Mooncake, any other object JSONL; a CSV header with
// TIMESTAMP is Azure, one with num_prefill_tokens a length table. Throws
// ConfigError (missing or empty file, or no match) naming the file.
TraceFormat GuessTraceFormat(const std::string& path);

}  // namespace servesim
