// The trace-reader factory and the /workload/trace options. Policy shared
// by every format (see also trace_reader.h):
// - a bad line is counted and its first few line numbers kept; Finish()
//   fails when the bad share exceeds max_bad_fraction (default 0: any bad
//   line fails) or no line was good;
// - token counts must be integers >= 0; a 0 (real logs hold failed
//   requests: BurstGPT's failures have 0 response tokens) is read as 1
//   token, since a zero-token prompt cannot be prefilled and a request that
//   produces nothing has no TTFT, and counted in TraceNotes so the run
//   states how many (dropping them would change the arrival process);
// - numeric timestamps are in the format's documented unit, or the one
//   given, or detected (DetectTimestampUnit) and reported;
// - timestamps must not go backwards (equal is fine); a record earlier than
//   the previous good one is a bad line, since replay needs arrival order.
#include <fstream>

#include "sim/core/paths.h"
#include "sim/core/status.h"
#include "sim/workload/trace_reader_internal.h"

namespace servesim {

const char* TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kJsonl:
      return "jsonl";
    case TraceFormat::kAzureCsv:
      return "azure";
    case TraceFormat::kMooncake:
      return "mooncake";
    case TraceFormat::kLengthTable:
      return "lengths";
    case TraceFormat::kBurstGpt:
      return "burstgpt";
    case TraceFormat::kSessions:
      return "sessions";
  }
  return "?";
}

const char* TimestampUnitName(TimestampUnit unit) {
  switch (unit) {
    case TimestampUnit::kAuto:
      return "auto";
    case TimestampUnit::kSeconds:
      return "s";
    case TimestampUnit::kMillis:
      return "ms";
    case TimestampUnit::kMicros:
      return "us";
  }
  return "?";
}

bool TimestampUnitFromName(const std::string& name, TimestampUnit* unit) {
  for (TimestampUnit u : {TimestampUnit::kAuto, TimestampUnit::kSeconds,
                          TimestampUnit::kMillis, TimestampUnit::kMicros}) {
    if (name == TimestampUnitName(u)) {
      *unit = u;
      return true;
    }
  }
  return false;
}

bool TraceFormatFromName(const std::string& name, TraceFormat* format) {
  for (TraceFormat f : {TraceFormat::kJsonl, TraceFormat::kAzureCsv,
                        TraceFormat::kMooncake, TraceFormat::kLengthTable,
                        TraceFormat::kBurstGpt, TraceFormat::kSessions}) {
    if (name == TraceFormatName(f)) {
      *format = f;
      return true;
    }
  }
  return false;
}

std::unique_ptr<TraceReader> OpenTrace(const TraceOptions& options) {
  try {
    switch (options.format) {
      case TraceFormat::kJsonl:
        return MakeJsonlTraceReader(options);
      case TraceFormat::kAzureCsv:
        return MakeAzureTraceReader(options);
      case TraceFormat::kMooncake:
        return MakeMooncakeTraceReader(options);
      case TraceFormat::kLengthTable:
        return MakeLengthTableReader(options);
      case TraceFormat::kBurstGpt:
        return MakeBurstGptReader(options);
      case TraceFormat::kSessions:
        return MakeSessionTraceReader(options);
    }
  } catch (const ConfigError& e) {
    if (options.origin.empty()) throw;
    throw ConfigError(std::string(e.what()) + " (from " + options.origin + ")");
  }
  throw ConfigError(options.path + ": unknown trace format");
}

void SetSessionFieldDefaults(TraceOptions* o) {
  o->prompt_field = "input_length";
  o->completion_field = "output_length";
}

