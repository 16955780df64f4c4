// One simulation as bytes, for running it in another process (a Ray task):
// the spec's data (scenario JSON, replication, percentiles, probes) and the
// result (summary, warm-up truncation, probe values), as CBOR so doubles,
// NaN and infinities travel exactly. The same build decodes what it
// encodes; a result decoded here equals the one computed there.
#pragma once

#include <optional>
#include <string>

#include "sim/analysis/runs.h"

namespace servesim::py {

// Null when the spec carries what cannot travel: inspect/collect closures
// or a kept SimulationOutput (such runs stay in the calling process).
std::optional<std::string> EncodeSpec(const RunSpec& spec);
// Decodes a spec and runs it here (RunHere); a bad spec is a ConfigError-
// style std::runtime_error with the reason.
std::string RunEncodedSpec(const std::string& spec_bytes);
RunResult DecodeResult(const std::string& result_bytes);

}  // namespace servesim::py
