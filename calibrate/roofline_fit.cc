// Offline fit of the roofline's kernel constants (see roofline_fit.h).
#include "calibrate/roofline_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "calibrate/import.h"
#include "calibrate/measured_tables.h"
#include "sim/core/paths.h"
#include "sim/model/model_loader.h"

namespace servesim::calibrate {
namespace {

using Samples = std::vector<KernelSample>;

double Logistic(double x) { return 1 / (1 + std::exp(-x)); }
double Logit(double p) { return std::log(p / (1 - p)); }

// Minimises f over R^n by Nelder-Mead from x0 with initial step `step`.
std::vector<double> NelderMead(
    const std::function<double(const std::vector<double>&)>& f,
    std::vector<double> x0, double step, int iterations) {
  const size_t n = x0.size();
  std::vector<std::vector<double>> v(n + 1, x0);
  std::vector<double> fv(n + 1);
  for (size_t i = 0; i < n; ++i) v[i + 1][i] += step;
  for (size_t i = 0; i <= n; ++i) fv[i] = f(v[i]);
  for (int it = 0; it < iterations; ++it) {
    std::vector<size_t> idx(n + 1);
    for (size_t i = 0; i <= n; ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(),
              [&](size_t a, size_t b) { return fv[a] < fv[b]; });
    const size_t best = idx[0], worst = idx[n], second = idx[n - 1];
    std::vector<double> c(n, 0);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) c[j] += v[idx[i]][j] / n;
    }
    auto along = [&](double t) {
      std::vector<double> x(n);
      for (size_t j = 0; j < n; ++j) x[j] = c[j] + t * (v[worst][j] - c[j]);
      return x;
    };
    const std::vector<double> r = along(-1);
    const double fr = f(r);
    if (fr < fv[best]) {
      const std::vector<double> e = along(-2);
      const double fe = f(e);
      if (fe < fr) {
        v[worst] = e, fv[worst] = fe;
      } else {
        v[worst] = r, fv[worst] = fr;
      }
    } else if (fr < fv[second]) {
      v[worst] = r, fv[worst] = fr;
    } else {
      const std::vector<double> k = along(fr < fv[worst] ? -0.5 : 0.5);
      const double fk = f(k);
      if (fk < std::min(fr, fv[worst])) {
        v[worst] = k, fv[worst] = fk;
      } else {  // shrink toward the best
        for (size_t i = 0; i <= n; ++i) {
          if (i == best) continue;
          for (size_t j = 0; j < n; ++j) {
            v[i][j] = v[best][j] + 0.5 * (v[i][j] - v[best][j]);
          }
          fv[i] = f(v[i]);
        }
      }
    }
  }
  size_t best = 0;
  for (size_t i = 1; i <= n; ++i) {
    if (fv[i] < fv[best]) best = i;
  }
  return v[best];
}

std::vector<double> Encode(const KernelRates& r, const FreeParams& f) {
  std::vector<double> x;
  if (f.floor) x.push_back(std::log(r.floor_s));
  if (f.compute) x.push_back(Logit(r.compute_efficiency));
  if (f.memory) x.push_back(Logit(r.memory_efficiency));
  if (f.p) x.push_back(std::log(r.crossover_p - 1));
  if (f.item) x.push_back(std::log(r.per_item_s));
  return x;
}

KernelRates Decode(const std::vector<double>& x, KernelRates r,
                   const FreeParams& f) {
  size_t i = 0;
  if (f.floor) r.floor_s = std::exp(x[i++]);
  if (f.compute) r.compute_efficiency = Logistic(x[i++]);
  if (f.memory) r.memory_efficiency = Logistic(x[i++]);
  if (f.p) r.crossover_p = 1 + std::exp(x[i++]);  // p >= 1: a norm
  if (f.item) r.per_item_s = std::exp(x[i++]);
  return r;
}

struct Gpus {
  std::vector<std::string> names;
  std::vector<GpuSpec> specs;
};

