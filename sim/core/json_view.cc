// JsonView: strict reading of configuration objects with path-named errors.
#include "sim/core/json_view.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/core/status.h"

namespace servesim {
namespace {

std::string FormatNumber(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
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

}  // namespace

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
  const nlohmann::json* v = Find(key);
  std::vector<std::string> names(choices.begin(), choices.end());
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
