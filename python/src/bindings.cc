// servesim._core: the C++ simulator as a Python extension (nanobind). The
// package (python/servesim) builds on four calls: the command line itself
// (so `servesim.run` and friends give what the CLI gives, byte for byte),
// the hook that sends each independent simulation elsewhere (Ray), the
// function that runs one such simulation, and where the data lives.
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "python/src/run_codec.h"
#include "sim/core/version.h"
#include "sim/analysis/runs.h"
#include "sim/cli/cli_main.h"
#include "sim/core/paths.h"

namespace nb = nanobind;

namespace servesim::py {
namespace {

// std::cout is one stream for the process: captures take turns.
std::mutex capture_mu;

// Runs `servesim ARGS...` with the GIL released, so simulations in other
// Python threads run in parallel. Returns (exit code, standard output when
// captured, the error line).
std::tuple<int, std::string, std::string> Cli(std::vector<std::string> args,
                                              bool capture) {
  std::vector<char*> argv;
  std::string name = "servesim";
  argv.push_back(name.data());
  for (std::string& a : args) argv.push_back(a.data());
  std::string error, out;
  int rc = 0;
  {
    nb::gil_scoped_release release;
    if (capture) {
      std::lock_guard<std::mutex> lock(capture_mu);
      std::ostringstream buffer;
      // Restored even when the command throws (nanobind then raises).
      struct Redirect {
        std::streambuf* old;
        ~Redirect() { std::cout.rdbuf(old); }
      } redirect{std::cout.rdbuf(buffer.rdbuf())};
      rc = CliMain(static_cast<int>(argv.size()), argv.data(), &error);
      out = buffer.str();
    } else {
      rc = CliMain(static_cast<int>(argv.size()), argv.data(), &error);
    }
  }
  return {rc, out, error};
}

// fn(spec: bytes) -> bytes | None runs one simulation somewhere (None: run
// it here). Called from the analysis' worker threads, so it takes the GIL;
// a Python exception there is printed and the run done here, since an
// exception cannot cross the C++ analysis.
void SetExecutor(std::optional<nb::callable> fn) {
  if (!fn) {
    SetRunExecutor(nullptr);
    return;
  }
  // Released with the GIL held, whichever thread drops the last copy.
  std::shared_ptr<nb::callable> holder(new nb::callable(std::move(*fn)),
                                       [](nb::callable* p) {
                                         nb::gil_scoped_acquire gil;
                                         delete p;
                                       });
  SetRunExecutor([holder](const RunSpec& spec) -> std::optional<RunResult> {
    std::optional<std::string> bytes = EncodeSpec(spec);
    if (!bytes) return std::nullopt;
    std::string result;
    {
      nb::gil_scoped_acquire gil;
      try {
        nb::object r = (*holder)(nb::bytes(bytes->data(), bytes->size()));
        if (r.is_none()) return std::nullopt;
        nb::bytes b = nb::cast<nb::bytes>(r);
        result.assign(b.c_str(), b.size());
      } catch (nb::python_error& e) {
        e.restore();
        PyErr_Print();
        return std::nullopt;
      }
    }
    return DecodeResult(result);
  });
}

nb::bytes RunSpecBytes(nb::bytes spec) {
  std::string in(spec.c_str(), spec.size()), out;
  {
    nb::gil_scoped_release release;
    out = RunEncodedSpec(in);
  }
  return nb::bytes(out.data(), out.size());
}

}  // namespace
}  // namespace servesim::py

NB_MODULE(_core, m) {
  m.doc() = "servesim's C++ core (see the servesim package)";
  m.def("cli", &servesim::py::Cli, nb::arg("args"), nb::arg("capture") = false,
        "Run the servesim command line in this process; returns (exit code, "
        "captured stdout, error line).");
  m.def("set_executor", &servesim::py::SetExecutor, nb::arg("fn").none(),
        "Send each independent simulation of sweep/capacity/search to "
        "fn(spec_bytes) -> result_bytes | None; None: run all here.");
  m.def("run_spec", &servesim::py::RunSpecBytes, nb::arg("spec"),
        "Run one encoded simulation here and return its encoded result.");
  m.attr("source_dir") = servesim::RepoRoot();
  m.attr("__version__") = servesim::kVersion;
}
