// Imported profiles (calibrate/import.h) against the measured tables read
// by hand: grid points return the CSV's latency exactly, points between
// grid neighbours are the log-space interpolation of the residual against
// the roofline's price of the kernel (worked here with the roofline's own
// functions) and lie between them, the plain lookup is unchanged, the
// held-out evaluation builds its base from training rows only, and every
// shipped profile runs the default scenario; the second data folder
// (A100, L40S, RTX PRO 6000) is found per GPU, its dropped constant
// columns come from its manifest and its provenance from the data. The
// tables are read in place from ../shared/; without them these skip.
#include "calibrate/import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "calibrate/data_folders.h"
#include "calibrate/profile.h"
#include "calibrate/roofline_fit.h"
#include "sim/core/paths.h"
#include "sim/cost/calibrated_cost_model.h"
#include "sim/cost/roofline_cost_model.h"
#include "sim/engine/simulation.h"
#include "sim/model/model_loader.h"
#include "sim/scenario/scenario.h"

namespace servesim::calibrate {
namespace {

std::string DataRoot() { return RepoRoot() + "/../shared/calibration-data"; }
std::string DataDir() { return DataRoot() + "/aiconfigurator-vllm-0.24.0"; }
std::string MoreGpusDir() {
  return DataRoot() + "/aiconfigurator-vllm-more-gpus";
}

// The H200 tables and the Llama-3.1-8B tp=1 profile built from them, with
// residual bases (as shipped) and with the plain lookup.
struct H200 {
  GpuTables tables;
  CalibrationProfile p8b, p8b_plain;
  ModelSpec m8b;
  GpuSpec gpu;
};
const H200* Data() {
  static const H200* d = []() -> const H200* {
    if (!std::filesystem::exists(DataDir() + "/h200_sxm/gemm.csv")) {
      return nullptr;
    }
    auto* h = new H200;
    h->gpu = LoadGpuSpec("h200");
    h->tables = LoadGpuTables(DataDir(), h->gpu);
    h->m8b = LoadModelSpec("llama-3.1-8b");
    h->p8b = ImportProfile(h->tables, h->m8b, h->gpu, 1, {});
    GpuTables plain = h->tables;
    plain.residual_base = false;
    h->p8b_plain = ImportProfile(plain, h->m8b, h->gpu, 1, {});
    return h;
  }();
  return d;
}

#define REQUIRE_DATA() \
  if (Data() == nullptr) GTEST_SKIP() << "no tables at " << DataDir()

double Op(const CalibrationProfile& p, const ModelSpec& m, ProfileOp op,
          OpShape s) {
  return PredictOp(p.Fit(op), FeaturesOf(op, s, m, 1));
}
double Op(const H200& d, ProfileOp op, OpShape s) {
  return Op(d.p8b, d.m8b, op, s);
}

// Log-space interpolation by hand: y at x between (x0, y0) and (x1, y1).
double LogLerp(double x, double x0, double y0, double x1, double y1) {
  const double w = std::log(x / x0) / std::log(x1 / x0);
  return std::exp(std::log(y0) + w * (std::log(y1) - std::log(y0)));
}

// The residual rule by hand: b, b0, b1 the base's seconds at x, x0, x1;
// log(y / base) interpolated, then kept between the neighbours.
double ResidualLerp(double x, double b, double x0, double y0, double b0,
                    double x1, double y1, double b1) {
  const double w = std::log(x / x0) / std::log(x1 / x0);
  const double r = (1 - w) * std::log(y0 / b0) + w * std::log(y1 / b1);
  return std::clamp(b * std::exp(r), std::min(y0, y1), std::max(y0, y1));
}

// The roofline kernels preset's price of the H200 tables' kernels, from
// the roofline's own functions (not the profile's polynomials).
double GemmBase(double m, double n, double k) {
  return KernelTime(RooflineParams::Kernels().gemm, LoadGpuSpec("h200"),
                    2 * m * n * k, 2 * (k * n + m * k) + 2 * m * n);
}
double DecodeBase(double batch, double context) {  // 32 heads / 8 KV heads
  AttentionWork w;
  AddDecodeAttention(32, 8, 128, 2, context, &w);
  return KernelTime(RooflineParams::Kernels().decode_attention,
                    LoadGpuSpec("h200"), batch * w.flops, batch * w.bytes,
                    batch * w.items);
}
double PrefillBase(double n) {
  AttentionWork w;
  AddPrefillAttention(32, 8, 128, 2, n, 0, &w);
  return KernelTime(RooflineParams::Kernels().prefill_attention,
                    LoadGpuSpec("h200"), w.flops, w.bytes, w.items);
}

TEST(ImportTest, GridPointsReturnTheMeasuredRow) {
  REQUIRE_DATA();
  const H200& d = *Data();
  // h200_sxm/gemm.csv: bfloat16, n=6144, k=4096 (8B QKV at tp 1), ms.
  EXPECT_NEAR(Op(d, ProfileOp::kGemmQkv, {17, 0, 0}), 0.016524444023768108e-3,
              1e-9 * 0.0165e-3);
  EXPECT_NEAR(Op(d, ProfileOp::kGemmQkv, {64, 0, 0}), 0.017793777916166518e-3,
              1e-9 * 0.0178e-3);
  EXPECT_NEAR(Op(d, ProfileOp::kGemmQkv, {4096, 0, 0}), 0.24821599324544272e-3,
              1e-9 * 0.248e-3);
  // generation_attention.csv: batch 64, 32 heads / 8 kv heads, step 4095.
  EXPECT_NEAR(Op(d, ProfileOp::kDecodeAttention, {64, 64, 4095}),
              0.2709226608276367e-3, 1e-9 * 0.27e-3);
  EXPECT_NEAR(Op(d, ProfileOp::kDecodeAttention, {32, 32, 2047}),
              0.07724800209204356e-3, 1e-9 * 0.077e-3);
  // context_attention.csv: batch 1, isl 2048, empty cache.
  EXPECT_NEAR(Op(d, ProfileOp::kPrefillAttention, {2048, 1, 0}),
              0.08744000395139058e-3, 1e-9 * 0.087e-3);
  // custom_allreduce.csv: 2 GPUs, 4096 bf16 elements = 8192 bytes (graph).
  const CalibrationProfile p2 =
      ImportProfile(d.tables, d.m8b, LoadGpuSpec("h200"), 2, {});
  EXPECT_NEAR(EvalGrid(p2.allreduce, 1, 8192), 0.004639680087566376e-3,
              1e-9 * 0.0046e-3);
  bool out = true;
  EvalGrid(p2.allreduce, 1, 8192, &out);
  EXPECT_FALSE(out);
}

TEST(ImportTest, BetweenNeighboursIsTheResidualInterpolation) {
  REQUIRE_DATA();
  const H200& d = *Data();
  // QKV of the 8B (n = 6144, k = 4096): m = 24 between the measured m = 17
  // and 32.
  const double lo = 0.016524444023768108e-3, hi = 0.01769333415561252e-3;
  auto qkv = [](double m) { return GemmBase(m, 6144, 4096); };
  const double t24 = Op(d, ProfileOp::kGemmQkv, {24, 0, 0});
  EXPECT_NEAR(t24, ResidualLerp(24, qkv(24), 17, lo, qkv(17), 32, hi, qkv(32)),
              1e-9 * lo);
  EXPECT_GE(t24, lo);
  EXPECT_LE(t24, hi);
  // Gate+up at tp 1: n = 28672 between the measured n = 16384 and 51200
  // (k = 4096), at m = 32 and m = 64.
  for (const auto& [m, t0, t1] :
       {std::tuple{32.0, 0.039048890272776283e-3, 0.12379288673400879e-3},
        std::tuple{64.0, 0.03980177640914917e-3, 0.1234933270348443e-3}}) {
    const double want =
        ResidualLerp(28672, GemmBase(m, 28672, 4096), 16384, t0,
                     GemmBase(m, 16384, 4096), 51200, t1,
                     GemmBase(m, 51200, 4096));
    EXPECT_NEAR(Op(d, ProfileOp::kGemmGateUp, {static_cast<int64_t>(m), 0, 0}),
                want, 1e-9 * want)
        << m;
  }
  // Decode: context 3000 between 2047 and 4095 on the batch 32 and 64
  // lines, then batch 48 between them; monotone in each coordinate.
  auto along_ctx = [](double b, double t0, double t1) {
    return ResidualLerp(3000, DecodeBase(b, 3000), 2047, t0,
                        DecodeBase(b, 2047), 4095, t1, DecodeBase(b, 4095));
  };
  const double c32 = along_ctx(32, 0.07724800209204356e-3, 0.13551466663678488e-3);
  const double c64 = along_ctx(64, 0.13988799850145975e-3, 0.2709226608276367e-3);
  EXPECT_NEAR(Op(d, ProfileOp::kDecodeAttention, {32, 32, 3000}), c32,
              1e-9 * c32);
  const double b48 = Op(d, ProfileOp::kDecodeAttention, {48, 48, 3000});
  EXPECT_NEAR(b48,
              ResidualLerp(48, DecodeBase(48, 3000), 32, c32,
                           DecodeBase(32, 3000), 64, c64, DecodeBase(64, 3000)),
              1e-9 * c32);
  EXPECT_GT(b48, c32);
  EXPECT_LT(b48, c64);
  double prev = 0;
  for (int ctx = 2047; ctx <= 4095; ctx += 256) {
    const double t = Op(d, ProfileOp::kDecodeAttention, {48, 48, ctx});
    EXPECT_GE(t, prev) << ctx;
    prev = t;
  }
  // Prefill: length 2500 between 2048 and 3072. The plain lookup is 1%
  // above this: the measured curve bends (a quadratic FLOP count leaving
  // the per-row cost), which a straight line in log-log cuts across.
  const double p0 = 0.08744000395139058e-3, p1 = 0.16745599110921225e-3;
  const double p = Op(d, ProfileOp::kPrefillAttention, {2500, 1, 0});
  EXPECT_NEAR(p,
              ResidualLerp(2500, PrefillBase(2500), 2048, p0, PrefillBase(2048),
                           3072, p1, PrefillBase(3072)),
              1e-9 * p);
  EXPECT_GT(LogLerp(2500, 2048, p0, 3072, p1) / p, 1.005);
}

// Between every two neighbours of a line the residual lookup stays within
// their range and moves monotonically from one to the other (the clamp;
// kernel time does not fall as work grows, and where two measurements do,
// the lookup does not invent a third direction).
TEST(ImportTest, ResidualLookupIsMonotoneBetweenNeighbours) {
  REQUIRE_DATA();
  const H200& d = *Data();
  struct Case {
    ProfileOp op;
    double at;
  };
  for (const Case c : {Case{ProfileOp::kGemmQkv, 1}, Case{ProfileOp::kGemmLmHead, 1},
                       Case{ProfileOp::kDecodeAttention, 1},
                       Case{ProfileOp::kDecodeAttention, 64},
                       Case{ProfileOp::kPrefillAttention, 1}}) {
    const GridTable& g = d.p8b.Fit(c.op).grid;
    ASSERT_FALSE(g.base.empty());
    const GridLine* line = nullptr;
    for (const GridLine& l : g.lines) {
      if (l.at == c.at) line = &l;
    }
    ASSERT_NE(line, nullptr) << ProfileOpName(c.op) << " " << c.at;
    for (size_t i = 0; i + 1 < line->x.size(); ++i) {
      const double t0 = line->t_s[i], t1 = line->t_s[i + 1];
      double prev = t0;
      for (int j = 1; j <= 8; ++j) {
        const double x = line->x[i] * std::pow(line->x[i + 1] / line->x[i], j / 9.0);
        const double t = EvalGrid(g, c.at, x);
        EXPECT_GE(t, std::min(t0, t1) * (1 - 1e-12)) << x;
        EXPECT_LE(t, std::max(t0, t1) * (1 + 1e-12)) << x;
        if (t1 >= t0) {
          EXPECT_GE(t, prev * (1 - 1e-12)) << ProfileOpName(c.op) << " " << x;
        } else {
          EXPECT_LE(t, prev * (1 + 1e-12)) << ProfileOpName(c.op) << " " << x;
        }
        prev = t;
      }
    }
  }
}

// --plain-interpolation: log t itself between the neighbours.
TEST(ImportTest, PlainLookupIsTheLogInterpolation) {
  REQUIRE_DATA();
  const H200& d = *Data();
  auto Op = [&d](ProfileOp op, OpShape s) {
    return servesim::calibrate::Op(d.p8b_plain, d.m8b, op, s);
  };
  // m = 24 between the measured m = 17 and 32.
  const double lo = 0.016524444023768108e-3, hi = 0.01769333415561252e-3;
  const double t24 = Op(ProfileOp::kGemmQkv, {24, 0, 0});
  EXPECT_NEAR(t24, LogLerp(24, 17, lo, 32, hi), 1e-9 * lo);
  EXPECT_GT(t24, lo);
  EXPECT_LT(t24, hi);
  // Gate+up of the 8B at tp 1: n = 28672 lies between the measured
  // n = 16384 and 51200 (k = 4096); at m = 32 and m = 64 by hand.
  const double g32 = LogLerp(28672, 16384, 0.039048890272776283e-3, 51200,
                             0.12379288673400879e-3);
  const double g64 = LogLerp(28672, 16384, 0.03980177640914917e-3, 51200,
                             0.1234933270348443e-3);
  EXPECT_NEAR(Op(ProfileOp::kGemmGateUp, {32, 0, 0}), g32, 1e-9 * g32);
  EXPECT_NEAR(Op(ProfileOp::kGemmGateUp, {64, 0, 0}), g64, 1e-9 * g64);
  // Decode: context 3000 between 2047 and 4095, batch 48 between 32 and 64;
  // monotone in each coordinate.
  const double c32 =
      LogLerp(3000, 2047, 0.07724800209204356e-3, 4095, 0.13551466663678488e-3);
  const double c64 =
      LogLerp(3000, 2047, 0.13988799850145975e-3, 4095, 0.2709226608276367e-3);
  EXPECT_NEAR(Op(ProfileOp::kDecodeAttention, {32, 32, 3000}), c32,
              1e-9 * c32);
  const double b48 = Op(ProfileOp::kDecodeAttention, {48, 48, 3000});
  EXPECT_NEAR(b48, LogLerp(48, 32, c32, 64, c64), 1e-9 * c32);
  EXPECT_GT(b48, c32);
  EXPECT_LT(b48, c64);
  double prev = 0;
  for (int ctx = 2047; ctx <= 4095; ctx += 256) {
    const double t = Op(ProfileOp::kDecodeAttention, {48, 48, ctx});
    EXPECT_GE(t, prev) << ctx;
    prev = t;
  }
  // Prefill: length 2500 between 2048 and 3072.
  const double p = Op(ProfileOp::kPrefillAttention, {2500, 1, 0});
  EXPECT_NEAR(
      p,
      LogLerp(2500, 2048, 0.08744000395139058e-3, 3072, 0.16745599110921225e-3),
      1e-9 * p);
}

TEST(ImportTest, ExtrapolationIsFlagged) {
  REQUIRE_DATA();
  const H200& d = *Data();
  const OpFit& dec = d.p8b.Fit(ProfileOp::kDecodeAttention);
  EXPECT_FALSE(OpExtrapolates(
      dec, FeaturesOf(ProfileOp::kDecodeAttention, {64, 64, 4095}, d.m8b, 1)));
  EXPECT_TRUE(OpExtrapolates(dec, FeaturesOf(ProfileOp::kDecodeAttention,
                                             {4096, 4096, 100}, d.m8b, 1)));
  // The 8B LM head (n = 128256) lies beyond the largest measured n.
  EXPECT_NE(d.p8b.Fit(ProfileOp::kGemmLmHead).note.find("EXTRAPOLATED"),
            std::string::npos);
  EXPECT_EQ(d.p8b.Fit(ProfileOp::kGemmQkv).note.find("EXTRAPOLATED"),
            std::string::npos);
  EXPECT_FALSE(d.p8b.Fit(ProfileOp::kElementwise).measured);
}

// Beyond the measured n, the LM head (n = 128256 at tp 1) keeps the
// residual of the widest measured GEMM (n = 65536) and grows as the
// roofline does.
TEST(ImportTest, ExtrapolationHoldsTheEdgeResidual) {
  REQUIRE_DATA();
  const H200& d = *Data();
  for (double m : {1.0, 32.0, 4096.0}) {
    const double edge = d.tables.gemm.rows.at({m, 65536, 4096});
    const double want =
        edge * GemmBase(m, 128256, 4096) / GemmBase(m, 65536, 4096);
    EXPECT_NEAR(
        Op(d, ProfileOp::kGemmLmHead, {static_cast<int64_t>(m), 0, 0}), want,
        1e-9 * want)
        << m;
  }
}

// The held-out evaluation builds its base from the training rows alone
// (the all-reduce's is fitted to them), so no held-out row informs the
// prediction of any held-out row.
TEST(ImportTest, HeldOutBaseSeesOnlyTrainingRows) {
  REQUIRE_DATA();
  const H200& d = *Data();
  const MeasuredTable& ar = d.tables.allreduce.at(4);
  MeasuredTable train, held;
  SplitTable(ar, 5, 0.2, &train, &held);
  ASSERT_GE(held.rows.size(), 4u);
  std::set<std::vector<double>> seen;
  const KindError e = HeldoutError(ar, {0}, 5, 0.2, [&](const MeasuredTable& t) {
    for (const auto& [key, sec] : t.rows) seen.insert(key);
    return AllReduceBaseOf(t, d.gpu, 4);
  });
  EXPECT_EQ(seen.size(), train.rows.size());
  for (const auto& [key, sec] : held.rows) EXPECT_EQ(seen.count(key), 0u);
  // Doubling a held-out time (one inside the grid) changes that row's
  // error only: its prediction, the base and the other predictions stay.
  const double first = ar.rows.begin()->first[0];
  const double last = ar.rows.rbegin()->first[0];
  std::vector<double> key;
  for (const auto& [k, sec] : held.rows) {
    if (k[0] > first && k[0] < last) {
      key = k;
      break;
    }
  }
  ASSERT_FALSE(key.empty());
  bool out = true;
  const double pred =
      *InterpolateTable(train, key, {0}, &out, AllReduceBaseOf(train, d.gpu, 4));
  ASSERT_FALSE(out);
  const double s = ar.rows.at(key);
  MeasuredTable doubled = ar;
  doubled.rows.at(key) *= 2;
  auto base = [&](const MeasuredTable& t) { return AllReduceBaseOf(t, d.gpu, 4); };
  const KindError e2 = HeldoutError(doubled, {0}, 5, 0.2, base);
  EXPECT_EQ(HeldoutError(ar, {0}, 5, 0.2, base).mape_pct, e.mape_pct);
  ASSERT_EQ(e2.heldout, e.heldout);
  const double delta =
      100 * (std::fabs(pred - 2 * s) / (2 * s) - std::fabs(pred - s) / s);
  EXPECT_NEAR((e2.mape_pct - e.mape_pct) * e.heldout, delta, 1e-9);
  EXPECT_GT(std::fabs(delta), 1);
  // The GEMM and attention bases are the roofline kernels preset, fitted by
  // fit-roofline on its own split of the same tables: the same seed and
  // fraction as the import's, so the same 80% (residual_base.h).
  EXPECT_EQ(RooflineFitOptions{}.seed, ImportOptions{}.seed);
  EXPECT_EQ(RooflineFitOptions{}.heldout_fraction,
            ImportOptions{}.heldout_fraction);
}

// What the bases are for: on H200's held-out rows the residual lookup errs
// less than the plain one (README: 6.6% -> 4.6% decode, 7.7% -> 4.1%
// prefill).
TEST(ImportTest, ResidualBaseLowersHeldOutError) {
  REQUIRE_DATA();
  const H200& d = *Data();
  auto fixed = [](const TableBase& b) {
    return [b](const MeasuredTable&) { return b; };
  };
  const KindError dec = HeldoutError(d.tables.decode, {2, 3}, 1, 0.2,
                                     fixed(DecodeBaseOf(d.tables, d.gpu)));
  const KindError dec0 = HeldoutError(d.tables.decode, {2, 3}, 1, 0.2);
  const KindError pre = HeldoutError(d.tables.prefill, {2, 3}, 1, 0.2,
                                     fixed(PrefillBaseOf(d.tables, d.gpu)));
  const KindError pre0 = HeldoutError(d.tables.prefill, {2, 3}, 1, 0.2);
  EXPECT_EQ(dec.heldout, dec0.heldout);
  EXPECT_LT(dec.mape_pct, 5.0);
  EXPECT_GT(dec0.mape_pct, 6.0);
  EXPECT_LT(pre.mape_pct, 5.0);
  EXPECT_GT(pre0.mape_pct, 7.0);
}

// A profile's bases survive writing and reading: the read profile prices
// every point as the imported one did.
TEST(ImportTest, BasesRoundTripThroughTheProfileFile) {
  REQUIRE_DATA();
  const H200& d = *Data();
  CalibrationProfile p = ImportProfile(d.tables, d.m8b, d.gpu, 2, {});
  p.device.name = "NVIDIA H200";  // ImportAll sets these two
  p.date = "2026-08-21";
  const std::string path =
      (std::filesystem::temp_directory_path() / "import_base_rt.json").string();
  ASSERT_TRUE(WriteProfile(path, p).ok());
  const CalibrationProfile back = LoadCalibrationProfile(path);
  // vLLM's own all-reduce (custom, symmetric memory's limit raising it)
  // below 64 MiB at 2 H200s, NCCL above.
  ASSERT_EQ(back.allreduce.base.pieces.size(), 2u);
  EXPECT_EQ(back.allreduce.base.pieces[1].from, 64.0 * 1024 * 1024);
  EXPECT_NE(back.allreduce_source.find("below 64 MiB"), std::string::npos)
      << back.allreduce_source;
  for (double bytes : {3000.0, 5e6, 1e8}) {
    EXPECT_EQ(EvalGrid(back.allreduce, 1, bytes), EvalGrid(p.allreduce, 1, bytes));
  }
  for (ProfileOp op : {ProfileOp::kGemmGateUp, ProfileOp::kDecodeAttention,
                       ProfileOp::kPrefillAttention}) {
    for (int64_t x : {3, 300, 3000}) {
      const OpFeatures f = FeaturesOf(op, {x, x, x}, d.m8b, 2);
      EXPECT_EQ(PredictOp(back.Fit(op), f), PredictOp(p.Fit(op), f))
          << ProfileOpName(op) << " " << x;
    }
  }
  std::filesystem::remove(path);
}

TEST(ImportTest, HeldOutSplitIsSeededAndDisjoint) {
  REQUIRE_DATA();
  MeasuredTable train, held, train2, held2;
  SplitTable(Data()->tables.decode, 7, 0.2, &train, &held);
  SplitTable(Data()->tables.decode, 7, 0.2, &train2, &held2);
  EXPECT_EQ(held.rows, held2.rows);
  EXPECT_EQ(train.rows.size() + held.rows.size(),
            Data()->tables.decode.rows.size());
  EXPECT_EQ(held.rows.size(),
            static_cast<size_t>(0.2 * Data()->tables.decode.rows.size()));
  for (const auto& [key, s] : held.rows) EXPECT_EQ(train.rows.count(key), 0u);
}

// Every shipped imported profile runs the default scenario with its model,
// GPU, tp and dtypes (what `servesim run --set cost_model.type=calibrated --set
// cost_model.profile=...` does). The SGLang profiles (one per dense model,
// over a hundred) are all parsed with their scenario, which checks the
// memory plan, but simulated once per GPU and dtype: their format and
// lookups are the vLLM ones'.
TEST(ImportTest, EveryShippedProfileRunsTheDefaultScenario) {
  int n = 0;
  std::set<std::string> simulated;  // SGLang: gpu/dtype
  std::vector<std::filesystem::path> paths;
  for (const auto& e :
       std::filesystem::directory_iterator(RepoRoot() + "/models/profiles")) {
    paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());  // the same SGLang one every run
  for (const std::filesystem::path& e : paths) {
    if (e.extension() != ".json") continue;
    const std::string path = e.string();
    const CalibrationProfile p = LoadCalibrationProfile(path);
    StatusOr<Scenario> sc = ParseScenario(
        EmbeddedDefaultScenario(), "default",
        {"model=" + p.model, "hardware.gpu=" + p.gpu,
         "hardware.tp=" + std::to_string(p.tp), "cost_model.type=calibrated",
         "cost_model.profile=" + path, "model.weight_dtype=" + p.dtype,
         "engine.kv_cache_dtype=" + p.kv_cache_dtype});
    ASSERT_TRUE(sc.ok()) << path << ": " << sc.status().message();
    ++n;
    if (p.import_info.value("engine_name", "") == "sglang" &&
        !simulated.insert(p.gpu + "/" + p.dtype).second) {
      continue;
    }
    const SimulationOutput out = RunSimulation(sc->ToSimulationInput());
    EXPECT_GT(out.total_cost.Total(), 0) << path;
    EXPECT_GT(out.end_time, 0) << path;
  }
  EXPECT_GE(n, 1);
  EXPECT_EQ(simulated.size(), 6u);  // SGLang: 3 GPUs x bf16, fp8
}

#define REQUIRE_MORE_GPUS()                                       \
  if (!std::filesystem::exists(MoreGpusDir() + "/manifest.json")) \
  GTEST_SKIP() << "no tables at " << MoreGpusDir()

// Without --data each GPU's folder is the one whose manifest lists it.
TEST(ImportMoreGpusTest, EachGpuFindsItsFolder) {
  REQUIRE_DATA();
  REQUIRE_MORE_GPUS();
  EXPECT_EQ(FindDataDir(DataRoot(), "h200"), DataDir());
  EXPECT_EQ(FindDataDir(DataRoot(), "rtx-pro-6000"), MoreGpusDir());
  EXPECT_EQ(FindDataDir(DataRoot(), "a100-80gb"), MoreGpusDir());
  EXPECT_EQ(DataGpuDir("l40s"), "l40s");
  EXPECT_THROW(DataGpuDir("rtx-4090"), std::runtime_error);
}

// An RTX PRO 6000 profile from the second folder, with that folder, its
// vLLM and NCCL versions and its device string in the profile; a model
// whose per-GPU heads the attention tables lack is skipped, saying so.
TEST(ImportMoreGpusTest, RtxPro6000ProfileNamesItsSource) {
  REQUIRE_MORE_GPUS();
  ImportOptions o;
  o.data_root = DataRoot();
  o.out_dir = (std::filesystem::temp_directory_path() / "import_rtx").string();
  o.gpus = {"rtx-pro-6000"};
  o.models = {"llama-3.1-8b", "qwen2.5-7b"};
  o.tps = {2};
  o.date = "2026-12-06";
  const ImportResult r = ImportAll(o);
  ASSERT_EQ(r.written.size(), 1u);
  EXPECT_EQ(r.skipped, std::vector<std::string>{
                           "qwen2.5-7b tp=2 on rtx-pro-6000: no decode "
                           "attention rows at 14 heads / 2 KV heads per GPU "
                           "(generation_attention.csv)"});
  const CalibrationProfile p = LoadCalibrationProfile(r.written[0]);
  EXPECT_EQ(p.device.name, "NVIDIA RTX PRO 6000 Blackwell Server Edition");
  EXPECT_EQ(p.import_info.value("engine", ""),
            "vLLM 0.24.0 kernels; NCCL 2.29.2 collectives");
  EXPECT_EQ(p.import_info.value("imported_from", ""),
            "../shared/calibration-data/aiconfigurator-vllm-more-gpus");
  EXPECT_NE(p.import_info.value("source", "").find("rtx_pro_6000_server/"),
            std::string::npos);
  EXPECT_NE(p.allreduce_source.find("NCCL 2.29.2"), std::string::npos);
  std::filesystem::remove_all(o.out_dir);
}

// --engine-version 0.19.0: RTX PRO 6000's older tables (the measured
// serving runs' vLLM), named so; its folder has no NCCL table, so the
// collectives above the custom all-reduce's limit are the main folder's.
// Its GEMMs are slower than 0.24.0's at prefill sizes (the data's own
// rows), so the profile prices a 2048-token GEMM above the newest one.
TEST(ImportMoreGpusTest, EngineVersionTablesAndTheirNccl) {
  REQUIRE_MORE_GPUS();
  ImportOptions o;
  o.data_root = DataRoot();
  o.out_dir = (std::filesystem::temp_directory_path() / "import_v019").string();
  o.gpus = {"rtx-pro-6000"};
  o.models = {"llama-3.1-8b"};
  o.tps = {2};
  o.date = "2026-12-06";
  o.engine_version = "0.19.0";
  const ImportResult r = ImportAll(o);
  ASSERT_EQ(r.written.size(), 1u);
  EXPECT_EQ(std::filesystem::path(r.written[0]).filename(),
            "rtx-pro-6000-llama-3.1-8b-tp2-vllm-0.19.0.json");
  const CalibrationProfile old_p = LoadCalibrationProfile(r.written[0]);
  EXPECT_EQ(old_p.import_info.value("engine", ""),
            "vLLM 0.19.0 kernels; NCCL 2.29.2 collectives");
  EXPECT_TRUE(old_p.import_info["tables"].contains("nccl"));
  // Above 8 MiB the all-reduce grid has NCCL's rows.
  ASSERT_FALSE(old_p.allreduce.lines.empty());
  EXPECT_GE(old_p.allreduce.lines[0].x.back(), 64.0 * (1 << 20));
  o.engine_version = "";
  const ImportResult r24 = ImportAll(o);
  const CalibrationProfile new_p = LoadCalibrationProfile(r24.written[0]);
  const double tokens = 2048;
  EXPECT_GT(EvalGrid(old_p.Fit(ProfileOp::kGemmQkv).grid, 1, tokens),
            1.1 * EvalGrid(new_p.Fit(ProfileOp::kGemmQkv).grid, 1, tokens));
  o.fp8 = true;
  o.engine_version = "0.19.0";
  EXPECT_THROW(ImportAll(o), std::runtime_error);
  std::filesystem::remove_all(o.out_dir);
}

// A100's tables lack gemm_dtype, head_dim, kv_cache_dtype and window_size:
// the manifest's constant columns (and full attention) stand in, and a
// shape measured twice keeps the mean of its two rows.
TEST(ImportMoreGpusTest, A100ConstantColumnsFallBackToTheManifest) {
  REQUIRE_MORE_GPUS();
  const GpuSpec gpu = LoadGpuSpec("a100-80gb");
  const std::string dir = MoreGpusDir() + "/a100_sxm";
  EXPECT_EQ(LoadGemmTable(dir, gpu).rows.size(), 9240u);
  EXPECT_TRUE(LoadGemmTable(dir, gpu, "fp8").rows.empty());
  EXPECT_EQ(LoadDecodeTable(dir, gpu, TableFilter{}).rows.size(), 5431u);
  const MeasuredTable pre = LoadPrefillTable(dir, gpu, TableFilter{});
  // context_attention.csv: batch 1, isl 16384, 8 heads / 8 KV heads twice.
  EXPECT_DOUBLE_EQ(pre.rows.at({8, 8, 1, 16384}),
                   (3.2833919525146484 + 3.3152106602986655) / 2 * 1e-3);
  const GpuTables t = LoadGpuTables(MoreGpusDir(), gpu);
  EXPECT_EQ(t.device, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(t.nccl_version, "2.27.3");
}

// --fp8 skips the A100 (bf16 GEMMs only) with its reason; with nothing
// else asked for, nothing is written and the import says why.
TEST(ImportMoreGpusTest, A100Fp8IsSkippedWithItsReason) {
  REQUIRE_MORE_GPUS();
  ImportOptions o;
  o.data_root = DataRoot();
  o.out_dir = (std::filesystem::temp_directory_path() / "import_a100").string();
  o.gpus = {"a100-80gb"};
  o.models = {"llama-3.1-8b"};
  o.tps = {1};
  o.fp8 = true;
  try {
    ImportAll(o);
    ADD_FAILURE() << "expected no profile written";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "a100-80gb (every model): no fp8 rows: every gemm.csv row "
                  "is gemm_dtype bfloat16"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(o.out_dir);
}

// A column neither in the CSV nor among the manifest's constant columns is
// a one-line error naming the file and the column.
TEST(ImportMoreGpusTest, MissingColumnNamesFileAndColumn) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "import_missing_col";
  fs::remove_all(root);
  fs::create_directories(root / "x_gpu");
  const std::string gemm = (root / "x_gpu" / "gemm.csv").string();
  std::ofstream(gemm) << "m,n,k,latency\n1,4096,4096,0.05\n";
  const GpuSpec gpu = LoadGpuSpec("h200");
  try {
    LoadGemmTable((root / "x_gpu").string(), gpu);
    ADD_FAILURE() << "expected a missing-column error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              gemm +
                  ":1: no column \"gemm_dtype\" in the header nor in "
                  "manifest.json's constant_columns for this table");
  }
  // The same file with gemm_dtype constant in the folder's manifest reads.
  std::ofstream((root / "manifest.json").string())
      << R"([{"gpu": "x_gpu", "table": "gemm",)"
      << R"( "constant_columns": {"gemm_dtype": "bfloat16"}}])";
  EXPECT_EQ(LoadGemmTable((root / "x_gpu").string(), gpu).rows.size(), 1u);
  fs::remove_all(root);
}

}  // namespace
}  // namespace servesim::calibrate
