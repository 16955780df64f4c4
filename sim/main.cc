// servesim entry point: parse the command line, run the chosen subcommand,
// print any error on one line and exit 2 for bad input.
#include <cerrno>
#include <iostream>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/core/json_view.h"
#include "sim/core/output_file.h"

namespace {

// The one place errors are printed. File names and values inside a message
// may hold newlines or bytes that are not UTF-8; escaping them keeps the
// error one printable line.
int Fail(const std::string& message) {
  std::cerr << "servesim: error: " << servesim::PrintableText(message) << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"servesim: discrete-event simulator of LLM serving"};
  app.require_subcommand(1);
  std::vector<servesim::Command> commands = {
      servesim::AddRunCommand(&app), servesim::AddFitCommand(&app),
      servesim::AddSweepCommand(&app), servesim::AddLoopsCommand(&app),
      servesim::AddCapacityCommand(&app), servesim::AddCompareCommand(&app),
      servesim::AddSearchCommand(&app)};
  if (const std::string unknown = servesim::UnknownCommand(app, argc, argv);
      !unknown.empty()) {
    return Fail(unknown + " (see servesim --help)");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(std::string(e.what()) + " (see servesim --help)");
  }
  for (const auto& command : commands) {
    const servesim::Status st = command();
    if (!st.ok()) return Fail(st.message());
  }
  // A report that did not reach standard output (a full disk, a closed
  // pipe, > /dev/full) is an error, not a success.
  // A write that failed earlier leaves its bytes buffered: retrying them
  // once recovers the reason.
  const bool failed_before = !std::cout;
  std::cout.clear();
  errno = 0;
  std::cout.flush();
  if (failed_before || !std::cout) {
    const int e = errno;
    return Fail(e != 0
                    ? "standard output: write failed: " + servesim::ErrnoText(e)
                    : std::string("standard output: write failed"));
  }
  return 0;
}
