// Per-step export rows, CSV and JSON lines (see step_export.h). Rows are
// formatted with integer arithmetic only (times are integer nanoseconds,
// printed as milliseconds in their shortest exact decimal form), so they
// are exact and cheap:
// a run of millions of steps stays within a few percent of its time
// without the export.
#include "sim/report/step_export.h"

#include <charconv>
#include <cstring>

namespace servesim {
namespace {

// clang-format off
constexpr const char* kColumns[kNumStepColumns] = {
    "step", "replica", "scheduled_ms", "start_ms", "end_ms", "duration_ms",
    "num_seqs", "num_prefill_seqs", "num_decode_seqs", "num_tokens",
    "prefill_tokens", "decode_tokens", "context_tokens", "num_admitted",
    "num_preempted", "num_finishing", "cached_tokens", "kv_blocks_used",
    "kv_blocks_free", "kv_blocks_total", "gemm_ms", "attn_prefill_ms",
    "attn_decode_ms", "comm_ms", "other_ms", "overhead_ms", "num_running",
    "num_waiting", "first_stage_end_ms", "last_stage_start_ms", "busy_ms"};
// clang-format on

std::string JoinColumns() {
  std::string s;
  for (const char* c : kColumns) s += (s.empty() ? "" : ",") + std::string(c);
  return s;
}

char* PutInt(int64_t v, char* out) { return std::to_chars(out, out + 24, v).ptr; }

constexpr char kDigitPairs[] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Seconds of the cost breakdown to the nearest nanosecond, as milliseconds
// (the parts are >= 0 and far below 2^63 ns; no libm call in the hot path).
char* SecondsAsMillis(double s, char* out) {
  const double ns = s * 1e9;
  return FormatNanosAsMillis(
      static_cast<int64_t>(ns >= 0 ? ns + 0.5 : ns - 0.5), out);
}

// The values of one row, in column order, each followed by `sep` except the
// last; with `names`, each preceded by "name": (JSON). One template, so the
// two formats cannot disagree on the columns.
template <bool kJson>
char* Row(int64_t step, const StepRecord& r, char* p) {
  int col = 0;
  auto name = [&]() {
    if (col > 0) *p++ = ',';
    if constexpr (kJson) {
      *p++ = '"';
      const size_t n = std::strlen(kColumns[col]);
      std::memcpy(p, kColumns[col], n);
      p += n;
      *p++ = '"';
      *p++ = ':';
    }
    ++col;
  };
  auto i = [&](int64_t v) {
    name();
    p = PutInt(v, p);
  };
  auto ms = [&](int64_t ns) {
    name();
    p = FormatNanosAsMillis(ns, p);
  };
  auto sec = [&](double s) {
    name();
    p = SecondsAsMillis(s, p);
  };
  i(step);
  i(r.replica);
  ms(r.scheduled);
  ms(r.start);
  ms(r.end);
  ms(r.end - r.start);
  i(r.num_seqs);
  i(r.num_prefill_seqs);
  i(r.num_decode_seqs);
  i(r.num_tokens);
  i(r.prefill_tokens);
  i(r.num_tokens - r.prefill_tokens);
  i(r.context_tokens);
  i(r.num_admitted);
  i(r.num_preempted);
  i(r.num_finishing);
  i(r.cached_tokens);
  i(r.kv_blocks_used);
  i(int64_t{r.kv_blocks_total} - r.kv_blocks_used);
  i(r.kv_blocks_total);
  sec(r.gemm_s);
  sec(r.attn_prefill_s);
  sec(r.attn_decode_s);
  sec(r.comm_s);
  sec(r.other_s);
  sec(r.overhead_s);
  i(r.num_running);
  i(r.num_waiting);
  ms(r.first_stage_end);
  ms(r.last_stage_start);
  ms(r.busy);
  return p;
}

}  // namespace

const char* StepColumnsCsv() {
  static const std::string header = JoinColumns();
  return header.c_str();
}

char* FormatNanosAsMillis(int64_t ns, char* out) {
  // The hot path of the export (12 of 28 columns). Most breakdown parts of
  // a step are zero and most times end in zeros: the shortest exact form
  // ("0", "4.5") is about a third fewer bytes than fixed 6 decimals, which
  // is most of the export's cost (the kernel's copy of the file).
  if (ns == 0) {
    *out = '0';
    return out + 1;
  }
  if (ns < 0) {
    *out++ = '-';
    ns = -ns;  // SimTime never reaches INT64_MIN
  }
  out = PutInt(ns / 1'000'000, out);
  int32_t frac = static_cast<int32_t>(ns % 1'000'000);
  if (frac == 0) return out;
  *out++ = '.';
  std::memcpy(out, kDigitPairs + 2 * (frac / 10000), 2);
  std::memcpy(out + 2, kDigitPairs + 2 * (frac / 100 % 100), 2);
  std::memcpy(out + 4, kDigitPairs + 2 * (frac % 100), 2);
  int digits = 6;
  for (; frac % 10 == 0; frac /= 10) --digits;
  return out + digits;
}

char* FormatStepCsv(int64_t step, const StepRecord& r, char* out) {
  char* p = Row<false>(step, r, out);
  *p++ = '\n';
  return p;
}

char* FormatStepJsonFields(int64_t step, const StepRecord& r, char* out) {
  return Row<true>(step, r, out);
}

StatusOr<std::unique_ptr<StepExporter>> StepExporter::Open(
    const std::string& path, StepFilter filter) {
  StatusOr<std::unique_ptr<StreamFile>> file = StreamFile::Open(path);
  if (!file.ok()) return file.status();
  const bool jsonl =
      path.size() >= 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0;
  (*file)->WriteBackAsItGrows();  // on the writer thread, see below
  std::unique_ptr<StepExporter> e(
      new StepExporter(std::move(*file), jsonl, filter));
  if (!jsonl) {
    e->file_->Write(StepColumnsCsv());
    e->file_->Write("\n");
  }
  return e;
}

StepExporter::StepExporter(std::unique_ptr<StreamFile> file, bool jsonl,
                           StepFilter filter)
    : file_(std::move(file)), jsonl_(jsonl), filter_(filter) {
  if (filter_.every < 1) filter_.every = 1;
  batch_.rows = std::make_unique<Row[]>(kBatchRows);
  writer_ = std::thread([this] { WriterLoop(); });
}

StepExporter::~StepExporter() {
  if (!writer_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  writer_.join();  // file_'s destructor then removes the temporary file
}

void StepExporter::Add(const StepRecord& r) {
  const int64_t step = next_++;
  if (!filter_.Keep(step, r)) return;
  ++rows_;
  Row& row = batch_.rows[batch_.size++];
  row.step = step;
  row.record = r;
  if (batch_.size == kBatchRows) Hand();
}

void StepExporter::Hand() {
  Batch next;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return queue_.size() < kMaxBatchesInFlight; });
    queue_.push_back(std::move(batch_));
    if (!spare_.empty()) {
      next = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  cv_.notify_all();
  // Fresh pages for every batch cost page faults; a spare one is warm.
  if (!next.rows) next.rows = std::make_unique<Row[]>(kBatchRows);
  batch_ = std::move(next);
}

void StepExporter::WriterLoop() {
  for (;;) {
    Batch batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return done_ || !queue_.empty(); });
      if (queue_.empty()) {  // done_ and drained
        if (publish_) file_status_ = file_->Finish();
        return;
      }
      batch = std::move(queue_.front());
      queue_.pop_front();
    }
    cv_.notify_all();  // room for the run's next batch
    Write(batch);
    batch.size = 0;
    std::lock_guard<std::mutex> lock(mu_);
    spare_.push_back(std::move(batch));
  }
}

void StepExporter::Write(const Batch& batch) {
  for (size_t k = 0; k < batch.size; ++k) {
    const Row& row = batch.rows[k];
    char* p = file_->Reserve(kMaxStepRowBytes);
    if (jsonl_) {
      *p++ = '{';
      p = FormatStepJsonFields(row.step, row.record, p);
      *p++ = '}';
      *p++ = '\n';
    } else {
      p = FormatStepCsv(row.step, row.record, p);
    }
    file_->Advance(p);
  }
}

void StepExporter::Close() {
  if (closed_) return;
  closed_ = true;
  if (batch_.size > 0) Hand();
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    publish_ = true;
  }
  cv_.notify_all();
}

Status StepExporter::Finish() {
  Close();
  writer_.join();
  return file_status_;
}

}  // namespace servesim
