// The simulation fuzzer, seeded: random valid scenarios (scenario_gen.h)
// run under every check (scenario_check.h).
//
//   scenario_sim_fuzz                      GoogleTest: seeds 1, 2, ... for a
//                                          bounded time (SERVESIM_FUZZ_SECONDS,
//                                          default 30), as ctest runs it
//   scenario_sim_fuzz --seconds S --seed K [--print]
//                                          standalone: seeds K, K+1, ... for
//                                          S seconds; prints how many ran
//   scenario_sim_fuzz --show K             prints scenario K's JSON
//
// Each scenario runs in a child process (an abort on a broken invariant,
// or a hang past 60 s of CPU time, is reported and the run goes on); a failing
// scenario is printed as JSON, ready for `servesim run`.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "tests/fuzz/scenario_check.h"
#include "tests/fuzz/scenario_gen.h"

namespace servesim::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

struct Tally {
  int64_t scenarios = 0, invalid = 0, failed = 0, requests = 0, saturation = 0;
  double max_over_mu = 0;
  uint64_t max_over_mu_seed = 0;
  double seconds = 0;
  double slowest_s = 0;  // one scenario's checks
  uint64_t slowest_seed = 0;
};

std::string Describe(const Tally& t) {
  char buf[500];
  std::snprintf(buf, sizeof buf,
                "%lld scenarios (%lld requests) in %.1f s: %.0f per minute (slowest: seed "
                "%llu, %.1f s); %lld failed (%lld did not parse); saturation compared on "
                "%lld, max throughput/mu %.3f (seed %llu)",
                static_cast<long long>(t.scenarios), static_cast<long long>(t.requests),
                t.seconds, 60.0 * t.scenarios / std::max(1e-9, t.seconds),
                static_cast<unsigned long long>(t.slowest_seed), t.slowest_s,
                static_cast<long long>(t.failed), static_cast<long long>(t.invalid),
                static_cast<long long>(t.saturation), t.max_over_mu,
                static_cast<unsigned long long>(t.max_over_mu_seed));
  return buf;
}

// What a child process reports back through its pipe.
struct ChildReport {
  int64_t requests = 0;
  int32_t valid = 1, ok = 1, saturation_checked = 0;
  double throughput_over_mu = 0;
};

// A hang is judged by the child's CPU time, not wall time: on a loaded
// machine (a build beside a long run) a slow scenario got the wall alarm
// although it takes 2-3 s alone. The wall alarm stays as a backstop.
constexpr rlim_t kScenarioCpuSeconds = 60;
constexpr unsigned kScenarioWallSeconds = 900;

