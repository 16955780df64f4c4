#include "sim/engine/sglang_scheduler.h"

#include <algorithm>

#include "sim/core/check.h"

namespace servesim {

namespace {

// CLIP_MAX_NEW_TOKENS: admission never reserves more than this many
// output tokens per request.
constexpr int64_t kClipMaxNewTokens = 4096;

}  // namespace

SglangScheduler::SglangScheduler(const SglangConfig& config)
    : config_(config),
      page_(std::max(config.page_size, 1)),
      page_mask_((page_ & (page_ - 1)) == 0 ? page_ - 1 : -1),
      total_(config.max_total_tokens / page_ * page_),
      ratio_(config) {}

void SglangScheduler::AddWaiting(const SglangRequest& r) {
  State& s = state_.Insert(r.id);
  s.req = r;
  waiting_.push_back(r.id);
}

void SglangScheduler::SetHeld(State& s, int64_t n) {
  used_ += Ceil(n) - Ceil(s.held);
  s.held = n;
}

int64_t SglangScheduler::DecodeNeed(const std::vector<int64_t>& ids) const {
  int64_t pages = 0;
  for (int64_t id : ids) pages += OnBoundary(state_.at(id).held);
  return pages * page_;
}

std::optional<SglangBatch> SglangScheduler::Schedule(const SglangBatch* in_flight) {
  // A request being chunked continues from everything it holds.
  if (chunked_ >= 0) state_.at(chunked_).prefix = state_.at(chunked_).held;
  // The last prefill joins the running batch (its final chunks only).
  for (int64_t id : last_extend_) {
    State& s = state_.at(id);
    if (id != chunked_ && !s.finished && !s.running) {
      s.running = true;
      running_.push_back(id);
    }
  }
  last_extend_.clear();
  const size_t before = running_.size();
  std::erase_if(running_, [&](int64_t id) {
    State& s = state_.at(id);
    if (s.finished) s.running = false;
    return s.finished;
  });
  if (running_.size() < before) full_ = false;

  std::optional<SglangBatch> b = Prefill();
  if (b) {
    for (const SglangBatch::Row& r : b->rows) last_extend_.push_back(r.id);
    if (chunked_ >= 0) b->middle_chunk = chunked_;
    return b;
  }
  return Decode(in_flight);
}

std::optional<SglangBatch> SglangScheduler::Prefill() {
  const int64_t n_running = static_cast<int64_t>(running_.size());
  if (n_running == 0) full_ = false;
  if ((full_ || waiting_.empty()) && chunked_ < 0) return std::nullopt;
  const int64_t max_run = config_.max_running_requests;
  const int64_t rows_free = max_run - n_running - (chunked_ >= 0 ? 1 : 0);
  if (rows_free <= 0 && chunked_ < 0) {
    full_ = true;
    return std::nullopt;
  }
  if (config_.schedule_policy == SglangPolicy::kLof) {
    std::stable_sort(waiting_.begin(), waiting_.end(), [&](int64_t a, int64_t b) {
      return state_.at(a).req.max_new_tokens > state_.at(b).req.max_new_tokens;
    });
  }
  // The budgets, in PrefillAdder's terms. Offsets accumulate in double in
  // SGLang's order, so the strict comparisons below come out the same.
  double total_off = 0;
  for (int64_t id : running_) {
    const State& s = state_.at(id);
    const double ratio = s.req.ignore_eos ? 1.0 : ratio_.value();
    total_off += static_cast<double>(
                     std::min<int64_t>(s.req.max_new_tokens - s.out, kClipMaxNewTokens)) *
                 ratio;
  }
  int64_t cur_off = 0;
  int64_t rem_in = config_.max_prefill_tokens;
  const bool chunking = config_.chunked_prefill_size > 0;
  int64_t rem_chunk = config_.chunked_prefill_size;
  const int64_t avail = Free();
  auto reserve = [&](int64_t ext, int64_t max_new) {
    ext = Ceil(ext);
    total_off += static_cast<double>(ext + page_ + max_new);
    cur_off += ext + page_;
    rem_in -= ext;
    rem_chunk -= ext;
  };
  enum class Add { kContinue, kNoToken, kOther };
  auto state = [&] {
    if (static_cast<double>(avail) - total_off <= 0 || avail - cur_off <= 0) {
      return Add::kNoToken;
    }
    if (rem_in <= 0 || (chunking && rem_chunk <= 0)) return Add::kOther;
    return Add::kContinue;
  };

  SglangBatch b;
  b.extend = true;
  std::vector<int64_t> admitted;
  int64_t new_chunked = -1;
  if (chunked_ >= 0) {
    State& s = state_.at(chunked_);
    int64_t rem = std::min(rem_chunk, static_cast<int64_t>(static_cast<double>(avail) - total_off));
    if (rem <= 0) rem = rem_chunk;
    const int64_t ext_full = FillLen(s) - s.prefix;
    const bool truncated = ext_full > rem;
    const int64_t ext = std::min(ext_full, rem);
    reserve(ext, truncated ? 0 : std::min<int64_t>(s.req.max_new_tokens, kClipMaxNewTokens));
    admitted.push_back(chunked_);
    b.rows.push_back({chunked_, static_cast<int32_t>(ext), static_cast<int32_t>(s.prefix)});
    if (!truncated) chunked_ = -1;
  }
  for (int64_t id : waiting_) {
    if (state() == Add::kOther) break;
    int64_t rows_held = 0;
    for (int64_t j : admitted) rows_held += state_.at(j).held > 0;
    if (static_cast<int64_t>(admitted.size()) >= std::min(max_run - n_running, rows_free + rows_held)) {
      full_ = true;
      break;
    }
    State& s = state_.at(id);
    const int64_t fill = FillLen(s);
    int64_t pre = s.prefix < fill ? s.prefix : 0;
    pre = std::min(pre, fill - 1);
    const int64_t max_new_left =
        std::min<int64_t>(std::max<int64_t>(s.req.max_new_tokens - s.out, 0), kClipMaxNewTokens);
    int64_t ext = fill - pre;
    Add res;
    if (!(static_cast<double>(ext + max_new_left + page_) < static_cast<double>(avail) - total_off)) {
      res = Add::kNoToken;
    } else if (!chunking && !admitted.empty() && Ceil(ext) >= rem_in) {
      res = Add::kOther;
    } else {
      int64_t max_new = std::min<int64_t>(s.req.max_new_tokens, kClipMaxNewTokens);
      if (chunking && Ceil(ext) > rem_chunk) {
        // Cut to the chunk budget, ending on a page boundary.
        ext = (pre + rem_chunk / page_ * page_) / page_ * page_ - pre;
        if (ext <= 0) break;
        max_new = 0;
        new_chunked = id;
      }
      admitted.push_back(id);
      b.rows.push_back({id, static_cast<int32_t>(ext), static_cast<int32_t>(pre)});
      s.prefix = pre;
      reserve(ext, max_new);
      res = state();
    }
    if (res != Add::kContinue) {
      if (res == Add::kNoToken) full_ = !admitted.empty() || n_running > 0;
      break;
    }
  }
  if (admitted.empty()) return std::nullopt;
  for (int64_t id : admitted) state_.at(id).admitted = true;
  std::erase_if(waiting_, [&](int64_t id) { return state_.at(id).admitted; });
  if (new_chunked >= 0) chunked_ = new_chunked;
  for (const SglangBatch::Row& r : b.rows) {
    State& s = state_.at(r.id);
    s.admitted = s.retracted = false;
    SetHeld(s, r.prefix + r.extend);
  }
  return b;
}

std::optional<SglangBatch> SglangScheduler::Decode(const SglangBatch* in_flight) {
  if (running_.empty()) return std::nullopt;
  // Overlap loop: a request whose in-flight token is its last sits out.
  bool finishing = false;
  if (in_flight != nullptr) {
    for (const SglangBatch::Row& r : in_flight->rows) state_.at(r.id).flying = true;
    std::erase_if(running_, [&](int64_t id) {
      State& s = state_.at(id);
      const bool last = s.flying && s.out + 1 >= s.req.max_new_tokens;
      if (last) s.running = false;
      finishing |= last;
      return last;
    });
    for (const SglangBatch::Row& r : in_flight->rows) state_.at(r.id).flying = false;
    if (finishing) {
      full_ = false;
      if (running_.empty()) return std::nullopt;
    }
  }
  SglangBatch b;
  if (DecodeNeed(running_) > Free()) {
    // The finishing requests free their KV next iteration.
    if (finishing) return std::nullopt;
    // Most-preferred first; retraction takes from the end.
    std::vector<int64_t> order = running_;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t c) {
      const State& x = state_.at(a);
      const State& y = state_.at(c);
      if (x.out != y.out) return x.out > y.out;
      return x.req.prompt_len < y.req.prompt_len;
    });
    bool first = true;
    while (first || DecodeNeed(order) > Free()) {
      if (order.size() == 1) break;
      first = false;
      State& s = state_.at(order.back());
      b.retracted.push_back(order.back());
      order.pop_back();
      SetHeld(s, 0);
      s.prefix = 0;
      s.retracted = true;
    }
    for (int64_t id : b.retracted) state_.at(id).running = false;
    running_ = order;  // the batch keeps the retraction order
    full_ = false;
    waiting_.insert(waiting_.end(), b.retracted.begin(), b.retracted.end());
    int64_t generated = 0, max_new_total = 0;
    for (int64_t id : running_) {
      generated += state_.at(id).out;
      max_new_total += state_.at(id).req.max_new_tokens;
    }
    ratio_.AfterRetract(generated, static_cast<int64_t>(running_.size()), max_new_total);
  } else {
    ratio_.Decay();
  }
  for (int64_t id : running_) {
    State& s = state_.at(id);
    SetHeld(s, s.held + 1);
    b.rows.push_back({id, 1, static_cast<int32_t>(s.held - 1)});
  }
  return b;
}

