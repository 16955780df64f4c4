// servesim entry point: the command line lives in sim/cli/cli_main.cc, shared
// with the Python package.
#include "sim/cli/cli_main.h"

int main(int argc, char** argv) { return servesim::CliMain(argc, argv); }
