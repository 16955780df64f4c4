// A self-contained SVG picture of the prompt and completion length
// distributions: two histograms on a shared log-scale token axis, as
// `servesim fit --plot` writes it.
#pragma once

#include <ostream>
#include <vector>

namespace servesim {

// Values are token counts (>= 1; anything smaller is drawn in the first
// bin). Bars are a tenth of a decade wide and show the share of each
// sample, so two samples of different sizes compare directly. Any data is
// drawn sanely: an empty sample says so, a single value spans one decade.
void WriteLengthHistogramSvg(const std::vector<double>& prompt,
                             const std::vector<double>& completion,
                             std::ostream& os);

}  // namespace servesim
