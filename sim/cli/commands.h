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

// The scenario keys with their defaults, for `--help` and README.
const char* ScenarioReference();

}  // namespace servesim
