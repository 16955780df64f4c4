// servesim-calibrate: time each operation of a model's step on the GPU (or,
// with --dry-run, synthesize the timings from the roofline model), fit
// per-op models, write a profile for the `calibrated` cost model, and
// validate a profile on steps it was not fitted to. Like servesim's main,
// this is the only place that prints errors and picks exit codes (2: bad
// input or no GPU).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "calibrate/compare_engines.h"
#include "calibrate/compare_models.h"
#include "calibrate/roofline_fit.h"
#include "calibrate/fit.h"
#include "calibrate/grid.h"
#include "calibrate/import.h"
#include "calibrate/kernel_speed.h"
#include "calibrate/profile.h"
#include "calibrate/step_sample.h"
#include "calibrate/synthetic_source.h"
#include "calibrate/validate.h"
#include "sim/core/output_file.h"
#include "sim/core/json_view.h"
#include "sim/core/paths.h"
#include "sim/core/temp_files.h"
#include "sim/model/model_loader.h"

#ifdef SERVESIM_HAVE_GPU_HARNESS
#include "calibrate/gpu_harness_api.h"
#endif

namespace servesim::calibrate {
namespace {

constexpr const char* kNoDevice =
    "no CUDA device: use --dry-run, or run calibrate/run_on_device.sh on a "
    "GPU machine";

struct Options {
  std::string model, out, gpu = "h200", profile;
  int tp = 1;
  double budget_s = 420;
  bool dry_run = false;
  uint64_t seed = 1;
  int holdout_every = 4;
  std::string scenario = "scenarios/calibration_steps.json";  // validate
  std::vector<std::string> sets;  // validate: --set overrides
  int steps = 120, worst = 8;
};

// The device, or an error Status when there is none to time on.
StatusOr<DeviceInfo> RequireDevice() {
#ifdef SERVESIM_HAVE_GPU_HARNESS
  try {
    DeviceInfo d = QueryDeviceAndCeilings();
    if (d.sm_count > 0) return d;
  } catch (const std::exception& e) {
    return Status::Error(std::string(kNoDevice) + " (" + e.what() + ")");
  }
#endif
  return Status::Error(kNoDevice);
}

void PrintFits(const CalibrationProfile& p) {
  std::printf("  %-18s %-7s %9s   %s\n", "op", "form", "held-out",
              "MAPE of every form tried");
  for (const OpFit& f : p.ops) {
    std::string all;
    for (const auto& [form, mape] : f.candidate_mape_pct) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%s%s %.2f%%", all.empty() ? "" : ", ",
                    form.c_str(), mape);
      all += buf;
    }
    std::printf("  %-18s %-7s %8.2f%%   %s\n", ProfileOpName(f.op),
                FitFormName(f.form), f.heldout_mape_pct, all.c_str());
  }
}

Status Run(const Options& o) {
  StatusOr<ModelSpec> model =
      CatchConfigErrors([&] { return LoadModelSpec(o.model); });
  if (!model.ok()) return model.status();
  if (const std::string why = TensorParallelProblem(*model, o.tp); !why.empty())
    return Status::Error("--tp: " + why);
  if (model->is_moe()) {
    return Status::Error(model->name +
                         ": mixture-of-experts layers are not "
                         "calibrated yet (dense models only)");
  }
  const std::vector<OpPoint> grid =
      MakeGrid(*model, o.tp, GridOptionsForBudget(o.budget_s));
  ProfileInputs in{model->name,
                   o.tp,
                   o.gpu,
                   {},
                   o.dry_run,
                   "",
                   RooflineParams{}.step_overhead_s,
                   "roofline default (not measured: per-kernel timing cannot "
                   "see host scheduling)",
                   o.holdout_every};
  std::vector<OpTiming> timings;
  if (o.dry_run) {
    StatusOr<GpuSpec> gpu =
        CatchConfigErrors([&] { return LoadGpuSpec(o.gpu); });
    if (!gpu.ok()) return gpu.status();
    SyntheticOptions so;
    so.seed = o.seed;
    timings = SyntheticTimings(*model, *gpu, o.tp, grid, so);
    in.device = SyntheticDevice(*gpu);
  } else {
    StatusOr<DeviceInfo> dev = RequireDevice();
    if (!dev.ok()) return dev.status();
    in.device = *dev;
#ifdef SERVESIM_HAVE_GPU_HARNESS
    try {
      timings = TimeOps(*model, o.tp, grid, o.budget_s);
    } catch (const std::exception& e) {
      return Status::Error(std::string("timing on the GPU failed: ") + e.what());
    }
#endif
  }
  std::vector<OpFit> fits;
  try {
    fits = FitAll(*model, o.tp, timings, FitOptions{o.holdout_every});
  } catch (const std::invalid_argument& e) {
    return Status::Error(std::string("fit: ") + e.what());
  }
  const CalibrationProfile p = BuildProfile(in, timings, std::move(fits));
  if (Status st = WriteProfile(o.out, p); !st.ok()) return st;
  std::printf("servesim-calibrate: %s tp=%d on %s: %zu timings -> %s\n",
              p.model.c_str(), p.tp, p.device.name.c_str(), timings.size(),
              o.out.c_str());
  PrintFits(p);
  return Status::Ok();
}

