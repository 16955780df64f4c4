// Azure LLM inference traces (Azure/AzurePublicDataset): CSV with TIMESTAMP
// ("2023-11-16 18:15:46.6805900" in the 2023 traces, no time zone;
// "2024-05-10 00:00:00.009930+00:00" in the 2024 ones), ContextTokens and
// GeneratedTokens. Times are computed from the calendar fields exactly, an
// offset applied exactly, so the host's time zone and DST rules never
// enter.
#include "sim/workload/trace_reader_internal.h"

namespace servesim {
namespace {

class AzureTraceReader : public LineTraceReader {
 public:
  explicit AzureTraceReader(const TraceOptions& o)
      : LineTraceReader(o, TimestampUnit::kSeconds) {
    header_ = SplitCsvFields(ReadHeader());
    time_col_ = CsvColumn(o.path, header_, "TIMESTAMP");
    input_col_ = CsvColumn(o.path, header_, "ContextTokens");
    output_col_ = CsvColumn(o.path, header_, "GeneratedTokens");
  }

 protected:
  std::string ParseLine(std::string_view line, TraceRecord* out,
                        RawTimestamp* stamp, bool* filtered) override;

 private:
  std::vector<std::string> header_;
  size_t time_col_ = 0, input_col_ = 0, output_col_ = 0;
};

std::string AzureTraceReader::ParseLine(std::string_view line, TraceRecord* out,
                                        RawTimestamp* stamp,
                                        bool* /*filtered*/) {
  const std::vector<std::string> f = SplitCsvFields(line);
  if (f.size() != header_.size()) {
    return "expected " + std::to_string(header_.size()) +
           " fields (as in the header), got " + std::to_string(f.size());
  }
  if (!ParseCalendarTime(f[time_col_], true, &stamp->nanos)) {
    return "column TIMESTAMP: expected a time like "
           "'2023-11-16 18:15:46.6805900' (optionally with a UTC offset "
           "such as +00:00), got " +
           QuoteField(f[time_col_]);
  }
  stamp->kind = RawTimestamp::Kind::kCalendar;
  if (!ParseTokenCount(f[input_col_], &out->input_tokens)) {
    return "column ContextTokens: expected " + TokenCountExpectation() +
           ", got " + QuoteField(f[input_col_]);
  }
  if (!ParseTokenCount(f[output_col_], &out->output_tokens)) {
    return "column GeneratedTokens: expected " + TokenCountExpectation() +
           ", got " + QuoteField(f[output_col_]);
  }
  return "";
}

}  // namespace

std::unique_ptr<TraceReader> MakeAzureTraceReader(const TraceOptions& o) {
  return std::make_unique<AzureTraceReader>(o);
}

}  // namespace servesim
