// The speculative decode group by calendar (see spec_calendar_group.h).
#include "sim/engine/spec_calendar_group.h"

#include <algorithm>
#include <bit>
#include <type_traits>

#include "sim/core/check.h"
#include "sim/engine/grouped_decode.h"
#include "sim/engine/scheduler.h"

namespace servesim {
namespace {

// The packed word: accepted drafts in bits 0 .. 27, fresh blocks in
// 28 .. 45, rejected drafts' blocks in 46 .. 63 (Fits bounds the sums).
constexpr int kFreshShift = 28, kRejectedShift = 46;
constexpr uint64_t kAcceptedMask = (1ULL << kFreshShift) - 1;
constexpr uint64_t kBlocksMask = (1ULL << (kRejectedShift - kFreshShift)) - 1;
constexpr int32_t kMaxDrafts = 16;  // the bit buffer's bound (k + 1 <= 32)
// FullSums' rows: one per computed % block size, kSumsStride wide (a <= k
// <= kMaxDrafts), a constant so that the walk's index costs no register.
constexpr int kSumsShift = 5;
constexpr int32_t kSumsStride = 1 << kSumsShift;
static_assert(kSumsStride > kMaxDrafts);

uint64_t PackSums(int64_t accepted, int64_t fresh, int64_t rejected) {
  return static_cast<uint64_t>(accepted) | static_cast<uint64_t>(fresh) << kFreshShift |
         static_cast<uint64_t>(rejected) << kRejectedShift;
}

// Out of line: the walk's loop keeps its state in registers, and refills
// every dozen steps or so.
[[gnu::noinline]] uint32_t Rejects(const SpecMemberDraws& draws, int32_t w) {
  return draws.Rejects(w);
}

}  // namespace

bool SpecCalendarGroup::Fits(const EngineConfig& config) {
  const int64_t k = config.spec.num_speculative_tokens;
  const int64_t cap = config.long_prefill_token_threshold;
  // A step's sums: accepted <= members * k, blocks <= members * (k + 1).
  return config.verify_runs && k >= 1 && k <= kMaxDrafts && (cap <= 0 || cap > k) &&
         static_cast<int64_t>(config.max_num_seqs) * (k + 1) <= static_cast<int64_t>(kBlocksMask);
}

SpecCalendarGroup::SpecCalendarGroup(const EngineConfig& config, const BlockMath& blocks,
                                     RequestTable* requests, std::vector<int64_t>* running,
                                     KvCache* kv, SpecDecodeStats* stats)
    : spec_config_(config.spec),
      k_(config.spec.num_speculative_tokens),
      max_num_seqs_(config.max_num_seqs),
      blocks_(blocks),
      requests_(requests),
      running_(running),
      kv_(kv),
      stats_(stats),
      word_(kEpoch, 0),
      tail_count_(kEpoch * (k_ + 1), 0),
      tail_context_(kEpoch * (k_ + 1), 0),
      finish_(kEpoch),
      full_sums_(FullSums(blocks, k_)) {
  SERVESIM_CHECK(Fits(config) && kv->pool().counted() && !config.async_scheduling,
                 "the speculative decode calendar needs priced runs, k <= %d, no cap that "
                 "cuts drafts, a counted pool and sync steps",
                 kMaxDrafts);
}

std::vector<uint64_t> SpecCalendarGroup::FullSums(const BlockMath& blocks, int32_t k) {
  // With c = q * size + r, Blocks(c + x) - Blocks(c) depends on r alone:
  // ceil((r + x) / size) - ceil(r / size).
  // (Block sizes over 512 compute them.)
  const int32_t size = blocks.size(), stride = kSumsStride;
  if (blocks.shift() < 0 || size > 512) return {};
  std::vector<uint64_t> table(static_cast<size_t>(size) * stride, 0);
  for (int32_t r = 0; r < size; ++r) {
    const int32_t held = blocks.Blocks(r), peak = blocks.Blocks(r + k + 1);
    for (int32_t a = 0; a <= k; ++a) {
      table[static_cast<size_t>(r) * stride + a] =
          PackSums(a, peak - held, peak - blocks.Blocks(r + a + 1));
    }
  }
  return table;
}

int32_t SpecCalendarGroup::Ask(const Member& m, const State& s) const {
  return 1 + std::max(0, std::min(k_, m.output_len - s.output - 1));
}

// A walk's moving state, in computed tokens (output is computed - offset
// throughout); locals of the walk, so that a sink's stores cannot make them
// reload.
struct SpecCalendarGroup::Cursor {
  int64_t t;         // the next step
  int32_t computed;  // before it
  int32_t held;      // its blocks (Blocks(computed))
  int32_t most;      // the most drafts accepted in one step (-1: none)
  // The draws (State::rejects) run to the position whose computed count
  // is `loaded`; the next word to read is `next_word`.
  int32_t next_word, loaded;
  uint64_t rejects;
  void Refill(const SpecMemberDraws& draws) {
    rejects |= static_cast<uint64_t>(Rejects(draws, next_word++)) << (loaded - computed);
    loaded += 32;
  }
};

// A member's walk in ScheduleInLanes: its draws, index, last computed
// count with a full step (done - k - 1) and cursor.
struct SpecCalendarGroup::Lane {
  const SpecMemberDraws* draws;
  uint32_t index;
  int32_t full;
  Cursor x;
  bool InFullSteps(int64_t until) const { return x.t < until && x.computed <= full; }
};

// A full step's packed sums (FullSums): from the table, or computed.
struct SpecCalendarGroup::TableSums {
  const uint64_t* table;
  int64_t mask;  // block size - 1
  uint64_t operator()(int64_t at, int64_t a) const {
    return table[((at & mask) << kSumsShift) | a];
  }
};
struct SpecCalendarGroup::ComputedSums {
  BlockMath blocks;
  int32_t k;
  uint64_t operator()(int64_t at, int64_t a) const {
    const int32_t c = static_cast<int32_t>(at);
    const int64_t peak = blocks.Blocks(c + k + 1);
    return PackSums(a, peak - blocks.Blocks(c),
                    peak - blocks.Blocks(static_cast<int32_t>(at + a + 1)));
  }
};

SpecCalendarGroup::Cursor SpecCalendarGroup::Start(const State& s, int64_t from) {
  return {.t = from,
          .computed = s.computed,
          .held = s.blocks,
          .most = s.max_delivered - 1,
          .next_word = s.next_word,
          .loaded = 32 * s.next_word + (s.computed - s.output),
          .rejects = s.rejects};
}

template <class Sink>
SpecCalendarGroup::State SpecCalendarGroup::Walk(const Member& m, State s, int64_t from,
                                                 int64_t until, Sink& sink) const {
  if (from >= until || s.output >= m.output_len) return s;
  return WalkOn(m, s, from, until, sink, Start(s, from));
}

template <class Sink>
SpecCalendarGroup::State SpecCalendarGroup::WalkOn(const Member& m, State s, int64_t from,
                                                   int64_t until, Sink& sink,
                                                   Cursor x) const {
  const int32_t offset = s.computed - s.output;
  const int32_t done = Done(m, s);
  // Every step with k drafts (more than k + 1 tokens left), their packed
  // sums from FullSums' table where there is one; then the last few.
  // A walk stays in one epoch: step t's sums are at words[Slot(t)].
  uint64_t* const words = sink.words;
  if (!full_sums_.empty()) {
    FullSteps(m.draws, done, until, words, &x, Table());
  } else {
    FullSteps(m.draws, done, until, words, &x, ComputedSums{blocks_, k_});
  }
  if (x.computed == done) {
    sink.Finish(x.t - 1);
  } else {
    TailSteps(m.draws, done, until, sink, &x);
  }
  s.verified |= x.t > from && s.output + 1 < m.output_len;  // its first step had drafts
  s.deliveries += static_cast<int32_t>(x.t - from);
  s.output = x.computed - offset;
  s.computed = x.computed;
  s.blocks = x.held;
  s.max_delivered = static_cast<uint8_t>(x.most + 1);
  s.rejects = x.rejects;
  s.next_word = x.next_word;
  return s;
}

SpecCalendarGroup::TableSums SpecCalendarGroup::Table() const {
  return {full_sums_.data(), blocks_.size() - 1};
}

template <class SumsOf>
void SpecCalendarGroup::FullSteps(const SpecMemberDraws& draws, int32_t done, int64_t until,
                                  uint64_t* words, Cursor* x, const SumsOf sums_of) const {
  // As TailSteps' step with d = k, a lane of one.
  Lane lane{&draws, 0, done - k_ - 1, *x};
  FullStepsLanes<1>(&lane, until, words, sums_of);
  *x = lane.x;
  x->held = blocks_.Blocks(x->computed);  // (a member holds its computed tokens' blocks)
}

template <int N, class SumsOf>
void SpecCalendarGroup::FullStepsLanes(Lane* lanes, int64_t until, uint64_t* words,
                                       const SumsOf sums_of) const {
  // Full steps (TailSteps' step with d = k) of N members side by side, in
  // registers: a step's draw waits on the step before, so one member's
  // chain leaves the core idle; N overlap. Stops where any member's full
  // steps end.
  const int32_t k = k_;
  const uint64_t stop = uint64_t{1} << k;
  const int step_bits = static_cast<int>(std::bit_width(static_cast<uint32_t>(k)));  // 2^ >= k + 1
  const auto going = [&] {
    return std::all_of(lanes, lanes + N, [&](const Lane& l) { return l.InFullSteps(until); });
  };
  while (going()) {
    // Refilled early (the buffer takes 32 more at up to 32 left), so that
    // a run is long: it counts the steps it surely has (each reads at most
    // k + 1 positions) instead of testing positions at each.
    int64_t at[N], most[N], steps = until;
    uint64_t r[N];
    uint64_t *first[N], *slot[N];
    bool saturated = true;
    for (int i = 0; i < N; ++i) {
      Cursor& x = lanes[i].x;
      if (x.loaded - x.computed <= 32) x.Refill(*lanes[i].draws);
      at[i] = x.computed;
      most[i] = x.most;
      r[i] = x.rejects;
      first[i] = slot[i] = words + Slot(x.t);
      const int64_t last = std::min(lanes[i].full, x.loaded - k - 1);
      steps = std::min({steps, until - x.t, ((last - at[i]) >> step_bits) + 1});
      saturated &= most[i] >= k;
    }
    const auto run = [&](auto track_max) {
      for (; steps > 0; --steps) {
#pragma GCC unroll 8
        for (int i = 0; i < N; ++i) {
          const int64_t a = std::countr_zero(r[i] | stop);
          r[i] >>= a + 1;
          *slot[i]++ += sums_of(at[i], a);
          at[i] += a + 1;
          if constexpr (track_max()) most[i] = std::max(most[i], a);
        }
      }
    };
    if (saturated) {
      run(std::false_type{});
    } else {
      run(std::true_type{});
    }
    for (int i = 0; i < N; ++i) {
      Cursor& x = lanes[i].x;
      x.t += slot[i] - first[i];
      x.computed = static_cast<int32_t>(at[i]);
      x.most = static_cast<int32_t>(most[i]);
      x.rejects = r[i];
    }
  }
}

template <class Sink>
void SpecCalendarGroup::TailSteps(const SpecMemberDraws& draws, int32_t done, int64_t until,
                                  Sink& sink, Cursor* x) const {
  for (; x->t < until; ++x->t) {
    // d drafts for positions output .. output + d - 1 (RunningAsk,
    // DraftTokens), n = d + 1 tokens (Add); Verify keeps the leading
    // accepted drafts and drops the rest's KV (a + 1 of the n tokens stay
    // computed); Deliver: a + 1 tokens. Reads the draws of positions up
    // to output + d.
    const int32_t d = std::min(k_, done - x->computed - 1);
    if (x->computed + d >= x->loaded) x->Refill(draws);
    const int32_t a = std::countr_zero(x->rejects | uint64_t{1} << d);  // bit d: a stop
    x->rejects >>= a + 1;
    const int32_t c = x->computed, top = blocks_.Blocks(c + d + 1);
    x->computed = c + a + 1;
    const int32_t keep = blocks_.Blocks(x->computed);
    x->most = std::max(x->most, a);
    sink.Tail(x->t, d + 1, c, a, top - x->held, top - keep);
    x->held = keep;
    if (x->computed == done) {
      sink.Finish(x->t++);
      return;
    }
  }
}

// Where a walk's steps go: into a calendar (the group's, or the invariant
// check's own), or nowhere (a replay).
struct SpecCalendarGroup::CalendarSink {
  uint64_t* words;  // full steps' packed sums, written by Walk itself
  int32_t* tail_count;
  int64_t* tail_context;
  std::vector<std::vector<uint32_t>>* finish;
  int32_t k;
  uint32_t member;
  static size_t Slot(int64_t t) { return static_cast<size_t>(t & (kEpoch - 1)); }
  void Tail(int64_t t, int32_t n, int32_t c, int32_t a, int32_t fresh, int32_t rejected) {
    words[Slot(t)] += PackSums(a, fresh, rejected);
    const size_t at = Slot(t) * static_cast<size_t>(k + 1) + n;
    if (n <= k) {
      ++tail_count[at];
      tail_context[at] += c;
    }
  }
  void Finish(int64_t t) { (*finish)[Slot(t)].push_back(member); }
};

struct SpecCalendarGroup::NoSink {
  uint64_t scratch[kEpoch] = {};  // full steps' sums, thrown away
  uint64_t* words = scratch;
  void Tail(int64_t, int32_t, int32_t, int32_t, int32_t, int32_t) {}
  void Finish(int64_t) {}
};

void SpecCalendarGroup::Schedule(size_t index, int64_t until) {
  Member& m = members_[index];
  CalendarSink sink{word_.data(),  tail_count_.data(), tail_context_.data(),
                    &finish_,      k_,                 static_cast<uint32_t>(index)};
  m.ahead = Walk(m, m.base, m.base_step, until, sink);
}

SpecCalendarGroup::State SpecCalendarGroup::StateAt(const Member& m, int64_t step) const {
  NoSink none;
  return Walk(m, m.base, m.base_step, step, none);
}

void SpecCalendarGroup::Absorb(std::vector<int64_t>* candidates) {
  RequestTable& reqs = *requests_;
  joining_ids_.clear();
  const int64_t epoch_end = (step_ / kEpoch + 1) * kEpoch;
  for (const int64_t id : *candidates) {
    const Request& r = reqs[id];
    if (!SpecJoins(r, blocks_)) continue;
    const float rate = SpecDrawRate(spec_config_, r);
    const SpecMemberDraws draws = SpecMemberDraws::For(spec_config_, id, rate);
    const State s{.computed = r.num_computed,
                  .output = r.num_output,
                  .blocks = r.blocks.size(),
                  .deliveries = r.deliveries,
                  .max_delivered = r.max_delivered,
                  .verified = r.spec_rate >= 0,
                  .next_word = (r.num_output >> 5) + 1,
                  .rejects = draws.RejectsFrom(r.num_output)};
    members_.push_back({.key = r.run_key,
                        .id = id,
                        .draws = draws,
                        .output_len = r.output_len,
                        .rate = rate,
                        .measured = r.measured,
                        .done = false,
                        .join_step = step_,
                        .base_step = step_,
                        .base = s,
                        .ahead = s});
    Schedule(members_.size() - 1, epoch_end);
    ++active_;
    context_ += r.num_computed;
    measured_ += r.measured;
    joining_ids_.push_back(id);
  }
  candidates->clear();
  if (joining_ids_.empty()) return;
  // (Fits bounds a step's packed sums by max_num_seqs members.)
  SERVESIM_CHECK(active_ <= max_num_seqs_, "speculative decode calendar has %d members, "
                 "more than max_num_seqs %d", active_, max_num_seqs_);
  // Candidates come in batch order, which is running_'s (by key).
  SERVESIM_CHECK(EraseSubsequence(running_, joining_ids_),
                 "speculative decode group joins out of running order");
}

SpecCalendarGroup::StepSums SpecCalendarGroup::Sums(size_t slot) const {
  StepSums x;
  x.full = active_;
  x.full_context = context_;
  x.fresh = static_cast<int64_t>((word_[slot] >> kFreshShift) & kBlocksMask);
  const size_t at = slot * static_cast<size_t>(k_ + 1);
  for (int32_t n = 1; n <= k_; ++n) {
    x.full -= tail_count_[at + n];
    x.full_context -= tail_context_[at + n];
    x.tokens += static_cast<int64_t>(n) * tail_count_[at + n];
  }
  x.tokens += x.full * (k_ + 1);
  return x;
}

bool SpecCalendarGroup::Prepare(int32_t cap, StepFitsFn fits) {
  if (active_ == 0) return false;
  SERVESIM_CHECK(!step_in_flight_ && (cap <= 0 || cap > k_),
                 "speculative decode calendar scheduled before its commit, or capped");
  step_sums_ = Sums(Slot(step_));  // (Append and Commit read them)
  if (fits(step_sums_.tokens, step_sums_.fresh)) return true;
  LeaveAll();  // this step is short: it runs one by one
  return false;
}

GroupStepPart SpecCalendarGroup::Append(int32_t budget, const std::vector<ScheduledSeq>&,
                                        BatchShape* shape) {
  const size_t slot = Slot(step_);
  const StepSums& x = step_sums_;
  const int32_t fresh = static_cast<int32_t>(x.fresh);
  SERVESIM_CHECK(x.tokens <= budget &&
                     (fresh <= 0 || kv_->Acquire(fresh, fresh, &group_blocks_)),
                 "speculative decode group step did not fit");
  step_in_flight_ = true;
  const size_t at = slot * static_cast<size_t>(k_ + 1);
  for (int32_t n = 2; n <= k_ + 1; ++n) {
    const int64_t count = n <= k_ ? tail_count_[at + n] : x.full;
    const int64_t context = n <= k_ ? tail_context_[at + n] : x.full_context;
    if (count > 0) shape->runs.push_back({n, count, context});
  }
  // One token, no drafts: its last (no cap cuts drafts here).
  const int32_t last = tail_count_[at + 1];
  shape->decode_seqs += last;
  shape->decode_context += tail_context_[at + 1];
  const int32_t drafting = active_ - last;
  return {.tokens = static_cast<int32_t>(x.tokens),
          .finishing = last,
          .draft_seqs = drafting,
          // Each drafts from its context, drafts aside: num_computed + 1.
          .draft_context = context_ - tail_context_[at + 1] + drafting};
}

void SpecCalendarGroup::Commit(SimTime now, SimTime last_commit, Recorder* recorder,
                               std::vector<int64_t>* finished, GroupHost* host) {
  // Every member's previous token came at the previous commit.
  if (measured_ > 0) recorder->RecordItlNanos(now - last_commit, measured_);
  last_group_commit_ = now;
  step_in_flight_ = false;
  const size_t slot = Slot(step_);
  const StepSums& x = step_sums_;
  const uint64_t word = word_[slot];
  const int64_t accepted = static_cast<int64_t>(word & kAcceptedMask);
  const int32_t rejected = static_cast<int32_t>(word >> kRejectedShift);
  const int32_t last = tail_count_[slot * static_cast<size_t>(k_ + 1) + 1];
  stats_->drafts += active_ - last;
  stats_->draft_tokens += x.tokens - active_;
  stats_->accepted += accepted;
  context_ += accepted + active_;  // each kept a + 1 of its tokens
  if (rejected > 0) {
    group_blocks_.MoveTail(rejected, &scratch_blocks_);
    kv_->Release(scratch_blocks_);
    scratch_blocks_.clear();
  }
  // Finished members leave, by key (the order of their entries).
  finishing_.swap(finish_[slot]);
  std::sort(finishing_.begin(), finishing_.end(),
            [&](uint32_t a, uint32_t b) { return members_[a].key < members_[b].key; });
  for (const uint32_t i : finishing_) {
    Member& m = members_[i];
    Rebuild(m, m.ahead);
    m.done = true;
    --active_;
    context_ -= m.ahead.computed;
    measured_ -= m.measured;
    host->FinishRequest(now, (*requests_)[m.id], finished);
  }
  finishing_.clear();
  ClearSlot(slot);
  ++step_;
  if (step_ % kEpoch == 0) NewEpoch();
}

void SpecCalendarGroup::ClearSlot(size_t slot) {
  word_[slot] = 0;
  const size_t at = slot * static_cast<size_t>(k_ + 1);
  std::fill_n(tail_count_.begin() + static_cast<ptrdiff_t>(at), k_ + 1, 0);
  std::fill_n(tail_context_.begin() + static_cast<ptrdiff_t>(at), k_ + 1, 0);
  finish_[slot].clear();
}

void SpecCalendarGroup::NewEpoch() {
  std::erase_if(members_, [](const Member& m) { return m.done; });
  for (Member& m : members_) {
    m.base = m.ahead;
    m.base_step = step_;
  }
  const int64_t until = step_ + kEpoch;
  if (full_sums_.empty()) {
    for (size_t i = 0; i < members_.size(); ++i) Schedule(i, until);
  } else {
    ScheduleInLanes(until);
  }
}

void SpecCalendarGroup::ScheduleInLanes(int64_t until) {
  // Schedule(i, until) for each, kLanes at a time: the lanes walk their
  // members' full steps side by side (FullStepsLanes); a lane whose member
  // leaves its full steps finishes its walk alone (WalkOn) and takes the
  // next member; the last few (fewer than kLanes) finish alone.
  size_t next = 0;
  const auto load = [&](Lane* lane) {
    for (; next < members_.size(); ++next) {
      const Member& m = members_[next];
      if (m.base.output >= m.output_len) continue;  // (Walk's early return)
      *lane = {&m.draws, static_cast<uint32_t>(next), Done(m, m.base) - k_ - 1,
               Start(m.base, step_)};
      ++next;
      return true;
    }
    return false;
  };
  const auto finish = [&](Lane* lane) {
    Member& m = members_[lane->index];
    CalendarSink sink{word_.data(), tail_count_.data(), tail_context_.data(),
                      &finish_,     k_,                 lane->index};
    m.ahead = WalkOn(m, m.base, step_, until, sink, lane->x);
  };
  const TableSums sums = Table();
  Lane lanes[kLanes];
  int live = 0;
  while (live < kLanes && load(&lanes[live])) ++live;
  while (live == kLanes) {
    FullStepsLanes<kLanes>(lanes, until, word_.data(), sums);
    for (int i = 0; i < live;) {
      Lane& lane = lanes[i];
      if (lane.InFullSteps(until)) {
        ++i;
      } else {
        finish(&lane);
        if (!load(&lane)) lane = lanes[--live];  // (then looks at it again)
      }
    }
  }
  for (int i = 0; i < live; ++i) finish(&lanes[i]);
}

void SpecCalendarGroup::Rebuild(const Member& m, const State& s) {
  Request& r = (*requests_)[m.id];
  // Sync: a step is in flight only when the run ends before its commit;
  // its tokens are computed and its blocks held, as Add left them.
  const int32_t pending = step_in_flight_ && !m.done ? Ask(m, s) : 0;
  r.num_computed = s.computed + pending;
  r.num_output = s.output;
  r.in_flight = pending;
  r.deliveries = s.deliveries;
  r.max_delivered = s.max_delivered;
  if (s.verified) r.spec_rate = m.rate;
  r.spec_ready = s.output < m.output_len;
  if (step_ > m.join_step || s.output == m.output_len) r.last_token = last_group_commit_;
  const int32_t owed = std::max(s.blocks, blocks_.Blocks(r.num_computed)) - r.blocks.size();
  SERVESIM_CHECK(owed >= 0 && owed <= group_blocks_.size(),
                 "speculative decode group owes request %lld %d blocks, holds %d",
                 static_cast<long long>(m.id), owed, group_blocks_.size());
  group_blocks_.MoveTail(owed, &r.blocks);
}

void SpecCalendarGroup::LeaveAll() {
  if (active_ == 0) return;
  std::erase_if(members_, [](const Member& m) { return m.done; });
  std::sort(members_.begin(), members_.end(),
            [](const Member& a, const Member& b) { return a.key < b.key; });
  std::vector<int64_t>& running = *running_;
  const size_t old = running.size();
  for (const Member& m : members_) {
    Rebuild(m, StateAt(m, step_));
    running.push_back(m.id);
  }
  members_.clear();
  active_ = 0;
  context_ = 0;
  measured_ = 0;
  step_in_flight_ = false;  // (its members own its tokens now)
  for (size_t slot = 0; slot < static_cast<size_t>(kEpoch); ++slot) ClearSlot(slot);
  const RequestTable& reqs = *requests_;
  std::inplace_merge(running.begin(), running.begin() + static_cast<ptrdiff_t>(old),
                     running.end(), [&](int64_t a, int64_t b) {
                       return reqs[a].run_key < reqs[b].run_key;
                     });
  SERVESIM_CHECK(group_blocks_.empty(),
                 "speculative decode group kept %d blocks nobody owns",
                 group_blocks_.size());
}

void SpecCalendarGroup::CheckInvariants(
    const std::function<void(const BlockList&)>& own) const {
  // After a commit: every member's state, replayed, is a running request's
  // with the blocks of its known tokens, all but the last computed; the
  // totals are theirs; and the calendar is their walks from here to the
  // epoch's end.
  std::vector<uint64_t> word(kEpoch, 0);
  std::vector<int32_t> tail_count(tail_count_.size(), 0);
  std::vector<int64_t> tail_context(tail_context_.size(), 0);
  std::vector<std::vector<uint32_t>> finish(kEpoch);
  const int64_t end = (step_ / kEpoch + 1) * kEpoch;
  int64_t owed = 0, active = 0, context = 0, measured = 0;
  for (const Member& m : members_) {
    if (m.done) continue;
    const Request& r = (*requests_)[m.id];
    const State s = StateAt(m, step_);
    SERVESIM_CHECK(r.status == RequestStatus::kRunning && s.output < m.output_len &&
                       s.computed == r.prompt_len + s.output - 1 &&
                       s.blocks == blocks_.Blocks(s.computed) && r.blocks.size() <= s.blocks &&
                       m.base_step <= step_ && m.join_step <= step_,
                   "speculative decode group member %lld in a bad state",
                   static_cast<long long>(m.id));
    own(r.blocks);
    owed += s.blocks - r.blocks.size();
    ++active;
    context += s.computed;
    measured += m.measured;
    CalendarSink sink{word.data(), tail_count.data(), tail_context.data(), &finish, k_,
                      static_cast<uint32_t>(&m - members_.data())};
    Walk(m, s, step_, end, sink);
  }
  own(group_blocks_);
  SERVESIM_CHECK(owed == group_blocks_.size() && active == active_ && context == context_ &&
                     measured == measured_,
                 "speculative decode group holds %d blocks, owes %lld; %d members "
                 "counted, %lld found",
                 group_blocks_.size(), static_cast<long long>(owed), active_,
                 static_cast<long long>(active));
  for (int64_t t = step_; t < end; ++t) {
    const size_t slot = Slot(t);
    std::vector<uint32_t> ids = finish_[slot];
    std::sort(ids.begin(), ids.end());
    std::sort(finish[slot].begin(), finish[slot].end());
    const size_t at = slot * static_cast<size_t>(k_ + 1);
    SERVESIM_CHECK(word[slot] == word_[slot] && ids == finish[slot] &&
                       std::equal(tail_count.begin() + static_cast<ptrdiff_t>(at),
                                  tail_count.begin() + static_cast<ptrdiff_t>(at + k_ + 1),
                                  tail_count_.begin() + static_cast<ptrdiff_t>(at)) &&
                       std::equal(tail_context.begin() + static_cast<ptrdiff_t>(at),
                                  tail_context.begin() + static_cast<ptrdiff_t>(at + k_ + 1),
                                  tail_context_.begin() + static_cast<ptrdiff_t>(at)),
                   "speculative decode calendar's step %lld is not its members' walks",
                   static_cast<long long>(t));
  }
}

}  // namespace servesim
