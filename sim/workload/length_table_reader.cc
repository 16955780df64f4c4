// Length tables: CSV with num_prefill_tokens and num_decode_tokens columns
// (the etalon statistics of ShareGPT and BWB in ../shared/traces). They have
// no timestamps; replay draws arrivals from workload.arrival.
#include "sim/workload/trace_reader_internal.h"

namespace servesim {
namespace {

class LengthTableReader : public LineTraceReader {
 public:
  explicit LengthTableReader(const TraceOptions& o) : LineTraceReader(o, 1.0) {
    header_ = SplitCsvFields(ReadHeader());
    input_col_ = CsvColumn(o.path, header_, "num_prefill_tokens");
    output_col_ = CsvColumn(o.path, header_, "num_decode_tokens");
  }

 protected:
  std::string ParseLine(std::string_view line, TraceRecord* out,
                        RawTimestamp* /*stamp*/) override;

 private:
  std::vector<std::string> header_;
  size_t input_col_ = 0, output_col_ = 0;
};

std::string LengthTableReader::ParseLine(std::string_view line,
                                         TraceRecord* out,
                                         RawTimestamp* /*stamp*/) {
  const std::vector<std::string> f = SplitCsvFields(line);
  if (f.size() != header_.size()) {
    return "expected " + std::to_string(header_.size()) +
           " fields (as in the header), got " + std::to_string(f.size());
  }
  if (!ParseTokenCount(f[input_col_], &out->input_tokens)) {
    return "column num_prefill_tokens: expected " + TokenCountExpectation() +
           ", got " + QuoteField(f[input_col_]);
  }
  if (!ParseTokenCount(f[output_col_], &out->output_tokens)) {
    return "column num_decode_tokens: expected " + TokenCountExpectation() +
           ", got " + QuoteField(f[output_col_]);
  }
  return "";
}

}  // namespace

std::unique_ptr<TraceReader> MakeLengthTableReader(const TraceOptions& o) {
  return std::make_unique<LengthTableReader>(o);
}

}  // namespace servesim
