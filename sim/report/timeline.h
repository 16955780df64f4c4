// The run timeline (`servesim run --save-timeline FILE.json`) in the Chrome
// trace event format, which Perfetto (ui.perfetto.dev) and chrome://tracing
// open. Per replica (pid = replica + 1):
//   tid 0     its steps as complete ('X') slices named prefill / decode /
//             mixed, ts and dur in microseconds, args = the --save-steps row
//             (sim/report/step_export.h); counters ('C') "running" (sequences
//             in the step) and "kv_usage_pct" (KV blocks used) at each step,
//             and "waiting" (requests sent to the replica and not yet
//             scheduled for the first time; sampled at most
//             kMaxWaitingPoints times);
//   tid 1+id  the lifecycle of a sampled request (at most kMaxSampledRequests,
//             evenly spaced ids): pending (max_concurrency slot wait) →
//             queued → prefill → decode slices, then a "done" instant.
// Steps stream to the file while the run goes (thinned by the same
// StepFilter as --save-steps); the request tracks and the waiting counter are
// written from the request table at the end. Memory: never O(steps); at the
// end, 32 bytes a request for a moment (the waiting counter's two events).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/engine/request.h"
#include "sim/engine/step_record.h"
#include "sim/report/step_export.h"
#include "sim/report/stream_file.h"

namespace servesim {

class TimelineWriter {
 public:
  static constexpr int64_t kMaxSampledRequests = 200;
  static constexpr int64_t kMaxWaitingPoints = 4000;

  // Opens the output now (an unwritable path fails before the run).
  static StatusOr<std::unique_ptr<TimelineWriter>> Open(const std::string& path,
                                                        StepFilter filter = {});
  void Add(const StepRecord& r);  // call with every step, in launch order
  // Writes the request tracks, the waiting counters and the track names,
  // and renames the file into place.
  Status Finish(const RequestTable& requests, SimTime end_time);

 private:
  TimelineWriter(std::unique_ptr<StreamFile> file, StepFilter filter);
  void BeginEvent();
  void WriteRequest(const Request& q, SimTime end_time);
  void WriteWaiting(const RequestTable& requests, SimTime end_time);
  void WriteNames(const RequestTable& requests);

  std::unique_ptr<StreamFile> file_;
  StepFilter filter_;
  int64_t next_ = 0;
  bool first_event_ = true;
  int32_t num_replicas_ = 0;      // seen in steps or in the request table
  std::vector<int64_t> sampled_;  // request ids with a track
};

}  // namespace servesim
