// Subcommands of the servesim command line. Each registers its options on
// the CLI11 app and returns a callable that runs it; main parses, runs the
// chosen one, prints any error and picks the exit code.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "sim/core/status.h"

namespace servesim {

using Command = std::function<Status()>;

// `servesim run [SCENARIO] [--set k=v ...] [--save-result F] [--save-detailed F]`
Command AddRunCommand(CLI::App* app);
// `servesim fit LOG [--format F] [--out SCENARIO.json] [--plot FILE.svg]`
Command AddFitCommand(CLI::App* app);
// `servesim sweep SCENARIO [--rates ...|--utilizations ...] [-r R] [--json|--csv|--html F]`
Command AddSweepCommand(CLI::App* app);
// `servesim loops SCENARIO [--concurrency N,...] [--burstiness b] [--html F]`
Command AddLoopsCommand(CLI::App* app);
// `servesim capacity SCENARIO --slo ttft_p99=2s,... [--target-rate X] [--candidates ...]`
Command AddCapacityCommand(CLI::App* app);
// `servesim compare A.json [B.json] [--set-b k=v ...] [--primary ttft_p99] [--save-result F]`
Command AddCompareCommand(CLI::App* app);
// `servesim search`: the cheapest deployment for an SLO and a target rate.
Command AddSearchCommand(CLI::App* app);
// `servesim list models|gpus|profiles`: what ships.
Command AddListCommand(CLI::App* app);
// `servesim validate SCENARIO [--measured LOG]`: a measured run replayed.
Command AddValidateCommand(CLI::App* app);
// `servesim model import CONFIG.json [--name N] [--out F] [--source T]`.
Command AddModelCommand(CLI::App* app);
// `servesim serve SCENARIO [--port P] [--time-scale X]`: an OpenAI-compatible
// endpoint driven by the simulated engine.
Command AddServeCommand(CLI::App* app);

// The scenario keys with their defaults: as text for `run --help`, and as a
// Markdown table (`run --scenario-reference-markdown`) for the docs site.
const char* ScenarioReference();
std::string ScenarioReferenceMarkdown();

// For options that take a value (a file name, a list, k=v): rejects a value
// that starts with '-', which is the next option swallowed because this one
// was given no value (`--save-result --save-detailed out.csv` used to write a
// file named "--save-detailed"). Output to stdout ("-") is not supported.
// An empty value is refused too.
CLI::Validator NotAnOption();

// A finite number in [lo, hi] (CLI::Range lets NaN through, and prints a
// bound like 1.8e308 in all its 309 digits); the bounds are printed as %g.
CLI::Validator NumberIn(double lo, double hi);
// A finite number > 0.
CLI::Validator PositiveNumber();

// When the first argument names no subcommand (and is not an option), the
// error line with the nearest subcommand suggested, e.g. `unknown command
// "rnu" (did you mean "run"?); expected one of run, fit, ...`; else "".
std::string UnknownCommand(const CLI::App& app, int argc, char** argv);

}  // namespace servesim
