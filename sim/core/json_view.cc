// JsonView: strict reading of configuration objects with path-named errors.
#include "sim/core/json_view.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "sim/core/paths.h"
#include "sim/core/status.h"

namespace servesim {
namespace {

// Six significant digits when that is exact ("1e+12", "0.25", "100000"),
// else the shortest text that reads back as x ("16777216", not
// "1.67772e+07"), so a bound or a value is never misquoted.
std::string FormatNumber(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  if (std::strtod(buf, nullptr) == x || !std::isfinite(x)) return buf;
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return ec == std::errc() ? std::string(buf, end) : std::string(buf);
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Length of the well-formed UTF-8 sequence at s[i], or 0 if there is none.
size_t Utf8SequenceAt(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) {
    return k < s.size() ? static_cast<unsigned char>(s[k]) : 0x100u;
  };
  const auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return byte(k) >= lo && byte(k) <= hi;
  };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

// A JSON Pointer segment: "~" and "/" escaped (RFC 6901).
std::string PointerSegment(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

// Builds the DOM from nlohmann's SAX events while checking what its own
// parser lets through: a duplicate key (it keeps the last), nesting without
// bound (copying such a DOM recurses until the stack overflows) and a
// number beyond double's range (its message names no path).
class StrictDomBuilder {
 public:
  using json = nlohmann::json;
  explicit StrictDomBuilder(std::string_view text, json* root)
      : text_(text), root_(root) {}

  bool null() { return Value(json(nullptr)); }
  bool boolean(bool b) { return Value(json(b)); }
  bool number_integer(json::number_integer_t n) { return Value(json(n)); }
  bool number_unsigned(json::number_unsigned_t n) { return Value(json(n)); }
  bool number_float(json::number_float_t x, const json::string_t&) {
    return Value(json(x));
  }
  bool string(json::string_t& s) { return Value(json(std::move(s))); }
  bool binary(json::binary_t&) { return false; }  // never from JSON text
  bool start_object(std::size_t) { return Open(json::object()); }
  bool start_array(std::size_t) { return Open(json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(json::string_t& k) {
    Frame& f = frames_.back();
    f.key = std::move(k);
    f.has_key = true;
    if (f.node->contains(f.key)) {
      problem_ = {Path(),
                  "duplicate key: \"" + f.key +
                      "\" is given twice in the same object; expected each "
                      "key once",
                  false};
      return false;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& ex) {
    if (ex.id == 406) {  // out_of_range: number overflow
      problem_ = {Path(),
                  "number out of range: " + token + " (" +
                      LineColumn(position) + "); expected a finite number",
                  false};
      return false;
    }
    // nlohmann's message carries the line and column of the problem.
    const std::string what = ex.what();
    const size_t pos = what.find("parse error");
    problem_ = {"",
                "invalid JSON: " +
                    (pos == std::string::npos ? what : what.substr(pos)),
                true};
    return false;
  }

  const std::optional<JsonParseProblem>& problem() const { return problem_; }

 private:
  // An open object or array. Invariant: every open container is the last
  // child of the one below it (for an object, the value of `key`), so these
  // pointers stay valid while it grows.
  struct Frame {
    json* node;
    std::string key;  // objects: the last key read
    bool has_key = false;
  };

  bool Value(json v) {
    Put(std::move(v));
    return true;
  }
  json* Put(json v) {
    if (frames_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    Frame& f = frames_.back();
    if (f.node->is_array()) {
      f.node->push_back(std::move(v));
      return &f.node->back();
    }
    json& slot = (*f.node)[f.key];
    slot = std::move(v);
    return &slot;
  }
  bool Open(json v) {
    if (frames_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      problem_ = {Path(),
                  "nesting deeper than " + std::to_string(kMaxJsonDepth) +
                      " levels; expected at most " +
                      std::to_string(kMaxJsonDepth),
                  false};
      return false;
    }
    json* node = Put(std::move(v));
    frames_.push_back({node, "", false});
    return true;
  }
  bool Close() {
    frames_.pop_back();
    return true;
  }
  // The JSON path of the value being read, e.g. "/workload/arrival/rate";
  // built only for a message, so reading costs no string per value.
  std::string Path() const {
    std::string p;
    for (size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      const bool last = i + 1 == frames_.size();
      if (f.node->is_array()) {
        // The open child is the last element; the next value goes after it.
        p += "/" + std::to_string(f.node->size() - (last ? 0 : 1));
      } else if (f.has_key) {
        p += "/" + PointerSegment(f.key);
      }
    }
    if (p.size() > 64) p = p.substr(0, 61) + "...";
    return p.empty() ? "/" : p;
  }
  std::string LineColumn(size_t position) const {
    position = std::min(position, text_.size());
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < position; ++i) {
      if (text_[i] == '\n') ++line, line_start = i + 1;
    }
    return "line " + std::to_string(line) + ", column " +
           std::to_string(position - line_start);
  }

  std::string_view text_;
  json* root_;
  std::vector<Frame> frames_;
  std::optional<JsonParseProblem> problem_;
};

}  // namespace

std::optional<JsonParseProblem> ParseJsonStrict(std::string_view text,
                                                nlohmann::json* out) {
  StrictDomBuilder builder(text, out);
  if (nlohmann::json::sax_parse(text, &builder)) return std::nullopt;
  if (builder.problem()) return builder.problem();
  return JsonParseProblem{"", "invalid JSON", true};
}

nlohmann::json ParseJsonOrThrow(std::string_view text,
                                const std::string& label) {
  nlohmann::json j;
  if (auto problem = ParseJsonStrict(text, &j)) {
    throw ConfigError(label + ": " + problem->message());
  }
  return j;
}

nlohmann::json ReadJsonFile(const std::string& path, const std::string& what,
                            uintmax_t max_bytes) {
  return ParseJsonOrThrow(ReadInputFile(path, what, max_bytes), path);
}

std::string DumpOutputJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceAt(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string PrintableText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = Utf8SequenceAt(s, i);
    if (n > 1 || (n == 1 && c >= 0x20 && c != 0x7f)) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
    ++i;
  }
  return out;
}

bool Range::Contains(double x) const {
  if (std::isnan(x)) return false;
  if (lo_open ? !(x > lo) : !(x >= lo)) return false;
  if (hi_open ? !(x < hi) : !(x <= hi)) return false;
  return true;
}

std::string Range::Describe() const {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi) {
    return std::string("in ") + (lo_open ? "(" : "[") + FormatNumber(lo) +
           ", " + FormatNumber(hi) + (hi_open ? ")" : "]");
  }
  if (has_lo) return (lo_open ? "> " : ">= ") + FormatNumber(lo);
  if (has_hi) return (hi_open ? "< " : "<= ") + FormatNumber(hi);
  return "";
}

std::string DescribeJson(const nlohmann::json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_null()) return "null";
  if (v.is_number_float()) return FormatNumber(v.get<double>());
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string NearestName(std::string_view name,
                        const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    const size_t d = EditDistance(name, c);
    if (d < best_d) best_d = d, best = c;
  }
  // Close enough to be a typo: at most a third of the name's letters wrong.
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  return best_d <= limit ? best : "";
}

JsonView::JsonView(const nlohmann::json& j, std::string file, std::string path)
    : j_(j), file_(std::move(file)), path_(std::move(path)) {}

std::string JsonView::PathOf(std::string_view key) const {
  return path_ + "/" + std::string(key);
}

const nlohmann::json* JsonView::Find(std::string_view key) const {
  if (!j_.is_object()) return nullptr;
  auto it = j_.find(std::string(key));
  if (it == j_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool JsonView::Has(std::string_view key) const { return Find(key) != nullptr; }

void JsonView::Fail(std::string_view key, std::string_view expected) const {
  const nlohmann::json* v = Find(key);
  const std::string got = v ? DescribeJson(*v) : "nothing";
  throw ConfigError(file_ + ": " + PathOf(key) + ": expected " +
                    std::string(expected) + ", got " + got);
}

void JsonView::FailMessage(std::string_view key,
                           std::string_view message) const {
  throw ConfigError(file_ + ": " + (key.empty() ? (path_.empty() ? "/" : path_)
                                                : PathOf(key)) +
                    ": " + std::string(message));
}

JsonView JsonView::Object(std::string_view key) const {
  const nlohmann::json* v = Find(key);
  if (!v || !v->is_object()) Fail(key, "an object");
  return JsonView(*v, file_, PathOf(key));
}

std::vector<JsonView> JsonView::Array(std::string_view key) const {
  const nlohmann::json* v = Find(key);
  if (!v || !v->is_array()) Fail(key, "an array");
  std::vector<JsonView> out;
  for (size_t i = 0; i < v->size(); ++i) {
    out.emplace_back((*v)[i], file_, PathOf(key) + "/" + std::to_string(i));
  }
  return out;
}

double JsonView::CheckedNumber(std::string_view key, const nlohmann::json& v,
                               Range r) const {
  const std::string want =
      "a number" + (r.Describe().empty() ? "" : " " + r.Describe());
  if (!v.is_number()) Fail(key, want);
  const double x = v.get<double>();
  if (!r.Contains(x)) Fail(key, want);
  return x;
}

int64_t JsonView::CheckedInteger(std::string_view key, const nlohmann::json& v,
                                 Range r) const {
  const std::string want =
      "an integer" + (r.Describe().empty() ? "" : " " + r.Describe());
  // 12.0 is accepted as 12; 12.5 is not an integer.
  if (!v.is_number()) Fail(key, want);
  const double x = v.get<double>();
  if (x != std::floor(x) || std::fabs(x) > 9e15 || !r.Contains(x)) {
    Fail(key, want);
  }
  return v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(x);
}

double JsonView::Number(std::string_view key, double def, Range r) const {
  const nlohmann::json* v = Find(key);
  return v ? CheckedNumber(key, *v, r) : def;
}

double JsonView::RequireNumber(std::string_view key, Range r) const {
  const nlohmann::json* v = Find(key);
  if (!v) Fail(key, "a number" + (r.Describe().empty() ? "" : " " + r.Describe()));
  return CheckedNumber(key, *v, r);
}

std::optional<double> JsonView::OptionalNumber(std::string_view key,
                                               Range r) const {
  const nlohmann::json* v = Find(key);
  if (!v) return std::nullopt;
  return CheckedNumber(key, *v, r);
}

int64_t JsonView::Integer(std::string_view key, int64_t def, Range r) const {
  const nlohmann::json* v = Find(key);
  return v ? CheckedInteger(key, *v, r) : def;
}

int64_t JsonView::RequireInteger(std::string_view key, Range r) const {
  const nlohmann::json* v = Find(key);
  if (!v) {
    Fail(key, "an integer" + (r.Describe().empty() ? "" : " " + r.Describe()));
  }
  return CheckedInteger(key, *v, r);
}

std::optional<int64_t> JsonView::OptionalInteger(std::string_view key,
                                                 Range r) const {
  const nlohmann::json* v = Find(key);
  if (!v) return std::nullopt;
  return CheckedInteger(key, *v, r);
}

bool JsonView::Bool(std::string_view key, bool def) const {
  const nlohmann::json* v = Find(key);
  if (!v) return def;
  if (!v->is_boolean()) Fail(key, "true or false");
  return v->get<bool>();
}

std::string JsonView::String(std::string_view key, std::string_view def) const {
  const nlohmann::json* v = Find(key);
  if (!v) return std::string(def);
  if (!v->is_string()) Fail(key, "a string");
  return v->get<std::string>();
}

std::string JsonView::RequireString(std::string_view key) const {
  const nlohmann::json* v = Find(key);
  if (!v || !v->is_string() || v->get<std::string>().empty()) {
    Fail(key, "a non-empty string");
  }
  return v->get<std::string>();
}

std::string JsonView::Choice(
    std::string_view key, std::string_view def,
    std::initializer_list<std::string_view> choices) const {
  return Choice(key, def, std::vector<std::string>(choices.begin(), choices.end()));
}

std::string JsonView::Choice(std::string_view key, std::string_view def,
                             const std::vector<std::string>& names) const {
  const nlohmann::json* v = Find(key);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  if (!v) {
    if (def.empty()) Fail(key, "one of " + list);
    return std::string(def);
  }
  if (!v->is_string()) Fail(key, "one of " + list);
  const std::string s = v->get<std::string>();
  if (std::find(names.begin(), names.end(), s) != names.end()) return s;
  const std::string near = NearestName(s, names);
  Fail(key, "one of " + list +
                (near.empty() ? "" : " (did you mean \"" + near + "\"?)"));
}

std::vector<double> JsonView::Numbers(std::string_view key,
                                      std::vector<double> def, Range r) const {
  const nlohmann::json* v = Find(key);
  if (!v) return def;
  if (!v->is_array() || v->empty()) Fail(key, "a non-empty array of numbers");
  std::vector<double> out;
  for (size_t i = 0; i < v->size(); ++i) {
    JsonView elem(*v, file_, path_);
    const auto& x = (*v)[i];
    if (!x.is_number() || !r.Contains(x.get<double>())) {
      throw ConfigError(file_ + ": " + PathOf(key) + "/" + std::to_string(i) +
                        ": expected a number " + r.Describe() + ", got " +
                        DescribeJson(x));
    }
    out.push_back(x.get<double>());
  }
  return out;
}

void JsonView::AllowKeys(std::initializer_list<std::string_view> allowed) const {
  if (!j_.is_object()) {
    throw ConfigError(file_ + ": " + (path_.empty() ? "/" : path_) +
                      ": expected an object, got " + DescribeJson(j_));
  }
  std::vector<std::string> names(allowed.begin(), allowed.end());
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (std::find(names.begin(), names.end(), it.key()) != names.end()) {
      continue;
    }
    const std::string near = NearestName(it.key(), names);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw ConfigError(file_ + ": " + PathOf(it.key()) + ": unknown key" +
                      (near.empty() ? "" : " (did you mean \"" + near + "\"?)") +
                      "; expected one of " + list);
  }
}

}  // namespace servesim
