// Two profiles of one deployment on the same steps (see compare_engines.h).
#include "calibrate/compare_engines.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "calibrate/compare_models.h"

namespace servesim::calibrate {
namespace {

// "1.23" for b / a, "-" where neither has the part.
std::string Ratio(double a, double b) {
  if (a <= 0 && b <= 0) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", a > 0 ? b / a : 0.0);
  return buf;
}

}  // namespace

std::vector<EngineRow> CompareEngines(const CalibratedCostModel& a,
                                      const CalibratedCostModel& b) {
  std::vector<EngineRow> rows;
  for (const CompareShape& s : CompareGrid()) {
    rows.push_back({s.step_class, s.label, a.StepTime(s.batch),
                    b.StepTime(s.batch)});
  }
  return rows;
}

std::string EngineTable(const std::vector<EngineRow>& rows,
                        const std::string& title, const std::string& label_a,
                        const std::string& label_b) {
  std::ostringstream os;
  char buf[240];
  os << title << "\n";
  std::snprintf(buf, sizeof buf, "  %-8s %-34s %9s %9s %6s %6s %6s %6s %6s\n",
                "class", "step", "A ms", "B ms", "B/A", "gemm", "decode",
                "prefil", "allred");
  os << buf;
  struct Range {
    double lo = 1e300, hi = 0;
  };
  std::map<std::string, Range> by_class;
  for (const EngineRow& r : rows) {
    const double ra = r.b.Total() / r.a.Total();
    std::snprintf(buf, sizeof buf,
                  "  %-8s %-34s %9.3f %9.3f %6.2f %6s %6s %6s %6s\n",
                  r.step_class.c_str(), r.shape.c_str(), r.a.Total() * 1e3,
                  r.b.Total() * 1e3, ra, Ratio(r.a.gemm_s, r.b.gemm_s).c_str(),
                  Ratio(r.a.attn_decode_s, r.b.attn_decode_s).c_str(),
                  Ratio(r.a.attn_prefill_s, r.b.attn_prefill_s).c_str(),
                  Ratio(r.a.comm_s, r.b.comm_s).c_str());
    os << buf;
    Range& g = by_class[r.step_class];
    g.lo = std::min(g.lo, ra);
    g.hi = std::max(g.hi, ra);
  }
  os << "  A = " << label_a << ", B = " << label_b
     << "; B/A per step and per part (gemm: every linear layer and the LM "
        "head; decode, prefil(l): attention; allred: the all-reduces; "
        "elementwise and host overhead are the same roofline terms in both)\n";
  for (const auto& [cls, g] : by_class) {
    std::snprintf(buf, sizeof buf, "  %-8s step B/A %.2f-%.2f\n", cls.c_str(),
                  g.lo, g.hi);
    os << buf;
  }
  return os.str();
}

}  // namespace servesim::calibrate
