// Importing public kernel measurements into profiles (see import.h).
#include "calibrate/import.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "calibrate/data_manifest.h"
#include "calibrate/profile.h"
#include "calibrate/residual_base.h"
#include "sim/core/paths.h"
#include "sim/cost/roofline_cost_model.h"
#include "sim/model/model_loader.h"

namespace servesim::calibrate {
namespace {

// A small text file of the data set (README.md, manifest.json); errors say
// why ("No such file or directory", "is a directory").
std::string ReadAll(const std::string& path, const std::string& what) {
  return ReadInputFile(path, what, uintmax_t{16} << 20);
}

constexpr int kTableHeadDim = 128;  // TableFilter's default

// A table with no usable rows would make a profile `servesim run` rejects.
void RequireRows(const MeasuredTable& t, const std::string& file,
                 const std::string& what) {
  if (!t.rows.empty()) return;
  throw std::runtime_error(
      file + ": no " + what + " rows" +
      (t.dropped_physical > 0 ? " (" + std::to_string(t.dropped_physical) +
                                    " dropped as faster than the GPU's peaks)"
                              : std::string()) +
      "; expected measured rows for the import");
}

const KindError* FindError(const std::vector<KindError>& es,
                           const std::string& gpu, const std::string& kind) {
  for (const KindError& e : es) {
    if (e.gpu == gpu && e.kind == kind) return &e;
  }
  return nullptr;
}

void SetError(OpFit* f, const KindError* e) {
  if (e == nullptr) return;
  f->heldout_mape_pct = e->mape_pct;
  f->candidate_mape_pct["grid"] = e->mape_pct;
  f->heldout_points = e->heldout;
}

// Lines over the last axis of `t` for each value of axis 2 (batch), at the
// given heads and kv heads.
GridTable AttentionGrid(const MeasuredTable& t, double heads, double kv) {
  GridTable g;
  for (const auto& [key, sec] : t.rows) {
    if (key[0] != heads || key[1] != kv) continue;
    if (g.lines.empty() || g.lines.back().at != key[2]) {
      g.lines.push_back(GridLine{key[2], {}, {}});
    }
    g.lines.back().x.push_back(key[3]);
    g.lines.back().t_s.push_back(sec);
  }
  return g;
}

OpFit GridFit(ProfileOp op, GridTable g, std::string note) {
  OpFit f;
  f.op = op;
  f.form = FitForm::kGrid;
  for (const GridLine& l : g.lines)
    f.fit_points += static_cast<int>(l.x.size());
  f.grid = std::move(g);
  f.note = std::move(note);
  return f;
}

}  // namespace

KindError HeldoutError(const MeasuredTable& t, const std::vector<int>& vary,
                       uint64_t seed, double fraction,
                       const BaseFromTraining& base_of) {
  MeasuredTable train, held;
  SplitTable(t, seed, fraction, &train, &held);
  const TableBase base = base_of ? base_of(train) : TableBase();
  KindError e;
  e.rows = static_cast<int>(t.rows.size());
  e.dropped = t.dropped_physical;
  std::vector<double> inside;
  double out_sum = 0;
  for (int axis : vary) {
    std::vector<int> order;
    for (int a = 0; a < static_cast<int>(t.axes.size()); ++a) {
      if (a != axis) order.push_back(a);
    }
    order.push_back(axis);
    for (const auto& [key, sec] : held.rows) {
      bool extrapolated = false;
      const std::optional<double> p =
          InterpolateTable(train, key, order, &extrapolated, base);
      if (!p) continue;
      const double ape = 100 * std::fabs(*p - sec) / sec;
      if (extrapolated) {
        ++e.extrapolated;
        out_sum += ape;
      } else {
        inside.push_back(ape);
      }
    }
  }
  e.heldout = static_cast<int>(inside.size());
  double sum = 0;
  for (double a : inside) sum += a;
  e.mape_pct = inside.empty() ? 0 : sum / inside.size();
  for (double a : inside) e.max_ape_pct = std::max(e.max_ape_pct, a);
  if (!inside.empty()) {
    const size_t k = static_cast<size_t>(0.9 * (inside.size() - 1));
    std::nth_element(inside.begin(), inside.begin() + k, inside.end());
    e.p90_ape_pct = inside[k];
  }
  e.extrapolated_mape_pct = e.extrapolated ? out_sum / e.extrapolated : 0;
  return e;
}

GpuTables LoadGpuTables(const std::string& data_dir, const GpuSpec& gpu, bool fp8,
                        const std::string& gpu_dir0, const EngineKernels& k) {
  const std::string gpu_dir = gpu_dir0.empty() ? DataGpuDir(gpu.name) : gpu_dir0;
  const std::string dir = data_dir + "/" + gpu_dir;
  // A versioned folder without collectives takes the GPU's main folder's.
  const std::string main_dir = data_dir + "/" + DataGpuDir(gpu.name);
  const std::string nccl_dir =
      std::filesystem::exists(dir + "/nccl.csv") ? dir : main_dir;
  GpuTables t;
  t.gpu = gpu.name;
  t.fp8 = fp8;
  t.kernels = k;
  // Each table is checked as it is read, so an error names the first bad file.
  const std::string dtype = fp8 ? "fp8" : "bfloat16";
  auto kernel = [](const std::string& ks) {
    return ks.empty() ? std::string() : ", kernel_source " + ks;
  };
  const std::string gemm_kernel = fp8 ? k.gemm_fp8 : k.gemm_bf16;
  t.gemm = LoadGemmTable(dir, gpu, dtype, gemm_kernel);
  RequireRows(t.gemm, dir + "/gemm.csv", "gemm_dtype " + dtype + kernel(gemm_kernel));
  t.lm_head_gemm = fp8 ? LoadGemmTable(dir, gpu, "bfloat16", k.gemm_bf16) : t.gemm;
  RequireRows(t.lm_head_gemm, dir + "/gemm.csv",
              "gemm_dtype bfloat16" + kernel(k.gemm_bf16));
  TableFilter f;
  if (fp8) f.kv_cache_dtype = "fp8";
  f.attention_kernel = k.attention;
  if (k.prefill_compute_is_kv_dtype) f.prefill_attn_dtype = f.kv_cache_dtype;
  f.custom_allreduce_kernel = k.custom_allreduce;
  f.symm_mem = k.symm_mem_allreduce;
  const std::string attention = "head_dim 128, window_size 0, kv_cache_dtype " +
                                dtype + kernel(k.attention);
  t.decode = LoadDecodeTable(dir, gpu, f);
  RequireRows(t.decode, dir + "/generation_attention.csv", attention);
  t.prefill = LoadPrefillTable(dir, gpu, f);
  RequireRows(t.prefill, dir + "/context_attention.csv", attention);
  for (int g : {2, 4, 8}) {
    f.num_gpus = g;
    t.allreduce[g] = LoadAllReduceTable(dir, gpu, f, nccl_dir);
  }
  // A hand-made folder without a manifest leaves both empty.
  if (std::filesystem::exists(data_dir + "/manifest.json")) {
    const nlohmann::json m = ReadManifest(data_dir);
    t.device = TableDevice(m, gpu_dir);
    t.engine_version = TableVersion(m, gpu_dir, "gemm");
    t.nccl_version =
        TableVersion(m, nccl_dir == dir ? gpu_dir : DataGpuDir(gpu.name), "nccl");
  }
  return t;
}

std::string TableGapReason(const GpuTables& t, const ModelSpec& m, int tp) {
  if (m.head_dim != kTableHeadDim) {
    return "head_dim " + std::to_string(m.head_dim) +
           ": the import reads head_dim 128 attention rows only";
  }
  const double h = static_cast<double>(m.num_heads) / tp;
  const double kv = m.KvHeadsPerGpu(tp);
  char heads[80];
  std::snprintf(heads, sizeof heads, "%g heads / %g KV heads per GPU", h, kv);
  if (AttentionGrid(t.decode, h, kv).empty()) {
    return std::string("no decode attention rows at ") + heads +
           " (generation_attention.csv)";
  }
  if (AttentionGrid(t.prefill, h, kv).empty()) {
    return std::string("no prefill attention rows at ") + heads +
           " (context_attention.csv)";
  }
  if (tp > 1) {
    auto it = t.allreduce.find(tp);
    if (it == t.allreduce.end() || it->second.rows.empty()) {
      return "no all-reduce rows at " + std::to_string(tp) + " GPUs";
    }
  }
  return "";
}

namespace {

// The roofline kernels preset's rates for each table (see residual_base.h
// for why they may price the import's held-out rows).
const KernelRates& GemmRates(const GpuTables& t, bool lm_head) {
  static const RooflineParams k = RooflineParams::Kernels();
  return t.fp8 && !lm_head ? k.gemm_fp8 : k.gemm;
}
const KernelRates& DecodeRates(const GpuTables& t) {
  static const RooflineParams k = RooflineParams::Kernels();
  return t.fp8 ? k.decode_attention_fp8_kv : k.decode_attention;
}
const KernelRates& PrefillRates(const GpuTables& t) {
  static const RooflineParams k = RooflineParams::Kernels();
  return t.fp8 ? k.prefill_attention_fp8_kv : k.prefill_attention;
}
double GemmInBytes(const GpuTables& t, bool lm_head) {
  return t.fp8 && !lm_head ? 1 : 2;
}
double KvBytes(const GpuTables& t) { return t.fp8 ? 1 : 2; }

// The preset was fitted to the vLLM 0.24.0 tables: for them it is the
// import's own training split, for another engine's tables other rows.
std::string PresetSource(const GpuTables& t, const char* kind) {
  if (t.kernels.engine != "vllm") {
    return std::string("roofline kernels preset, ") + kind +
           " (servesim-calibrate fit-roofline on the seed-1 80% of the vLLM "
           "0.24.0 H100-SXM and H200 rows; no " + t.kernels.display +
           " row in it)";
  }
  return std::string("roofline kernels preset, ") + kind +
         " (servesim-calibrate fit-roofline on the seed-1 80% of the "
         "H100-SXM and H200 rows: the import's own training split; B200 "
         "never in it)";
}

GridBase OneBase(const GridBasePiece& p, std::string source) {
  GridBase b;
  b.pieces = {p};
  b.source = std::move(source);
  return b;
}

}  // namespace

TableBase GemmBaseOf(const GpuTables& t, const GpuSpec& gpu, bool lm_head) {
  return GemmTableBase(GemmRates(t, lm_head), gpu, GemmInBytes(t, lm_head));
}
TableBase DecodeBaseOf(const GpuTables& t, const GpuSpec& gpu) {
  return DecodeTableBase(DecodeRates(t), gpu, kTableHeadDim, KvBytes(t));
}
TableBase PrefillBaseOf(const GpuTables& t, const GpuSpec& gpu) {
  return PrefillTableBase(PrefillRates(t), gpu, kTableHeadDim, KvBytes(t));
}
TableBase AllReduceBaseOf(const MeasuredTable& rows, const GpuSpec& gpu,
                          int gpus, bool symm_mem) {
  TableFilter f;
  f.num_gpus = gpus;
  f.symm_mem = symm_mem;
  GridBase b =
      FitAllReduceBase(rows, gpu, gpus, CustomAllReduceMaxBytes(gpu, f));
  if (b.empty()) return TableBase();
  return [b](const std::vector<double>& key) { return b.Seconds(1, key[0]); };
}

CalibrationProfile ImportProfile(const GpuTables& t, const ModelSpec& m,
                                 const GpuSpec& gpu, int tp,
                                 const std::vector<KindError>& errors) {
  CalibrationProfile p;
  p.gpu = gpu.name;
  p.model = m.name;
  p.dtype = m.weight_dtype;
  p.kv_cache_dtype = m.kv_cache_dtype;
  p.tp = tp;
  p.device.name = t.device;
  p.device.memory_bytes = gpu.memory_bytes;
  p.step_overhead_s = RooflineParams{}.step_overhead_s;
  p.step_overhead_source =
      "roofline default (not measured: the tables time kernels, not host "
      "scheduling)";
  const KindError* gemm_e = FindError(errors, gpu.name, "gemm");
  for (int i = 0; i <= static_cast<int>(ProfileOp::kGemmLmHead); ++i) {
    const ProfileOp op = static_cast<ProfileOp>(i);
    const GemmDims d = GemmDimsOf(op, m, tp);
    GridLine line;
    bool any_out = false;
    const bool lm_head = op == ProfileOp::kGemmLmHead;
    const MeasuredTable& table = lm_head ? t.lm_head_gemm : t.gemm;
    const TableBase base =
        t.residual_base ? GemmBaseOf(t, gpu, lm_head) : TableBase();
    for (double mm : table.axis_values[0]) {
      bool out = false;
      const std::optional<double> s =
          InterpolateTable(table, {mm, d.n, d.k}, {0, 1, 2}, &out, base);
      if (!s) continue;
      any_out |= out;
      line.x.push_back(mm);
      line.t_s.push_back(*s);
    }
    char note[200];
    std::snprintf(
        note, sizeof note,
        "measured %s GEMMs interpolated in log n, log k to "
        "n=%.0f k=%.0f at every measured m%s",
        op == ProfileOp::kGemmLmHead || !m.fp8_weights() ? "bf16" : "fp8 (W8A8)", d.n, d.k,
        any_out ? "; n or k beyond the measured grid: EXTRAPOLATED" : "");
    GridTable g{{std::move(line)}, {}};
    if (t.residual_base) {
      g.base = OneBase(GemmPiece(GemmRates(t, lm_head), gpu, d.n, d.k,
                                 GemmInBytes(t, lm_head)),
                       PresetSource(t, t.fp8 && !lm_head ? "GEMM fp8 (W8A8)"
                                                      : "GEMM bf16"));
    }
    OpFit f = GridFit(op, std::move(g), note);
    SetError(&f, gemm_e);
    p.ops.push_back(std::move(f));
  }
  const double heads = static_cast<double>(m.num_heads) / tp;
  const double kv = m.KvHeadsPerGpu(tp);
  GridTable dg = AttentionGrid(t.decode, heads, kv);
  GridTable pg = AttentionGrid(t.prefill, heads, kv);
  if (t.residual_base) {
    dg.base = OneBase(
        DecodePiece(DecodeRates(t), gpu, heads, kv, kTableHeadDim, KvBytes(t)),
        PresetSource(t, t.fp8 ? "decode attention, fp8 KV" : "decode attention"));
    pg.base = OneBase(
        PrefillPiece(PrefillRates(t), gpu, heads, kv, kTableHeadDim, KvBytes(t)),
        PresetSource(t, t.fp8 ? "prefill attention, fp8 KV"
                           : "prefill attention"));
  }
  if (dg.empty() || pg.empty()) {
    throw std::runtime_error("no attention rows for " + std::to_string(heads) +
                             " heads / " + std::to_string(kv) +
                             " kv heads per GPU on " + gpu.name);
  }
  // The kernel is named where the engine's tables time several.
  const std::string by = t.kernels.attention.empty()
                             ? std::string()
                             : " (" + t.kernels.attention + ")";
  OpFit dec = GridFit(ProfileOp::kDecodeAttention, std::move(dg),
                      "measured decode attention" + by + ", batch x cached context");
  SetError(&dec, FindError(errors, gpu.name, "decode_attention"));
  p.ops.push_back(std::move(dec));
  OpFit pre = GridFit(ProfileOp::kPrefillAttention, std::move(pg),
                      "measured prefill attention" + by +
                          " from an empty cache, batch "
                          "x length; a chunk after a cached prefix is NOT "
                          "measured: looked up at the equal-FLOP length");
  SetError(&pre, FindError(errors, gpu.name, "prefill_attention"));
  p.ops.push_back(std::move(pre));
  OpFit ew;
  ew.op = ProfileOp::kElementwise;
  ew.form = FitForm::kSum;
  // The datasheet preset's one elementwise efficiency (0.6), as when the
  // shipped profiles were imported; the kernels preset's floors and
  // per-kernel efficiencies are not measurements either.
  ew.coefficients = {
      0, 1 / (gpu.hbm_bytes_per_s *
              RooflineParams::Datasheet().elementwise.rmsnorm_memory_efficiency)};
  ew.fit_points = 1;
  ew.measured = false;
  ew.note =
      "NOT MEASURED (no table): the roofline's memory term, bytes / (HBM "
      "bandwidth x elementwise efficiency); no launch floor";
  p.ops.push_back(std::move(ew));
  if (tp > 1) {
    auto it = t.allreduce.find(tp);
    if (it == t.allreduce.end() || it->second.rows.empty()) {
      throw std::runtime_error("no all-reduce rows at " + std::to_string(tp) +
                               " GPUs on " + gpu.name);
    }
    GridLine line;
    for (const auto& [key, sec] : it->second.rows) {
      line.x.push_back(key[0]);
      line.t_s.push_back(sec);
    }
    p.allreduce.lines.push_back(std::move(line));
    TableFilter f;
    f.num_gpus = tp;
    f.symm_mem = t.kernels.symm_mem_allreduce;
    const double custom_max = CustomAllReduceMaxBytes(gpu, f);
    const double mib = custom_max / (1024 * 1024);
    std::ostringstream below;
    below << " custom all-reduce (CUDA graph) below " << mib << " MiB";
    if (custom_max > f.custom_allreduce_max_bytes) {
      below << " (the limit symmetric memory sets; these rows price vLLM's "
               "custom and symmetric-memory all-reduces alike)";
    }
    if (t.residual_base) {
      p.allreduce.base = FitAllReduceBase(it->second, gpu, tp, custom_max);
    }
    if (const KindError* e = FindError(errors, gpu.name, "allreduce")) {
      p.allreduce_heldout_mape_pct = e->mape_pct;
    }
    const std::string nccl =
        "NCCL" +
        (t.nccl_version.empty() ? std::string() : " " + t.nccl_version);
    p.allreduce_source =
        (custom_max > 0
             ? t.kernels.display + below.str() + ", " + nccl +
                   " all_reduce at or above"
             : nccl +
                   " all_reduce at every size (vLLM's custom all-reduce "
                   "does not run on more than two PCIe-only GPUs)") +
        ", bf16, " + std::to_string(tp) + " GPUs";
  }
  return p;
}

namespace {

struct Provenance {
  std::string data_dir, commit, source_date;
  nlohmann::json manifest;
};

Provenance ReadProvenance(const std::string& data_dir) {
  Provenance p;
  const std::string readme = ReadAll(data_dir + "/README.md", "data README");
  std::smatch m;
  if (std::regex_search(readme, m,
                        std::regex("commit ([0-9a-f]{40}) \\(([0-9-]+)\\)"))) {
    p.commit = m[1];
    p.source_date = m[2];
  } else {
    throw std::runtime_error(data_dir +
                             "/README.md: no \"commit <sha> (<date>)\"");
  }
  p.manifest = ReadManifest(data_dir);
  p.data_dir = data_dir;
  return p;
}

// A table's engine version from the manifest, or a one-line error: a
// profile must not claim a version the data does not state.
std::string VersionOf(const Provenance& pv, const std::string& gpu_dir,
                      const std::string& table) {
  const std::string v = TableVersion(pv.manifest, gpu_dir, table);
  if (v.empty()) {
    throw std::runtime_error(pv.data_dir + "/manifest.json: no " + gpu_dir +
                             " " + table +
                             " entry with framework_version or a constant "
                             "version column; expected the engine version");
  }
  return v;
}

// The GPU's main directory of a versioned one ("x-vllm-0.19.0" -> "x").
std::string MainGpuDir(const std::string& gpu_dir) {
  const size_t at = gpu_dir.find("-vllm-");
  return at == std::string::npos ? gpu_dir : gpu_dir.substr(0, at);
}

// Where the GPU's NCCL table is: its own directory, else the main one's
// (LoadGpuTables reads it there too).
std::string NcclDirOf(const Provenance& pv, const std::string& gpu_dir) {
  return TableVersion(pv.manifest, gpu_dir, "nccl").empty() ? MainGpuDir(gpu_dir)
                                                            : gpu_dir;
}

// "vLLM 0.24.0 kernels; NCCL 2.29.2 collectives", naming any table the
// import reads that was measured with another engine version.
std::string EngineOf(const Provenance& pv, const std::string& gpu_dir,
                     const std::string& engine) {
  const std::string kernels = VersionOf(pv, gpu_dir, "gemm");
  std::string s = engine + " " + kernels + " kernels";
  const std::pair<const char*, const char*> others[] = {
      {"context_attention", "prefill attention"},
      {"generation_attention", "decode attention"},
      {"custom_allreduce", "custom all-reduce"}};
  for (const auto& [table, what] : others) {
    const std::string v = VersionOf(pv, gpu_dir, table);
    if (v != kernels) s += std::string(" (") + what + ": " + engine + " " + v + ")";
  }
  return s + "; NCCL " + VersionOf(pv, NcclDirOf(pv, gpu_dir), "nccl") +
         " collectives";
}

// The folder as the docs name it when it lies in the shared data
// (../shared/calibration-data/<folder>), else as given.
std::string ImportedFrom(const std::string& data_dir) {
  namespace fs = std::filesystem;
  std::error_code ec1, ec2;
  const fs::path shared = fs::weakly_canonical(
      fs::path(RepoRoot()) / ".." / "shared" / "calibration-data", ec1);
  const fs::path dir = fs::weakly_canonical(data_dir, ec2);
  if (!ec1 && !ec2 && dir.parent_path() == shared) {
    return "../shared/calibration-data/" + dir.filename().string();
  }
  return data_dir;
}

// SGLang's rows beside the ones read, and how SGLang runs what is read:
// the cautions its profiles add to the vLLM ones.
std::vector<std::string> SglangCautions(const EngineKernels& k) {
  return {"attention is " + k.attention +
              " only (the tables also time other backends; the import reads "
              "SGLang's default for the GPU, or --attention-backend)",
          "all-reduce is the CUDA-graph custom all-reduce; SGLang runs prefill "
          "(extend) batches without CUDA graphs by default, where its eager "
          "custom all-reduce is slower (custom_allreduce.csv, "
          "SGLang_CustomAllReduce_eager)"};
}

nlohmann::json ImportInfo(const Provenance& pv, const std::string& gpu_dir,
                          const std::vector<KindError>& errors,
                          const std::string& gpu, const ImportOptions& o,
                          const EngineKernels& k) {
  nlohmann::json tables = nlohmann::json::object();
  for (const auto& e : pv.manifest) {
    const bool nccl_beside = e.value("table", "") == "nccl" &&
                             e.value("gpu", "") == NcclDirOf(pv, gpu_dir);
    if ((e.value("gpu", "") != gpu_dir && !nccl_beside) ||
        e.value("table", "") == "system_yaml") {
      continue;
    }
    tables[e.value("table", "")] = {{"source_path", e.value("source_path", "")},
                                    {"sha256", e.value("source_sha256", "")}};
  }
  nlohmann::json errs = nlohmann::json::object();
  for (const KindError& e : errors) {
    // MoE's depends on which MoE models were imported beside; no profile
    // prices it (dense layers only).
    if (e.gpu != gpu || e.kind == "moe") continue;
    errs[e.kind] = {{"rows", e.rows},
                    {"dropped_physical", e.dropped},
                    {"heldout_predictions", e.heldout},
                    {"heldout_mape_pct", e.mape_pct},
                    {"heldout_p90_ape_pct", e.p90_ape_pct},
                    {"heldout_max_ape_pct", e.max_ape_pct},
                    {"extrapolated_predictions", e.extrapolated},
                    {"extrapolated_mape_pct", e.extrapolated_mape_pct}};
  }
  nlohmann::json info = {
         {"source",
           "ai-dynamo/aiconfigurator, aic-core/src/aiconfigurator_core/"
           "systems/data/" + gpu_dir + "/ (" + k.display + " " +
               VersionOf(pv, gpu_dir, "gemm") + " tables)"},
          {"commit", pv.commit},
          {"source_date", pv.source_date},
          {"licence", "Apache-2.0"},
          {"engine", EngineOf(pv, gpu_dir, k.display)},
          {"imported_from", ImportedFrom(pv.data_dir)},
          {"imported_on", o.date},
          {"lookup",
           o.residual_base
               ? "log(t / grid_base) linear in log coordinate between "
                 "measured neighbours, clamped to their range; beyond the "
                 "grid the edge's ratio to the base is held"
               : "log t linear in log coordinate between measured "
                 "neighbours; below the grid the first value, above it the "
                 "last slope clamped to [1, 2]"},
          {"tables", tables},
          {"heldout_split",
           {{"seed", o.seed},
            {"fraction", o.heldout_fraction},
            {"method",
             o.residual_base
                 ? "seeded shuffle of rows; each held-out row predicted from "
                   "the rest by log-space interpolation of log(t / base) "
                   "along each varied axis (base: the roofline kernels "
                   "preset, fitted on the same seed-1 80% of H100-SXM and "
                   "H200 rows; all-reduce base fitted on the training rows)"
                 : "seeded shuffle of rows; each held-out "
                   "row predicted from the rest by log-space "
                   "interpolation along each varied axis"}}},
          {"heldout_errors", errs},
          {"cautions",
           {"elementwise kernels are not measured (roofline memory term)",
            "prefill after a cached prefix is not measured (equal-FLOP lookup)",
            "kernel time only: host overhead is the roofline default"}}};
  if (k.engine == "vllm") return info;  // as the vLLM profiles shipped
  if (o.residual_base) {
    info["heldout_split"]["method"] =
        "seeded shuffle of rows; each held-out row predicted from the rest "
        "by log-space interpolation of log(t / base) along each varied axis "
        "(base: the roofline kernels preset, fitted on the seed-1 80% of "
        "vLLM 0.24.0's H100-SXM and H200 rows, none of these; all-reduce "
        "base fitted on the training rows)";
  }
  // Which engine and which of its kernels, as keys (the vLLM profiles say
  // it in "engine" only).
  info["engine_name"] = k.engine;
  info["engine_version"] = VersionOf(pv, gpu_dir, "gemm");
  info["kernels"] = {{"gemm_bf16", k.gemm_bf16},
                     {"gemm_fp8", k.gemm_fp8},
                     {"attention", k.attention},
                     {"custom_allreduce", k.custom_allreduce}};
  for (const std::string& c : SglangCautions(k)) info["cautions"].push_back(c);
  return info;
}

}  // namespace

namespace {

// Held-out errors of one GPU's tables: GEMM, decode and prefill attention,
// and the all-reduce pooled over its GPU counts.
std::vector<KindError> GpuHeldoutErrors(const GpuTables& t, const GpuSpec& gpu,
                                        const ImportOptions& o) {
  std::vector<KindError> errs;
  auto add = [&](const char* kind, const MeasuredTable& tab,
                 const std::vector<int>& vary, const TableBase& base) {
    KindError e = HeldoutError(
        tab, vary, o.seed, o.heldout_fraction,
        [&](const MeasuredTable&) {
          return o.residual_base ? base : TableBase();
        });
    e.gpu = gpu.name;
    e.kind = kind;
    errs.push_back(e);
  };
  add("gemm", t.gemm, {0, 1, 2}, GemmBaseOf(t, gpu, false));
  add("decode_attention", t.decode, {2, 3}, DecodeBaseOf(t, gpu));
  add("prefill_attention", t.prefill, {2, 3}, PrefillBaseOf(t, gpu));
  KindError ar;
  ar.gpu = gpu.name;
  ar.kind = "allreduce";
  double in_sum = 0, out_sum = 0;
  for (const auto& [g, tab] : t.allreduce) {
    // The all-reduce base is fitted to the training rows only.
    const KindError e = HeldoutError(
        tab, {0}, o.seed + g, o.heldout_fraction,
        [&, g = g](const MeasuredTable& train) {
          return o.residual_base
                     ? AllReduceBaseOf(train, gpu, g, t.kernels.symm_mem_allreduce)
                                 : TableBase();
        });
    ar.rows += e.rows;
    ar.dropped += e.dropped;
    ar.heldout += e.heldout;
    ar.extrapolated += e.extrapolated;
    in_sum += e.mape_pct * e.heldout;
    out_sum += e.extrapolated_mape_pct * e.extrapolated;
    ar.p90_ape_pct = std::max(ar.p90_ape_pct, e.p90_ape_pct);
    ar.max_ape_pct = std::max(ar.max_ape_pct, e.max_ape_pct);
  }
  ar.mape_pct = ar.heldout ? in_sum / ar.heldout : 0;
  ar.extrapolated_mape_pct = ar.extrapolated ? out_sum / ar.extrapolated : 0;
  errs.push_back(ar);
  return errs;
}

// The model as imported (fp8 weights and KV cache with --fp8).
ModelSpec ImportedModel(const std::string& name, const ImportOptions& o) {
  ModelSpec m = LoadModelSpec(name);
  if (o.fp8) {
    m.SetWeightDtype("fp8");
    m.SetKvCacheDtype("fp8");
  }
  return m;
}

// Why `m` at `tp` gets no profile on `gpu` ("" when it gets one).
std::string SkipReason(const ModelSpec& m, int tp, const GpuSpec& gpu) {
  if (m.is_moe()) {
    return "mixture of experts: calibrated profiles time dense layers only "
           "(moe.csv's held-out error is reported)";
  }
  if (std::string why = TensorParallelProblem(m, tp); !why.empty()) return why;
  // Weights must leave room for a KV cache on one GPU.
  if (m.WeightBytesPerGpu(tp) > 0.9 * gpu.memory_bytes) {
    return "weights do not fit one GPU";
  }
  return "";
}

// Before any table is read: at least one GPU x model x tp must get a
// profile, or the import would succeed having written nothing.
void RequireSomeProfile(const ImportOptions& o) {
  std::string why;
  for (const std::string& gname : o.gpus) {
    const GpuSpec gpu = LoadGpuSpec(gname);
    for (const std::string& mname : o.models) {
      const ModelSpec m = ImportedModel(mname, o);
      for (int tp : o.tps) {
        const std::string skip = SkipReason(m, tp, gpu);
        if (skip.empty()) return;
        why += (why.empty() ? "" : "; ") + mname + " tp=" + std::to_string(tp) +
               " on " + gpu.name + ": " + skip;
      }
    }
  }
  throw std::runtime_error("no profile to write (" +
                           (why.empty() ? std::string("no --gpu, --model or --tp") : why) +
                           "); expected a --model and --tp that fit a GPU");
}

// "-sglang" (and "-<backend>" for another attention kernel than SGLang's
// default); "" for vLLM, whose profiles came first.
std::string ProfileSuffix(const ImportOptions& o, const EngineKernels& k) {
  if (k.engine == "vllm") return "";
  return "-" + k.engine +
         (o.attention_backend.empty() ? "" : "-" + o.attention_backend);
}

// One GPU's profiles, each model x tp that fits (the rest: r->skipped).
void WriteGpuProfiles(const GpuTables& t, const GpuSpec& gpu,
                      const std::string& gpu_dir,
                      const std::vector<KindError>& errs, const Provenance& pv,
                      const ImportOptions& o, ImportResult* r) {
  for (const std::string& mname : o.models) {
    const ModelSpec m = ImportedModel(mname, o);
    if (m.is_moe()) continue;  // skipped once for every GPU (ImportAll)
    for (int tp : o.tps) {
      std::string why = SkipReason(m, tp, gpu);
      if (why.empty()) why = TableGapReason(t, m, tp);
      if (!why.empty()) {
        r->skipped.push_back(mname + " tp=" + std::to_string(tp) + " on " +
                             gpu.name + ": " + why);
        continue;
      }
      CalibrationProfile p = ImportProfile(t, m, gpu, tp, errs);
      p.date = pv.source_date;
      p.import_info = ImportInfo(pv, gpu_dir, errs, gpu.name, o, t.kernels);
      const std::string path =
          o.out_dir + "/" + gpu.name + "-" + mname + "-tp" + std::to_string(tp) +
          (o.fp8 ? "-fp8" : "") +
          (o.engine_version.empty() ? "" : "-vllm-" + o.engine_version) +
          ProfileSuffix(o, t.kernels) + ".json";
      if (Status st = WriteProfile(path, p); !st.ok()) {
        throw std::runtime_error(st.message());
      }
      r->written.push_back(path);
    }
  }
}

// The engine of an import: --engine, else what the --data folder's
// manifest says for the first GPU, else vLLM.
std::string ResolveEngine(const ImportOptions& o) {
  if (!o.engine.empty()) {
    EngineDataFolders(o.engine);  // throws on an unknown engine
    return o.engine;
  }
  if (o.data_dir.empty() || o.gpus.empty() ||
      !std::filesystem::exists(o.data_dir + "/manifest.json")) {
    return "vllm";
  }
  const std::string e = ManifestEngine(ReadManifest(o.data_dir),
                                       DataGpuDir(LoadGpuSpec(o.gpus[0]).name));
  return e.empty() ? "vllm" : e;
}

// A folder holding another engine's tables than the import's is refused:
// its kernels would be read under the wrong engine's name.
void RequireEngine(const Provenance& pv, const std::string& gpu_dir,
                   const std::string& engine) {
  const std::string e = ManifestEngine(pv.manifest, gpu_dir);
  if (e.empty() || e == engine) return;
  throw std::runtime_error(pv.data_dir + "/manifest.json: " + gpu_dir +
                           " holds " + e + " tables, but the import reads " +
                           engine + "'s; expected --engine " + e);
}

// Held-out error of the fused-MoE rows (bf16, balanced routing, no expert
// parallelism) at the expert shapes of the MoE models asked for, pooled;
// plain log-space interpolation along tokens (no roofline base) at each
// measured tp split of the experts, as a profile at one tp would look it
// up. nullopt when no such model or no rows.
std::optional<KindError> MoeHeldoutError(const std::string& dir,
                                         const GpuSpec& gpu,
                                         const ImportOptions& o) {
  if (!std::filesystem::exists(dir + "/moe.csv")) return std::nullopt;
  KindError moe;
  moe.gpu = gpu.name;
  moe.kind = "moe";
  std::set<std::vector<double>> shapes;
  double in_sum = 0, out_sum = 0;
  for (const std::string& name : o.models) {
    const ModelSpec m = LoadModelSpec(name);
    if (!m.is_moe()) continue;
    const std::vector<double> shape = {
        static_cast<double>(m.hidden_size), static_cast<double>(m.intermediate_size),
        static_cast<double>(m.experts_per_token), static_cast<double>(m.num_experts)};
    if (!shapes.insert(shape).second) continue;
    const MeasuredTable tab = LoadMoeTable(dir, gpu, m);
    if (tab.rows.empty()) continue;
    const KindError e = HeldoutError(tab, {1}, o.seed, o.heldout_fraction);
    moe.rows += e.rows;
    moe.dropped += e.dropped;
    moe.heldout += e.heldout;
    moe.extrapolated += e.extrapolated;
    in_sum += e.mape_pct * e.heldout;
    out_sum += e.extrapolated_mape_pct * e.extrapolated;
    moe.p90_ape_pct = std::max(moe.p90_ape_pct, e.p90_ape_pct);
    moe.max_ape_pct = std::max(moe.max_ape_pct, e.max_ape_pct);
  }
  if (moe.rows == 0) return std::nullopt;
  moe.mape_pct = moe.heldout ? in_sum / moe.heldout : 0;
  moe.extrapolated_mape_pct = moe.extrapolated ? out_sum / moe.extrapolated : 0;
  return moe;
}

// Why a GPU gets no fp8 profile at all ("" when its tables may have fp8
// rows): the manifest says its GEMMs hold one dtype and it is not fp8
// (A100: bfloat16 only, no fp8 tensor cores).
std::string NoFp8Reason(const std::string& dir) {
  const auto c = ConstantColumns(dir, "gemm");
  auto it = c.find("gemm_dtype");
  if (it == c.end() || it->second == "fp8") return "";
  return "no fp8 rows: every gemm.csv row is gemm_dtype " + it->second +
         " (manifest.json constant_columns)";
}

}  // namespace

ImportResult ImportAll(const ImportOptions& o0) {
  ImportOptions o = o0;
  if (o.fp8 && !o.engine_version.empty()) {
    // RTX PRO 6000 0.19.0: its fp8-KV attention rows beat the FP8 peak by
    // up to 390x (the data README's cautions).
    throw std::runtime_error(
        "--fp8 with --engine-version: the versioned tables' fp8 attention "
        "rows are not trusted (see the data README's cautions); expected "
        "bf16 profiles");
  }
  if (o.date.empty()) o.date = UtcNow().substr(0, 10);
  o.engine = ResolveEngine(o);
  if (o.engine != "vllm" && !o.engine_version.empty()) {
    throw std::runtime_error("--engine-version with --engine " + o.engine +
                             ": only the vLLM folders keep older versions' "
                             "tables; expected --engine vllm");
  }
  RequireSomeProfile(o);
  // Each GPU's folder and its provenance, all found before any is read.
  std::map<std::string, Provenance> provenance;  // by folder
  std::vector<std::string> dirs;
  std::vector<std::string> gpu_dirs;  // each GPU's table directory
  for (const std::string& gname : o.gpus) {
    const std::string name = LoadGpuSpec(gname).name;
    gpu_dirs.push_back(DataGpuDir(name) +
                       (o.engine_version.empty() ? "" : "-vllm-" + o.engine_version));
    const std::string dir =
        o.data_dir.empty()
            ? FindDataDir(o.data_root, name, gpu_dirs.back(), o.engine)
            : o.data_dir;
    if (!provenance.count(dir)) provenance.emplace(dir, ReadProvenance(dir));
    RequireEngine(provenance.at(dir), gpu_dirs.back(), o.engine);
    dirs.push_back(dir);
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw std::runtime_error(o.out_dir + ": " + ec.message());
  ImportResult r;
  r.engine = o.engine;
  for (const std::string& mname : o.models) {
    if (LoadModelSpec(mname).is_moe()) {
      r.skipped.push_back(mname + " (every tp and GPU): " +
                          SkipReason(LoadModelSpec(mname), 1, GpuSpec()));
    }
  }
  for (size_t i = 0; i < o.gpus.size(); ++i) {
    const GpuSpec gpu = LoadGpuSpec(o.gpus[i]);
    if (o.fp8) {
      if (std::string why = NoFp8Reason(dirs[i] + "/" + gpu_dirs[i]); !why.empty()) {
        r.skipped.push_back(gpu.name + " (every model): " + why);
        continue;
      }
    }
    GpuTables t = LoadGpuTables(dirs[i], gpu, o.fp8, gpu_dirs[i],
                                KernelsOf(o.engine, DataGpuDir(gpu.name),
                                          o.attention_backend));
    t.residual_base = o.residual_base;
    std::vector<KindError> errs = GpuHeldoutErrors(t, gpu, o);
    const std::string moe_dir = dirs[i] + "/" + gpu_dirs[i];
    if (std::optional<KindError> e = MoeHeldoutError(moe_dir, gpu, o)) {
      errs.push_back(*e);
    }
    r.errors.insert(r.errors.end(), errs.begin(), errs.end());
    WriteGpuProfiles(t, gpu, gpu_dirs[i], errs, provenance.at(dirs[i]), o, &r);
  }
  if (r.written.empty()) {
    std::string why;
    for (const std::string& s : r.skipped) why += (why.empty() ? "" : "; ") + s;
    throw std::runtime_error("no profile written (" + why +
                             "); expected a --gpu, --model and --tp the "
                             "tables cover");
  }
  return r;
}

std::string ImportTable(const ImportResult& r) {
  std::ostringstream os;
  char buf[256];
  int w = 9;  // the GPU column: as wide as its longest name
  for (const KindError& e : r.errors)
    w = std::max(w, static_cast<int>(e.gpu.size()));
  std::snprintf(buf, sizeof buf,
                "  %-*s %-18s %7s %7s %8s %8s %8s %8s %8s %8s\n", w, "gpu",
                "op kind", "rows", "dropped", "held-out", "MAPE", "p90 APE",
                "max APE", "extrap", "MAPE");
  os << buf;
  for (const KindError& e : r.errors) {
    std::snprintf(
        buf, sizeof buf,
        "  %-*s %-18s %7d %7d %8d %7.2f%% %7.2f%% %7.1f%% %8d %7.2f%%\n", w,
        e.gpu.c_str(), e.kind.c_str(), e.rows, e.dropped, e.heldout, e.mape_pct,
        e.p90_ape_pct, e.max_ape_pct, e.extrapolated, e.extrapolated_mape_pct);
    os << buf;
  }
  for (const std::string& s : r.skipped) os << "  skipped: " << s << "\n";
  return os.str();
}

}  // namespace servesim::calibrate
