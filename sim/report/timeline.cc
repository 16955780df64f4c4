// The Chrome-trace timeline (see timeline.h). Step events are formatted
// with integer arithmetic into the stream's buffer (they are the bulk of
// the file); the per-request tracks and track names, a few hundred events,
// use ordinary string formatting.
#include "sim/report/timeline.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <utility>

#include "sim/report/step_export.h"

namespace servesim {
namespace {

char* Put(const char* s, char* p) {
  const size_t n = std::strlen(s);
  std::memcpy(p, s, n);
  return p + n;
}
char* PutInt(int64_t v, char* p) { return std::to_chars(p, p + 24, v).ptr; }

// Nanoseconds as microseconds with 3 decimals (exact).
char* Micros(int64_t ns, char* p) {
  if (ns < 0) {
    *p++ = '-';
    ns = -ns;
  }
  p = PutInt(ns / 1000, p);
  *p++ = '.';
  const int64_t f = ns % 1000;
  *p++ = static_cast<char>('0' + f / 100);
  *p++ = static_cast<char>('0' + f / 10 % 10);
  *p++ = static_cast<char>('0' + f % 10);
  return p;
}

std::string MicrosString(int64_t ns) {
  char buf[48];
  return std::string(buf, Micros(ns, buf));
}

const char* StepName(const StepRecord& r) {
  if (r.num_prefill_seqs == 0) return "decode";
  if (r.num_decode_seqs == 0) return "prefill";
  return "mixed";
}

// `"pid":P,"tid":T,"ts":X` for the events written with strings.
std::string Where(int64_t pid, int64_t tid, SimTime t) {
  return "\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
         ",\"ts\":" + MicrosString(t);
}

}  // namespace

StatusOr<std::unique_ptr<TimelineWriter>> TimelineWriter::Open(
    const std::string& path, StepFilter filter) {
  StatusOr<std::unique_ptr<StreamFile>> file = StreamFile::Open(path);
  if (!file.ok()) return file.status();
  std::unique_ptr<TimelineWriter> w(
      new TimelineWriter(std::move(*file), filter));
  w->file_->Write("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  return w;
}

TimelineWriter::TimelineWriter(std::unique_ptr<StreamFile> file,
                               StepFilter filter)
    : file_(std::move(file)), filter_(filter) {
  if (filter_.every < 1) filter_.every = 1;
}

void TimelineWriter::BeginEvent() {
  if (!first_event_) file_->Write(",\n");
  first_event_ = false;
}

void TimelineWriter::Add(const StepRecord& r) {
  const int64_t step = next_++;
  if (!filter_.Keep(step, r)) return;
  num_replicas_ = std::max(num_replicas_, r.replica + 1);
  BeginEvent();
  char* p = file_->Reserve(kMaxStepRowBytes + 512);
  const int64_t pid = int64_t{r.replica} + 1;
  p = Put("{\"name\":\"", p);
  p = Put(StepName(r), p);
  p = Put("\",\"ph\":\"X\",\"pid\":", p);
  p = PutInt(pid, p);
  p = Put(",\"tid\":0,\"ts\":", p);
  p = Micros(r.start, p);
  p = Put(",\"dur\":", p);
  p = Micros(r.end - r.start, p);
  p = Put(",\"args\":{", p);
  p = FormatStepJsonFields(step, r, p);
  p = Put("}},\n{\"name\":\"running\",\"ph\":\"C\",\"pid\":", p);
  p = PutInt(pid, p);
  p = Put(",\"tid\":0,\"ts\":", p);
  p = Micros(r.start, p);
  p = Put(",\"args\":{\"running\":", p);
  p = PutInt(r.num_seqs, p);
  p = Put("}},\n{\"name\":\"kv_usage_pct\",\"ph\":\"C\",\"pid\":", p);
  p = PutInt(pid, p);
  p = Put(",\"tid\":0,\"ts\":", p);
  p = Micros(r.start, p);
  p = Put(",\"args\":{\"kv_usage_pct\":", p);
  // Hundredths of a percent, exact integer arithmetic.
  const int64_t bp = r.kv_blocks_total > 0
                         ? int64_t{r.kv_blocks_used} * 10000 / r.kv_blocks_total
                         : 0;
  p = PutInt(bp / 100, p);
  *p++ = '.';
  *p++ = static_cast<char>('0' + bp % 100 / 10);
  *p++ = static_cast<char>('0' + bp % 10);
  p = Put("}}", p);
  file_->Advance(p);
}

void TimelineWriter::WriteRequest(const Request& q, SimTime end_time) {
  const int64_t pid = int64_t{q.replica} + 1, tid = q.id + 1;
  const std::string args = ",\"args\":{\"request\":" + std::to_string(q.id) +
                           ",\"prompt_len\":" + std::to_string(q.prompt_len) +
                           ",\"output_len\":" + std::to_string(q.output_len) +
                           ",\"preemptions\":" + std::to_string(q.preemptions) +
                           "}}";
  auto slice = [&](const char* name, SimTime from, SimTime to) {
    BeginEvent();
    file_->Write(std::string("{\"name\":\"") + name + "\",\"ph\":\"X\"," +
                 Where(pid, tid, from) + ",\"dur\":" +
                 MicrosString(std::max<SimTime>(0, to - from)) + args);
  };
  auto instant = [&](const char* name, SimTime at) {
    BeginEvent();
    file_->Write(std::string("{\"name\":\"") + name +
                 "\",\"ph\":\"i\",\"s\":\"t\"," + Where(pid, tid, at) + args);
  };
  auto or_end = [&](SimTime t) { return t >= 0 ? t : end_time; };
  if (q.arrival >= 0 && q.send > q.arrival) slice("pending", q.arrival, q.send);
  if (q.send < 0) return;
  if (q.status == RequestStatus::kRejected) {
    instant("rejected", q.send);
    return;
  }
  slice("queued", q.send, or_end(q.first_scheduled));
  if (q.first_scheduled < 0) return;
  slice("prefill", q.first_scheduled, or_end(q.first_token));
  if (q.first_token < 0) return;
  if (or_end(q.finish) > q.first_token) {
    slice("decode", q.first_token, or_end(q.finish));
  }
  if (q.finish >= 0) instant("done", q.finish);
}

// Requests sent to each replica and not yet scheduled for the first time,
// as a counter sampled at most kMaxWaitingPoints times per replica (the
// level at each sample is exact).
void TimelineWriter::WriteWaiting(const RequestTable& requests,
                                  SimTime end_time) {
  std::vector<std::vector<std::pair<SimTime, int32_t>>> events(num_replicas_);
  for (const Request& q : requests) {
    if (q.replica < 0 || q.send < 0 || q.status == RequestStatus::kRejected) {
      continue;
    }
    auto& e = events[q.replica];
    e.emplace_back(q.send, 1);
    e.emplace_back(q.first_scheduled >= 0 ? q.first_scheduled : end_time, -1);
  }
  for (int32_t k = 0; k < num_replicas_; ++k) {
    auto& e = events[k];
    if (e.empty()) continue;
    std::sort(e.begin(), e.end());
    const SimTime gap = (e.back().first - e.front().first) / kMaxWaitingPoints;
    int64_t level = 0;
    SimTime last = -1;
    for (size_t j = 0; j < e.size(); ++j) {
      level += e[j].second;
      const bool group_end = j + 1 == e.size() || e[j + 1].first != e[j].first;
      if (!group_end) continue;
      if (last >= 0 && e[j].first - last < gap && j + 1 != e.size()) continue;
      last = e[j].first;
      BeginEvent();
      file_->Write("{\"name\":\"waiting\",\"ph\":\"C\"," +
                   Where(int64_t{k} + 1, 0, last) +
                   ",\"args\":{\"waiting\":" + std::to_string(level) + "}}");
    }
    std::vector<std::pair<SimTime, int32_t>>().swap(e);
  }
}

void TimelineWriter::WriteNames(const RequestTable& requests) {
  auto meta = [&](const char* what, int64_t pid, int64_t tid,
                  const std::string& args) {
    BeginEvent();
    file_->Write(std::string("{\"name\":\"") + what + "\",\"ph\":\"M\"," +
                 Where(pid, tid, 0) + ",\"args\":{" + args + "}}");
  };
  for (int32_t k = 0; k < num_replicas_; ++k) {
    meta("process_name", k + 1, 0,
         "\"name\":\"replica " + std::to_string(k) + "\"");
    meta("process_sort_index", k + 1, 0, "\"sort_index\":" + std::to_string(k));
    meta("thread_name", k + 1, 0, "\"name\":\"steps\"");
    meta("thread_sort_index", k + 1, 0, "\"sort_index\":0");
  }
  for (const int64_t id : sampled_) {
    const Request& q = requests[static_cast<size_t>(id)];
    meta("thread_name", int64_t{q.replica} + 1, id + 1,
         "\"name\":\"request " + std::to_string(id) + "\"");
    meta("thread_sort_index", int64_t{q.replica} + 1, id + 1,
         "\"sort_index\":" + std::to_string(id + 1));
  }
}

Status TimelineWriter::Finish(const RequestTable& requests, SimTime end_time) {
  for (const Request& q : requests) {
    num_replicas_ = std::max(num_replicas_, q.replica + 1);
  }
  // Evenly spaced ids: i * n / k for i < k.
  const int64_t n = static_cast<int64_t>(requests.size());
  const int64_t k = std::min(n, kMaxSampledRequests);
  for (int64_t i = 0; i < k; ++i) {
    const Request& q = requests[static_cast<size_t>(i * n / k)];
    if (q.replica < 0) continue;  // never reached a server
    sampled_.push_back(q.id);
    WriteRequest(q, end_time);
  }
  WriteWaiting(requests, end_time);
  WriteNames(requests);
  file_->Write("\n]}\n");
  return file_->Finish();
}

}  // namespace servesim