// Checks one scenario in a child process, so that an abort (a broken
// invariant) or a hang is reported, with the scenario, and the run goes on.
// Returns false when the child failed in any way.
bool CheckIsolated(const nlohmann::json& sc, const CheckOptions& options, Tally* t,
                   uint64_t seed = 0) {
  std::cout.flush();
  std::cerr.flush();
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const rlimit cpu{kScenarioCpuSeconds, kScenarioCpuSeconds + 10};
    setrlimit(RLIMIT_CPU, &cpu);
    alarm(kScenarioWallSeconds);
    const Outcome o = CheckScenario(sc, options);
    ChildReport r;
    r.requests = o.requests;
    r.valid = o.valid;
    r.ok = o.valid && o.problems.empty();
    r.saturation_checked = o.saturation_checked;
    r.throughput_over_mu = o.throughput_over_mu;
    if (!r.ok) std::cerr << options.label << ":\n" << FailureReport(sc, o) << std::flush;
    ssize_t unused = write(fds[1], &r, sizeof r);
    (void)unused;
    _exit(0);
  }
  close(fds[1]);
  ChildReport r;
  const bool got = pid > 0 && read(fds[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
  close(fds[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  const bool exited = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  t->requests += r.requests;
  t->invalid += got && !r.valid;
  if (got && r.saturation_checked) {
    ++t->saturation;
    if (r.throughput_over_mu > t->max_over_mu) {
      t->max_over_mu = r.throughput_over_mu;
      t->max_over_mu_seed = seed;
    }
  }
  return got && exited && r.ok;
}

// Runs seeds first, first + 1, ... until `seconds` have passed (at least
// one). Failures are printed to stderr as they happen.
Tally RunSeeds(uint64_t first, double seconds, bool print, const GeneratorLimits& limits,
               bool progress) {
  Tally t;
  double next_progress = 300;
  const auto start = Clock::now();
  for (uint64_t seed = first;; ++seed) {
    SeededChoices choices(seed);
    const nlohmann::json sc = GenerateScenario(choices, limits);
    if (print) std::cerr << "seed " << seed << ": " << sc.dump() << "\n";
    CheckOptions options;
    options.label = "seed " + std::to_string(seed);
    ++t.scenarios;
    const auto one = Clock::now();
    if (!CheckIsolated(sc, options, &t, seed)) ++t.failed;
    const double took = std::chrono::duration<double>(Clock::now() - one).count();
    if (took > t.slowest_s) {
      t.slowest_s = took;
      t.slowest_seed = seed;
    }
    t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (t.seconds >= seconds) break;
    if (progress && t.seconds >= next_progress) {  // for long runs' logs
      std::cout << "  ... seed " << seed << ": " << Describe(t) << std::endl;
      next_progress += 300;
    }
  }
  return t;
}


double BudgetSeconds() {
  const char* s = std::getenv("SERVESIM_FUZZ_SECONDS");
  return s && *s ? std::atof(s) : 30.0;
}

TEST(ScenarioSimFuzz, SeededScenariosKeepEveryInvariant) {
  InstallAbortReporter();
  const Tally t = RunSeeds(1, BudgetSeconds(), false, GeneratorLimits{}, false);
  std::cout << Describe(t) << "\n";
  EXPECT_EQ(t.failed, 0) << "failing scenarios are printed above";
  EXPECT_GE(t.scenarios, 10);
}

// The libFuzzer target's decoding: any bytes make a scenario that parses.
TEST(ScenarioSimFuzz, AnyBytesMakeAValidScenario) {
  InstallAbortReporter();
  std::string bytes;
  for (int n = 0; n < 24; ++n) {
    ByteChoices choices(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    const nlohmann::json sc = GenerateScenario(choices, LibFuzzerLimits());
    CheckOptions options;
    options.determinism = options.saturation = false;
    options.label = std::to_string(bytes.size()) + " bytes";
    Tally t;
    EXPECT_TRUE(CheckIsolated(sc, options, &t)) << "see the report above";
    EXPECT_EQ(t.invalid, 0);
    for (int k = 0; k < 16; ++k) bytes.push_back(static_cast<char>((n * 131 + k * 71) & 0xff));
  }
}

TEST(ScenarioSimFuzz, SameSeedSameScenario) {
  SeededChoices a(42), b(42), c(43);
  EXPECT_EQ(GenerateScenario(a), GenerateScenario(b));
  EXPECT_NE(GenerateScenario(a), GenerateScenario(c));
}

int Standalone(int argc, char** argv) {
  double seconds = 60;
  uint64_t seed = 1;
  bool print = false;
  GeneratorLimits limits;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--seconds" && has_value) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--seed" && has_value) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--show" && has_value) {
      SeededChoices choices(std::strtoull(argv[++i], nullptr, 10));
      std::cout << GenerateScenario(choices, limits).dump(2) << "\n";
      return 0;
    } else if (a == "--print") {
      print = true;
    } else {
      std::cerr << "usage: " << argv[0]
                << " [--seconds S] [--seed K] [--print] | --show K | (GoogleTest flags)\n";
      return 2;
    }
  }
  InstallAbortReporter();
  const Tally t = RunSeeds(seed, seconds, print, limits, true);
  std::cout << "seeds " << seed << ".." << seed + t.scenarios - 1 << ": " << Describe(t)
            << std::endl;
  return t.failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace servesim::fuzz

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--gtest", 7) != 0) {
      return servesim::fuzz::Standalone(argc, argv);
    }
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
