// The roofline's error bar (see roofline_error.h).
#include "sim/cost/roofline_error.h"

#include <algorithm>
#include <cstdio>

namespace servesim {
namespace {

struct Row {
  const char* gpu;
  double prefill, decode;  // mean |1 - roofline / profile|, whole steps
};

// compare-models, 2026-12-04, all bf16 profiles per GPU as regenerated with
// residual bases (README "Both models against the imported profiles"):
// kernels preset ("after") and datasheet preset ("before"). Against the
// plain-lookup profiles of 2026-12-03 they were 7.6/11.7, 7.4/11.4,
// 10.6/9.7 (kernels) and 10.8/13.6, 12.2/15.1, 21.1/19.6 (datasheet): the
// profiles' decode steps beyond the measured grid (batch 128-256 at long
// context) now follow the roofline's growth instead of a slope >= 1.
constexpr Row kKernels[] = {
    {"h100-sxm", 0.078, 0.126}, {"h200", 0.074, 0.122}, {"b200", 0.107, 0.111}};
constexpr Row kDatasheet[] = {
    {"h100-sxm", 0.106, 0.146}, {"h200", 0.119, 0.166}, {"b200", 0.209, 0.226}};
// fit-roofline, held-out MAPE of the fp8 W8A8 GEMM rows (the GEMMs carry
// most of a step's time) and of attention on an fp8 cache.
constexpr Row kFp8Gemm[] = {
    {"h100-sxm", 0.163, 0.163}, {"h200", 0.174, 0.174}, {"b200", 0.200, 0.200}};
constexpr Row kFp8Kv[] = {
    {"h100-sxm", 0.159, 0.088}, {"h200", 0.152, 0.085}, {"b200", 0.376, 0.657}};

template <size_t N>
const Row* Find(const Row (&rows)[N], const std::string& gpu) {
  for (const Row& r : rows) {
    if (gpu == r.gpu) return &r;
  }
  return nullptr;
}

template <size_t N>
const Row& FindOrB200(const Row (&rows)[N], const std::string& gpu) {
  const Row* r = Find(rows, gpu);
  return r ? *r : *Find(rows, "b200");
}

std::string Pct(double x) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * x);
  return buf;
}

}  // namespace

CostModelError RooflineStepError(const std::string& gpu, const std::string& preset,
                                 const ModelSpec& model) {
  const bool measured = Find(kKernels, gpu) != nullptr;
  const Row& base = FindOrB200(preset == "datasheet" ? kDatasheet : kKernels, gpu);
  CostModelError e{base.prefill, base.decode, ""};
  e.source = std::string("roofline (") + preset + " preset) vs imported profiles of " +
             (measured ? gpu : "b200") + "'s measured kernels, mean whole-step error";
  if (model.fp8_weights()) {
    const Row& g = FindOrB200(kFp8Gemm, gpu);
    e.prefill = std::max(e.prefill, g.prefill);
    e.decode = std::max(e.decode, g.decode);
    e.source += "; fp8 GEMMs: held-out kernel error " + Pct(g.decode);
  }
  if (model.fp8_kv()) {
    const Row& k = FindOrB200(kFp8Kv, gpu);
    e.prefill = std::max(e.prefill, k.prefill);
    e.decode = std::max(e.decode, k.decode);
    e.source += "; fp8-KV attention: held-out kernel error " + Pct(k.prefill) + " prefill, " +
                Pct(k.decode) + " decode";
  }
  if (!measured) {
    e.source += " (ESTIMATE: no measured kernels of " + gpu +
                "; B200, a GPU the fit never saw, shown)";
  }
  return e;
}

}  // namespace servesim
