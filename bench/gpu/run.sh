#!/bin/bash
# On a GPU machine, from the repository root, after bench/gpu/bundle.sh here: the measured GPU
# cost model's tests (runtime/cuda), then per bench model verisub-opt with gpu-measured costs and
# with the analytic h100 preset (into $OUT/h100.costs.txt and $OUT/summary.txt), then the
# original and both optimized models timed side by side with PyTorch on the GPU
# (torch_onnx.py: eager and CUDA-graph replay). Env: OUT (output folder), MODELS, ORT_MODELS
# (the models timed), PER_MODEL and ORT_LIMIT (time limits, s). A table in
# .devrun/h100.costs.txt, when there, is the starting point (docs/cost-models.md).
set -u
t0=$(date +%s)
mkdir -p /tmp/v /tmp/m && tar xJf .devrun/bundle.tar.xz -C /tmp/v
libdir() { d=$(find /usr /opt /lib 2>/dev/null -name "$1" | head -1); [ -n "$d" ] && dirname "$d"; }
export LD_LIBRARY_PATH=/tmp/v/lib:$(libdir libcudnn.so.9):$(libdir libcublas.so.13):$(libdir libcudart.so.13)
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi -L
ldd /tmp/v/cuda_tests | grep -E "not found|cudnn|cublas|cudart"
echo "== cuda_tests ($(($(date +%s)-t0)) s)"
/tmp/v/cuda_tests 2>&1 | tee $OUT/cuda_tests.txt | grep -E "OK|FAILED|Failure|PASSED|SKIPPED"
[ -f .devrun/h100.costs.txt ] && cp .devrun/h100.costs.txt $OUT/h100.costs.txt
/tmp/v/verisub-models --out /tmp/m ${MODELS:-resnet50 resnext50_32x4d inception_v3 mobilenet_v2 squeezenet1_1 nasnet_a bert_1layer bert_base nasrnn}
for m in ${MODELS:-resnet50 resnext50_32x4d inception_v3 mobilenet_v2 squeezenet1_1 nasnet_a bert_1layer bert_base nasrnn}; do
  echo "== $m ($(($(date +%s)-t0)) s)"
  timeout ${PER_MODEL:-100} /tmp/v/verisub-opt /tmp/m/$m.onnx -o /tmp/$m.gpu.onnx --cost gpu-measured \
    --cost-table $OUT/h100.costs.txt --cost-cache none --layout plain 2>&1 |
    grep -E "^(cost|costs|rules applied|error)" | sed "s/^/$m gpu: /" | tee -a $OUT/summary.txt
  timeout 60 /tmp/v/verisub-opt /tmp/m/$m.onnx -o /tmp/$m.h100.onnx --cost analytic --device h100 \
    --layout plain 2>&1 | grep -E "^(cost b|cost a|rules applied|error)" | sed "s/^/$m analytic: /" | tee -a $OUT/summary.txt
done
echo "== PyTorch on the GPU ($(($(date +%s)-t0)) s)"
g=""; for m in ${ORT_MODELS:-inception_v3 mobilenet_v2 nasnet_a resnet50 resnext50_32x4d squeezenet1_1 nasrnn}; do g="$g /tmp/m/$m.onnx,/tmp/$m.gpu.onnx,/tmp/$m.h100.onnx"; done
env -u LD_LIBRARY_PATH timeout ${ORT_LIMIT:-200} python3 .devrun/torch_onnx.py $g 2>&1 | tee $OUT/torch_gpu.txt
echo "== done ($(($(date +%s)-t0)) s)"
