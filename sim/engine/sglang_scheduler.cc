#include "sim/engine/sglang_scheduler.h"

#include <algorithm>

#include "sim/core/check.h"

namespace servesim {

namespace {

SglangTokens TokensOf(const SglangRequest& r) {
  // A request with no stream of its own still differs from every other.
  const uint64_t stream = r.stream_id != 0 ? r.stream_id : static_cast<uint64_t>(r.id) + 1;
  return {r.prefix_id, r.prefix_id != 0 ? r.prefix_len : 0, stream};
}

}  // namespace

SglangScheduler::SglangScheduler(const SglangConfig& config)
    : config_(config),
      page_(std::max(config.page_size, 1)),
      page_mask_((page_ & (page_ - 1)) == 0 ? page_ - 1 : -1),
      total_(config.max_total_tokens / page_ * page_),
      ratio_(config),
      cache_(page_, config.disable_radix_cache),
      order_(config.schedule_policy, &cache_) {}

void SglangScheduler::AddWaiting(const SglangRequest& r) {
  State& s = state_.Insert(r.id);
  s.req = r;
  s.tokens = TokensOf(r);
  waiting_.push_back(r.id);
}

void SglangScheduler::SetHeld(State& s, int64_t held, int64_t cached) {
  own_ += (Ceil(held) - cached) - (Ceil(s.held) - s.cached);
  s.held = held;
  s.cached = cached;
}

void SglangScheduler::EvictFor(int64_t tokens) {
  if (tokens > Free()) evicted_ += cache_.Evict(tokens - Free());
}

void SglangScheduler::Checkpoint(State& s, int64_t up_to) {
  if (cache_.disabled()) return;
  const int64_t key_len = up_to / page_ * page_;
  // The tree keeps one copy: the request's duplicates of what it already
  // held are freed, the rest passes to the tree.
  cache_.Insert(s.tokens, key_len);
  // Split at the prompt's end, so eviction can drop the outputs alone.
  const int64_t prompt = s.req.prompt_len / page_ * page_;
  if (prompt > 0 && prompt < key_len) cache_.Insert(s.tokens, prompt);
  const SglangRadixCache::Match m = cache_.MatchPrefix(s.tokens, key_len);
  SetHeld(s, s.held, key_len);
  cache_.Unlock(s.lock);
  cache_.Lock(m.node);
  s.lock = m.node;
}

void SglangScheduler::Release(State& s, bool cache_it) {
  if (cache_it) Checkpoint(s, s.held);
  SetHeld(s, 0, 0);
  cache_.Unlock(s.lock);
  s.lock = SglangRadixCache::kRoot;
}

int64_t SglangScheduler::DecodeNeed(const std::vector<int64_t>& ids) const {
  int64_t pages = 0;
  for (int64_t id : ids) pages += OnBoundary(state_.at(id).held);
  return pages * page_;
}

bool SglangScheduler::DecodeFits(const std::vector<int64_t>& ids) {
  // check_decode_mem evicts for the step before it compares.
  const int64_t need = DecodeNeed(ids);
  EvictFor(need);
  return Free() >= need;
}

std::optional<SglangBatch> SglangScheduler::Schedule(const SglangBatch* in_flight) {
  evicted_ = 0;
  // A request being chunked publishes its last chunk and continues after it.
  if (chunked_ >= 0) {
    State& s = state_.at(chunked_);
    if (s.held > s.prefix) Checkpoint(s, s.held);
    s.prefix = s.held;
  }
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

void SglangScheduler::OrderWaiting() {
  std::vector<SglangWaitingOrder::Entry> queue;
  queue.reserve(waiting_.size());
  for (int64_t id : waiting_) {
    const State& s = state_.at(id);
    queue.push_back({id, s.tokens, FillLen(s), s.req.max_new_tokens});
  }
  order_.Sort(&queue);
  for (size_t i = 0; i < queue.size(); ++i) waiting_[i] = queue[i].id;
}

SglangScheduler::Budget SglangScheduler::StartBudget() const {
  // Offsets accumulate in double in SGLang's order, so the strict
  // comparisons come out the same.
  Budget g;
  for (int64_t id : running_) {
    const State& s = state_.at(id);
    const double ratio = s.req.ignore_eos ? 1.0 : ratio_.value();
    g.total_off += static_cast<double>(
                       std::min<int64_t>(s.req.max_new_tokens - s.out, kSglangClipMaxNewTokens)) *
                   ratio;
  }
  g.rem_in = config_.max_prefill_tokens;
  g.rem_chunk = config_.chunked_prefill_size;
  return g;
}

SglangScheduler::Add SglangScheduler::BudgetState(const Budget& g) const {
  // Live: locking a match takes it out of the evictable part.
  const int64_t avail = Available();
  if (static_cast<double>(avail) - g.total_off <= 0 || avail - g.cur_off <= 0) {
    return Add::kNoToken;
  }
  const bool chunking = config_.chunked_prefill_size > 0;
  if (g.rem_in <= 0 || (chunking && g.rem_chunk <= 0)) return Add::kOther;
  return Add::kContinue;
}

void SglangScheduler::Reserve(Budget* g, int64_t ext, int64_t max_new) const {
  ext = Ceil(ext);
  g->total_off += static_cast<double>(ext + page_ + max_new);
  g->cur_off += ext + page_;
  g->rem_in -= ext;
  g->rem_chunk -= ext;
}

void SglangScheduler::ContinueChunk(Budget* g, SglangBatch* b) {
  State& s = state_.at(chunked_);
  int64_t rem = std::min(g->rem_chunk, static_cast<int64_t>(static_cast<double>(Available()) -
                                                            g->total_off));
  if (rem <= 0) rem = g->rem_chunk;
  const int64_t ext_full = FillLen(s) - s.prefix;
  const bool truncated = ext_full > rem;
  const int64_t ext = std::min(ext_full, rem);
  Reserve(g, ext, truncated ? 0 : std::min<int64_t>(s.req.max_new_tokens, kSglangClipMaxNewTokens));
  s.admitted = true;
  b->rows.push_back({chunked_, static_cast<int32_t>(ext), static_cast<int32_t>(s.prefix)});
  if (!truncated) chunked_ = -1;
}

int64_t SglangScheduler::AdmitWaiting(Budget* g, SglangBatch* b, int64_t rows_free) {
  const int64_t n_running = static_cast<int64_t>(running_.size());
  const int64_t max_run = config_.max_running_requests;
  const bool chunking = config_.chunked_prefill_size > 0;
  int64_t new_chunked = -1;
  for (int64_t id : waiting_) {
    if (BudgetState(*g) == Add::kOther) break;
    int64_t rows_held = 0;
    for (const SglangBatch::Row& r : b->rows) rows_held += state_.at(r.id).held > 0;
    const auto admitted = static_cast<int64_t>(b->rows.size());
    if (admitted >= std::min(max_run - n_running, rows_free + rows_held)) {
      full_ = true;
      break;
    }
    State& s = state_.at(id);
    const int64_t fill = FillLen(s);
    // init_next_round_input: never the whole fill (one token is computed).
    const SglangRadixCache::Match m = cache_.MatchPrefix(s.tokens, std::max<int64_t>(fill - 1, 0));
    const int64_t pre = m.len;
    const int64_t max_new_left =
        std::min<int64_t>(std::max<int64_t>(s.req.max_new_tokens - s.out, 0), kSglangClipMaxNewTokens);
    int64_t ext = fill - pre;
    cache_.Lock(m.node);  // its own match is not evictable for it
    Add res;
    if (!(static_cast<double>(ext + max_new_left + page_) <
          static_cast<double>(Available()) - g->total_off)) {
      res = Add::kNoToken;
    } else if (!chunking && admitted > 0 && Ceil(ext) >= g->rem_in) {
      res = Add::kOther;
    } else {
      int64_t max_new = std::min<int64_t>(s.req.max_new_tokens, kSglangClipMaxNewTokens);
      if (chunking && Ceil(ext) > g->rem_chunk) {
        // Cut to the chunk budget, ending on a page boundary.
        ext = (pre + g->rem_chunk / page_ * page_) / page_ * page_ - pre;
        max_new = 0;
        if (ext > 0) new_chunked = id;
      }
      if (ext <= 0) {
        res = Add::kOther;
      } else {
        cache_.Lock(m.node);
        s.lock = m.node;
        s.admitted = true;
        b->rows.push_back({id, static_cast<int32_t>(ext), static_cast<int32_t>(pre)});
        s.prefix = pre;
        Reserve(g, ext, max_new);
        res = Add::kContinue;
      }
    }
    cache_.Unlock(m.node);
    if (res == Add::kContinue) res = BudgetState(*g);
    if (res != Add::kContinue) {
      if (res == Add::kNoToken) full_ = !b->rows.empty() || n_running > 0;
      break;
    }
  }
  return new_chunked;
}

void SglangScheduler::AllocateExtend(const SglangBatch& b) {
  // alloc_for_extend evicts first: the extend's tokens, paged: plus a page
  // per request.
  int64_t need = 0;
  for (const SglangBatch::Row& r : b.rows) need += r.extend;
  if (page_ > 1) need += static_cast<int64_t>(b.rows.size()) * page_;
  EvictFor(need);
  for (const SglangBatch::Row& r : b.rows) {
    State& s = state_.at(r.id);
    s.admitted = s.retracted = false;
    // A new admission holds its match through the tree.
    SetHeld(s, r.prefix + r.extend, s.held > 0 ? s.cached : r.prefix);
  }
}

std::optional<SglangBatch> SglangScheduler::Prefill() {
  const int64_t n_running = static_cast<int64_t>(running_.size());
  if (n_running == 0) full_ = false;
  if ((full_ || waiting_.empty()) && chunked_ < 0) return std::nullopt;
  const int64_t rows_free =
      config_.max_running_requests - n_running - (chunked_ >= 0 ? 1 : 0);
  if (rows_free <= 0 && chunked_ < 0) {
    full_ = true;
    return std::nullopt;
  }
  OrderWaiting();
  Budget g = StartBudget();
  SglangBatch b;
  b.extend = true;
  if (chunked_ >= 0) ContinueChunk(&g, &b);
  const int64_t new_chunked = AdmitWaiting(&g, &b, rows_free);
  if (b.rows.empty()) return std::nullopt;
  std::erase_if(waiting_, [&](int64_t id) { return state_.at(id).admitted; });
  if (new_chunked >= 0) chunked_ = new_chunked;
  AllocateExtend(b);
  return b;
}

void SglangScheduler::Retract(std::vector<int64_t>* order, SglangBatch* b) {
  // Most-preferred first; retraction takes from the end.
  std::stable_sort(order->begin(), order->end(), [&](int64_t a, int64_t c) {
    const State& x = state_.at(a);
    const State& y = state_.at(c);
    if (x.out != y.out) return x.out > y.out;
    return x.req.prompt_len < y.req.prompt_len;
  });
  bool first = true;
  while (first || !DecodeFits(*order)) {
    if (order->size() == 1) break;
    first = false;
    State& s = state_.at(order->back());
    b->retracted.push_back(order->back());
    order->pop_back();
    // Freed without caching: the space is needed now. The tree is then
    // evicted down to what the kept requests decode before the next check.
    Release(s, false);
    EvictFor(static_cast<int64_t>(order->size()) * SglangRatio::kRetractDecodeSteps);
    s.prefix = 0;
    s.retracted = true;
  }
  if (order->size() <= 1) DecodeFits(*order);  // SGLang checks once more
  for (int64_t id : b->retracted) state_.at(id).running = false;
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
  if (!DecodeFits(running_)) {
    // The finishing requests free their KV next iteration.
    if (finishing) return std::nullopt;
    std::vector<int64_t> order = running_;
    Retract(&order, &b);
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
  // alloc_for_decode evicts for a token per request (paged: a page).
  EvictFor(static_cast<int64_t>(running_.size()) * page_);
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
    if (++s.out >= s.req.max_new_tokens || s.abort) {
      s.finished = true;
      Release(s, true);
      finished.push_back(r.id);
    } else if (batch.extend) {
      // A finished prefill publishes its KV (the tree matches it from now).
      Checkpoint(s, r.prefix + r.extend);
      s.prefix = r.prefix + r.extend;
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

bool SglangScheduler::Abort(int64_t id) {
  State& s = state_.at(id);
  if (s.finished) return false;
  const auto it = std::find(waiting_.begin(), waiting_.end(), id);
  if (it == waiting_.end()) {
    s.abort = true;
    return false;
  }
  // Waiting (never admitted, or retracted: it holds nothing). A batch in
  // flight may still name a retracted one, so its state goes at the end
  // of the next Process, as a finished request's does.
  waiting_.erase(it);
  SERVESIM_CHECK(s.held == 0 && s.lock == SglangRadixCache::kRoot,
                 "SGLang waiting request %lld holds %lld tokens", static_cast<long long>(id),
                 static_cast<long long>(s.held));
  s.finished = true;
  retiring_.push_back(id);
  return true;
}

size_t SglangScheduler::num_running() const {
  size_t n = running_.size() + (chunked_ >= 0 ? 1 : 0);
  for (int64_t id : last_extend_) n += id != chunked_ && !state_.at(id).running;
  return n;
}

void SglangScheduler::CheckInvariants() const {
  int64_t own = 0;
  state_.ForEach([&](int64_t, const State& s) { own += Ceil(s.held) - s.cached; });
  SERVESIM_CHECK(own == own_ && Free() >= 0,
                 "SGLang pool: %lld tokens counted held, requests hold %lld, tree %lld, pool %lld",
                 static_cast<long long>(own_), static_cast<long long>(own),
                 static_cast<long long>(cache_.evictable_size() + cache_.protected_size()),
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