double Predict(const KernelRates& r, const Gpus& g, const KernelSample& s) {
  return KernelTime(r, g.specs[s.gpu_index], s.flops, s.bytes, s.items);
}

double Loss(const std::function<double(const KernelSample&)>& pred,
            const Samples& samples, bool train) {
  double sum = 0;
  int n = 0;
  for (const KernelSample& s : samples) {
    if (s.train != train) continue;
    const double e = std::log(pred(s) / s.seconds);
    sum += e * e;
    ++n;
  }
  return n > 0 ? sum / n : 0;
}

KernelRates FitRates(const Samples& samples, const Gpus& g, KernelRates start,
                     const FreeParams& free) {
  auto loss = [&](const std::vector<double>& x) {
    const KernelRates r = Decode(x, start, free);
    return Loss([&](const KernelSample& s) { return Predict(r, g, s); },
                samples, true);
  };
  std::vector<double> x = Encode(start, free);
  // Restarts from the best point shake Nelder-Mead out of a collapsed
  // simplex.
  for (int round = 0; round < 4; ++round) x = NelderMead(loss, x, 0.5, 600);
  return Decode(x, start, free);
}

// Splits one table's rows and appends them as samples of GPU `gi`.
void AddTable(
    const MeasuredTable& t, int gi, bool train_gpu, const RooflineFitOptions& o,
    const std::function<bool(const std::vector<double>&, KernelSample*)>& price,
    Samples* out) {
  MeasuredTable train, held;
  SplitTable(t, o.seed, o.heldout_fraction, &train, &held);
  for (const auto* part : {&train, &held}) {
    for (const auto& [coord, seconds] : part->rows) {
      KernelSample s;
      if (!price(coord, &s)) continue;
      s.seconds = seconds;
      s.gpu_index = gi;
      s.train = train_gpu && part == &train;
      out->push_back(s);
    }
  }
}

void Evaluate(const std::string& kind, const Samples& samples, const Gpus& g,
              const std::vector<bool>& train_gpu,
              const std::function<double(const KernelSample&)>& before,
              const std::function<double(const KernelSample&)>& after,
              std::vector<RooflineKindError>* out) {
  for (size_t gi = 0; gi < g.names.size(); ++gi) {
    RooflineKindError e{
        kind, g.names[gi],
        train_gpu[gi] ? "held-out 20%" : "all rows (GPU held out)"};
    for (const KernelSample& s : samples) {
      if (s.gpu_index != static_cast<int>(gi) || s.train) continue;
      const double b = before(s) / s.seconds - 1;
      const double a = after(s) / s.seconds - 1;
      e.before_mape += std::abs(b);
      e.before_bias += b;
      e.after_mape += std::abs(a);
      e.after_bias += a;
      ++e.rows;
    }
    if (e.rows == 0) continue;
    for (double* v :
         {&e.before_mape, &e.before_bias, &e.after_mape, &e.after_bias}) {
      *v *= 100.0 / e.rows;
    }
    out->push_back(e);
  }
}

}  // namespace

KernelRates FitKernelRates(const std::vector<KernelSample>& samples,
                           const std::vector<GpuSpec>& gpus,
                           const KernelRates& start, const FreeParams& free) {
  Gpus g;
  g.specs = gpus;
  g.names.resize(gpus.size());
  return FitRates(samples, g, start, free);
}

