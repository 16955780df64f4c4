// EvalGrid with and without a residual base (sim/cost/calibration_profile.h)
// on small hand-made grids, every value worked by hand: grid points return
// their time exactly, between neighbours the residual log(t / base) is
// interpolated and clamped to the neighbours' range, beyond the grid the
// edge's residual is held, pieces switch at their `from`, and without a
// base the plain log-log rule is unchanged.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/cost/calibration_profile.h"

namespace servesim {
namespace {

// base(o, x) = 1 us + 1 us per byte x o x (bytes = o x), memory bound.
GridBase LinearBase() {
  GridBasePiece p;
  p.floor_s = 1e-6;
  p.s_per_byte = 1e-6;
  p.bytes = {0, 1, 0};
  GridBase b;
  b.pieces = {p};
  return b;
}

GridTable OneLine(std::vector<double> x, std::vector<double> t, bool base) {
  GridTable g;
  g.lines.push_back(GridLine{1, std::move(x), std::move(t)});
  if (base) g.base = LinearBase();
  return g;
}

TEST(CalibrationGridTest, BaseIsTheRooflineOfItsPolynomials) {
  GridBasePiece p;
  p.floor_s = 2e-6;
  p.s_per_flop = 1e-12;
  p.s_per_byte = 1e-9;
  p.s_per_item = 1e-8;
  p.crossover_p = 1;  // the sum of compute and memory
  p.flops = {1, 2, 3};
  p.bytes = {5, 0, 0};
  p.items = {0, 1, 0};
  // outer 2, inner 10: flops 2 (1 + 20 + 300) = 642, bytes 10, items 20.
  EXPECT_DOUBLE_EQ(PieceSeconds(p, 2, 10),
                   2e-6 + 1e-8 * 20 + (642e-12 + 10e-9));
  GridBase b;
  GridBasePiece q = p;
  q.from = 100;
  q.floor_s = 1e-3;
  b.pieces = {p, q};
  EXPECT_DOUBLE_EQ(b.Seconds(2, 10), PieceSeconds(p, 2, 10));
  EXPECT_DOUBLE_EQ(b.Seconds(1, 100), PieceSeconds(q, 1, 100));
}

TEST(CalibrationGridTest, ResidualInterpolationByHand) {
  // Measured 2x, 3x and 2x the base at x = 1, 4, 16 (base 2, 5, 17 us).
  const GridTable g = OneLine({1, 4, 16}, {4e-6, 15e-6, 34e-6}, true);
  bool out = true;
  EXPECT_NEAR(EvalGrid(g, 1, 4, &out), 15e-6, 1e-9 * 15e-6);  // a grid point
  EXPECT_FALSE(out);
  // x = 2, halfway in log x: residual sqrt(2 x 3), base 3 us.
  EXPECT_NEAR(EvalGrid(g, 1, 2, &out), 3e-6 * std::sqrt(6.0), 1e-18);
  EXPECT_FALSE(out);
  // The plain rule gives the geometric mean of the neighbours instead.
  const GridTable plain = OneLine({1, 4, 16}, {4e-6, 15e-6, 34e-6}, false);
  EXPECT_NEAR(EvalGrid(plain, 1, 2), std::sqrt(4e-6 * 15e-6), 1e-18);
  EXPECT_GT(std::fabs(EvalGrid(plain, 1, 2) / EvalGrid(g, 1, 2) - 1), 0.05);
}

TEST(CalibrationGridTest, ResidualStaysBetweenNeighboursAndMonotone) {
  // Flat measurements while the base rises: unclamped, x = 2 would price
  // 3 us x sqrt(2.5) = 4.74 us, below both neighbours' 5 us.
  const GridTable g = OneLine({1, 4}, {5e-6, 5e-6}, true);
  EXPECT_NEAR(EvalGrid(g, 1, 2), 5e-6, 1e-9 * 5e-6);
  // Rising measurements: monotone and between the neighbours on a scan.
  const GridTable r = OneLine({1, 4, 16}, {5e-6, 6e-6, 40e-6}, true);
  double prev = 0;
  for (double x = 1; x <= 16; x *= 1.05) {
    const double t = EvalGrid(r, 1, x);
    EXPECT_GE(t, prev) << x;
    EXPECT_GE(t, 5e-6 * (1 - 1e-12)) << x;
    EXPECT_LE(t, 40e-6 * (1 + 1e-12)) << x;
    if (x <= 4) {
      EXPECT_LE(t, 6e-6 * (1 + 1e-12)) << x;
    }
    prev = t;
  }
}

TEST(CalibrationGridTest, BeyondTheGridTheEdgeResidualIsHeld) {
  const GridTable g = OneLine({1, 4, 16}, {4e-6, 15e-6, 34e-6}, true);
  bool out = false;
  // Above: residual 2 at x = 16, base 65 us at x = 64.
  EXPECT_NEAR(EvalGrid(g, 1, 64, &out), 130e-6, 1e-15);
  EXPECT_TRUE(out);
  // Below: residual 2 at x = 1, base 1.5 us at x = 0.5.
  out = false;
  EXPECT_NEAR(EvalGrid(g, 1, 0.5, &out), 3e-6, 1e-18);
  EXPECT_TRUE(out);
  // Without a base: the first value below, the last slope (clamped to
  // [1, 2]) above: log(34/15)/log(4) = 0.59 -> 1, so 4x the last value.
  const GridTable plain = OneLine({1, 4, 16}, {4e-6, 15e-6, 34e-6}, false);
  EXPECT_NEAR(EvalGrid(plain, 1, 0.5), 4e-6, 1e-9 * 4e-6);
  EXPECT_NEAR(EvalGrid(plain, 1, 64), 136e-6, 1e-15);
}

TEST(CalibrationGridTest, BetweenLinesTheResidualIsInterpolatedToo) {
  // Lines at outer 1 and 4, each measured 2x its base (1 + o x us) at x = 4;
  // at outer 2 the residual 2 times base 9 us.
  GridTable g;
  g.lines.push_back(GridLine{1, {1, 4}, {4e-6, 10e-6}});
  g.lines.push_back(GridLine{4, {1, 4}, {10e-6, 34e-6}});
  g.base = LinearBase();
  EXPECT_NEAR(EvalGrid(g, 4, 4), 34e-6, 1e-9 * 34e-6);
  EXPECT_NEAR(EvalGrid(g, 2, 4), 18e-6, 1e-18);
  // Beyond the last line (outer 8): its residual 2 held, base 33 us.
  bool out = false;
  EXPECT_NEAR(EvalGrid(g, 8, 4, &out), 66e-6, 1e-15);
  EXPECT_TRUE(out);
}

}  // namespace
}  // namespace servesim
