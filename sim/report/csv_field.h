// One CSV field from a user's string (a class name, a GPU or model name):
// as it is when it needs no quotes, else quoted with inner quotes doubled
// (RFC 4180), so a name with a comma, quote or line break stays one field
// of one row.
#pragma once

#include <string>
#include <string_view>

namespace servesim {

inline void AppendCsvField(std::string_view text, std::string* out) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    out->append(text);
    return;
  }
  out->push_back('"');
  for (const char ch : text) {
    if (ch == '"') out->push_back('"');
    out->push_back(ch);
  }
  out->push_back('"');
}

inline std::string CsvField(std::string_view text) {
  std::string out;
  AppendCsvField(text, &out);
  return out;
}

}  // namespace servesim