// The scenario whose steps validate a profile (scenarios/calibration_steps
// .json unless told otherwise), with model, GPU, tp and cost model taken from the profile
// so the sampled batches are those the calibrated simulator produces.
StatusOr<Scenario> ValidationScenario(const Options& o,
                                      const CalibrationProfile& p) {
  if (!IsValidUtf8(o.profile)) {
    return Status::Error("--profile " + o.profile +
                         ": invalid UTF-8; expected a UTF-8 file name (it "
                         "goes into the validation scenario's JSON)");
  }
  std::vector<std::string> sets = {
      "model=" + p.model, "hardware.gpu=" + p.gpu,
      "hardware.tp=" + std::to_string(p.tp),
      "cost_model=" + nlohmann::json{{"type", "calibrated"},
                                     {"profile", o.profile}}
                          .dump()};
  sets.insert(sets.end(), o.sets.begin(), o.sets.end());
  return LoadScenarioFile(ResolveDataPath(o.scenario), sets);
}

Status Validate(const Options& o) {
  // The GPU check comes first so that, without one, the answer is about the
  // GPU and not about whichever input happens to be wrong.
  ValidationContext ctx;
  if (!o.dry_run) {
    StatusOr<DeviceInfo> dev = RequireDevice();
    if (!dev.ok()) return dev.status();
    ctx.device = dev->name;
    ctx.driver = dev->driver;
    ctx.measured_by = "graph-captured forward passes (CUDA events, median)";
  }
  StatusOr<CalibrationProfile> p = ReadProfile(o.profile);
  if (!p.ok()) return p.status();
  StatusOr<Scenario> sc = ValidationScenario(o, *p);
  if (!sc.ok()) return sc.status();
  StepSample sample;
  try {
    sample = SampleSteps(*sc, o.steps);
  } catch (const std::invalid_argument& e) {
    return Status::Error(e.what());
  }
  ctx.profile_path = o.profile;
  ctx.model = p->model;
  ctx.tp = p->tp;
  ctx.scenario = sc->file;
  ctx.seed = sc->seed;
  ctx.simulated_steps = sample.simulated_steps;
  ctx.total_layers = sc->model.num_layers;
  std::vector<StepTiming> measured;
  if (o.dry_run) {
    SyntheticOptions so;
    so.seed = o.seed + 1000;  // fresh noise: not the draws the fit saw
    measured = SyntheticStepTimings(sc->model, sc->gpu, p->tp, sample.steps, so);
    ctx.device = kDryRunDeviceName;
    ctx.driver = "none";
    ctx.synthetic = true;
    ctx.measured_by = "the roofline model plus launch constants and noise";
    ctx.distinct_layers = ctx.total_layers;
  } else {
#ifdef SERVESIM_HAVE_GPU_HARNESS
    try {
      measured = TimeSteps(sc->model, p->tp, sample.steps, o.budget_s,
                           &ctx.distinct_layers);
    } catch (const std::exception& e) {
      return Status::Error(std::string("executing steps on the GPU failed: ") +
                           e.what());
    }
#endif
  }
  const RooflineCostModel roofline(sc->model, sc->gpu, p->tp, RooflineParams{});
  StepValidation v;
  try {
    v = ValidateSteps(sample.steps, measured,
                      {{"calibrated", sc->cost_model.get()},
                       {"roofline", &roofline}});
  } catch (const std::invalid_argument& e) {
    return Status::Error(e.what());
  }
  std::printf("servesim-calibrate validate: %s\n", o.profile.c_str());
  std::fputs(ValidationTable(v, ctx, o.worst).c_str(), stdout);
  if (o.out.empty()) return Status::Ok();
  return WriteTextFile(o.out, DumpOutputJson(ValidationJson(v, ctx, o.worst), 2) + "\n");
}

