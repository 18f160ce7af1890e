#!/usr/bin/env python3
"""Exports the development models (issue 14) as users do, with a recorded input and output.

For each model NAME this writes into the output directory (default build/devmodels):
  NAME.onnx           the model as torch.onnx.export writes it (eval mode, constant folding on,
                      so BatchNormalization is folded into the convolutions as in real exports)
  NAME.input_0.pb     a random input, an ONNX TensorProto
  NAME.output_0.pb    PyTorch's output for that input, an ONNX TensorProto

Weights are random (no downloads), seeded, so every run writes the same numbers. A model whose
three files all exist is skipped unless --force is given.

Run with Debian's interpreter, which has python3-torch, python3-torchvision and python3-onnx:
  /usr/bin/python3 bench/models/export_dev_models.py [--out DIR] [--only NAME]... [--force]
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time

try:
    import numpy as np
    import onnx
    import torch
    import torch.nn as nn
    import torchvision
    from onnx import numpy_helper
except ImportError as e:  # the Makefile prints how to install them; say which one is missing
    sys.exit(f"export_dev_models.py: {e}; needs Debian's python3-torch, python3-torchvision, "
             "python3-onnx and python3-numpy under /usr/bin/python3")

OPSET = 17
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE = (1, 3, 224, 224)
SEQ_LEN = 128
D_MODEL = 768


def bert_encoder(layers):
    """BERT-base's encoder stack: post-norm layers, 12 heads, GELU feed-forward of 3072."""
    layer = nn.TransformerEncoderLayer(D_MODEL, nhead=12, dim_feedforward=3072, dropout=0.1,
                                       activation="gelu", batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
    # TransformerEncoder deep-copies one layer, so every layer starts with the same weights, and
    # the exporter then keeps one copy of each equal initializer: a 12-layer model would be 1/12
    # of BERT-base's size. Draw every parameter anew, as BERT's initializer does (normal, 0.02),
    # with LayerNorm scales near 1.
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for name, p in encoder.named_parameters():
            noise = torch.randn(p.shape, generator=gen)
            if p.dim() > 1:
                p.copy_(noise * 0.02)
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1 + noise * 0.1)
            else:
                p.copy_(noise * 0.02)
    return encoder


class GptBlock(nn.Module):
    """A GPT-2 block as GPT-style decoders are written (nanoGPT's form): pre-norm, one fused QKV
    projection split three ways, a constant causal mask applied with masked_fill (ONNX Where),
    the tanh-approximated GELU."""

    def __init__(self, d_model, heads, seq_len):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d_model)
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.ln_2 = nn.LayerNorm(d_model)
        self.c_fc = nn.Linear(d_model, 4 * d_model)
        self.mlp_proj = nn.Linear(4 * d_model, d_model)
        causal = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
        self.register_buffer("causal", causal.view(1, 1, seq_len, seq_len))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // self.heads))
        att = att.masked_fill(~self.causal[:, :, :t, :t], float("-inf"))
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


def gpt_decoder(layers):
    """GPT-2 small's decoder stack (12 heads, d_model 768) and its final LayerNorm, on the
    embedded sequence; GPT-2's initializer (normal, 0.02)."""
    decoder = nn.Sequential(*[GptBlock(D_MODEL, 12, SEQ_LEN) for _ in range(layers)],
                            nn.LayerNorm(D_MODEL))
    gen = torch.Generator().manual_seed(4)
    with torch.no_grad():
        for m in decoder.modules():
            if isinstance(m, (nn.LayerNorm, nn.Linear)):
                scale = torch.randn(m.weight.shape, generator=gen)
                m.weight.copy_(1 + scale * 0.1 if isinstance(m, nn.LayerNorm) else scale * 0.02)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.02)
    return decoder


def models():
    """name -> (module factory, input shape, note for the log)."""
    tv = torchvision.models
    return {
        "resnet50": (lambda: tv.resnet50(weights=None), IMAGE),
        "mobilenet_v2": (lambda: tv.mobilenet_v2(weights=None), IMAGE),
        # aux_logits off (inference graph), init_weights off (truncated-normal init is slow and
        # the values do not matter), transform_input off (the plain network, as exported).
        "inception_v3": (lambda: tv.inception_v3(weights=None, aux_logits=False,
                                                 init_weights=False, transform_input=False),
                         IMAGE),
        "squeezenet1_1": (lambda: tv.squeezenet1_1(weights=None), IMAGE),
        "shufflenet_v2_x1_0": (lambda: tv.shufflenet_v2_x1_0(weights=None), IMAGE),
        # BERT-base: 12 layers; the input is the embedded sequence [batch, seq, d_model].
        "bert_encoder": (lambda: bert_encoder(12), (1, SEQ_LEN, D_MODEL)),
        # GPT-2 small's decoder (issue 24): 12 layers with a causal mask, likewise embedded.
        "gpt_decoder": (lambda: gpt_decoder(12), (1, SEQ_LEN, D_MODEL)),
    }


