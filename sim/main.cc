// servesim entry point: parse the command line, run the chosen subcommand,
// print any error on one line and exit 2 for bad input.
#include <iostream>
#include <vector>

#include "sim/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"servesim: discrete-event simulator of LLM serving"};
  app.require_subcommand(1);
  std::vector<servesim::Command> commands = {servesim::AddRunCommand(&app),
                                              servesim::AddFitCommand(&app),
                                              servesim::AddSweepCommand(&app),
                                              servesim::AddLoopsCommand(&app),
                                              servesim::AddCapacityCommand(&app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "servesim: error: " << e.what() << " (see servesim --help)\n";
    return 2;
  }
  for (const auto& command : commands) {
    const servesim::Status st = command();
    if (!st.ok()) {
      std::cerr << "servesim: error: " << st.message() << "\n";
      return 2;
    }
  }
  return 0;
}