RooflineFit FitRoofline(const RooflineFitOptions& o) {
  Gpus g;
  std::vector<bool> train_gpu;
  for (const auto& n : o.train_gpus)
    g.names.push_back(n), train_gpu.push_back(true);
  for (const auto& n : o.heldout_gpus)
    g.names.push_back(n), train_gpu.push_back(false);
  for (const auto& n : g.names) g.specs.push_back(LoadGpuSpec(n));
  Samples gemm, dec, pre, ar, gemm8, dec8, pre8, moe, moe4;
  const TableFilter filter;
  TableFilter fp8_kv;
  fp8_kv.kv_cache_dtype = "fp8";
  for (size_t gi = 0; gi < g.names.size(); ++gi) {
    const std::string folder =
        o.data_dir.empty() ? FindDataDir(o.data_root, g.names[gi]) : o.data_dir;
    const std::string dir = folder + "/" + DataGpuDir(g.names[gi]);
    const GpuSpec& spec = g.specs[gi];
    // GEMMs with the widths and depths a model's shards have (k, n >= 512):
    // the tables also time 32-wide matrices no transformer layer has.
    // Weights and inputs in `in` bytes, outputs bf16.
    const auto gemm_price = [](double in) {
      return [in](const std::vector<double>& c, KernelSample* s) {
        const double m = c[0], n = c[1], k = c[2];
        if (n < 512 || k < 512) return false;
        s->flops = 2 * m * n * k;
        s->bytes = in * (k * n + m * k) + 2 * m * n;
        // W8A8: the bf16 input is quantized to fp8 first (a per-element
        // pass the GEMM's bytes do not see).
        if (in == 1) s->items = m * k;
        return true;
      };
    };
    AddTable(LoadGemmTable(dir, spec), gi, train_gpu[gi], o, gemm_price(2),
             &gemm);
    AddTable(LoadGemmTable(dir, spec, "fp8"), gi, train_gpu[gi], o,
             gemm_price(1), &gemm8);
    // Attention rows at the KV cache's bytes per element.
    const auto decode_price = [](double kv_bytes) {
      return [kv_bytes](const std::vector<double>& c, KernelSample* s) {
        AttentionWork w;
        AddDecodeAttention(c[0], c[1], 128, kv_bytes, c[3], &w);
        s->flops = c[2] * w.flops;
        s->bytes = c[2] * w.bytes;
        s->items = c[2] * w.items;
        return true;
      };
    };
    const auto prefill_price = [](double kv_bytes) {
      return [kv_bytes](const std::vector<double>& c, KernelSample* s) {
        AttentionWork w;
        AddPrefillAttention(c[0], c[1], 128, kv_bytes, c[3], 0, &w);
        s->flops = c[2] * w.flops;
        s->bytes = c[2] * w.bytes;
        s->items = c[2] * w.items;
        return true;
      };
    };
    AddTable(LoadDecodeTable(dir, spec, filter), gi, train_gpu[gi], o,
             decode_price(2), &dec);
    AddTable(LoadPrefillTable(dir, spec, filter), gi, train_gpu[gi], o,
             prefill_price(2), &pre);
    AddTable(LoadDecodeTable(dir, spec, fp8_kv), gi, train_gpu[gi], o,
             decode_price(1), &dec8);
    AddTable(LoadPrefillTable(dir, spec, fp8_kv), gi, train_gpu[gi], o,
             prefill_price(1), &pre8);
    // Mixtral-8x7B's experts (the only MoE shape the project models) at
    // every moe_tp, priced as RooflineCostModel prices a fused MoE layer.
    const ModelSpec mixtral = LoadModelSpec("mixtral-8x7b");
    AddTable(
        LoadMoeTable(dir, spec, mixtral), gi, train_gpu[gi], o,
        [&mixtral](const std::vector<double>& c, KernelSample* s) {
          const double tp = c[0], t = c[1], h = mixtral.hidden_size;
          const double i = mixtral.intermediate_size / tp;
          const double routed = t * mixtral.experts_per_token;
          const double active =
              ExpectedActiveExperts(mixtral.num_experts, mixtral.experts_per_token, t);
          if (tp > 8) return false;  // beyond any tp the project runs
          s->flops = 2 * routed * h * 2 * i + 2 * routed * i * h;
          s->bytes = 2 * (active * h * 2 * i + routed * h + routed * 2 * i) +
                     2 * (active * i * h + routed * i + routed * h);
          return true;
        },
        &moe);
    // MXFP4 experts (w4a16: Marlin's MXFP4 kernels) of every expert shape
    // the tables time, priced as RooflineCostModel prices gpt-oss's:
    // 4.25-bit weights of the active experts, bf16 activations, the
    // expert GEMMs' FLOPs at the bf16 rate.
    constexpr double kMxfp4Bytes = 4.25 / 8;
    AddTable(
        LoadMoeDtypeTable(dir, spec, "w4a16_mxfp4", kMxfp4Bytes), gi, train_gpu[gi], o,
        [](const std::vector<double>& c, KernelSample* s) {
          const double h = c[0], k = c[2], e = c[3], tp = c[4], t = c[5];
          const double i = c[1] / tp;
          if (tp > 8) return false;
          const double routed = t * k;
          const double active =
              ExpectedActiveExperts(static_cast<int>(e), static_cast<int>(k), t);
          s->flops = 2 * routed * h * 2 * i + 2 * routed * i * h;
          s->bytes = kMxfp4Bytes * (active * h * 2 * i + active * i * h) +
                     2 * (routed * h + routed * 2 * i + routed * i + routed * h);
          return true;
        },
        &moe4);
    for (int n : {2, 4, 8}) {
      TableFilter f;
      f.num_gpus = n;
      AddTable(
          LoadAllReduceTable(dir, spec, f), gi, train_gpu[gi], o,
          [n](const std::vector<double>& c, KernelSample* s) {
            s->msg_bytes = c[0];
            s->gpus = n;
            return true;
          },
          &ar);
      // NCCL's own rows where symmetric memory's range hides them.
      const double own = CustomAllReduceMaxBytes(spec, f);
      f.symm_mem = false;
      const double custom = CustomAllReduceMaxBytes(spec, f);
      AddTable(
          LoadAllReduceTable(dir, spec, f), gi, train_gpu[gi], o,
          [n, own, custom](const std::vector<double>& c, KernelSample* s) {
            if (c[0] < custom || c[0] >= own) return false;
            s->msg_bytes = c[0];
            s->gpus = n;
            s->nccl_in_symm_range = true;
            return true;
          },
          &ar);
    }
  }
  RooflineFit fit;
  const RooflineParams old = RooflineParams::Datasheet();
  RooflineParams& p = fit.fitted;
  // Start from the datasheet values plus a few-us floor and p = 3.
  p.gemm = FitRates(gemm, g, {4e-6, 0.7, 0.8, 3, 0}, FreeParams{});
  FreeParams attn;
  attn.item = true;
  p.decode_attention = FitRates(dec, g, {10e-6, 0.5, 0.8, 3, 5e-9}, attn);
  // Prefill from an empty cache reads as many bytes per token as it has
  // query rows, so its memory efficiency and a per-row cost cannot be told
  // apart; the rows' cost is what they are (tile prologue/epilogue, per
  // query row x head) and KV reads run at decode attention's measured
  // efficiency, which keeps a chunk after a long cached prefix from paying
  // the per-row cost for every cached key.
  FreeParams prefill = attn;
  prefill.memory = false;
  p.prefill_attention = FitRates(
      pre, g, {10e-6, 0.6, p.decode_attention.memory_efficiency, 3, 1e-9},
      prefill);
  // fp8: the same forms, compute at the fp8 tensor rate (W8A8 GEMMs;
  // FlashAttention-3 on an fp8 cache quantizes q and runs in fp8).
  p.moe = FitRates(moe, g, {20e-6, 0.6, 0.8, 3, 0}, FreeParams{});
  // (Tables without MXFP4 rows keep the fused-MoE rates.)
  p.moe_mxfp4 = moe4.empty() ? p.moe : FitRates(moe4, g, {20e-6, 0.6, 0.8, 3, 0}, FreeParams{});
  KernelRates gemm8_start{4e-6, 0.6, 0.8, 3, 0};
  gemm8_start.fp8_compute = true;
  FreeParams gemm8_free;
  gemm8_free.item = true;
  gemm8_start.per_item_s = 1e-12;
  p.gemm_fp8 = FitRates(gemm8, g, gemm8_start, gemm8_free);
  KernelRates dec8_start{10e-6, 0.5, 0.8, 3, 5e-9};
  dec8_start.fp8_compute = true;
  p.decode_attention_fp8_kv = FitRates(dec8, g, dec8_start, attn);
  KernelRates pre8_start{10e-6, 0.6, p.decode_attention_fp8_kv.memory_efficiency,
                         3, 1e-9};
  pre8_start.fp8_compute = true;
  p.prefill_attention_fp8_kv = FitRates(pre8, g, pre8_start, prefill);
  // All-reduce: the three ranges' (latency, efficiency) at once, in logs
  // (the symmetric-memory range only on GPUs that have it: elsewhere its
  // pair stays at the start).
  auto ar_pred = [&](AllReduceParams a, const KernelSample& s) {
    if (s.nccl_in_symm_range) a.symm_mem = false;
    return AllReduceTime(a, g.specs[s.gpu_index], s.gpus, s.msg_bytes);
  };
  auto ar_decode = [&](const std::vector<double>& x) {
    AllReduceParams a = p.allreduce;
    a.custom_latency_s = std::exp(x[0]);
    a.custom_efficiency = Logistic(x[1]);
    a.nccl_latency_s = std::exp(x[2]);
    a.nccl_efficiency = Logistic(x[3]);
    a.symm_latency_s = std::exp(x[4]);
    a.symm_efficiency = Logistic(x[5]);
    return a;
  };
  std::vector<double> x0 = {std::log(5e-6), Logit(0.6), std::log(10e-6),
                            Logit(0.7), std::log(5e-6), Logit(0.6)};
  for (int round = 0; round < 4; ++round) {
    x0 = NelderMead(
        [&](const std::vector<double>& x) {
          const AllReduceParams a = ar_decode(x);
          return Loss([&](const KernelSample& s) { return ar_pred(a, s); }, ar,
                      true);
        },
        x0, 0.5, 400);
  }
  p.allreduce = ar_decode(x0);
  // Without rows in symmetric memory's range (GPUs vLLM has no limits for)
  // its pair is free in the fit: it takes the custom all-reduce's.
  const bool any_symm = std::any_of(ar.begin(), ar.end(), [&](const KernelSample& s) {
    return !s.nccl_in_symm_range && s.msg_bytes >= p.allreduce.custom_max_bytes &&
           s.msg_bytes < OwnAllReduceMaxBytes(p.allreduce, g.specs[s.gpu_index], s.gpus);
  });
  if (!any_symm) {
    p.allreduce.symm_latency_s = p.allreduce.custom_latency_s;
    p.allreduce.symm_efficiency = p.allreduce.custom_efficiency;
  }
  auto eval = [&](const std::string& kind, const Samples& s,
                  const KernelRates& before, const KernelRates& after) {
    Evaluate(
        kind, s, g, train_gpu,
        [&](const KernelSample& k) { return Predict(before, g, k); },
        [&](const KernelSample& k) { return Predict(after, g, k); },
        &fit.errors);
  };
  eval("gemm", gemm, old.gemm, p.gemm);
  eval("prefill attention", pre, old.prefill_attention, p.prefill_attention);
  eval("decode attention", dec, old.decode_attention, p.decode_attention);
  eval("fused MoE", moe, old.moe, p.moe);
  // Before: MXFP4 experts priced with the bf16 fused-MoE constants.
  eval("fused MoE MXFP4", moe4, RooflineParams::Kernels().moe, p.moe_mxfp4);
  eval("gemm fp8", gemm8, old.gemm_fp8, p.gemm_fp8);
  eval("prefill attn fp8 KV", pre8, old.prefill_attention_fp8_kv,
       p.prefill_attention_fp8_kv);
  eval("decode attn fp8 KV", dec8, old.decode_attention_fp8_kv,
       p.decode_attention_fp8_kv);
  Evaluate(
      "all-reduce", ar, g, train_gpu,
      [&](const KernelSample& k) { return ar_pred(old.allreduce, k); },
      [&](const KernelSample& k) { return ar_pred(p.allreduce, k); },
      &fit.errors);
  auto count = [](const char* what, const Samples& s) {
    int train = 0;
    for (const KernelSample& k : s) train += k.train;
    std::ostringstream os;
    os << what << ": " << s.size() << " rows, " << train << " in the fit";
    return os.str();
  };
  fit.notes = {
      count("gemm (bf16, n and k >= 512)", gemm),
      count("prefill attention (head_dim 128, bf16 KV)", pre),
      count("decode attention (head_dim 128, bf16 KV)", dec),
      count("all-reduce (custom < 8 MiB, symmetric memory to its limit, NCCL above, "
            "and NCCL from 8 MiB; 2/4/8 GPUs)",
            ar),
      count("fused MoE (Mixtral experts, bf16, balanced, tp 1-8)", moe),
      count("fused MoE MXFP4 (w4a16, every expert shape, balanced, tp 1-8)", moe4),
      count("gemm fp8 (W8A8, n and k >= 512)", gemm8),
      count("prefill attention (head_dim 128, fp8 KV)", pre8),
      count("decode attention (head_dim 128, fp8 KV)", dec8)};
  return fit;
}