// Attention kernels against the measured ceilings (kernel_speed.h).
Status KernelSpeedCommand(const Options& o) {
  // As in validate: without a GPU the answer is about the GPU.
  DeviceInfo device;
  if (!o.dry_run) {
    StatusOr<DeviceInfo> dev = RequireDevice();
    if (!dev.ok()) return dev.status();
    device = *dev;
  }
  StatusOr<ModelSpec> model =
      CatchConfigErrors([&] { return LoadModelSpec(o.model); });
  if (!model.ok()) return model.status();
  if (const std::string why = TensorParallelProblem(*model, o.tp); !why.empty())
    return Status::Error("--tp: " + why);
  const std::vector<OpPoint> points = KernelSpeedPoints();
  KernelSpeedContext ctx{model->name, "", "", "", o.tp, o.dry_run, 0, 0};
  std::vector<OpTiming> timings;
  if (o.dry_run) {
    StatusOr<GpuSpec> gpu = CatchConfigErrors([&] { return LoadGpuSpec(o.gpu); });
    if (!gpu.ok()) return gpu.status();
    SyntheticOptions so;
    so.seed = o.seed;
    timings = SyntheticTimings(*model, *gpu, o.tp, points, so);
    device = SyntheticDevice(*gpu);
    device.copy_bytes_per_s = gpu->hbm_bytes_per_s;
    device.gemm_bf16_flops = gpu->bf16_flops;
    ctx.ceilings_source = o.gpu + " datasheet";
  } else {
    ctx.ceilings_source = "measured";
#ifdef SERVESIM_HAVE_GPU_HARNESS
    try {
      timings = TimeOps(*model, o.tp, points, o.budget_s);
    } catch (const std::exception& e) {
      return Status::Error(std::string("timing on the GPU failed: ") + e.what());
    }
#endif
  }
  ctx.device = device.name;
  ctx.driver = device.driver;
  ctx.copy_bytes_per_s = device.copy_bytes_per_s;
  ctx.gemm_bf16_flops = device.gemm_bf16_flops;
  std::vector<KernelSpeedRow> rows;
  try {
    rows = KernelSpeed(*model, o.tp, device, timings);
  } catch (const std::invalid_argument& e) {
    return Status::Error(e.what());
  }
  std::printf("servesim-calibrate kernel-speed:\n");
  std::fputs(KernelSpeedTable(rows, ctx).c_str(), stdout);
  if (o.out.empty()) return Status::Ok();
  return WriteTextFile(o.out, DumpOutputJson(KernelSpeedJson(rows, ctx), 2) + "\n");
}

// Profiles from the public measured tables (import.h).
Status ImportCommand(ImportOptions o) {
  // Without --data each GPU's folder is found there (data_folders.h).
  o.data_root = RepoRoot() + "/../shared/calibration-data";
  ImportResult r;
  try {
    r = ImportAll(o);
  } catch (const std::exception& e) {
    return Status::Error(std::string("import: ") + e.what());
  }
  std::printf("servesim-calibrate import: %zu %sprofiles -> %s\n",
              r.written.size(), r.engine == "sglang" ? "SGLang " : "",
              o.out_dir.c_str());
  std::printf("held-out error (seed %llu, %.0f%% of rows held out):\n",
              static_cast<unsigned long long>(o.seed),
              100 * o.heldout_fraction);
  std::fputs(ImportTable(r).c_str(), stdout);
  return Status::Ok();
}

