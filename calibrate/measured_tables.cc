// Measured kernel tables (see measured_tables.h).
//
// Physical limits: a GEMM row is dropped when 2mnk FLOPs in its time beat
// the datasheet's dense bf16 peak, or its minimum traffic (weights, input
// and output once) beats peak HBM bandwidth; a decode-attention row when
// reading its KV cache once beats HBM bandwidth or its FLOPs beat the
// peak; a prefill row when its causal FLOPs beat the peak; an all-reduce
// row when its ring bus traffic, 2(g-1)/g x size, beats the GPU's total
// NVLink bandwidth. Such rows are measurement artefacts (the data's README
// says so for other versions of these tables).
#include "calibrate/measured_tables.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "calibrate/data_manifest.h"
#include "sim/core/paths.h"
#include "sim/cost/calibration_profile.h"
#include "sim/cost/kernel_time.h"
#include "sim/cost/roofline_cost_model.h"

namespace servesim::calibrate {
namespace {

// A CSV file with a header and at least one data row; fields hold no
// commas or quotes. Errors name the file and its 1-based line. A column
// the file lacks is read from `constants` (the manifest's constant_columns
// for this table: the conversion dropped columns holding one value).
class Csv {
 public:
  Csv(const std::string& path, std::map<std::string, std::string> constants)
      : path_(path), constants_(std::move(constants)) {
    // A directory or a device is refused with its reason (paths.h).
    CheckInputFile(path, "measured table");
    in_.open(path, std::ios::binary);
    if (!in_) {
      throw std::runtime_error(path + ": cannot open measured table: " +
                               std::strerror(errno));
    }
    std::string header;
    ReadInputLine(in_, &header, path, 1);
    if (header.rfind("\xEF\xBB\xBF", 0) == 0) header.erase(0, 3);  // BOM
    StripCr(&header);
    if (header.empty()) {
      Fail("expected a header line of column names, got an empty line");
    }
    const std::vector<std::string> names = Split(header);
    for (size_t i = 0; i < names.size(); ++i) col_[names[i]] = i;
  }
  bool Next() {
    std::string line;
    while (ReadInputLine(in_, &line, path_, line_no_ + 1)) {
      ++line_no_;
      StripCr(&line);
      if (line.empty()) continue;
      fields_ = Split(line);
      if (fields_.size() != col_.size()) Fail("wrong number of fields");
      ++data_rows_;
      return true;
    }
    if (data_rows_ == 0) Fail("expected data rows after the header, got none");
    return false;
  }
  bool Has(const std::string& c) const {
    return col_.count(c) > 0 || constants_.count(c) > 0;
  }
  const std::string& Str(const std::string& c) const {
    auto it = col_.find(c);
    if (it != col_.end()) return fields_[it->second];
    auto k = constants_.find(c);
    if (k != constants_.end()) return k->second;
    throw std::runtime_error(path_ + ":1: no column \"" + c +
                             "\" in the header nor in manifest.json's "
                             "constant_columns for this table");
  }
  double Num(const std::string& c) const {
    const std::string& s = Str(c);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !std::isfinite(v)) {
      Fail(c + ": expected a number, got \"" + s + "\"");
    }
    return v;
  }
  // line_no_ is the line last read (1: the header).
  [[noreturn]] void Fail(const std::string& why) const {
    throw std::runtime_error(path_ + ":" + std::to_string(line_no_) + ": " +
                             why);
  }

 private:
  static void StripCr(std::string* line) {  // a file saved with CRLF
    if (!line->empty() && line->back() == '\r') line->pop_back();
  }
  static std::vector<std::string> Split(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    std::string f;
    while (std::getline(ss, f, ',')) out.push_back(f);
    if (!line.empty() && line.back() == ',') out.emplace_back();
    return out;
  }
  std::string path_;
  std::map<std::string, std::string> constants_;
  std::ifstream in_;
  std::unordered_map<std::string, size_t> col_;
  std::vector<std::string> fields_;
  int line_no_ = 1;
  int data_rows_ = 0;
};

// A table's rows as read. A shape measured more than once keeps the mean
// of its times (A100's context_attention.csv times each heads = KV heads
// shape twice, 1% apart on average); Finish() divides and indexes.
class Rows {
 public:
  explicit Rows(MeasuredTable* t) : t_(t) {}
  void Add(const Csv& csv, std::vector<double> key, double seconds,
           bool physical) {
    if (!(seconds > 0)) csv.Fail("latency: expected > 0");
    if (!physical) {
      ++t_->dropped_physical;
      return;
    }
    t_->rows[key] += seconds;
    ++count_[std::move(key)];
  }
  void Finish() {
    for (const auto& [key, n] : count_) {
      if (n > 1) t_->rows[key] /= n;
    }
    IndexAxes(t_);
  }

