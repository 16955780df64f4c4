// Roofline vs calibrated profile on a grid of steps (see compare_models.h).
#include "calibrate/compare_models.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace servesim::calibrate {
namespace {

BatchShape Decode(int batch, int context) {
  BatchShape b;
  b.seqs.assign(batch, SeqWork{1, context, true});
  return b;
}

// Whether pricing `b` takes any of the profile's ops off its grid (the same
// op shapes CalibratedCostModel::StepTime evaluates).
bool Extrapolates(const CalibrationProfile& p, const BatchShape& b,
                  const ModelSpec& m, int tp) {
  int64_t tokens = 0, dec = 0, dec_ctx = 0;
  bool out = false;
  for (const SeqWork& s : b.seqs) {
    tokens += s.new_tokens;
    if (IsDecode(s)) {
      ++dec;
      dec_ctx += s.context_tokens;
    } else {
      const OpShape sh{s.new_tokens, 1, s.context_tokens};
      out |=
          OpExtrapolates(p.Fit(ProfileOp::kPrefillAttention),
                         FeaturesOf(ProfileOp::kPrefillAttention, sh, m, tp));
    }
  }
  if (dec > 0) {
    const OpShape sh{dec, dec, dec_ctx / dec};
    out |= OpExtrapolates(p.Fit(ProfileOp::kDecodeAttention),
                          FeaturesOf(ProfileOp::kDecodeAttention, sh, m, tp));
  }
  for (ProfileOp op : {ProfileOp::kGemmQkv, ProfileOp::kGemmO,
                       ProfileOp::kGemmGateUp, ProfileOp::kGemmDown}) {
    out |= OpExtrapolates(p.Fit(op), FeaturesOf(op, {tokens, 0, 0}, m, tp));
  }
  if (!p.allreduce.empty() && tp > 1) {
    bool ar = false;
    EvalGrid(p.allreduce, 1, tokens * m.hidden_size * m.dtype_bytes, &ar);
    out |= ar;
  }
  return out;
}

}  // namespace

std::vector<CompareShape> CompareGrid() {
  std::vector<CompareShape> g;
  char buf[96];
  for (int batch : {1, 8, 32, 64, 128, 256}) {
    for (int ctx : {128, 1024, 4096, 16384, 32768}) {
      std::snprintf(buf, sizeof buf, "batch %d x ctx %d", batch, ctx);
      g.push_back({"decode", buf, Decode(batch, ctx)});
    }
  }
  for (int chunk : {128, 512, 2048, 8192}) {
    for (int cached : {0, 1024, 8192, 32768}) {
      std::snprintf(buf, sizeof buf, "chunk %d after %d cached", chunk, cached);
      BatchShape b;
      b.seqs.push_back(SeqWork{chunk, cached, true});
      g.push_back({"prefill", buf, b});
    }
  }
  for (int chunk : {512, 2048}) {
    for (int batch : {16, 64, 256}) {
      for (int ctx : {1024, 8192}) {
        std::snprintf(buf, sizeof buf, "chunk %d + %d decodes at ctx %d", chunk,
                      batch, ctx);
        BatchShape b = Decode(batch, ctx);
        b.seqs.push_back(SeqWork{chunk, 0, true});
        g.push_back({"mixed", buf, b});
      }
    }
  }
  return g;
}

std::vector<CompareRow> CompareModels(const CostModel& roofline,
                                      const CalibratedCostModel& profile,
                                      const ModelSpec& model, int tp) {
  std::vector<CompareRow> rows;
  for (const CompareShape& s : CompareGrid()) {
    const StepCost r = roofline.StepTime(s.batch);
    const StepCost c = profile.StepTime(s.batch);
    CompareRow row{s.step_class, s.label,     r.Total(),
                   c.Total(),    r.Kernels(), c.Kernels()};
    row.roofline_measured_s = r.Kernels() - r.other_s;
    row.profile_measured_s = c.Kernels() - c.other_s;
    row.extrapolated = Extrapolates(profile.profile(), s.batch, model, tp);
    rows.push_back(row);
  }
  return rows;
}

std::string CompareTable(const std::vector<CompareRow>& rows,
                         const std::string& title) {
  std::ostringstream os;
  char buf[200];
  os << title << "\n";
  std::snprintf(buf, sizeof buf, "  %-8s %-34s %11s %11s %7s %8s %9s\n",
                "class", "step", "roofline ms", "profile ms", "ratio",
                "kernels", "measured");
  os << buf;
  struct Range {
    double lo = 1e300, hi = 0, klo = 1e300, khi = 0, mlo = 1e300, mhi = 0;
    double abs_err = 0, m_abs_err = 0;
    int n = 0;
  };
  std::map<std::string, Range> by_class;
  for (const CompareRow& r : rows) {
    std::snprintf(buf, sizeof buf,
                  "  %-8s %-34s %11.3f %11.3f %7.2f %8.2f %9.2f%s\n",
                  r.step_class.c_str(), r.shape.c_str(), r.roofline_s * 1e3,
                  r.profile_s * 1e3, r.Ratio(), r.KernelRatio(),
                  r.MeasuredRatio(), r.extrapolated ? "  *" : "");
    os << buf;
    Range& g = by_class[r.step_class];
    g.lo = std::min(g.lo, r.Ratio());
    g.hi = std::max(g.hi, r.Ratio());
    g.klo = std::min(g.klo, r.KernelRatio());
    g.khi = std::max(g.khi, r.KernelRatio());
    g.mlo = std::min(g.mlo, r.MeasuredRatio());
    g.mhi = std::max(g.mhi, r.MeasuredRatio());
    g.abs_err += std::abs(r.Ratio() - 1);
    g.m_abs_err += std::abs(r.MeasuredRatio() - 1);
    ++g.n;
  }
  os << "  ratio = roofline / profile (< 1: the roofline is too fast); "
        "kernels = the same without all-reduce and host overhead; "
        "measured = GEMMs and attention only (the kernels the profile "
        "measured); * = the profile extrapolated beyond its measured grid\n";
  for (const auto& [cls, g] : by_class) {
    std::snprintf(buf, sizeof buf,
                  "  %-8s step ratio %.2f-%.2f (mean |1-r| %.1f%%), kernel "
                  "ratio %.2f-%.2f, measured %.2f-%.2f (mean |1-r| %.1f%%)\n",
                  cls.c_str(), g.lo, g.hi, 100 * g.abs_err / g.n, g.klo, g.khi,
                  g.mlo, g.mhi, 100 * g.m_abs_err / g.n);
    os << buf;
  }
  return os.str();
}

}  // namespace servesim::calibrate
