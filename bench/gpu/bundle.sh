#!/bin/bash
# Packs what bench/gpu/run.sh and bench/gpu/gpu_check.sh --bundle need on a GPU machine that
# lacks this project's Debian packages: verisub-opt, verisub-run, verisub-models, cuda_tests,
# verisub-igemm-bench (stripped) and the shared libraries they load from
# Debian (oneDNN, ONNX, protobuf, xxHash, OpenMP), into .devrun/bundle.tar.xz (git-ignored through
# .git/info/exclude), beside copies of run.sh and torch_onnx.py. The CUDA libraries come from the
# GPU machine. Usage: bench/gpu/bundle.sh [BUILD_DIR]
set -eu
build=${1:-build}
tmp=$(mktemp -d)
mkdir -p "$tmp/lib" .devrun
cp "$build/rewriter/verisub-opt" "$build/session/verisub-run" \
  "$build/runtime/models/verisub-models" "$build/tests/runtime/cuda_tests" \
  "$build/runtime/cuda/verisub-igemm-bench" "$tmp/"
strip "$tmp/verisub-opt" "$tmp/verisub-run" "$tmp/verisub-models" "$tmp/cuda_tests" \
  "$tmp/verisub-igemm-bench"
for l in libdnnl.so.2 libgomp.so.1 libOpenCL.so.1 libonnx.so.1 libonnx_proto.so.1 \
  libprotobuf.so.32 libxxhash.so.0; do
  cp -L "/lib/x86_64-linux-gnu/$l" "$tmp/lib/"
done
tar cJf .devrun/bundle.tar.xz -C "$tmp" .
cp bench/gpu/run.sh bench/gpu/torch_onnx.py bench/gpu/gpu_check.sh bench/gpu/gpu_table.py \
  bench/gpu/torch_baselines.py .devrun/
rm -rf "$tmp"
ls -la .devrun