 private:
  MeasuredTable* t_;
  std::map<std::vector<double>, int> count_;
};

// An attention table without a window_size column, constant or not, holds
// full attention only (the data's README: A100 and the vLLM 0.19.0 tables).
double WindowSize(const Csv& csv) {
  return csv.Has("window_size") ? csv.Num("window_size") : 0;
}

// Whether the row is `kernel`'s ("" any kernel).
bool KernelIs(const Csv& csv, const std::string& kernel) {
  return kernel.empty() || csv.Str("kernel_source") == kernel;
}

}  // namespace

void IndexAxes(MeasuredTable* t) {
  t->axis_values.assign(t->axes.size(), {});
  for (const auto& [key, sec] : t->rows) {
    for (size_t a = 0; a < key.size(); ++a) t->axis_values[a].push_back(key[a]);
  }
  for (auto& v : t->axis_values) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
}

MeasuredTable LoadGemmTable(const std::string& dir, const GpuSpec& gpu,
                            const std::string& dtype,
                            const std::string& kernel_source) {
  MeasuredTable t;
  Rows rows(&t);
  t.axes = {"m", "n", "k"};
  const bool fp8 = dtype == "fp8";
  const double in = fp8 ? 1 : 2;  // bytes of weights and inputs
  Csv csv(dir + "/gemm.csv", ConstantColumns(dir, "gemm"));
  while (csv.Next()) {
    if (csv.Str("gemm_dtype") != dtype || !KernelIs(csv, kernel_source)) {
      continue;
    }
    const double m = csv.Num("m"), n = csv.Num("n"), k = csv.Num("k");
    const double s = csv.Num("latency") * 1e-3;
    const double flops = 2 * m * n * k, bytes = in * (k * n + m * k) + 2 * m * n;
    rows.Add(csv, {m, n, k}, s,
             flops / s <= gpu.GemmPeakFlops(fp8) &&
                 bytes / s <= gpu.hbm_bytes_per_s);
  }
  rows.Finish();
  return t;
}

MeasuredTable LoadDecodeTable(const std::string& dir, const GpuSpec& gpu,
                              const TableFilter& f) {
  MeasuredTable t;
  Rows rows(&t);
  t.axes = {"heads", "kv_heads", "batch", "context"};
  Csv csv(dir + "/generation_attention.csv",
          ConstantColumns(dir, "generation_attention"));
  while (csv.Next()) {
    if (csv.Num("head_dim") != f.head_dim || WindowSize(csv) != 0 ||
        csv.Str("kv_cache_dtype") != f.kv_cache_dtype ||
        !KernelIs(csv, f.attention_kernel)) {
      continue;
    }
    const double h = csv.Num("num_heads"), kv = csv.Num("num_key_value_heads");
    const double b = csv.Num("batch_size"), c = csv.Num("step");
    const double s = csv.Num("latency") * 1e-3;
    const double d = f.head_dim;
    const bool fp8 = f.kv_cache_dtype == "fp8";
    const double kv_bytes = b * 2 * kv * d * (fp8 ? 1 : 2) * c;
    const double flops = b * 4 * h * d * (c + 1);
    rows.Add(csv, {h, kv, b, c}, s,
             kv_bytes / s <= gpu.hbm_bytes_per_s &&
                 flops / s <= gpu.GemmPeakFlops(fp8));
  }
  rows.Finish();
  return t;
}

MeasuredTable LoadPrefillTable(const std::string& dir, const GpuSpec& gpu,
                               const TableFilter& f) {
  MeasuredTable t;
  Rows rows(&t);
  t.axes = {"heads", "kv_heads", "batch", "isl"};
  Csv csv(dir + "/context_attention.csv",
          ConstantColumns(dir, "context_attention"));
  while (csv.Next()) {
    if (csv.Num("head_dim") != f.head_dim || WindowSize(csv) != 0 ||
        csv.Str("kv_cache_dtype") != f.kv_cache_dtype ||
        !KernelIs(csv, f.attention_kernel) ||
        (!f.prefill_attn_dtype.empty() &&
         csv.Str("attn_dtype") != f.prefill_attn_dtype)) {
      continue;
    }
    const double h = csv.Num("num_heads"), kv = csv.Num("num_key_value_heads");
    const double b = csv.Num("batch_size"), n = csv.Num("isl");
    const double s = csv.Num("latency") * 1e-3;
    const double flops = b * 4 * h * f.head_dim * n * (n + 1) / 2;
    rows.Add(csv, {h, kv, b, n}, s,
             flops / s <= gpu.GemmPeakFlops(f.kv_cache_dtype == "fp8"));
  }
  rows.Finish();
  return t;
}

