// Command-line checks shared by the subcommands (see commands.h): option
// values that are really the next option, and unknown subcommands.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/core/json_view.h"

namespace servesim {

CLI::Validator NotAnOption() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        // An empty value (`--save-result ''`) read as "not given" was
        // silently ignored.
        if (value.empty()) return "expected a value, got \"\"";
        if (value[0] != '-') return "";
        return "expected a value, got \"" + value +
               "\", which is an option (the option before it was given no "
               "value; write ./" + value + " for a file so named)";
      },
      "", "not an option");
}

namespace {

// The whole text as a finite number, else NaN (which no range admits).
double FiniteOrNan(const std::string& text) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  const bool whole = !text.empty() && end == text.c_str() + text.size();
  return whole && std::isfinite(x) ? x : std::nan("");
}

}  // namespace

CLI::Validator NumberIn(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& value) -> std::string {
        const double x = FiniteOrNan(value);
        if (x >= lo && x <= hi) return "";
        char range[96];
        std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
        return std::string("expected a number in ") + range + ", got \"" + value + "\"";
      },
      "", "number in range");
}

CLI::Validator PositiveNumber() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (FiniteOrNan(value) > 0) return "";
        return "expected a finite number > 0, got \"" + value + "\"";
      },
      "", "positive number");
}

std::string UnknownCommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string given = argv[1];
  std::vector<std::string> names;
  std::string list;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == given) return "";
    names.push_back(sub->get_name());
    list += (list.empty() ? "" : ", ") + sub->get_name();
  }
  const std::string near = NearestName(given, names);
  return "unknown command \"" + given + "\"" +
         (near.empty() ? "" : " (did you mean \"" + near + "\"?)") +
         "; expected one of " + list;
}

}  // namespace servesim