// The roofline's kernel constants fitted to the measured tables
// (roofline_fit.h).
Status FitRooflineCommand(RooflineFitOptions o, const std::vector<std::string>& train,
                          const std::vector<std::string>& heldout) {
  if (!train.empty()) {
    // Other GPUs: each GPU's tables from the folder that lists it.
    o.train_gpus = train;
    o.heldout_gpus = heldout;
    o.data_root = RepoRoot() + "/../shared/calibration-data";
  } else if (!heldout.empty()) {
    return Status::Error("fit-roofline: --heldout-gpu without --train-gpu; "
                         "expected the GPUs to fit on too");
  } else if (o.data_dir.empty()) {
    o.data_dir =
        RepoRoot() + "/../shared/calibration-data/aiconfigurator-vllm-0.24.0";
  }
  RooflineFit f;
  try {
    f = FitRoofline(o);
  } catch (const std::exception& e) {
    return Status::Error(e.what());
  }
  std::printf("servesim-calibrate fit-roofline: %s (seed %llu, %.0f%% of "
              "the training GPUs' rows held out)\n",
              o.data_dir.empty() ? "each GPU's folder" : o.data_dir.c_str(), static_cast<unsigned long long>(o.seed),
              100 * o.heldout_fraction);
  std::fputs(RooflineFitReport(f).c_str(), stdout);
  return Status::Ok();
}

// Roofline vs profile on a grid of steps (compare_models.h).
Status CompareCommand(const std::vector<std::string>& profiles,
                      const std::string& preset) {
  for (const std::string& path : profiles) {
    StatusOr<CalibrationProfile> p = ReadProfile(path);
    if (!p.ok()) return p.status();
    StatusOr<ModelSpec> model =
        CatchConfigErrors([&] { return LoadModelSpec(p->model); });
    if (!model.ok()) return model.status();
    // The roofline prices the profile's dtypes (fp8 profiles: fp8 rates).
    model->SetWeightDtype(p->dtype);
    model->SetKvCacheDtype(p->kv_cache_dtype);
    StatusOr<GpuSpec> gpu = CatchConfigErrors([&] { return LoadGpuSpec(p->gpu); });
    if (!gpu.ok()) return gpu.status();
    const RooflineCostModel roofline(*model, *gpu, p->tp,
                                     preset == "datasheet"
                                         ? RooflineParams::Datasheet()
                                         : RooflineParams::Kernels(gpu->roofline_fit));
    const std::string title = "servesim-calibrate compare-models: " + path +
                              " (" + model->Label() + " tp=" + std::to_string(p->tp) +
                              " on " + p->gpu + "; roofline " + preset +
                              " preset)";
    const CalibratedCostModel cal(*p, path, *model, *gpu, *gpu, p->tp);
    std::fputs(CompareTable(CompareModels(roofline, cal, *model, p->tp), title)
                   .c_str(),
               stdout);
    std::printf("\n");
  }
  return Status::Ok();
}

// The engine a profile's kernels came from, as its import recorded it
// ("vLLM 0.24.0 kernels; ..." -> "vLLM 0.24.0", SGLang's with its
// attention kernel: "SGLang 0.5.14 fa3"); else its file name.
std::string EngineLabel(const CalibrationProfile& p, const std::string& path) {
  const std::string e = p.import_info.is_object()
                            ? p.import_info.value("engine", "")
                            : std::string();
  const size_t at = e.find(" kernels");
  if (at == std::string::npos) return path;
  // SGLang's profiles name their attention kernel (one of several).
  const std::string attention =
      p.import_info.contains("kernels")
          ? p.import_info["kernels"].value("attention", "")
          : std::string();
  return e.substr(0, at) + (attention.empty() ? "" : " " + attention);
}

