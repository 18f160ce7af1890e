#!/usr/bin/env python3
"""The GPU check's table: reads what bench/gpu/gpu_check.sh wrote into DIR (verisub-run logs
run_NAME.log and opt_NAME.log, PyTorch's torch.json) and prints one markdown row per model:
milliseconds per batch-1 inference (median), verisub's check against the reference backend, and
verisub float32's speed over each PyTorch mode (above 1: verisub is faster).
  python3 bench/gpu/gpu_table.py DIR
"""
import json
import os
import re
import sys


def parse_run(path):
    r = {}
    if not os.path.exists(path):
        return r
    text = open(path, errors="replace").read()
    m = re.search(r"^verisub-run: median_ms=([0-9.]+)", text, re.M)
    if m:
        r["ms"] = float(m.group(1))
    m = re.search(r"^check:\s+(\S+)", text, re.M)
    if m:
        r["check"] = m.group(1)
    m = re.search(r"^precision: the backend's own outputs: error (\S+?)(,|$| )", text, re.M)
    if m:
        r["precision_error"] = m.group(1)
        r["check"] = "f32 kept" if "float32 kept" in text else f"err {m.group(1)}"
    m = re.search(r"^precision: timed .* kept (\S+)", text, re.M)
    if m and m.group(1) == "float32":
        r["check"] = r.get("check", "") + ", f32 faster"
    m = re.search(r"(\d+) steps, (\d+) nodes fused, (\d+) on reference", text)
    if m:
        r["steps"], r["fused"], r["cpu"] = (int(g) for g in m.groups())
    if "ms" not in r:
        err = [l for l in text.splitlines() if l.startswith("error")]
        r["error"] = err[0][:120] if err else "no result"
    return r


def fmt(v):
    return "n/a" if v is None else f"{v:.3f}"


def main():
    d = sys.argv[1]
    torch = {}
    if os.path.exists(os.path.join(d, "torch.json")):
        torch = json.load(open(os.path.join(d, "torch.json")))
    models = sorted(f[4:-4] for f in os.listdir(d) if f.startswith("run_") and f.endswith(".log"))
    print(f"GPU: {torch.get('gpu', '?')}, PyTorch {torch.get('torch', '?')}, batch 1; "
          "ms per inference (median), input copied from and output to host memory in every "
          "column; float32 without TF32 everywhere")
    print()
    print("| model | verisub f32 | check | CPU nodes | verisub --optimize | check | "
          "verisub fp16 | fp16 check | fp16 over own f32 | "
          "torch eager | torch CUDA graphs | torch.compile | torch fp16 graphs | "
          "f32 vs eager | f32 vs graphs | f32 vs compile | fp16 vs torch fp16 graphs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m in models:
        a = parse_run(os.path.join(d, f"run_{m}.log"))
        b = parse_run(os.path.join(d, f"opt_{m}.log"))
        h = parse_run(os.path.join(d, f"fp16_{m}.log"))
        t = torch.get("models", {}).get(m, {})
        f32, f16 = t.get("f32", {}), t.get("fp16", {})
        ours = a.get("ms")
        ratio = lambda x, y=ours: "n/a" if x is None or y is None else f"{x / y:.2f}x"
        print(f"| {m} | {fmt(ours) if ours else a.get('error')} | {a.get('check', '-')} | "
              f"{a.get('cpu', '-')} | {fmt(b.get('ms')) if b.get('ms') else b.get('error', '-')} | "
              f"{b.get('check', '-')} | {fmt(h.get('ms')) if h.get('ms') else h.get('error', '-')} | "
              f"{h.get('check', '-')} | {ratio(ours, h.get('ms'))} | "
              f"{fmt(f32.get('eager'))} | {fmt(f32.get('cuda_graphs'))} | "
              f"{fmt(f32.get('compile'))} | {fmt(f16.get('cuda_graphs'))} | "
              f"{ratio(f32.get('eager'))} | {ratio(f32.get('cuda_graphs'))} | "
              f"{ratio(f32.get('compile'))} | {ratio(f16.get('cuda_graphs'), h.get('ms'))} |")


if __name__ == "__main__":
    main()
