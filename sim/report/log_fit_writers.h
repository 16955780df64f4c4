// Writers for `servesim fit`: the console report and a ready-to-run
// scenario built from the fit.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "sim/report/log_fit.h"

namespace servesim {

// The console report; `source` names the log and its format.
void WriteFitReport(const LogFit& fit, const std::string& source,
                    std::ostream& os);

// A scenario that replays the fitted traffic: llama-3.1-8b on one H200,
// log-normal lengths clamped to the observed range, gamma arrivals at the
// fitted rate and burstiness (constant when the gaps never vary, Poisson at
// 1 request/s when the log has no usable timestamps), and as many requests
// as the log. A sample with a single distinct length is a fixed length.
nlohmann::json FitScenarioJson(const LogFit& fit, const std::string& source);

}  // namespace servesim