MeasuredTable LoadMoeTable(const std::string& dir, const GpuSpec& gpu,
                           const ModelSpec& m) {
  MeasuredTable t;
  Rows rows(&t);
  t.axes = {"moe_tp", "tokens"};
  Csv csv(dir + "/moe.csv", ConstantColumns(dir, "moe"));
  while (csv.Next()) {
    if (csv.Num("hidden_size") != m.hidden_size ||
        csv.Num("inter_size") != m.intermediate_size ||
        csv.Num("topk") != m.experts_per_token || csv.Num("num_experts") != m.num_experts ||
        csv.Num("moe_ep_size") != 1 || csv.Str("moe_dtype") != "bfloat16" ||
        csv.Str("distribution") != "balanced") {
      continue;
    }
    const double tp = csv.Num("moe_tp_size"), tokens = csv.Num("num_tokens");
    const double s = csv.Num("latency") * 1e-3;
    // Every expert's weights at most once: a floor on the bytes.
    const double weights = 2.0 * m.num_experts * 3 * m.hidden_size * m.intermediate_size / tp;
    const double active = ExpectedActiveExperts(m.num_experts, m.experts_per_token, tokens);
    rows.Add(csv, {tp, tokens}, s,
             active / m.num_experts * weights / s <= gpu.hbm_bytes_per_s);
  }
  rows.Finish();
  return t;
}

MeasuredTable LoadMoeDtypeTable(const std::string& dir, const GpuSpec& gpu,
                                const std::string& moe_dtype, double weight_bytes) {
  MeasuredTable t;
  Rows rows(&t);
  t.axes = {"hidden", "inter", "topk", "experts", "moe_tp", "tokens"};
  Csv csv(dir + "/moe.csv", ConstantColumns(dir, "moe"));
  while (csv.Next()) {
    if (csv.Num("moe_ep_size") != 1 || csv.Str("moe_dtype") != moe_dtype ||
        csv.Str("distribution") != "balanced") {
      continue;
    }
    const double h = csv.Num("hidden_size"), i = csv.Num("inter_size");
    const double k = csv.Num("topk"), e = csv.Num("num_experts");
    const double tp = csv.Num("moe_tp_size"), tokens = csv.Num("num_tokens");
    const double s = csv.Num("latency") * 1e-3;
    // The active experts' weights at least once: a floor on the bytes.
    const double active = ExpectedActiveExperts(static_cast<int>(e), static_cast<int>(k), tokens);
    const double weights = weight_bytes * active * 3 * h * i / tp;
    rows.Add(csv, {h, i, k, e, tp, tokens}, s, weights / s <= gpu.hbm_bytes_per_s);
  }
  rows.Finish();
  return t;
}

double CustomAllReduceMaxBytes(const GpuSpec& gpu, const TableFilter& f) {
  AllReduceParams p;
  p.custom_max_bytes = f.custom_allreduce_max_bytes;
  p.symm_mem = f.symm_mem;
  return OwnAllReduceMaxBytes(p, gpu, f.num_gpus);
}

MeasuredTable LoadAllReduceTable(const std::string& dir, const GpuSpec& gpu,
                                 const TableFilter& f,
                                 const std::string& nccl_dir0) {
  const std::string nccl_dir = nccl_dir0.empty() ? dir : nccl_dir0;
  MeasuredTable t;
  Rows rows(&t);
  t.axes = {"bytes"};
  const double g = f.num_gpus;
  // interconnect_bytes_per_s is one direction; the datasheet total is 2x.
  const double link = 2 * gpu.interconnect_bytes_per_s;
  const double custom_max = CustomAllReduceMaxBytes(gpu, f);
  auto add = [&](const Csv& csv, double bytes) {
    const double s = csv.Num("latency") * 1e-3;
    rows.Add(csv, {bytes}, s, 2 * (g - 1) / g * bytes / s <= link);
  };
  Csv custom(dir + "/custom_allreduce.csv",
             ConstantColumns(dir, "custom_allreduce"));
  while (custom.Next()) {
    if (custom.Num("num_gpus") != g ||
        custom.Str("kernel_source") != f.custom_allreduce_kernel) {
      continue;
    }
    const double bytes = 2 * custom.Num("message_size");
    if (bytes < custom_max) add(custom, bytes);
  }
  Csv nccl(nccl_dir + "/nccl.csv", ConstantColumns(nccl_dir, "nccl"));
  while (nccl.Next()) {
    if (nccl.Num("num_gpus") != g || nccl.Str("op_name") != "all_reduce" ||
        nccl.Str("nccl_dtype") != "half") {
      continue;
    }
    const double bytes = 2 * nccl.Num("message_size");
    if (bytes >= custom_max) add(nccl, bytes);
  }
  rows.Finish();
  return t;
}

