// The progress reporter with a fake clock and a string sink: when it is
// silent, how often it prints on and off a terminal, and its ETA.
#include "sim/core/progress.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace servesim {
namespace {

struct Fake {
  double now = 0;
  std::vector<std::string> out;

  ProgressSettings Settings(bool tty) {
    ProgressSettings s;
    s.tty = tty;
    s.clock = [this] { return now; };
    s.sink = [this](const std::string& text) { out.push_back(text); };
    return s;
  }
};

TEST(Progress, SilentForTheFirstTwoSeconds) {
  Fake f;
  ProgressReporter p("run", f.Settings(false));
  for (int i = 0; i < 16; ++i) {  // 0 .. 1.875 s
    f.now = i * 0.125;
    p.Update(f.now / 10, "x");
  }
  EXPECT_TRUE(f.out.empty());
  p.Finish();
  EXPECT_TRUE(f.out.empty());  // nothing to clear either
}

TEST(Progress, LogLinesAtMostEveryFiveSeconds) {
  Fake f;
  ProgressReporter p("run", f.Settings(false));
  for (int i = 0; i <= 96; ++i) {  // 0 .. 12 s
    f.now = i * 0.125;
    p.Update(f.now / 100, "x");
  }
  // At 2 s, 7 s and 12 s: plain lines, one each.
  ASSERT_EQ(f.out.size(), 3u);
  for (const std::string& line : f.out) {
    EXPECT_EQ(line.rfind("run: x", 0), 0u) << line;
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\r'), std::string::npos);
  }
  p.Finish();
  EXPECT_EQ(f.out.size(), 3u);  // a log keeps its last line
}

TEST(Progress, TerminalLineAtMostFourTimesASecond) {
  Fake f;
  ProgressReporter p("run", f.Settings(true));
  for (int i = 0; i < 64; ++i) {  // 0 .. 3.9375 s
    f.now = i * 0.0625;
    p.Update(0.5, "x");
  }
  // From 2 s to 4 s, every quarter second: 8 redraws.
  ASSERT_EQ(f.out.size(), 8u);
  EXPECT_EQ(f.out[0].rfind("\r\033[Krun: x", 0), 0u);
  EXPECT_EQ(f.out[0].find('\n'), std::string::npos);
  p.Finish();
  ASSERT_EQ(f.out.size(), 9u);
  EXPECT_EQ(f.out.back(), "\r\033[K");  // the line is cleared
}

TEST(Progress, QuietPrintsNothing) {
  Fake f;
  ProgressSettings s = f.Settings(false);
  s.enabled = false;
  ProgressReporter p("run", s);
  for (int i = 0; i < 40; ++i) {
    f.now = i * 0.5;
    p.Update(0.5, "x");
  }
  EXPECT_FALSE(p.Due());
  p.Finish();
  EXPECT_TRUE(f.out.empty());
}

TEST(Progress, DueOnlyWhenALineWouldBePrinted) {
  Fake f;
  ProgressReporter p("run", f.Settings(false));
  f.now = 1;
  EXPECT_FALSE(p.Due());
  f.now = 2;
  EXPECT_TRUE(p.Due());
  p.Update(0.1, "x");
  f.now = 6.9;
  EXPECT_FALSE(p.Due());
  f.now = 7;
  EXPECT_TRUE(p.Due());
  p.Finish();
  EXPECT_FALSE(p.Due());
}

TEST(Progress, EtaArithmetic) {
  // 10% more in 5 s, 60% left: 30 s.
  EXPECT_DOUBLE_EQ(EstimateSecondsLeft(10, 0.3, 15, 0.4), 30);
  EXPECT_DOUBLE_EQ(EstimateSecondsLeft(0, 0, 4, 1), 0);
  EXPECT_LT(EstimateSecondsLeft(10, 0.4, 15, 0.4), 0);  // no progress: none
  EXPECT_LT(EstimateSecondsLeft(10, 0.5, 15, 0.4), 0);  // the total grew
  EXPECT_LT(EstimateSecondsLeft(10, 0.3, 10, 0.4), 0);  // no time passed
}

TEST(Progress, EtaFromTheLastWindow) {
  Fake f;
  ProgressReporter p("run", f.Settings(false));
  // Slow for 10 s (1%/s), then fast (5%/s): the ETA follows the recent rate.
  for (int i = 0; i <= 40; ++i) {  // every quarter second to 10 s
    f.now = i * 0.25;
    p.Update(0.01 * f.now, "x");
  }
  f.out.clear();
  for (int i = 1; i <= 20; ++i) {  // then to 15 s
    const double t = i * 0.25;
    f.now = 10 + t;
    p.Update(0.1 + 0.05 * t, "x");
  }
  ASSERT_EQ(f.out.size(), 1u);  // at 12 s (lines at 2, 7, 12, 17)
  // At 12 s: 20% done; over the last 5 s (from 7 s, 7%) 13% in 5 s: 2.6%/s,
  // 80% left: 31 s.
  EXPECT_NE(f.out[0].find("(20%)"), std::string::npos) << f.out[0];
  EXPECT_NE(f.out[0].find("12 s elapsed, ETA 31 s from the last 5 s"), std::string::npos)
      << f.out[0];
}

TEST(Progress, EtaAtTheMeanRateSoFar) {
  Fake f;
  ProgressSettings s = f.Settings(false);
  s.eta_window_s = 0;
  s.eta_of = "for the runs started";
  ProgressReporter p("sweep", s);
  f.now = 4;
  p.Update(0.25, "3/12 runs");
  ASSERT_EQ(f.out.size(), 1u);
  EXPECT_EQ(f.out[0],
            "sweep: 3/12 runs (25%), 4 s elapsed, ETA 12 s for the runs started at the "
            "mean rate so far\n");
}

TEST(Progress, UnknownFractionHasNoEta) {
  Fake f;
  ProgressReporter p("run", f.Settings(false));
  f.now = 3;
  p.Update(-1, "12 requests done");
  ASSERT_EQ(f.out.size(), 1u);
  EXPECT_EQ(f.out[0], "run: 12 requests done, 3 s elapsed\n");
}

TEST(Progress, EnvironmentSwitchesItOff) {
  const char* old = std::getenv("SERVESIM_PROGRESS");
  const std::string saved = old ? old : "";
  setenv("SERVESIM_PROGRESS", "0", 1);
  EXPECT_FALSE(DefaultProgressSettings().enabled);
  setenv("SERVESIM_PROGRESS", "1", 1);
  EXPECT_TRUE(DefaultProgressSettings().enabled);
  EXPECT_FALSE(DefaultProgressSettings(false).enabled);  // -q
  if (old) {
    setenv("SERVESIM_PROGRESS", saved.c_str(), 1);
  } else {
    unsetenv("SERVESIM_PROGRESS");
  }
}

TEST(Progress, FormatDuration) {
  EXPECT_EQ(FormatDuration(0.25), "250 ms");
  EXPECT_EQ(FormatDuration(42), "42 s");
  EXPECT_EQ(FormatDuration(200), "3 min 20 s");
  EXPECT_EQ(FormatDuration(7500), "2 h 5 min");
  EXPECT_EQ(FormatDuration(-1), "?");
}

}  // namespace
}  // namespace servesim
