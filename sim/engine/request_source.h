// Where new requests come from: lengths drawn from distributions or read
// from a trace, shared prefixes from a prefix model, and, when a trace is
// replayed with its own clock, arrival times. Each purpose draws from its
// own random stream, so the engine never changes the traffic.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sim/core/rng.h"
#include "sim/workload/length_distribution.h"
#include "sim/workload/prefix_model.h"
#include "sim/workload/prompt_content.h"
#include "sim/workload/request_class.h"
#include "sim/workload/trace_reader.h"

namespace servesim {

// Where a record of a sessions trace sits in its session (see
// TraceRecord); record numbers count every record the source returned.
struct TraceTurn {
  int64_t record = -1;
  int64_t parent = -1;  // -1: a first turn
  int64_t root = -1;
  double think_time_s = NAN;  // given, x time_scale; NaN: none
};

struct RequestSourceConfig {
  std::shared_ptr<const LengthDistribution> input_len, output_len;  // or trace
  std::shared_ptr<const PrefixModel> prefix;  // may be null
  std::optional<TraceOptions> trace;
  // With classes, each request is drawn into one (its own stream) and takes
  // that class's length distributions instead of input_len/output_len.
  RequestClasses classes;
};

class RequestSource {
 public:
  RequestSource(const RequestSourceConfig& config, uint64_t seed);

  // The next request's lengths and shared prefix; with a trace also its
  // arrival time in seconds (trace time x time_scale; NaN without
  // timestamps). False when the trace is exhausted.
  // `turn` (may be null) receives the record's place in its session.
  bool Next(RequestSpec* spec, double* trace_time_s,
            TraceTurn* turn = nullptr);
  // Draws only a length pair (multi-turn sessions: new input per turn).
  void DrawLengths(RequestSpec* spec);
  bool replays_trace_clock() const {
    return config_.trace && config_.trace->use_timestamps;
  }
  // Empty, or the trace's bad-line verdict at its end (should the file have
  // changed since the scenario was validated).
  const std::string& trace_error() const { return trace_error_; }

 private:
  RequestSourceConfig config_;
  Rng input_rng_, output_rng_, prefix_rng_, class_rng_;
  std::unique_ptr<TraceReader> reader_;
  bool trace_done_ = false;
  int64_t records_ = 0;
  std::string trace_error_;
};

}  // namespace servesim