std::string RooflineFitReport(const RooflineFit& f) {
  std::ostringstream os;
  char buf[320];
  for (const std::string& n : f.notes) os << "  " << n << "\n";
  auto rates = [&](const char* name, const KernelRates& r) {
    std::snprintf(buf, sizeof buf,
                  "  %-18s {%.3g, %.3g, %.3g, %.3g, %.3g}  // floor_s, "
                  "compute eff, memory eff, p, per_item_s\n",
                  name, r.floor_s, r.compute_efficiency, r.memory_efficiency,
                  r.crossover_p, r.per_item_s);
    os << buf;
  };
  os << "fitted constants (KernelRates):\n";
  rates("gemm", f.fitted.gemm);
  rates("prefill_attention", f.fitted.prefill_attention);
  rates("decode_attention", f.fitted.decode_attention);
  rates("moe", f.fitted.moe);
  rates("moe_mxfp4", f.fitted.moe_mxfp4);
  rates("gemm_fp8", f.fitted.gemm_fp8);
  rates("prefill_attn_fp8kv", f.fitted.prefill_attention_fp8_kv);
  rates("decode_attn_fp8kv", f.fitted.decode_attention_fp8_kv);
  const AllReduceParams& a = f.fitted.allreduce;
  std::snprintf(buf, sizeof buf,
                "  %-18s {%.3g, %.3g, 8 MiB, %.3g, %.3g, %.3g, %.3g}  // custom "
                "latency, eff, max bytes, nccl latency, eff, symm latency, eff\n",
                "allreduce", a.custom_latency_s, a.custom_efficiency,
                a.nccl_latency_s, a.nccl_efficiency, a.symm_latency_s, a.symm_efficiency);
  os << buf;
  os << "error per op kind (MAPE, mean signed error; datasheet preset = the "
        "roofline before):\n";
  std::snprintf(buf, sizeof buf, "  %-18s %-9s %-24s %6s %18s %18s\n", "kind",
                "gpu", "rows", "n", "before MAPE (bias)", "after MAPE (bias)");
  os << buf;
  for (const RooflineKindError& e : f.errors) {
    std::snprintf(
        buf, sizeof buf,
        "  %-18s %-9s %-24s %6d %9.1f%% (%+.0f%%) %9.1f%% (%+.0f%%)\n",
        e.kind.c_str(), e.gpu.c_str(), e.split.c_str(), e.rows, e.before_mape,
        e.before_bias, e.after_mape, e.after_bias);
    os << buf;
  }
  return os.str();
}

}  // namespace servesim::calibrate
