// `servesim run`'s progress line (see run_progress.h).
#include "sim/cli/run_progress.h"

#include <algorithm>

namespace servesim {

RunProgressText DescribeRunProgress(const WorkloadConfig& w, const RunProgress& p) {
  RunProgressText t;
  const double now_s = ToSeconds(p.now);
  t.what = std::to_string(p.done);
  if (w.num_requests > 0) {
    t.what += "/" + std::to_string(w.num_requests);
    t.fraction = static_cast<double>(p.done) / static_cast<double>(w.num_requests);
  }
  t.what += " requests done, simulated " + FormatDuration(now_s);
  if (w.duration_s > 0) {
    t.what += " of " + FormatDuration(w.duration_s);
    t.fraction = std::max(t.fraction, now_s / w.duration_s);
  }
  t.fraction = std::min(t.fraction, 1.0);
  return t;
}

void ReportRunProgress(SimulationInput* in, ProgressReporter* reporter) {
  const WorkloadConfig w = in->workload;
  in->on_progress = [w, reporter](const RunProgress& p) {
    if (!reporter->Due()) return;  // the text is built only when shown
    const RunProgressText t = DescribeRunProgress(w, p);
    reporter->Update(t.fraction, t.what);
  };
}

}  // namespace servesim
