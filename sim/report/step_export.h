// The per-step export (`servesim run --save-steps FILE`): one row per
// executed step of every replica, streamed while the run goes (bounded
// memory), as CSV or, for a FILE ending in ".jsonl", JSON lines. Columns
// (units in the names; times exact to the nanosecond):
//   step            0-based index of the step among all replicas' steps, in
//                   launch order (kept when rows are thinned)
//   replica, scheduled_ms, start_ms, end_ms, duration_ms,
//   num_seqs, num_prefill_seqs, num_decode_seqs,
//   num_tokens, prefill_tokens, decode_tokens, context_tokens,
//   num_admitted, num_preempted, num_finishing, cached_tokens,
//   kv_blocks_used, kv_blocks_free, kv_blocks_total,
//   gemm_ms, attn_prefill_ms, attn_decode_ms, comm_ms, other_ms, overhead_ms
// (see sim/engine/step_record.h and README "Per-step export and timeline").
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/status.h"
#include "sim/core/time.h"
#include "sim/engine/step_record.h"
#include "sim/report/stream_file.h"

namespace servesim {

// The column names above, comma-separated (the CSV header, no newline).
const char* StepColumnsCsv();
inline constexpr int kNumStepColumns = 31;

// Which steps the export and the timeline keep: every `every`-th step
// (counting the steps of all replicas, 1 = all) that starts within
// [from, until).
struct StepFilter {
  int64_t every = 1;
  SimTime from = 0;
  SimTime until = kNever;
  bool Keep(int64_t step, const StepRecord& r) const {
    // every == 1 skips a 64-bit division per step (most exports keep all).
    return (every == 1 || step % every == 0) && r.start >= from &&
           r.start < until;
  }
};

// Enough room for one formatted row in either format.
inline constexpr size_t kMaxStepRowBytes = 2048;
// One row's values, comma-separated, with a newline; returns the end.
char* FormatStepCsv(int64_t step, const StepRecord& r, char* out);
// One row's "name":value pairs, comma-separated, without braces (a JSON
// line's body, and the args of the timeline's step slices).
char* FormatStepJsonFields(int64_t step, const StepRecord& r, char* out);
// Milliseconds from nanoseconds, exact, in the shortest form: up to 6
// decimals without trailing zeros ("0", "4.5", "0.000001").
char* FormatNanosAsMillis(int64_t ns, char* out);

// Formatting and writing happen on a background thread: the run only
// copies each kept record into a batch (a few ns), so with a spare core the
// export costs the run almost no wall time. At most kMaxBatchesInFlight
// batches wait for the writer (the run blocks beyond that), so memory stays
// bounded however long the run.
class StepExporter {
 public:
  // Opens the output now (an unwritable path fails before the run).
  static StatusOr<std::unique_ptr<StepExporter>> Open(const std::string& path,
                                                      StepFilter filter = {});
  ~StepExporter();
  void Add(const StepRecord& r);  // call with every step, in launch order
  // No more steps: the writer thread writes what is left and puts the file
  // in place (flush, close, rename: tens of ms for a large export on some
  // file systems) while the caller goes on.
  void Close();
  // Close() if not yet, wait for the writer; the file has appeared iff ok.
  // Without either, the destructor leaves nothing behind.
  Status Finish();
  int64_t rows() const { return rows_; }

  static constexpr size_t kBatchRows = 4096;
  static constexpr size_t kMaxBatchesInFlight = 4;

 private:
  struct Row {
    int64_t step;
    StepRecord record;
  };
  // A fixed array of kBatchRows rows, allocated once and reused: the run
  // copies each record straight into its slot (one copy, no growth check).
  struct Batch {
    std::unique_ptr<Row[]> rows;
    size_t size = 0;
  };

  StepExporter(std::unique_ptr<StreamFile> file, bool jsonl, StepFilter filter);
  // To the writer (blocks while too many wait); refills batch_.
  void Hand();
  void WriterLoop();
  void Write(const Batch& batch);

  std::unique_ptr<StreamFile> file_;  // the writer thread's alone once started
  bool jsonl_;
  StepFilter filter_;
  int64_t next_ = 0;  // index of the next step
  int64_t rows_ = 0;
  Batch batch_;  // being filled by the run

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;  // handed over, not yet written
  std::vector<Batch> spare_;  // written and emptied: reused, not reallocated
  bool done_ = false;        // no more batches will come
  bool publish_ = false;     // ... and the writer puts the file in place
  Status file_status_;       // the writer's, once joined
  bool closed_ = false;      // the run's alone
  std::thread writer_;
};

}  // namespace servesim
