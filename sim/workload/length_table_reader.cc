// Length tables: CSV with num_prefill_tokens and num_decode_tokens columns
// (the etalon statistics of ShareGPT and BWB in ../shared/traces), and the
// trace CSVs other simulators read and export with the same columns plus
// arrived_at (Vidur's trace replay: arrival times, in seconds from the
// start). With arrived_at the table is a timed trace (its unit per
// timestamp_unit, auto-detected by default); without, replay draws
// arrivals from workload.arrival.
#include <optional>

#include "sim/workload/trace_reader_internal.h"

namespace servesim {
namespace {

class LengthTableReader : public LineTraceReader {
 public:
  explicit LengthTableReader(const TraceOptions& o)
      : LineTraceReader(o, TimestampUnit::kAuto) {
    header_ = SplitCsvFields(ReadHeader());
    input_col_ = CsvColumn(o.path, header_, "num_prefill_tokens");
    output_col_ = CsvColumn(o.path, header_, "num_decode_tokens");
    for (size_t i = 0; i < header_.size(); ++i) {
      if (header_[i] == "arrived_at") time_col_ = i;
    }
  }

 protected:
  std::string ParseLine(std::string_view line, TraceRecord* out,
                        RawTimestamp* stamp, bool* filtered) override;

 private:
  std::vector<std::string> header_;
  size_t input_col_ = 0, output_col_ = 0;
  std::optional<size_t> time_col_;
};

std::string LengthTableReader::ParseLine(std::string_view line,
                                         TraceRecord* out, RawTimestamp* stamp,
                                         bool* /*filtered*/) {
  const std::vector<std::string> f = SplitCsvFields(line);
  if (f.size() != header_.size()) {
    return "expected " + std::to_string(header_.size()) +
           " fields (as in the header), got " + std::to_string(f.size());
  }
  if (time_col_) {
    if (!ParseStampNumber(f[*time_col_], &stamp->number)) {
      return "column arrived_at: expected an arrival time (a number, in "
             "timestamp_unit), got " +
             QuoteField(f[*time_col_]);
    }
    stamp->kind = RawTimestamp::Kind::kNumber;
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