def randomize_batchnorm(model, seed):
    # Fresh statistics are 0/1; random ones make the folded Conv weights and biases realistic.
    gen = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=gen) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=gen) * 0.4 + 0.8)
            m.bias.data.copy_(torch.rand(m.num_features, generator=gen) * 0.2 - 0.1)


def export_arguments(description, folder, names):
    """The command line of the exporters of model sets (export_other.py, export_dynamic.py):
    --out (default build/FOLDER of the repository), --only NAME (repeatable, one of `names`),
    --force. Also sets PyTorch to one thread and makes the output folder."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=os.path.join(REPO, "build", folder),
                        help=f"output folder (default: build/{folder} of the repository)")
    parser.add_argument("--only", action="append", metavar="NAME", choices=sorted(names),
                        help="export only this model (repeatable)")
    parser.add_argument("--force", action="store_true", help="re-export models already present")
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    return args


def read_manifest(path):
    """The "models" of a manifest (zoo.json, cases.json) written before, or {}."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f).get("models", {})


def save_tensor(array, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array)).SerializeToString())


def files_of(out_dir, name):
    return [os.path.join(out_dir, name + suffix)
            for suffix in (".onnx", ".input_0.pb", ".output_0.pb")]


def model_bytes(out_dir, name):
    """The model's size: NAME.onnx and, for a model over 2 GB, its NAME.onnx.data."""
    files = [os.path.join(out_dir, name + suffix) for suffix in (".onnx", ".onnx.data")]
    return sum(os.path.getsize(p) for p in files if os.path.exists(p))


def export(out_dir, name, factory, shape):
    start = time.monotonic()
    torch.manual_seed(0)
    model = factory()
    with torch.no_grad():
        randomize_batchnorm(model, 1)
    model.eval()
    x = torch.rand(shape, generator=torch.Generator().manual_seed(2)) * 2 - 1
    with torch.no_grad():
        y = model(x)
    onnx_path, input_path, output_path = files_of(out_dir, name)
    tmp_path = onnx_path + ".tmp"
    data_name = name + ".onnx.data"
    with tempfile.TemporaryDirectory(dir=out_dir) as scratch:
        # Defaults as a user leaves them: training=EVAL and do_constant_folding=True fold
        # BatchNormalization into Conv. Into a folder of its own: a model over protobuf's 2 GB
        # is written with one external data file per weight beside it.
        first = os.path.join(scratch, "model.onnx")
        torch.onnx.export(model, (x,), first, opset_version=OPSET, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
        exported = onnx.load(first)  # external data loaded too
        external = len(os.listdir(scratch)) > 1
        if external:  # the usual form of large models: all weights in one NAME.onnx.data
            onnx.save_model(exported, os.path.join(scratch, "one.onnx"),
                            save_as_external_data=True, all_tensors_to_one_file=True,
                            location=data_name, size_threshold=1024)
            os.replace(os.path.join(scratch, data_name), os.path.join(out_dir, data_name))
            os.replace(os.path.join(scratch, "one.onnx"), tmp_path)
        else:
            os.replace(first, tmp_path)
    onnx.checker.check_model(tmp_path)  # by path: models over 2 GB need it, and it is cheap
    save_tensor(x.numpy(), input_path)
    y = y[0] if isinstance(y, (tuple, list)) else y  # the first output (a detector's boxes)
    save_tensor(y.numpy(), output_path)
    os.replace(tmp_path, onnx_path)  # the .onnx last: its presence means the model is complete
    ops = sorted({n.op_type for n in exported.graph.node})
    size = model_bytes(out_dir, name)
    print(f"{name}: input {tuple(shape)}, output {tuple(y.shape)}, {size / 1e6:.1f} MB"
          f"{' (weights in ' + data_name + ')' if external else ''}, "
          f"{len(exported.graph.node)} nodes, {time.monotonic() - start:.1f} s; "
          f"ops {' '.join(ops)}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "build", "devmodels"),
                        help="output directory (default: build/devmodels of the repository)")
    parser.add_argument("--only", action="append", metavar="NAME", choices=list(models()),
                        help="export only this model (repeatable); default: all")
    parser.add_argument("--force", action="store_true", help="re-export models already present")
    args = parser.parse_args()

    torch.set_num_threads(1)  # deterministic reductions for the recorded outputs
    os.makedirs(args.out, exist_ok=True)
    for name in args.only or list(models()):
        if not args.force and all(os.path.exists(p) for p in files_of(args.out, name)):
            print(f"{name}: present in {args.out}, skipped (--force re-exports)")
            continue
        factory, shape = models()[name]
        export(args.out, name, factory, shape)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
          f"onnx {onnx.__version__}, opset {OPSET}")


if __name__ == "__main__":
    main()
