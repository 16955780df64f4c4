// The command line (see cli_main.h): parse, run the chosen subcommand,
// report any error on one line.
#include "sim/cli/cli_main.h"

#include <cerrno>
#include <iostream>
#include <new>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/core/json_view.h"
#include "sim/core/output_file.h"
#include "sim/core/version.h"

namespace servesim {

int CliMain(int argc, char** argv, std::string* error) {
  // The one place errors are reported. File names and values inside a
  // message may hold newlines or bytes that are not UTF-8; escaping them
  // keeps the error one printable line.
  auto fail = [error](const std::string& message) {
    if (error) {
      *error = PrintableText(message);
    } else {
      std::cerr << "servesim: error: " << PrintableText(message) << "\n";
    }
    return 2;
  };
  CLI::App app{"servesim: discrete-event simulator of LLM serving"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("servesim ") + kVersion);
  std::vector<Command> commands = {
      AddRunCommand(&app),      AddFitCommand(&app),      AddSweepCommand(&app),
      AddLoopsCommand(&app),    AddCapacityCommand(&app), AddCompareCommand(&app),
      AddSearchCommand(&app),   AddListCommand(&app),     AddValidateCommand(&app),
      AddModelCommand(&app),    AddServeCommand(&app)};
  if (const std::string unknown = UnknownCommand(app, argc, argv); !unknown.empty()) {
    return fail(unknown + " (see servesim --help)");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(std::string(e.what()) + " (see servesim --help)");
  }
  for (const auto& command : commands) {
    Status st;
    try {
      st = command();
    } catch (const std::bad_alloc&) {
      // The memory estimate (run_memory.h) missed: unwinding has freed the
      // run and removed its temporary outputs; say which settings size it.
      return fail("out of memory: the run needed more than this machine (or "
                  "ulimit -v) allows; expected a smaller run: lower "
                  "limits.max_queued, workload.num_requests or duration_s");
    }
    if (!st.ok()) return fail(st.message());
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
    return fail(e != 0 ? "standard output: write failed: " + ErrnoText(e)
                       : std::string("standard output: write failed"));
  }
  return 0;
}

}  // namespace servesim
