#!/usr/bin/env bash
# One calibration session on a GPU machine, in at most 8 minutes: build for
# Hopper (sm_90a), run the kernel correctness tests (ctest label "gpu"),
# measure ceilings and the attention kernels' fractions of them, calibrate
# Llama-3.1-8B at tp 1 (and, time allowing, the
# Llama-3.1-70B layer shapes at tp 4 and 8), validate, and leave the
# profiles, validation reports and a log in OUTDIR.
#
# usage: calibrate/run_on_device.sh [--dry-run] OUTDIR
#   --dry-run (or DRY_RUN=1): no GPU needed; builds without requiring CUDA
#   and runs the same steps on synthetic timings from the roofline model.
#   The outputs are labelled synthetic and are not measurements.
# env: GPU (models/gpu name of the device, default h200), BUILD_DIR
#      (default build-device), JOBS (default: all cores).
set -euo pipefail

dry_run=${DRY_RUN:-0}
if [ "${1:-}" = "--dry-run" ]; then dry_run=1; shift; fi
out=${1:?usage: calibrate/run_on_device.sh [--dry-run] OUTDIR}
gpu=${GPU:-h200}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-device}
jobs=${JOBS:-$(nproc)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log="$out/run.log"
start=$(date +%s)
deadline=$((start + 8 * 60 - 20))  # 20 s margin for the final write-out

say() { echo "[$(($(date +%s) - start))s] $*" | tee -a "$log"; }
left() { echo $((deadline - $(date +%s))); }
# Runs a step under the time left, logging everything it prints.
step() {
  local budget; budget=$(left)
  if [ "$budget" -le 5 ]; then say "SKIPPED (out of time): $*"; return 1; fi
  say "+ $*"
  timeout "$budget" "$@" >>"$log" 2>&1
}

: >"$log"
say "servesim calibration session; dry_run=$dry_run gpu=$gpu out=$out"
flags=(-DCMAKE_BUILD_TYPE=Release -DSERVESIM_BENCHMARKS=OFF)
if [ "$dry_run" = 1 ]; then
  dry=(--dry-run)
  prefix="dryrun-$gpu"
  flags+=(-DCMAKE_CUDA_COMPILER=OFF)  # CPU only, even where nvcc exists
else
  dry=()
  prefix="$gpu"
  command -v nvidia-smi >/dev/null && nvidia-smi >>"$log" 2>&1 || true
  flags+=(-DCMAKE_CUDA_ARCHITECTURES=90a
          "-DCMAKE_CUDA_FLAGS=-gencode=arch=compute_90a,code=sm_90a")
fi
step cmake -S "$root" -B "$build" "${flags[@]}"
if [ "$dry_run" = 1 ]; then
  step cmake --build "$build" -j"$jobs" --target servesim servesim-calibrate
else
  step cmake --build "$build" -j"$jobs"
  if (cd "$build" && ctest -N -L gpu | grep -q "Total Tests: [1-9]"); then
    # Wrong kernels make every timing meaningless: stop. A failing
    # step-executor check taints only validate's figures: log and go on.
    step bash -c "cd '$build' && ctest -L gpu -E 'StepExecutor|TimeSteps' --output-on-failure" ||
      { say "kernel correctness tests FAILED: not timing wrong kernels"; exit 1; }
    step bash -c "cd '$build' && ctest -L gpu -R 'StepExecutor|TimeSteps' --output-on-failure" ||
      say "STEP EXECUTOR TESTS FAILED: validation figures below are suspect"
  else
    say "no ctest label gpu in this build: kernel tests not run"
  fi
fi
cal="$build/servesim-calibrate"

# calibrate MODEL TP BUDGET VALIDATE_BUDGET: profile + validation report
# (120 steps of scenarios/calibration_steps.json executed as real forward
# passes), or a logged skip.
calibrate() {
  local model=$1 tp=$2 budget=$3 vbudget=$4 name
  name="$prefix-$model"; [ "$tp" -gt 1 ] && name="$name-tp$tp"
  step "$cal" run --model "$model" --tp "$tp" --gpu "$gpu" \
      --budget-s "$budget" --out "$out/$name.json" "${dry[@]}" || return 1
  step bash -c '"$0" validate --profile "$1" --out "$2" "${@:4}" | tee "$3"' \
      "$cal" "$out/$name.json" "$out/validation-$name.json" \
      "$out/validation-$name.txt" --budget-s "$vbudget" "${dry[@]}" || return 1
  say "wrote $out/$name.json and $out/validation-$name.{json,txt}"
}

# Attention kernels against the measured ceilings (reported, not asserted).
step bash -c '"$0" kernel-speed --gpu "$1" --budget-s 15 --out "$2" "${@:4}" | tee "$3"' \
    "$cal" "$gpu" "$out/kernel-speed-$prefix.json" "$out/kernel-speed-$prefix.txt" \
    "${dry[@]}" || say "kernel-speed did not finish"

calibrate llama-3.1-8b 1 150 45
for tp in 4 8; do
  if [ "$(left)" -gt 130 ]; then
    calibrate llama-3.1-70b "$tp" 50 30 || say "70B tp=$tp did not finish"
  else
    say "SKIPPED llama-3.1-70b tp=$tp: $(left) s left"
  fi
done
say "done in $(($(date +%s) - start)) s"
