#!/usr/bin/env python3
"""PyTorch on the GPU, the peers of `verisub-run --device cuda`: for each development model that
PyTorch has (torchvision's CNNs; BERT-base as nn.TransformerEncoder), batch 1, float32 with
TF32 off (as verisub's float32) and float16, the median milliseconds of
  eager        the model called as it is,
  cuda_graphs  one call captured in a CUDA graph and replayed,
  compile      torch.compile (default mode; only while --compile-budget seconds remain).
Each timed call copies the input from host memory and the output back, as a verisub-run does.
Writes JSON (--out) and prints one line per model and mode.
Run with the GPU machine's python3 (PyTorch with CUDA):
  python3 bench/gpu/torch_baselines.py --out build/gpu-check/torch.json
"""
import argparse
import json
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torchvision
except ImportError as e:
    sys.exit(f"torch_baselines.py: {e}; needs PyTorch with CUDA and torchvision")

CNNS = {
    "resnet50": lambda: torchvision.models.resnet50(),
    "resnext50_32x4d": lambda: torchvision.models.resnext50_32x4d(),
    "inception_v3": lambda: torchvision.models.inception_v3(aux_logits=False, init_weights=False),
    "squeezenet1_1": lambda: torchvision.models.squeezenet1_1(),
    "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(),
}


def bert():
    layer = nn.TransformerEncoderLayer(768, nhead=12, dim_feedforward=3072, dropout=0.1,
                                       activation="gelu", batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False)


def input_shape(name, batch):
    if name == "bert_base":
        return (batch, 128, 768)
    return (batch, 3, 299, 299) if name == "inception_v3" else (batch, 3, 224, 224)


def median_ms(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times[len(times) // 2]


def time_model(name, model, dtype, batch, modes, runs, warmup):
    dev = torch.device("cuda")
    model = model.eval().to(dev, dtype)
    host = torch.randn(input_shape(name, batch), dtype=dtype).pin_memory()
    out = {}
    with torch.inference_mode():
        if "eager" in modes:
            out["eager"] = median_ms(lambda: model(host.to(dev, non_blocking=True)).cpu(),
                                     runs, warmup)
        if "cuda_graphs" in modes:
            static_in = host.to(dev)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    model(static_in)
            torch.cuda.current_stream().wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_out = model(static_in)

            def replay():
                static_in.copy_(host, non_blocking=True)
                graph.replay()
                return static_out.cpu()

            out["cuda_graphs"] = median_ms(replay, runs, warmup)
        if "compile" in modes:
            compiled = torch.compile(model)
            t = time.time()
            for _ in range(3):
                compiled(host.to(dev))
            torch.cuda.synchronize()
            out["compile_seconds"] = time.time() - t
            out["compile"] = median_ms(lambda: compiled(host.to(dev, non_blocking=True)).cpu(),
                                       runs, warmup)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--models", default=",".join(list(CNNS) + ["bert_base"]))
    ap.add_argument("--compile-budget", type=float, default=0,
                    help="seconds torch.compile may take in all (0: not compiled)")
    args = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
               "batch": args.batch, "models": {}}
    start = time.time()
    for name in args.models.split(","):
        torch.manual_seed(0)
        make = CNNS.get(name, bert if name == "bert_base" else None)
        if make is None:
            continue
        entry = {}
        for dtype_name, dtype in (("f32", torch.float32), ("fp16", torch.float16)):
            modes = ["eager", "cuda_graphs"]
            if dtype_name == "f32" and time.time() - start < args.compile_budget:
                modes.append("compile")
            try:
                entry[dtype_name] = time_model(name, make(), dtype, args.batch, modes, args.runs,
                                               args.warmup)
            except Exception as e:  # a mode PyTorch cannot run is reported, not fatal
                entry[dtype_name] = {"error": str(e)[:200]}
            print(name, dtype_name, json.dumps(entry[dtype_name]), flush=True)
        results["models"][name] = entry
        with open(args.out, "w") as f:  # after every model: a run cut short keeps what it timed
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
