// `servesim run`'s progress line, from simulated progress: requests done of
// the run's bound and the simulated time reached (sim/core/progress.h).
#pragma once

#include <string>

#include "sim/core/progress.h"
#include "sim/engine/simulation.h"

namespace servesim {

// The progress line's text and the fraction of the run done (the larger of
// requests done / num_requests and simulated time / duration_s; negative
// when the run has neither bound).
struct RunProgressText {
  double fraction = -1;
  std::string what;
};
RunProgressText DescribeRunProgress(const WorkloadConfig& w, const RunProgress& p);

// Sets in->on_progress to report to `reporter` (which must outlive the run).
void ReportRunProgress(SimulationInput* in, ProgressReporter* reporter);

}  // namespace servesim
