// The grid of shapes at which each operation is timed for one model at one
// tensor-parallel degree.
#pragma once

#include <cstdint>
#include <vector>

#include "calibrate/op_timing.h"
#include "sim/model/model_spec.h"

namespace servesim::calibrate {

struct GridOptions {
  // GEMM and elementwise token counts M: log-spaced from 1 to max_tokens
  // with `steps_per_octave`, and `dense_steps_per_octave` inside
  // [dense_lo, dense_hi], where the GEMM turns from weight streaming to
  // compute bound on current GPUs (ridge M ~ 150-450) and tile-size
  // steps (64, 128, 256) show.
  int64_t max_tokens = 16384;
  int steps_per_octave = 1;
  int dense_steps_per_octave = 4;
  int64_t dense_lo = 16, dense_hi = 2048;
  // Decode attention: batch 1..max_batch x context 128..max_context,
  // powers of two; prefill attention: chunk 64..max_chunk x cached context
  // {0} and powers of two 256..max_context. `attention_stride` keeps every
  // k-th value of each axis (always the ends) to fit a time budget.
  int64_t max_batch = 512;
  int64_t max_context = 32768;
  int64_t max_chunk = 8192;
  int attention_stride = 1;
};

// Options that fit the grid in about `budget_s` of GPU time: the full grid
// takes a couple of minutes at 70B shapes, so budgets under 120 s thin it.
GridOptions GridOptionsForBudget(double budget_s);

// Token counts M of the GEMM/elementwise grid (sorted, unique).
std::vector<int64_t> TokenGrid(const GridOptions& o);

// Points of every op, grouped by op in OpKind order (attention: batch or
// chunk outer, context inner). Contexts are capped by the model's
// max_context. The order is fixed, so "every k-th point" is deterministic.
std::vector<OpPoint> MakeGrid(const ModelSpec& model, int tp,
                              const GridOptions& o);

}  // namespace servesim::calibrate
