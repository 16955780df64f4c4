// BurstGPT traces (HPMLL/BurstGPT: Azure OpenAI GPT service logs of a
// campus, 121 days): CSV with the header
//   Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
// Timestamp is seconds from the start of the trace (the format's unit;
// timestamp_unit overrides it). Failed requests are logged with 0 Response
// tokens: they follow the 0-token rule (read as 1 token, counted). Rows can
// be kept to one Model ("ChatGPT", "GPT-4") and one Log Type
// ("Conversation log", "API log"); the others are counted as filtered.
// Total tokens is not used (it is the sum of the two counts).
#include "sim/workload/trace_reader_internal.h"

namespace servesim {
namespace {

class BurstGptReader : public LineTraceReader {
 public:
  explicit BurstGptReader(const TraceOptions& o)
      : LineTraceReader(o, TimestampUnit::kSeconds) {
    header_ = SplitCsvFields(ReadHeader());
    time_col_ = CsvColumn(o.path, header_, "Timestamp");
    model_col_ = CsvColumn(o.path, header_, "Model");
    input_col_ = CsvColumn(o.path, header_, "Request tokens");
    output_col_ = CsvColumn(o.path, header_, "Response tokens");
    type_col_ = CsvColumn(o.path, header_, "Log Type");
  }

 protected:
  std::string ParseLine(std::string_view line, TraceRecord* out,
                        RawTimestamp* stamp, bool* filtered) override;

 private:
  std::vector<std::string> header_;
  size_t time_col_ = 0, model_col_ = 0, input_col_ = 0, output_col_ = 0,
         type_col_ = 0;
};

std::string BurstGptReader::ParseLine(std::string_view line, TraceRecord* out,
                                      RawTimestamp* stamp, bool* filtered) {
  const std::vector<std::string> f = SplitCsvFields(line);
  if (f.size() != header_.size()) {
    return "expected " + std::to_string(header_.size()) +
           " fields (as in the header), got " + std::to_string(f.size());
  }
  if (!ParseStampNumber(f[time_col_], &stamp->number)) {
    return "column Timestamp: expected seconds from the trace's start (a "
           "number), got " +
           QuoteField(f[time_col_]);
  }
  stamp->kind = RawTimestamp::Kind::kNumber;
  if (!ParseTokenCount(f[input_col_], &out->input_tokens)) {
    return "column Request tokens: expected " + TokenCountExpectation() +
           ", got " + QuoteField(f[input_col_]);
  }
  if (!ParseTokenCount(f[output_col_], &out->output_tokens)) {
    return "column Response tokens: expected " + TokenCountExpectation() +
           ", got " + QuoteField(f[output_col_]);
  }
  // Filtered only once the row is well formed: a broken row of another
  // model is still a broken line.
  const TraceOptions& o = options();
  *filtered = (!o.model_filter.empty() && f[model_col_] != o.model_filter) ||
              (!o.log_type_filter.empty() && f[type_col_] != o.log_type_filter);
  return "";
}

}  // namespace

std::unique_ptr<TraceReader> MakeBurstGptReader(const TraceOptions& o) {
  return std::make_unique<BurstGptReader>(o);
}

}  // namespace servesim
