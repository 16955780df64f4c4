// JSON-lines request logs: one object per line with the prompt and
// completion token counts and an optional timestamp, under configurable
// field names. Other fields are ignored (real logs carry many).
#include <cmath>

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
  if (!error.empty()) return error;
  auto it = j.find(options().timestamp_field);
  if (it == j.end() || it->is_null()) return "";
  // A number in timestamp_unit (auto: detected), or a calendar time such as
  // "2024-05-01T12:00:00.250Z" (an explicit offset is applied exactly).
  if (it->is_number() && std::fabs(it->get<double>()) <= kMaxStampMagnitude) {
    stamp->kind = RawTimestamp::Kind::kNumber;
    stamp->number = it->get<double>();
    return "";
  }
  if (it->is_string() &&
      ParseCalendarTime(it->get<std::string>(), true, &stamp->nanos)) {
    stamp->kind = RawTimestamp::Kind::kCalendar;
    return "";
  }
  return "field \"" + options().timestamp_field +
         "\": expected a number (in timestamp_unit) or a time like "
         "\"2024-05-01T12:00:00.25Z\", got " +
         DescribeJson(*it);
}

}  // namespace

std::unique_ptr<TraceReader> MakeJsonlTraceReader(const TraceOptions& o) {
  return std::make_unique<JsonlTraceReader>(o);
}

}  // namespace servesim