// Two profiles of one deployment on the same steps (compare_engines.h).
Status CompareEnginesCommand(const std::vector<std::string>& paths) {
  if (paths.size() != 2) {
    return Status::Error("--profile: expected two profiles, got " +
                         std::to_string(paths.size()));
  }
  std::vector<CalibrationProfile> p;
  for (const std::string& path : paths) {
    StatusOr<CalibrationProfile> q = ReadProfile(path);
    if (!q.ok()) return q.status();
    p.push_back(*q);
  }
  if (p[0].model != p[1].model || p[0].gpu != p[1].gpu || p[0].tp != p[1].tp ||
      p[0].dtype != p[1].dtype || p[0].kv_cache_dtype != p[1].kv_cache_dtype) {
    return Status::Error(paths[1] + ": " + p[1].model + " tp=" +
                         std::to_string(p[1].tp) + " on " + p[1].gpu + " (" +
                         p[1].dtype + ", " + p[1].kv_cache_dtype + " KV), but " +
                         paths[0] + " is " + p[0].model + " tp=" +
                         std::to_string(p[0].tp) + " on " + p[0].gpu + " (" +
                         p[0].dtype + ", " + p[0].kv_cache_dtype +
                         " KV); expected two profiles of one deployment");
  }
  StatusOr<ModelSpec> model =
      CatchConfigErrors([&] { return LoadModelSpec(p[0].model); });
  if (!model.ok()) return model.status();
  model->SetWeightDtype(p[0].dtype);
  model->SetKvCacheDtype(p[0].kv_cache_dtype);
  StatusOr<GpuSpec> gpu = CatchConfigErrors([&] { return LoadGpuSpec(p[0].gpu); });
  if (!gpu.ok()) return gpu.status();
  const CalibratedCostModel a(p[0], paths[0], *model, *gpu, *gpu, p[0].tp);
  const CalibratedCostModel b(p[1], paths[1], *model, *gpu, *gpu, p[1].tp);
  const std::string title = "servesim-calibrate compare-engines: " +
                            model->Label() + " tp=" + std::to_string(p[0].tp) +
                            " on " + p[0].gpu;
  std::fputs(EngineTable(CompareEngines(a, b), title, EngineLabel(p[0], paths[0]),
                         EngineLabel(p[1], paths[1]))
                 .c_str(),
             stdout);
  return Status::Ok();
}

}  // namespace
}  // namespace servesim::calibrate