namespace {

struct Interp {
  const MeasuredTable& t;
  const std::vector<double>& point;
  const std::vector<int>& order;
  const TableBase& base;
  bool extrapolated = false;
  std::vector<double> key;

  // Log base at the current key with axis order[level] at v and the
  // deeper axes at the point's coordinates (0 without a base).
  double LogBase(size_t level, double v) const {
    if (!base) return 0;
    std::vector<double> k = key;
    k[order[level]] = v;
    for (size_t j = level + 1; j < order.size(); ++j) {
      k[order[j]] = point[order[j]];
    }
    return std::log(base(k));
  }

  std::optional<double> LogAt(size_t level) {
    if (level == order.size()) {
      auto it = t.rows.find(key);
      if (it == t.rows.end()) return std::nullopt;
      return std::log(it->second);
    }
    const int a = order[level];
    const std::vector<double>& vals = t.axis_values[a];
    const double x = point[a];
    auto at = [&](double v) {
      key[a] = v;
      return LogAt(level + 1);
    };
    const size_t hi =
        std::lower_bound(vals.begin(), vals.end(), x) - vals.begin();
    if (hi < vals.size() && vals[hi] == x) {
      if (auto y = at(x)) return y;
    }
    // Measured neighbours: below (descending) and above (ascending).
    std::vector<GridLogPoint> lo, up;
    for (size_t i = hi; i-- > 0 && lo.size() < 2;) {
      if (auto y = at(vals[i])) {
        lo.push_back({std::log(vals[i]), *y, LogBase(level, vals[i])});
      }
    }
    for (size_t i = hi; i < vals.size() && up.size() < 2; ++i) {
      if (vals[i] == x) continue;
      if (auto y = at(vals[i])) {
        up.push_back({std::log(vals[i]), *y, LogBase(level, vals[i])});
      }
    }
    // Inside: between the nearest measured neighbours. Outside, as in
    // EvalGrid (GridLogBeyond).
    if (lo.empty() && up.empty()) return std::nullopt;
    const double lx = std::log(x), lbase = LogBase(level, x);
    const bool has_base = static_cast<bool>(base);
    if (lo.empty()) {
      extrapolated = true;
      return GridLogBeyond(up[0], nullptr, lx, lbase, has_base, false);
    }
    if (up.empty()) {
      extrapolated = true;
      return GridLogBeyond(lo[0], lo.size() > 1 ? &lo[1] : nullptr, lx, lbase,
                           has_base, true);
    }
    return GridLogBetween(lo[0], up[0], lx, lbase, has_base);
  }
};

}  // namespace

std::optional<double> InterpolateTable(const MeasuredTable& t,
                                       const std::vector<double>& point,
                                       const std::vector<int>& order,
                                       bool* extrapolated,
                                       const TableBase& base) {
  if (t.rows.empty()) return std::nullopt;
  Interp in{t, point, order, base, false, point};
  std::optional<double> y = in.LogAt(0);
  if (extrapolated != nullptr) *extrapolated = in.extrapolated;
  if (!y) return std::nullopt;
  return std::exp(*y);
}

void SplitTable(const MeasuredTable& t, uint64_t seed, double fraction,
                MeasuredTable* train, MeasuredTable* heldout) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<uint64_t, const std::vector<double>*>> order;
  for (const auto& [key, sec] : t.rows) order.emplace_back(rng(), &key);
  std::sort(order.begin(), order.end());
  const size_t n_out = static_cast<size_t>(fraction * order.size());
  *train = MeasuredTable{t.axes, {}, t.dropped_physical, {}};
  *heldout = MeasuredTable{t.axes, {}, 0, {}};
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& key = *order[i].second;
    (i < n_out ? heldout : train)->rows.emplace(key, t.rows.at(key));
  }
  IndexAxes(train);
  IndexAxes(heldout);
}

}  // namespace servesim::calibrate
