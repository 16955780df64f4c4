// Residual bases for imported profiles (see residual_base.h).
#include "calibrate/residual_base.h"

#include <string>

#include "calibrate/roofline_fit.h"

namespace servesim::calibrate {
namespace {

GridBasePiece RatesPiece(const KernelRates& r, const GpuSpec& gpu) {
  GridBasePiece p;
  p.floor_s = r.floor_s;
  p.s_per_flop = 1 / (gpu.GemmPeakFlops(r.fp8_compute) * r.compute_efficiency);
  p.s_per_byte = 1 / (gpu.hbm_bytes_per_s * r.memory_efficiency);
  p.s_per_item = r.per_item_s;
  p.crossover_p = r.crossover_p;
  return p;
}

}  // namespace

GridBasePiece GemmPiece(const KernelRates& r, const GpuSpec& gpu, double n,
                        double k, double in_bytes) {
  GridBasePiece p = RatesPiece(r, gpu);
  p.flops = {0, 2 * n * k, 0};
  p.bytes = {in_bytes * k * n, in_bytes * k + 2 * n, 0};
  p.items = {0, in_bytes == 1 ? k : 0, 0};
  return p;
}

GridBasePiece DecodePiece(const KernelRates& r, const GpuSpec& gpu,
                          double heads, double kv_heads, double head_dim,
                          double kv_bytes) {
  // AddDecodeAttention per sequence: 4 q d (c + 1) FLOPs; K and V of c + 1
  // keys plus q in and out; one item per KV head.
  const double q = heads, kv = kv_heads, d = head_dim, b = kv_bytes;
  GridBasePiece p = RatesPiece(r, gpu);
  p.flops = {4 * q * d, 4 * q * d, 0};
  p.bytes = {b * (2 * kv * d + 2 * q * d), b * 2 * kv * d, 0};
  p.items = {kv, 0, 0};
  return p;
}

GridBasePiece PrefillPiece(const KernelRates& r, const GpuSpec& gpu,
                           double heads, double kv_heads, double head_dim,
                           double kv_bytes) {
  // AddPrefillAttention at c = 0: 4 q d n (n + 1) / 2 FLOPs, K and V of n
  // keys plus q in and out, n q items.
  const double q = heads, kv = kv_heads, d = head_dim, b = kv_bytes;
  GridBasePiece p = RatesPiece(r, gpu);
  p.flops = {0, 2 * q * d, 2 * q * d};
  p.bytes = {0, b * (2 * kv * d + 2 * q * d), 0};
  p.items = {0, q, 0};
  return p;
}

TableBase GemmTableBase(const KernelRates& r, const GpuSpec& gpu,
                        double in_bytes) {
  return [r, gpu, in_bytes](const std::vector<double>& key) {
    return PieceSeconds(GemmPiece(r, gpu, key[1], key[2], in_bytes), 1,
                        key[0]);
  };
}

TableBase DecodeTableBase(const KernelRates& r, const GpuSpec& gpu,
                          double head_dim, double kv_bytes) {
  return [r, gpu, head_dim, kv_bytes](const std::vector<double>& key) {
    return PieceSeconds(DecodePiece(r, gpu, key[0], key[1], head_dim, kv_bytes),
                        key[2], key[3]);
  };
}

TableBase PrefillTableBase(const KernelRates& r, const GpuSpec& gpu,
                           double head_dim, double kv_bytes) {
  return [r, gpu, head_dim, kv_bytes](const std::vector<double>& key) {
    return PieceSeconds(PrefillPiece(r, gpu, key[0], key[1], head_dim, kv_bytes),
                        key[2], key[3]);
  };
}

GridBase FitAllReduceBase(const MeasuredTable& t, const GpuSpec& gpu,
                          int gpus, double max_bytes) {
  // KernelTime with no FLOPs is floor + bytes / (HBM x memory efficiency):
  // the link stands in for HBM.
  GpuSpec link = gpu;
  link.hbm_bytes_per_s = AllReduceLinkBytesPerS(gpu, gpus);
  const double bus = 2.0 * (gpus - 1) / gpus;
  auto fit = [&](double from, double to, GridBasePiece* out) {
    std::vector<KernelSample> s;
    for (const auto& [key, sec] : t.rows) {
      if (key[0] < from || key[0] >= to) continue;
      KernelSample k;
      k.bytes = bus * key[0];
      k.seconds = sec;
      k.train = true;
      s.push_back(k);
    }
    if (s.size() < 2) return false;
    FreeParams free;
    free.compute = free.p = false;
    const KernelRates r =
        FitKernelRates(s, {link}, {5e-6, 1, 0.6, 0, 0}, free);
    out->from = from;
    out->floor_s = r.floor_s;
    out->s_per_byte = 1 / (link.hbm_bytes_per_s * r.memory_efficiency);
    out->bytes = {0, bus, 0};
    return true;
  };
  GridBase b;
  GridBasePiece custom, nccl;
  if (fit(0, max_bytes, &custom) && fit(max_bytes, 1e300, &nccl)) {
    b.pieces = {custom, nccl};
  } else if (GridBasePiece all; fit(0, 1e300, &all)) {
    b.pieces = {all};
  }
  b.source =
      "latency + 2(g-1)/g bytes / (link x efficiency) per backend, fitted "
      "(mean squared log error) to this import's all-reduce rows at " +
      std::to_string(gpus) + " GPUs";
  return b;
}

}  // namespace servesim::calibrate