int main(int argc, char** argv) {
  using servesim::calibrate::Options;
  // Killed mid-write (SIGTERM, Ctrl-C): no *.tmp.* profile left behind.
  servesim::RemoveTempFilesOnFatalSignals();
  CLI::App app{"servesim-calibrate: fit a calibrated cost-model profile"};
  app.require_subcommand(1);
  Options run_o, val_o, speed_o;
  CLI::App* run =
      app.add_subcommand("run", "Time the grid, fit, write a profile");
  run->add_option("--model", run_o.model, "Model name or JSON")->required();
  run->add_option("--tp", run_o.tp, "Tensor-parallel degree")
      ->check(CLI::PositiveNumber);
  run->add_option("--out", run_o.out, "Profile JSON to write")->required();
  run->add_option("--budget-s", run_o.budget_s,
                  "GPU time budget (thins the grid)");
  run->add_option("--gpu", run_o.gpu,
                  "models/gpu name of the device (default h200)");
  run->add_option("--seed", run_o.seed, "Dry-run noise seed");
  run->add_option("--holdout-every", run_o.holdout_every,
                  "Hold out every k-th point")
      ->check(CLI::Range(2, 100));
  run->add_flag(
      "--dry-run", run_o.dry_run,
      "Synthetic timings from the roofline model (no GPU; not a measurement)");
  CLI::App* val =
      app.add_subcommand("validate", "Execute simulated steps and compare them with the profile's (and the roofline's) predictions");
  val->add_option("--profile", val_o.profile, "Profile JSON")->required();
  val->add_option("--scenario", val_o.scenario,
                  "Scenario whose simulated steps are executed (default "
                  "scenarios/calibration_steps.json); model, GPU, tp and cost "
                  "model come from the profile");
  val->add_option("--set", val_o.sets, "Scenario override key.path=value");
  val->add_option("--steps", val_o.steps, "Steps to sample and execute")
      ->check(CLI::Range(1, 100000));
  val->add_option("--worst", val_o.worst, "Worst steps to list per model")
      ->check(CLI::Range(0, 1000));
  val->add_option("--out", val_o.out, "Validation report JSON to write");
  val->add_option("--budget-s", val_o.budget_s, "GPU time budget");
  val->add_option("--seed", val_o.seed, "Dry-run noise seed");
  val->add_flag("--dry-run", val_o.dry_run,
                "Validate against synthetic timings (no GPU)");
  CLI::App* speed = app.add_subcommand(
      "kernel-speed",
      "Time the attention kernels at the issue's shapes and report the "
      "achieved fraction of the measured copy bandwidth / GEMM rate");
  speed_o.model = "llama-3.1-8b";
  speed_o.budget_s = 20;
  speed->add_option("--model", speed_o.model, "Model whose head shapes are timed");
  speed->add_option("--tp", speed_o.tp, "Tensor-parallel degree")
      ->check(CLI::PositiveNumber);
  speed->add_option("--gpu", speed_o.gpu, "models/gpu name (dry run: its datasheet)");
  speed->add_option("--budget-s", speed_o.budget_s, "GPU time budget");
  speed->add_option("--out", speed_o.out, "Report JSON to write");
  speed->add_option("--seed", speed_o.seed, "Dry-run noise seed");
  speed->add_flag("--dry-run", speed_o.dry_run,
                  "Synthetic timings against datasheet ceilings (no GPU)");
  servesim::calibrate::ImportOptions imp_o;
  CLI::App* imp = app.add_subcommand(
      "import",
      "Profiles from public measured kernel tables (aiconfigurator, vLLM "
      "0.24.0 and 0.14.0, SGLang 0.5.14) for each GPU x model x tp, with "
      "held-out errors");
  imp->add_option(
      "--data", imp_o.data_dir,
      "Table directory for every GPU (default: per GPU, the "
      "folder under ../shared/calibration-data beside the "
      "repository whose manifest lists it: "
      "aiconfigurator-vllm-0.24.0 or aiconfigurator-vllm-more-gpus)");
  imp->add_option("--out-dir", imp_o.out_dir, "Where profiles are written")
      ->required();
  imp->add_option(
      "--gpu", imp_o.gpus,
      "models/gpu names (default h100-sxm, h200, b200; also a100-80gb, "
      "l40s, rtx-pro-6000)");
  imp->add_option("--model", imp_o.models, "models/llm names");
  imp->add_option("--tp", imp_o.tps, "Tensor-parallel degrees")
      ->check(CLI::Range(1, 1024));
  imp->add_option("--seed", imp_o.seed, "Held-out split seed");
  imp->add_option("--heldout", imp_o.heldout_fraction,
                  "Fraction of rows held out")
      ->check(CLI::Range(0.05, 0.5));
  imp->add_option("--date", imp_o.date, "Import date to record (ISO 8601)");
  imp->add_flag("--fp8", imp_o.fp8,
                "fp8 weights (W8A8 GEMM rows) and KV cache (fp8 attention rows): "
                "profiles named <gpu>-<model>-tp<N>-fp8.json");
  imp->add_option("--engine-version", imp_o.engine_version,
                  "One vLLM version's tables where the data keeps them beside "
                  "the newest (<gpu dir>-vllm-<version>: RTX PRO 6000 0.19.0, "
                  "the measured serving runs' engine); bf16 only; profiles "
                  "named <gpu>-<model>-tp<N>-vllm-<version>.json");
  imp->add_option("--engine", imp_o.engine,
                  "Whose kernel tables: vllm (default) or sglang "
                  "(../shared/calibration-data/aiconfigurator-sglang: SGLang "
                  "0.5.14 on h100-sxm, h200, b200; profiles named "
                  "<gpu>-<model>-tp<N>[-fp8]-sglang.json; without --model, "
                  "every models/llm model); with --data, default: its manifest's")
      ->check(CLI::IsMember({"vllm", "sglang"}));
  imp->add_option("--attention-backend", imp_o.attention_backend,
                  "SGLang only: the attention kernel_source to read instead of "
                  "SGLang's default (fa3 on Hopper, trtllm_mha on B200), e.g. "
                  "flashinfer; profiles end in -sglang-<backend>.json");
  bool plain_interpolation = false;
  imp->add_flag("--plain-interpolation", plain_interpolation,
                "Interpolate log t between grid neighbours (the lookup "
                "before residual bases) instead of log(t / roofline)");
  imp->callback([&] {
    imp_o.residual_base = !plain_interpolation;
    // SGLang's folder is imported for every model it covers.
    if (imp_o.engine == "sglang" && imp->count("--model") == 0) {
      imp_o.models = servesim::AvailableModels();
    }
  });
  servesim::calibrate::RooflineFitOptions fit_o;
  CLI::App* fit = app.add_subcommand(
      "fit-roofline",
      "Fit the roofline's kernel constants to the measured tables; print "
      "them and their held-out error");
  fit->add_option("--data", fit_o.data_dir,
                  "Measured tables (default "
                  "../shared/calibration-data/aiconfigurator-vllm-0.24.0 "
                  "beside the repository)");
  fit->add_option("--seed", fit_o.seed, "Held-out split seed");
  std::vector<std::string> fit_train, fit_heldout;
  fit->add_option("--train-gpu", fit_train,
                  "GPUs whose rows fit the constants, 80% of each (default "
                  "h100-sxm and h200); each GPU's tables from the folder that "
                  "lists it unless --data is given");
  fit->add_option("--heldout-gpu", fit_heldout,
                  "GPUs held out whole, every row a test (default b200; none "
                  "when --train-gpu is given without it)");
  std::vector<std::string> cmp_profiles;
  CLI::App* cmp = app.add_subcommand(
      "compare-models",
      "Roofline vs calibrated profile step times (and ratio) on a grid of "
      "decode, prefill and mixed steps");
  cmp->add_option("--profile", cmp_profiles, "Profile JSON (repeatable)")
      ->required();
  std::string cmp_preset = "kernels";
  cmp->add_option("--roofline-preset", cmp_preset,
                  "kernels (default) or datasheet (the roofline before it "
                  "knew kernels)")
      ->check(CLI::IsMember({"kernels", "datasheet"}));
  std::vector<std::string> eng_profiles;
  CLI::App* eng = app.add_subcommand(
      "compare-engines",
      "Two profiles of one deployment (e.g. vLLM's and SGLang's imported "
      "kernels) on the same step shapes, whole step and per part");
  eng->add_option("--profile", eng_profiles,
                  "Profile JSON, twice: A then B (same model, GPU, tp, dtypes)")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "servesim-calibrate: error: " << e.what() << "\n";
    return 2;
  }
  const servesim::Status st =
      run->parsed()     ? servesim::calibrate::Run(run_o)
      : speed->parsed() ? servesim::calibrate::KernelSpeedCommand(speed_o)
      : imp->parsed()   ? servesim::calibrate::ImportCommand(imp_o)
      : cmp->parsed()   ? servesim::calibrate::CompareCommand(cmp_profiles,
                                                                cmp_preset)
      : fit->parsed()   ? servesim::calibrate::FitRooflineCommand(fit_o, fit_train, fit_heldout)
      : eng->parsed()   ? servesim::calibrate::CompareEnginesCommand(eng_profiles)
                        : servesim::calibrate::Validate(val_o);
  if (!st.ok()) {
    // One printable line, whatever bytes a file name holds.
    std::cerr << "servesim-calibrate: error: " << servesim::PrintableText(st.message())
              << "\n";
    return 2;
  }
  return 0;
}
