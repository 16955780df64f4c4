// The servesim command line as a function, so the binary's main and the
// Python package (python/src/bindings.cc, `python -m servesim`) run the
// very same parsing, commands and error lines.
#pragma once

#include <string>

namespace servesim {

// Parses argv, runs the chosen subcommand and returns the exit code (0, or
// 2 for bad input). An error is one printable line: printed to stderr as
// "servesim: error: ..." when `error` is null, else stored there.
int CliMain(int argc, char** argv, std::string* error = nullptr);

}  // namespace servesim