std::vector<int64_t> SglangScheduler::Process(const SglangBatch& batch,
                                              std::vector<int64_t>* delivered) {
  std::vector<int64_t> finished;
  for (const SglangBatch::Row& r : batch.rows) {
    State& s = state_.at(r.id);
    if (r.id == batch.middle_chunk || s.retracted || s.finished) continue;
    if (delivered != nullptr) delivered->push_back(r.id);
    if (++s.out >= s.req.max_new_tokens) {
      s.finished = true;
      SetHeld(s, 0);
      finished.push_back(r.id);
    }
  }
  std::sort(finished.begin(), finished.end());
  // Requests that finished at the previous Process: a Schedule has run
  // since (it dropped them from the running batch), and this batch (in
  // flight meanwhile) was the last that could name them.
  for (int64_t id : retiring_) state_.erase(id);
  retiring_ = finished;
  return finished;
}

size_t SglangScheduler::num_running() const {
  size_t n = running_.size() + (chunked_ >= 0 ? 1 : 0);
  for (int64_t id : last_extend_) n += id != chunked_ && !state_.at(id).running;
  return n;
}

void SglangScheduler::CheckInvariants() const {
  int64_t used = 0;
  state_.ForEach([&](int64_t, const State& s) { used += Ceil(s.held); });
  SERVESIM_CHECK(used == used_ && used_ <= total_,
                 "SGLang pool: %lld tokens counted in use, requests hold %lld, pool %lld",
                 static_cast<long long>(used_), static_cast<long long>(used),
                 static_cast<long long>(total_));
  std::unordered_set<int64_t> seen;
  for (int64_t id : waiting_) {
    SERVESIM_CHECK(seen.insert(id).second && !state_.at(id).running && !state_.at(id).finished,
                   "SGLang request %lld waits twice, or waits while running or finished",
                   static_cast<long long>(id));
  }
  for (int64_t id : running_) {
    SERVESIM_CHECK(seen.insert(id).second && state_.at(id).running,
                   "SGLang request %lld runs while waiting, or twice",
                   static_cast<long long>(id));
  }
  SERVESIM_CHECK(running_.size() <= static_cast<size_t>(config_.max_running_requests),
                 "SGLang running batch of %zu > max_running_requests %d", running_.size(),
                 config_.max_running_requests);
}

bool SglangScheduler::has_requests() const {
  if (!waiting_.empty() || chunked_ >= 0) return true;
  return std::any_of(running_.begin(), running_.end(),
                     [&](int64_t id) { return !state_.at(id).finished; });
}

void SglangScheduler::OnIdle(bool batch_in_flight) {
  if (!batch_in_flight && !has_requests()) ratio_.Reset();
}

}  // namespace servesim
