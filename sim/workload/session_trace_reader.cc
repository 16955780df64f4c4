// Multi-turn and agentic traces: JSON lines, one request (turn) each, with
// its own id, the id of the request it follows (its parent) and an arrival
// timestamp. The default field names are those of Alibaba's Qwen/Bailian
// usage traces (alibaba-edu/qwen-bailian-usagetraces-anon): chat_id,
// parent_chat_id (-1 for a session's first turn), timestamp (seconds),
// input_length, output_length; all configurable.
//
// A record's parent is, in this order: the request named by its parent
// field when that field is present (null, -1, "" or "-1" mark a first
// turn); else, when it has a session id seen before, the previous request
// of that session; else none. A parent must be an earlier good record: a
// line naming an unknown or later id is a bad line, as is a request id
// used twice and a session id that differs from its parent's. An optional
// think-time field (time_to_parent_chat in the annotated agentic traces:
// seconds from the parent's answer to this request) is carried along.
#include <unordered_map>

#include "sim/core/json_view.h"
#include "sim/workload/trace_reader_internal.h"

namespace servesim {
namespace {

// An id as a map key: strings as written, integers in decimal (so 7 and
// "7" name the same request, as they would in a log joined by text).
bool IdKey(const nlohmann::json& v, std::string* key) {
  if (v.is_string()) {
    *key = v.get<std::string>();
    return true;
  }
  if (v.is_number_integer()) {
    *key = v.dump();
    return true;
  }
  return false;
}

bool IsRootMarker(const nlohmann::json& v) {
  return v.is_null() || (v.is_number_integer() && v.get<int64_t>() == -1) ||
         (v.is_string() && (v.get<std::string>().empty() ||
                            v.get<std::string>() == "-1"));
}

class SessionTraceReader : public LineTraceReader {
 public:
  explicit SessionTraceReader(const TraceOptions& o)
      : LineTraceReader(o, TimestampUnit::kAuto) {}

 protected:
  std::string ParseLine(std::string_view line, TraceRecord* out,
                        RawTimestamp* stamp, bool* filtered) override;
  void Accepted(TraceRecord* rec) override;

 private:
  std::string ParseStamp(const nlohmann::json& j, RawTimestamp* stamp) const;
  std::string ParseLinks(const nlohmann::json& j, TraceRecord* out);

  std::unordered_map<std::string, int64_t> record_of_id_;
  std::unordered_map<std::string, int64_t> last_of_session_;
  std::vector<int64_t> root_of_;        // record -> its session's root
  std::vector<std::string> session_of_;  // record -> session id ("" none)
  // The line being parsed, registered by Accepted() if it turns out good.
  std::string id_, session_;
  bool has_id_ = false;
};

std::string SessionTraceReader::ParseStamp(const nlohmann::json& j,
                                           RawTimestamp* stamp) const {
  const std::string& key = options().timestamp_field;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    return "missing field \"" + key +
           "\" (a session turn needs its arrival time)";
  }
  return JsonTimestamp(*it, key, stamp);
}

std::string SessionTraceReader::ParseLinks(const nlohmann::json& j,
                                           TraceRecord* out) {
  const TraceOptions& o = options();
  has_id_ = false;
  session_.clear();
  auto id = j.find(o.request_id_field);
  if (id != j.end() && !id->is_null()) {
    if (!IdKey(*id, &id_)) {
      return "field \"" + o.request_id_field +
             "\": expected a request id (a string or an integer), got " +
             DescribeJson(*id);
    }
    if (record_of_id_.count(id_)) {
      return "field \"" + o.request_id_field + "\": id " + QuoteField(id_) +
             " was used by an earlier request (expected one id per request)";
    }
    has_id_ = true;
  }
  auto sess = j.find(o.session_id_field);
  if (sess != j.end() && !sess->is_null() && !IdKey(*sess, &session_)) {
    return "field \"" + o.session_id_field +
           "\": expected a session id (a string or an integer), got " +
           DescribeJson(*sess);
  }
  auto parent = j.find(o.parent_id_field);
  if (parent != j.end()) {
    std::string key;
    if (!IsRootMarker(*parent)) {
      if (!IdKey(*parent, &key)) {
        return "field \"" + o.parent_id_field +
               "\": expected the id of an earlier request, or -1 / null "
               "for a first turn, got " +
               DescribeJson(*parent);
      }
      auto found = record_of_id_.find(key);
      if (found == record_of_id_.end()) {
        return "field \"" + o.parent_id_field + "\": " + QuoteField(key) +
               " names no earlier request (expected the " +
               o.request_id_field + " of an earlier line)";
      }
      out->parent = found->second;
    }
  } else if (!session_.empty()) {
    auto last = last_of_session_.find(session_);
    if (last != last_of_session_.end()) out->parent = last->second;
  }
  if (out->parent >= 0) {
    const std::string& parent_session = session_of_[out->parent];
    if (!session_.empty() && !parent_session.empty() &&
        session_ != parent_session) {
      return "field \"" + o.session_id_field + "\": session " +
             QuoteField(session_) + " differs from its parent's " +
             QuoteField(parent_session);
    }
    if (session_.empty()) session_ = parent_session;
    out->root = root_of_[out->parent];
  }
  auto think = j.find(o.think_time_field);
  if (think != j.end() && !think->is_null()) {
    if (!think->is_number() || !(think->get<double>() >= 0) ||
        !(think->get<double>() <= 1e8)) {
      return "field \"" + o.think_time_field +
             "\": expected seconds >= 0 (the gap from the parent's answer), "
             "got " +
             DescribeJson(*think);
    }
    out->think_time_s = think->get<double>();
  }
  return "";
}

std::string SessionTraceReader::ParseLine(std::string_view line,
                                          TraceRecord* out, RawTimestamp* stamp,
                                          bool* /*filtered*/) {
  nlohmann::json j;
  std::string error = ParseJsonLine(line, &j);
  if (!error.empty()) return error;
  if (!j.is_object()) return "expected a JSON object, got " + DescribeJson(j);
  error = JsonTokenCount(j, options().prompt_field, &out->input_tokens);
  if (error.empty()) {
    error = JsonTokenCount(j, options().completion_field, &out->output_tokens);
  }
  if (error.empty()) error = ParseStamp(j, stamp);
  if (error.empty()) error = ParseLinks(j, out);
  return error;
}

void SessionTraceReader::Accepted(TraceRecord* rec) {
  const int64_t n = static_cast<int64_t>(root_of_.size());
  if (rec->parent < 0) rec->root = n;
  root_of_.push_back(rec->root);
  session_of_.push_back(session_);
  if (has_id_) record_of_id_.emplace(id_, n);
  if (!session_.empty()) last_of_session_[session_] = n;
}

}  // namespace

std::unique_ptr<TraceReader> MakeSessionTraceReader(const TraceOptions& o) {
  return std::make_unique<SessionTraceReader>(o);
}

}  // namespace servesim
