// Mooncake traces (kvcache-ai/Mooncake FAST'25 release): JSON lines with a
// millisecond timestamp, input and output lengths, and one hash id per
// 512-token block of the prompt, prefix-chained (an id names the whole
// prefix up to its block), so ids seen before are cacheable blocks.
#include <cmath>

#include "sim/core/json_view.h"
#include "sim/workload/trace_reader_internal.h"

namespace servesim {
namespace {

constexpr int32_t kMooncakeBlockTokens = 512;

class MooncakeTraceReader : public LineTraceReader {
 public:
  explicit MooncakeTraceReader(const TraceOptions& o)
      : LineTraceReader(o, TimestampUnit::kMillis) {}
  int32_t block_tokens() const override { return kMooncakeBlockTokens; }

 protected:
  std::string ParseLine(std::string_view line, TraceRecord* out,
                        RawTimestamp* stamp, bool* filtered) override;

 private:
  static std::string ParseHashIds(const nlohmann::json& j, TraceRecord* out);
};

std::string MooncakeTraceReader::ParseHashIds(const nlohmann::json& j,
                                              TraceRecord* out) {
  auto it = j.find("hash_ids");
  if (it == j.end() || it->is_null()) return "missing field \"hash_ids\"";
  if (!it->is_array()) {
    return "field \"hash_ids\": expected an array of non-negative integers, "
           "got " +
           DescribeJson(*it);
  }
  out->hash_ids.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& v = (*it)[i];
    // nlohmann stores every non-negative integer literal as unsigned.
    if (!v.is_number_unsigned()) {
      return "field \"hash_ids\"[" + std::to_string(i) +
             "]: expected a non-negative integer, got " + DescribeJson(v);
    }
    out->hash_ids.push_back(v.get<uint64_t>());
  }
  const int64_t want =
      (static_cast<int64_t>(out->input_tokens) + kMooncakeBlockTokens - 1) /
      kMooncakeBlockTokens;
  if (static_cast<int64_t>(out->hash_ids.size()) != want) {
    return "field \"hash_ids\" has " + std::to_string(out->hash_ids.size()) +
           " ids, expected ceil(input_length / 512) = " + std::to_string(want);
  }
  return "";
}

std::string MooncakeTraceReader::ParseLine(std::string_view line,
                                           TraceRecord* out,
                                           RawTimestamp* stamp,
                                           bool* /*filtered*/) {
  nlohmann::json j;
  std::string error = ParseJsonLine(line, &j);
  if (!error.empty()) return error;
  if (!j.is_object()) return "expected a JSON object, got " + DescribeJson(j);
  auto ts = j.find("timestamp");
  if (ts == j.end() || ts->is_null()) return "missing field \"timestamp\"";
  if (!ts->is_number() ||
      !(std::fabs(ts->get<double>()) <= kMaxStampMagnitude)) {
    return "field \"timestamp\": expected milliseconds (a number), got " +
           DescribeJson(*ts);
  }
  stamp->kind = RawTimestamp::Kind::kNumber;
  stamp->number = ts->get<double>();
  error = JsonTokenCount(j, "input_length", &out->input_tokens);
  if (error.empty())
    error = JsonTokenCount(j, "output_length", &out->output_tokens);
  if (error.empty()) error = ParseHashIds(j, out);
  return error;
}

}  // namespace

std::unique_ptr<TraceReader> MakeMooncakeTraceReader(const TraceOptions& o) {
  return std::make_unique<MooncakeTraceReader>(o);
}

}  // namespace servesim