TraceOptions ParseTraceOptions(const JsonView& cfg) {
  cfg.AllowKeys({"path", "format", "fields", "timestamp_unit", "model",
                 "log_type", "max_bad_fraction", "use_timestamps",
                 "time_scale"});
  TraceOptions o;
  o.origin = cfg.file() + ": " + (cfg.path().empty() ? "/" : cfg.path());
  o.path = ResolveDataPath(cfg.RequireString("path"));
  TraceFormatFromName(cfg.Choice("format", "",
                                 {"jsonl", "azure", "mooncake", "lengths",
                                  "burstgpt", "sessions"}),
                      &o.format);
  if (o.format == TraceFormat::kSessions) SetSessionFieldDefaults(&o);
  if (cfg.Has("timestamp_unit") && o.format == TraceFormat::kAzureCsv) {
    cfg.FailMessage("timestamp_unit",
                    "the azure format's timestamps are calendar times; "
                    "timestamp_unit applies to numeric timestamps");
  }
  TimestampUnitFromName(
      cfg.Choice("timestamp_unit", "auto", {"auto", "s", "ms", "us"}),
      &o.timestamp_unit);
  for (const char* key : {"model", "log_type"}) {
    if (cfg.Has(key) && o.format != TraceFormat::kBurstGpt) {
      cfg.FailMessage(key, "only the burstgpt format has a Model and a Log "
                           "Type column to filter on");
    }
  }
  o.model_filter = cfg.String("model", "");
  o.log_type_filter = cfg.String("log_type", "");
  if (cfg.Has("fields")) {
    const bool sessions = o.format == TraceFormat::kSessions;
    if (o.format != TraceFormat::kJsonl && !sessions) {
      cfg.FailMessage("fields",
                      "only the jsonl and sessions formats take field names "
                      "(the " +
                          std::string(TraceFormatName(o.format)) +
                          " format's are fixed)");
    }
    const JsonView f = cfg.Object("fields");
    if (sessions) {
      f.AllowKeys({"prompt_tokens", "completion_tokens", "timestamp",
                   "request_id", "parent_id", "session_id", "think_time"});
      o.request_id_field = f.String("request_id", o.request_id_field);
      o.parent_id_field = f.String("parent_id", o.parent_id_field);
      o.session_id_field = f.String("session_id", o.session_id_field);
      o.think_time_field = f.String("think_time", o.think_time_field);
    } else {
      f.AllowKeys({"prompt_tokens", "completion_tokens", "timestamp", "priority"});
      o.priority_field = f.String("priority", o.priority_field);
    }
    o.prompt_field = f.String("prompt_tokens", o.prompt_field);
    o.completion_field = f.String("completion_tokens", o.completion_field);
    o.timestamp_field = f.String("timestamp", o.timestamp_field);
  }
  o.max_bad_fraction = cfg.Number("max_bad_fraction", 0.0, Range::Closed(0, 1));
  o.use_timestamps = cfg.Bool("use_timestamps", true);
  o.time_scale = cfg.Number("time_scale", 1.0, Range::Positive());
  return o;
}

std::string DescribeTraceNotes(const TraceNotes& n) {
  std::vector<std::string> parts;
  if (n.numeric_timestamps) {
    parts.push_back(std::string("timestamps in ") + TimestampUnitName(n.unit) +
                    " (" + n.unit_reason + ")");
  }
  auto zeros = [&](int64_t count, const char* what) {
    if (count > 0) {
      parts.push_back(std::to_string(count) + " " + what +
                      " of 0 tokens read as 1 token");
    }
  };
  zeros(n.zero_prompt_records, "prompts");
  zeros(n.zero_output_records, "completions");
  if (n.priority_records > 0) {
    parts.push_back(std::to_string(n.priority_records) + " records give a priority");
  }
  if (n.filtered_lines > 0) {
    parts.push_back(std::to_string(n.filtered_lines) +
                    " rows left out (keeping " + n.filter + ")");
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

TraceFormat GuessTraceFormat(const std::string& path) {
  CheckInputFile(path, "trace", /*allow_fifo=*/true);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open trace");
  std::string line;
  int64_t line_no = 0;
  while (ReadInputLine(in, &line, path, ++line_no) &&
         line.find_first_not_of(" \t\r") == std::string::npos) {
  }
  const size_t start = line.find_first_not_of(" \t\r\xEF\xBB\xBF");
  if (start == std::string::npos)
    throw ConfigError(path + ": empty trace file");
  if (line[start] == '{') {
    if (line.find("\"parent_chat_id\"") != std::string::npos) {
      return TraceFormat::kSessions;
    }
    return line.find("\"hash_ids\"") != std::string::npos
               ? TraceFormat::kMooncake
               : TraceFormat::kJsonl;
  }
  for (const std::string& name : SplitCsvFields(line.substr(start))) {
    if (name == "TIMESTAMP") return TraceFormat::kAzureCsv;
    if (name == "num_prefill_tokens") return TraceFormat::kLengthTable;
    if (name == "Request tokens") return TraceFormat::kBurstGpt;
  }
  throw ConfigError(path +
                    ": cannot tell the trace format from its first line; "
                    "give the format (jsonl, azure, mooncake, lengths, "
                    "burstgpt, sessions)");
}

}  // namespace servesim
