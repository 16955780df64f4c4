// Calibration grids (see grid.h).
#include "calibrate/grid.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace servesim::calibrate {
namespace {

std::vector<int64_t> PowersOfTwo(int64_t lo, int64_t hi, int stride) {
  std::vector<int64_t> all;
  for (int64_t v = lo; v <= hi; v *= 2) all.push_back(v);
  std::vector<int64_t> out;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i % stride == 0 || i + 1 == all.size()) out.push_back(all[i]);
  }
  return out;
}

}  // namespace

GridOptions GridOptionsForBudget(double budget_s) {
  GridOptions o;
  if (budget_s < 120) {
    o.dense_steps_per_octave = 2;
    o.attention_stride = 2;
  }
  if (budget_s < 30) {
    o.dense_steps_per_octave = 1;
    o.attention_stride = 3;
  }
  return o;
}

std::vector<int64_t> TokenGrid(const GridOptions& o) {
  std::set<int64_t> m;
  const double octaves = std::log2(static_cast<double>(o.max_tokens));
  const int dense = std::max(o.dense_steps_per_octave, o.steps_per_octave);
  const int steps = static_cast<int>(std::ceil(octaves * dense));
  for (int i = 0; i <= steps; ++i) {
    const double v = std::exp2(octaves * i / steps);
    const int64_t r = std::llround(v);
    const bool in_dense = r >= o.dense_lo && r <= o.dense_hi;
    // Outside the dense band keep only the coarse steps.
    if (in_dense || (i * o.steps_per_octave) % dense == 0) m.insert(r);
  }
  m.insert(1);
  m.insert(o.max_tokens);
  return {m.begin(), m.end()};
}

std::vector<OpPoint> MakeGrid(const ModelSpec& model, int /*tp*/,
                              const GridOptions& o) {
  std::vector<OpPoint> grid;
  const std::vector<int64_t> tokens = TokenGrid(o);
  for (OpKind k : {OpKind::kGemmQkv, OpKind::kGemmO, OpKind::kGemmGateUp,
                   OpKind::kGemmDown, OpKind::kGemmLmHead}) {
    for (int64_t m : tokens) grid.push_back({k, m, 0, 0});
  }
  const int64_t max_ctx =
      std::min<int64_t>(o.max_context, std::max(model.max_context, 128));
  for (int64_t b : PowersOfTwo(1, o.max_batch, o.attention_stride)) {
    for (int64_t c : PowersOfTwo(128, max_ctx, o.attention_stride)) {
      grid.push_back({OpKind::kDecodeAttention, 0, b, c});
    }
  }
  std::vector<int64_t> cached = {0};
  for (int64_t c : PowersOfTwo(256, max_ctx, o.attention_stride)) {
    cached.push_back(c);
  }
  for (int64_t n : PowersOfTwo(64, o.max_chunk, o.attention_stride)) {
    for (int64_t c : cached) {
      grid.push_back({OpKind::kPrefillAttention, n, 1, c});
    }
  }
  for (int64_t m : tokens) grid.push_back({OpKind::kElementwise, m, 0, 0});
  return grid;
}

}  // namespace servesim::calibrate
