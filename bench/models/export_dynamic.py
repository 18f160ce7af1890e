#!/usr/bin/env python3
"""Exports models whose input shapes change from run to run, as users export them with
dynamic_axes (make bench-dynamic; docs/dynamic-shapes.md).

A GPT-2-small language model with its key/value cache (one new token a run, the past of
each layer's attention as 24 inputs whose length grows by one a run, the presents and the
logits over GPT-2's 50,257 tokens out), BERT-base over token ids of any batch and sequence
length, and ResNet-50 over any batch. Random seeded weights, opset 17, eval mode. Per model
NAME.onnx and one or more input sets (NAME.SET.INPUT.pb with PyTorch's outputs as
NAME.SET.output_K.pb), and cases.json, which bench/dynamic_bench.js reads: per case the model,
its input files in the model's order and their shapes.

  /usr/bin/python3 bench/models/export_dynamic.py [--out DIR] [--only NAME]... [--force]
"""

import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_dev_models as dev  # noqa: E402
import export_other as other  # noqa: E402

torch = dev.torch
nn = torch.nn
np = dev.np


class GptKvBlock(nn.Module):
    """GPT-2's block over the new tokens, the past keys and values concatenated in front."""

    def __init__(self, d=768, heads=12):
        super().__init__()
        self.d, self.heads = d, heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, past_k, past_v):
        b, s, _ = x.shape
        hd = self.d // self.heads
        q, k, v = self.attn(self.ln1(x)).split(self.d, dim=2)
        q, k, v = (t.view(b, s, self.heads, hd).transpose(1, 2) for t in (q, k, v))
        k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, self.d)
        x = x + self.proj(out)
        x = x + self.fc2(nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return x, k, v


class GptKv(nn.Module):
    """GPT-2 small with its cache: ids of the new tokens and 12 layers' past keys and values in,
    logits and the presents out (the positions follow the past's length)."""

    def __init__(self, layers=12, vocab=50257, d=768):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(1024, d)
        self.blocks = nn.ModuleList(GptKvBlock(d) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids, *past):
        start = past[0].shape[2]
        pos = torch.arange(start, start + ids.shape[1]).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        presents = []
        for i, block in enumerate(self.blocks):
            x, k, v = block(x, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        return (self.head(self.ln(x)), *presents)


def gpt2_kv():
    layers = 12
    names = ["input_ids"] + [f"past_{i}_{kv}" for i in range(layers) for kv in "kv"]
    outputs = ["logits"] + [f"present_{i}_{kv}" for i in range(layers) for kv in "kv"]
    axes = {n: {2: "past"} for n in names[1:]}
    axes.update({n: {2: "total"} for n in outputs[1:]})

    def inputs(past, seed):
        g = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, 50257, (1, 1), generator=g)
        return [ids] + [torch.randn(1, 12, past, 64, generator=g) for _ in range(2 * layers)]

    # A decoding step after a 127-token prompt, and one 64 tokens later.
    sets = {"past127": inputs(127, 1), "past191": inputs(191, 2)}
    return GptKv(layers), names, outputs, axes, sets


def bert_dynamic():
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "output": {0: "batch"}}

    def ids(length, seed):
        t = torch.randint(1, 30522, (1, length), generator=torch.Generator().manual_seed(seed))
        t[:, length - length // 8:] = 0  # the last eighth padding, as export_token_model
        return [t]

    sets = {"seq128": ids(128, 3), "seq77": ids(77, 4), "seq200": ids(200, 5)}
    return other.BertTokens(), ["input_ids"], ["output"], axes, sets


def resnet50_dynamic():
    axes = {"input": {0: "batch"}, "output": {0: "batch"}}

    def images(batch, seed):
        g = torch.Generator().manual_seed(seed)
        return [torch.rand((batch, 3, 224, 224), generator=g) * 2 - 1]

    sets = {"batch1": images(1, 6), "batch4": images(4, 7)}
    return other.tv.resnet50(weights=None), ["input"], ["output"], axes, sets


# name: (family, factory of (module, input names, output names, dynamic axes, input sets))
MODELS = {
    "gpt2_kv": ("Decoder with a cache", gpt2_kv),
    "bert_dynamic": ("Encoder of any length", bert_dynamic),
    "resnet50_dynamic": ("Classifier of any batch", resnet50_dynamic),
}


def export(out_dir, name, factory):
    torch.manual_seed(0)
    model, names, outputs, axes, sets = factory()
    model.eval()
    with torch.no_grad():
        dev.randomize_batchnorm(model, 1)
    first = next(iter(sets.values()))
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, tuple(first), path + ".tmp", opset_version=dev.OPSET,
                      input_names=names, output_names=outputs, dynamic_axes=axes,
                      do_constant_folding=True)
    dev.onnx.checker.check_model(path + ".tmp")
    cases = []
    for set_name, tensors in sets.items():
        with torch.no_grad():
            result = model(*tensors)
        result = result if isinstance(result, tuple) else (result,)
        files = []
        for input_name, t in zip(names, tensors):
            files.append(f"{name}.{set_name}.{input_name}.pb")
            dev.save_tensor(t.numpy(), os.path.join(out_dir, files[-1]))
        for k, t in enumerate(result):
            dev.save_tensor(t.numpy(), os.path.join(out_dir, f"{name}.{set_name}.output_{k}.pb"))
        cases.append({"name": f"{name} {set_name}", "model": name + ".onnx", "inputs": files,
                      "shapes": {n: list(t.shape) for n, t in zip(names, tensors)}})
    os.replace(path + ".tmp", path)
    print(f"{name}: {len(sets)} input sets, {os.path.getsize(path) / 1e6:.1f} MB", flush=True)
    return cases


def main():
    args = dev.export_arguments(__doc__.split("\n")[0], "dynamic", MODELS)
    manifest_path = os.path.join(args.out, "cases.json")
    manifest = dev.read_manifest(manifest_path)
    start = time.monotonic()
    wanted = args.only or sorted(MODELS)
    for i, name in enumerate(wanted):
        family, factory = MODELS[name]
        if not args.force and name in manifest and os.path.exists(
                os.path.join(args.out, name + ".onnx")):
            continue
        print(f"[{i + 1}/{len(wanted)}] {name} ({time.monotonic() - start:.0f} s)",
              file=sys.stderr, flush=True)
        manifest[name] = {"family": family, "cases": export(args.out, name, factory)}
    tmp = manifest_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"torch": torch.__version__, "opset": dev.OPSET, "models": manifest}, f,
                  indent=1, sort_keys=True)
    os.replace(tmp, manifest_path)
    print(f"export_dynamic: {len(wanted)} models in {args.out} "
          f"({time.monotonic() - start:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
