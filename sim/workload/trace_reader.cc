// The trace-reader factory and the /workload/trace options. Policy shared
// by every format (see also trace_reader.h):
// - a bad line is counted and its first few line numbers kept; Finish()
//   fails when the bad share exceeds max_bad_fraction (default 0: any bad
//   line fails) or no line was good;
// - token counts must be integers >= 1: a zero-token prompt cannot be
//   prefilled and a request that produces nothing has no TTFT, so a 0 is
//   more likely a logging failure than a real request;
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
  }
  return "?";
}

bool TraceFormatFromName(const std::string& name, TraceFormat* format) {
  for (TraceFormat f : {TraceFormat::kJsonl, TraceFormat::kAzureCsv,
                        TraceFormat::kMooncake, TraceFormat::kLengthTable}) {
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
    }
  } catch (const ConfigError& e) {
    if (options.origin.empty()) throw;
    throw ConfigError(std::string(e.what()) + " (from " + options.origin + ")");
  }
  throw ConfigError(options.path + ": unknown trace format");
}

TraceOptions ParseTraceOptions(const JsonView& cfg) {
  cfg.AllowKeys({"path", "format", "fields", "max_bad_fraction",
                 "use_timestamps", "time_scale"});
  TraceOptions o;
  o.origin = cfg.file() + ": " + (cfg.path().empty() ? "/" : cfg.path());
  o.path = ResolveDataPath(cfg.RequireString("path"));
  TraceFormatFromName(
      cfg.Choice("format", "", {"jsonl", "azure", "mooncake", "lengths"}),
      &o.format);
  if (cfg.Has("fields")) {
    if (o.format != TraceFormat::kJsonl) {
      cfg.FailMessage("fields",
                      "only the jsonl format takes field names (the " +
                          std::string(TraceFormatName(o.format)) +
                          " format's are fixed)");
    }
    const JsonView f = cfg.Object("fields");
    f.AllowKeys({"prompt_tokens", "completion_tokens", "timestamp"});
    o.prompt_field = f.String("prompt_tokens", o.prompt_field);
    o.completion_field = f.String("completion_tokens", o.completion_field);
    o.timestamp_field = f.String("timestamp", o.timestamp_field);
  }
  o.max_bad_fraction = cfg.Number("max_bad_fraction", 0.0, Range::Closed(0, 1));
  o.use_timestamps = cfg.Bool("use_timestamps", true);
  o.time_scale = cfg.Number("time_scale", 1.0, Range::Positive());
  return o;
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
    return line.find("\"hash_ids\"") != std::string::npos
               ? TraceFormat::kMooncake
               : TraceFormat::kJsonl;
  }
  for (const std::string& name : SplitCsvFields(line.substr(start))) {
    if (name == "TIMESTAMP") return TraceFormat::kAzureCsv;
    if (name == "num_prefill_tokens") return TraceFormat::kLengthTable;
  }
  throw ConfigError(path +
                    ": cannot tell the trace format from its first line; "
                    "give the format (jsonl, azure, mooncake, lengths)");
}

}  // namespace servesim
