// JSON-lines request logs: one object per line with the prompt and
// completion token counts, an optional timestamp and an optional priority,
// under configurable field names. Other fields are ignored (real logs carry many).

#include "sim/core/json_view.h"
#include "sim/workload/trace_reader_internal.h"

namespace servesim {
namespace {

class JsonlTraceReader : public LineTraceReader {
 public:
  explicit JsonlTraceReader(const TraceOptions& o)
      : LineTraceReader(o, TimestampUnit::kAuto) {}

 protected:
  std::string ParseLine(std::string_view line, TraceRecord* out,
                        RawTimestamp* stamp, bool* filtered) override;
};

std::string JsonlTraceReader::ParseLine(std::string_view line, TraceRecord* out,
                                        RawTimestamp* stamp,
                                        bool* /*filtered*/) {
  nlohmann::json j;
  std::string error = ParseJsonLine(line, &j);
  if (!error.empty()) return error;
  if (!j.is_object()) return "expected a JSON object, got " + DescribeJson(j);
  error = JsonTokenCount(j, options().prompt_field, &out->input_tokens);
  if (error.empty()) {
    error = JsonTokenCount(j, options().completion_field, &out->output_tokens);
  }
  if (error.empty()) error = JsonPriority(j, options().priority_field, out);
  if (!error.empty()) return error;
  auto it = j.find(options().timestamp_field);
  if (it == j.end() || it->is_null()) return "";
  return JsonTimestamp(*it, options().timestamp_field, stamp);
}

}  // namespace

std::unique_ptr<TraceReader> MakeJsonlTraceReader(const TraceOptions& o) {
  return std::make_unique<JsonlTraceReader>(o);
}

}  // namespace servesim
