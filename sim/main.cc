// servesim entry point: the command line lives in sim/cli/cli_main.cc, shared
// with the Python package.
#include "sim/cli/cli_main.h"
#include "sim/core/temp_files.h"

int main(int argc, char** argv) {
  // A run killed (SIGTERM, Ctrl-C) leaves no half-written *.tmp.* outputs.
  servesim::RemoveTempFilesOnFatalSignals();
  return servesim::CliMain(argc, argv);
}
