// SGLang profiles from ../shared/calibration-data/aiconfigurator-sglang/
// (servesim-calibrate import --engine sglang): the rows read are the
// kernels SGLang runs (one attention backend per GPU, not the mean of the
// backends the tables time; fp8 compute on an fp8 KV cache; the CUDA-graph
// custom all-reduce), a shipped profile re-imports byte for byte, the
// held-out errors stay under the bounds reached when the profiles were
// shipped, and the provenance names the engine. Skips without the data.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "calibrate/import.h"
#include "sim/core/paths.h"
#include "sim/model/model_loader.h"

namespace servesim::calibrate {
namespace {

std::string DataRoot() { return RepoRoot() + "/../shared/calibration-data"; }
std::string SglangDir() { return DataRoot() + "/aiconfigurator-sglang"; }

#define REQUIRE_SGLANG()                                         \
  if (!std::filesystem::exists(SglangDir() + "/manifest.json")) \
  GTEST_SKIP() << "no tables at " << SglangDir()

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string TempDir(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(d);
  return d.string();
}

// B200's tables time TensorRT-LLM MHA and FlashInfer on the same shapes:
// the import reads SGLang's default (trtllm_mha) alone, or the backend
// asked for. context_attention.csv, 32 heads / 4 KV heads, batch 1,
// isl 16384, bf16: trtllm_mha 1.7009376525878905 ms, flashinfer
// 1.919113540649414 ms.
TEST(ImportSglangTest, B200ReadsOneAttentionBackend) {
  REQUIRE_SGLANG();
  const GpuSpec gpu = LoadGpuSpec("b200");
  const std::vector<double> key = {32, 4, 1, 16384};
  const GpuTables t = LoadGpuTables(SglangDir(), gpu, false, "",
                                    KernelsOf("sglang", "b200_sxm"));
  EXPECT_DOUBLE_EQ(t.prefill.rows.at(key), 1.7009376525878905e-3);
  const GpuTables fi = LoadGpuTables(SglangDir(), gpu, false, "",
                                     KernelsOf("sglang", "b200_sxm", "flashinfer"));
  EXPECT_DOUBLE_EQ(fi.prefill.rows.at(key), 1.919113540649414e-3);
  EXPECT_EQ(KernelsOf("sglang", "h200_sxm").attention, "fa3");
  EXPECT_THROW(KernelsOf("vllm", "b200_sxm", "flashinfer"), std::runtime_error);
}

// H100 prefill on an fp8 KV cache is FA3 with fp8 compute (attn_dtype
// fp8), bf16 with bf16 (8 heads / 1 KV head, batch 1, isl 2048: 0.0361904
// and 0.0369696 ms); GEMMs are SGLang's own kernels, one per dtype.
TEST(ImportSglangTest, PrefillComputeFollowsTheKvDtype) {
  REQUIRE_SGLANG();
  const GpuSpec gpu = LoadGpuSpec("h100-sxm");
  const EngineKernels k = KernelsOf("sglang", "h100_sxm");
  const std::vector<double> key = {8, 1, 1, 2048};
  const GpuTables fp8 = LoadGpuTables(SglangDir(), gpu, true, "", k);
  EXPECT_DOUBLE_EQ(fp8.prefill.rows.at(key), 0.036190399527549745e-3);
  const GpuTables bf16 = LoadGpuTables(SglangDir(), gpu, false, "", k);
  EXPECT_DOUBLE_EQ(bf16.prefill.rows.at(key), 0.03696959912776947e-3);
  EXPECT_EQ(bf16.engine_version, "0.5.14");
  EXPECT_EQ(bf16.gemm.rows.size(), 35742u);  // sglang_torch_linear rows
}

// The shipped h200-llama-3.1-70b-tp4-sglang.json re-imports byte for
// byte; every held-out MAPE stays under the bound set from what the
// shipped import reached (docs/calibration.md, SGLang table: bound = that
// figure rounded up by about half a point); MoE models are skipped once
// with their reason, their kernels' held-out error still reported.
TEST(ImportSglangTest, ShippedProfileReimportsAndHeldOutErrorsHold) {
  REQUIRE_SGLANG();
  ImportOptions o;
  o.data_root = DataRoot();
  o.out_dir = TempDir("import_sglang");
  o.engine = "sglang";
  o.models = {"llama-3.1-70b", "mixtral-8x7b", "mixtral-8x22b",
              "qwen3-30b-a3b", "qwen3-235b-a22b", "qwen3-coder-480b-a35b"};
  o.tps = {4};
  o.date = "2026-12-06";
  const ImportResult r = ImportAll(o);
  ASSERT_EQ(r.written.size(), 3u);
  const std::string name = "h200-llama-3.1-70b-tp4-sglang.json";
  const std::string shipped = RepoRoot() + "/models/profiles/" + name;
  ASSERT_TRUE(std::filesystem::exists(o.out_dir + "/" + name));
  EXPECT_TRUE(Slurp(o.out_dir + "/" + name) == Slurp(shipped))
      << name << " differs from a re-import (servesim-calibrate import "
      << "--engine sglang --out-dir models/profiles --date 2026-12-06)";
  const std::map<std::string, std::map<std::string, double>> bound = {
      {"h100-sxm",
       {{"gemm", 6.8}, {"decode_attention", 5.8}, {"prefill_attention", 5.8},
        {"allreduce", 3.9}, {"moe", 3.8}}},
      {"h200",
       {{"gemm", 8.9}, {"decode_attention", 5.2}, {"prefill_attention", 6.4},
        {"allreduce", 5.8}, {"moe", 4.3}}},
      {"b200",
       {{"gemm", 10.3}, {"decode_attention", 7.5}, {"prefill_attention", 5.3},
        {"allreduce", 3.7}, {"moe", 3.6}}}};
  int checked = 0;
  for (const KindError& e : r.errors) {
    ASSERT_TRUE(bound.count(e.gpu) && bound.at(e.gpu).count(e.kind))
        << e.gpu << " " << e.kind;
    EXPECT_LE(e.mape_pct, bound.at(e.gpu).at(e.kind)) << e.gpu << " " << e.kind;
    EXPECT_GT(e.heldout, 0) << e.gpu << " " << e.kind;
    ++checked;
  }
  EXPECT_EQ(checked, 15);
  ASSERT_EQ(r.skipped.size(), 5u);
  EXPECT_EQ(r.skipped[0],
            "mixtral-8x7b (every tp and GPU): mixture of experts: calibrated "
            "profiles time dense layers only (moe.csv's held-out error is "
            "reported)");
  std::filesystem::remove_all(o.out_dir);
}

// The profile says which engine, version, kernels and folder; the
// all-reduce is SGLang's; the base's source does not claim SGLang rows
// fitted it.
TEST(ImportSglangTest, ProfileNamesEngineAndKernels) {
  REQUIRE_SGLANG();
  const CalibrationProfile p = LoadCalibrationProfile(
      RepoRoot() + "/models/profiles/b200-llama-3.1-8b-tp2-sglang.json");
  EXPECT_EQ(p.import_info.value("engine_name", ""), "sglang");
  EXPECT_EQ(p.import_info.value("engine_version", ""), "0.5.14");
  EXPECT_EQ(p.import_info.value("engine", ""),
            "SGLang 0.5.14 kernels; NCCL 2.29.2 collectives");
  EXPECT_EQ(p.import_info["kernels"].value("attention", ""), "trtllm_mha");
  EXPECT_EQ(p.import_info.value("imported_from", ""),
            "../shared/calibration-data/aiconfigurator-sglang");
  EXPECT_EQ(p.allreduce_source.rfind("SGLang custom all-reduce (CUDA graph)", 0), 0u)
      << p.allreduce_source;
  const std::string base = p.Fit(ProfileOp::kDecodeAttention).grid.base.source;
  EXPECT_NE(base.find("no SGLang row in it"), std::string::npos) << base;
}

// The folder's manifest says whose tables it holds: --data alone imports
// SGLang's (named so), and the wrong --engine or a vLLM-only option is a
// one-line error.
TEST(ImportSglangTest, EngineFromTheManifestAndMismatches) {
  REQUIRE_SGLANG();
  ImportOptions o;
  o.data_dir = SglangDir();
  o.out_dir = TempDir("import_sglang_detect");
  o.gpus = {"h100-sxm"};
  o.models = {"qwen3-8b"};
  o.tps = {2};
  o.date = "2026-12-06";
  const ImportResult r = ImportAll(o);
  EXPECT_EQ(r.engine, "sglang");
  ASSERT_EQ(r.written.size(), 1u);
  EXPECT_EQ(std::filesystem::path(r.written[0]).filename(),
            "h100-sxm-qwen3-8b-tp2-sglang.json");
  o.engine = "vllm";
  try {
    ImportAll(o);
    ADD_FAILURE() << "expected an engine mismatch";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              SglangDir() + "/manifest.json: h100_sxm holds sglang tables, "
                            "but the import reads vllm's; expected --engine "
                            "sglang");
  }
  o.engine = "sglang";
  o.engine_version = "0.19.0";
  EXPECT_THROW(ImportAll(o), std::runtime_error);
  std::filesystem::remove_all(o.out_dir);
}

}  // namespace
}  // namespace servesim::calibrate
