#!/bin/sh
# The GPU check (`make gpu-check`, issue 27): on a machine with an NVIDIA GPU, runs every GPU
# test (cuda_tests), writes the development models, runs each with `verisub-run --device cuda`
# (float32 and --optimize with outputs checked against the reference backend; --precision fp16,
# whose Session checks its own outputs against the budget), our implicit-GEMM convolution against
# cuDNN on the models' convolutions (verisub-igemm-bench), times PyTorch on the same GPU
# (eager, CUDA graphs, torch.compile) and prints the table (bench/gpu/gpu_table.py).
#   sh bench/gpu/gpu_check.sh [BUILD_DIR] [OUT_DIR]      (a build of this checkout)
#   sh bench/gpu/gpu_check.sh --bundle [OUT_DIR]         (a GPU machine without this project's
#                                                         Debian packages: bench/gpu/bundle.sh's
#                                                         .devrun/bundle.tar.xz, CUDA libraries
#                                                         found on the machine)
# Environment: GPU_RUNS (timed runs per column, default 200), GPU_MODELS (default: every
# development model), GPU_COMPILE_BUDGET (seconds torch.compile may take in all, default 120),
# GPU_RUN_TIMEOUT (seconds one verisub-run may take, default 600), GPU_TORCH_MODELS (the models
# PyTorch runs, comma-separated; default all it has), GPU_OPT_MODELS (the models run with
# --optimize too; default GPU_MODELS).
# Everything is written under OUT_DIR (default BUILD_DIR/gpu-check); a failing step is reported
# and the next one runs.
set -u
if [ "${1:-}" = "--bundle" ]; then
  OUT=${2:-/tmp/gpu-check}
  mkdir -p /tmp/v && tar xJf .devrun/bundle.tar.xz -C /tmp/v || exit 1
  libdir() { d=$(find /usr /opt /lib 2>/dev/null -name "$1" | head -1); [ -n "$d" ] && dirname "$d"; }
  LD_LIBRARY_PATH=/tmp/v/lib:$(libdir libcudnn.so.9):$(libdir libcublasLt.so.13):$(libdir libcudart.so.13)
  export LD_LIBRARY_PATH
  RUN=/tmp/v/verisub-run MODELS_BIN=/tmp/v/verisub-models TESTS=/tmp/v/cuda_tests
  IGEMM=/tmp/v/verisub-igemm-bench
else
  BUILD=${1:-build}
  OUT=${2:-$BUILD/gpu-check}
  RUN=$BUILD/session/verisub-run MODELS_BIN=$BUILD/runtime/models/verisub-models
  TESTS=$BUILD/tests/runtime/cuda_tests IGEMM=$BUILD/runtime/cuda/verisub-igemm-bench
fi
RUNS=${GPU_RUNS:-200}
MODELS=${GPU_MODELS:-"resnet50 resnext50_32x4d inception_v3 squeezenet1_1 mobilenet_v2 nasnet_a nasrnn bert_base"}
COMPILE_BUDGET=${GPU_COMPILE_BUDGET:-120}
PYTHON=${PYTHON:-python3}
RUN_TIMEOUT=${GPU_RUN_TIMEOUT:-600}
OPT_MODELS=${GPU_OPT_MODELS:-$MODELS}
TORCH_MODELS=${GPU_TORCH_MODELS:-resnet50,resnext50_32x4d,inception_v3,squeezenet1_1,mobilenet_v2,bert_base}
mkdir -p "$OUT/models"
start=$(date +%s)
step() { echo "== $(($(date +%s) - start)) s: $*"; }

step "the GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader \
  | tee "$OUT/gpu.txt" || echo "nvidia-smi failed"
step "GPU tests"
"$TESTS" >"$OUT/cuda_tests.log" 2>&1
echo "cuda_tests exit $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|Expected|Which is|steps," "$OUT/cuda_tests.log" | head -60
step "development models"
"$MODELS_BIN" --out "$OUT/models" $MODELS || echo "verisub-models failed"
for m in $MODELS; do
  step "verisub-run $m"
  timeout "$RUN_TIMEOUT" "$RUN" "$OUT/models/$m.onnx" --device cuda \
    --check --warmup 20 --runs "$RUNS" --profile 3 >"$OUT/run_$m.log" 2>&1
  echo "exit $?"
  grep -E "^prepare|^check|^verisub-run:|^error" "$OUT/run_$m.log"
  timeout "$RUN_TIMEOUT" "$RUN" "$OUT/models/$m.onnx" --device cuda \
    --precision fp16 --warmup 20 --runs "$RUNS" --profile 3 >"$OUT/fp16_$m.log" 2>&1
  echo "exit $?"
  grep -E "^precision|^verisub-run:|^error" "$OUT/fp16_$m.log"
  case " $OPT_MODELS " in *" $m "*) ;; *) continue ;; esac
  timeout "$RUN_TIMEOUT" "$RUN" "$OUT/models/$m.onnx" --device cuda \
    --optimize --rules data/rules/taso.pb --check --warmup 20 --runs "$RUNS" --profile 3 \
    >"$OUT/opt_$m.log" 2>&1
  echo "exit $?"
  grep -E "^optimize|^rewrites|^check|^verisub-run:|^error" "$OUT/opt_$m.log"
done
step "implicit GEMM convolution against cuDNN (fp16, batch 1 and 8)"
igemm_models=""
for m in resnet50 resnext50_32x4d inception_v3 squeezenet1_1 nasnet_a; do
  [ -f "$OUT/models/$m.onnx" ] && igemm_models="$igemm_models $OUT/models/$m.onnx"
done
timeout "$RUN_TIMEOUT" "$IGEMM" $igemm_models --table "$OUT/igemm_costs.txt" \
  >"$OUT/igemm.md" 2>"$OUT/igemm.log"
echo "exit $?"
tail -3 "$OUT/igemm.md"
step "PyTorch"
"$PYTHON" bench/gpu/torch_baselines.py --out "$OUT/torch.json" --runs "$RUNS" \
  --compile-budget "$COMPILE_BUDGET" --models "$TORCH_MODELS" || echo "torch_baselines.py failed"
step "table"
"$PYTHON" bench/gpu/gpu_table.py "$OUT" | tee "$OUT/table.md"
step "done"
