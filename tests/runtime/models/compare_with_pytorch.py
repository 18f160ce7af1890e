#!/usr/bin/env python3
"""Differential check of the C++ benchmark-model builders against PyTorch's own definitions.

For each model written by `verisub-models`, the script loads the ONNX weights into the
torchvision (or torch.nn) definition of the same network, in parameter order with every shape
checked, runs both on the same random input and compares the outputs. The ONNX side is evaluated
by a small interpreter over torch functions that covers exactly the operators the builders emit.
A wrong stride, padding, pool mode, branch order or channel count shows up as a shape mismatch
or a numeric difference. NasNet-A and NasRNN, which have no PyTorch reference definition, are only
run through the interpreter and checked for finite outputs.

  /usr/bin/python3 compare_with_pytorch.py MODELS_DIR [name...]
"""

import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
import torchvision
from onnx import numpy_helper


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def pads2d(a):
    p = a.get("pads", [0, 0, 0, 0])
    assert p[0] == p[2] and p[1] == p[3], "asymmetric pads"
    return (p[0], p[1])


def run_onnx(model, feeds):
    env = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in model.graph.initializer}
    env.update(feeds)
    for n in model.graph.node:
        x = [env[i] for i in n.input]
        a = attrs(n)
        op = n.op_type
        if op == "Conv":
            y = F.conv2d(x[0], x[1], x[2] if len(x) > 2 else None, a["strides"], pads2d(a),
                         a.get("dilations", [1, 1]), a.get("group", 1))
        elif op == "BatchNormalization":
            y = F.batch_norm(x[0], x[3], x[4], x[1], x[2], False, 0.0, a.get("epsilon", 1e-5))
        elif op == "Relu":
            y = F.relu(x[0])
        elif op == "Clip":
            y = torch.clamp(x[0], float(x[1]), float(x[2]))
        elif op == "MaxPool":
            y = F.max_pool2d(x[0], a["kernel_shape"], a["strides"], pads2d(a),
                             ceil_mode=bool(a.get("ceil_mode", 0)))
        elif op == "AveragePool":
            y = F.avg_pool2d(x[0], a["kernel_shape"], a["strides"], pads2d(a),
                             count_include_pad=bool(a.get("count_include_pad", 0)))
        elif op == "GlobalAveragePool":
            y = x[0].mean(dim=(2, 3), keepdim=True)
        elif op == "Flatten":
            y = torch.flatten(x[0], a.get("axis", 1))
        elif op == "Gemm":
            assert a.get("transB", 0) == 1
            y = x[0] @ x[1].T + x[2]
        elif op == "Concat":
            y = torch.cat(x, dim=a["axis"])
        elif op in ("Add", "Mul", "Div", "MatMul"):
            y = {"Add": torch.add, "Mul": torch.mul, "Div": torch.div,
                 "MatMul": torch.matmul}[op](x[0], x[1])
        elif op in ("Sigmoid", "Tanh", "Erf"):
            y = {"Sigmoid": torch.sigmoid, "Tanh": torch.tanh, "Erf": torch.erf}[op](x[0])
        elif op == "Reshape":
            y = x[0].reshape([int(d) for d in x[1]])
        elif op == "Transpose":
            y = x[0].permute(a["perm"])
        elif op == "Softmax":
            y = torch.softmax(x[0], dim=a.get("axis", -1))
        elif op == "LayerNormalization":
            assert a.get("axis", -1) == -1
            y = F.layer_norm(x[0], x[0].shape[-1:], x[1], x[2], a.get("epsilon", 1e-5))
        else:
            raise NotImplementedError(op)
        env[n.output[0]] = y
    return [env[o.name] for o in model.graph.output]


def load_in_order(module, model):
    """Copies the ONNX weights into `module` in order; 0-d constants (Clip bounds) are skipped."""
    weights = [numpy_helper.to_array(t) for t in model.graph.initializer if len(t.dims) > 0]
    state = module.state_dict()
    names = [k for k in state if not k.endswith("num_batches_tracked")]
    assert len(names) == len(weights), f"{len(names)} parameters vs {len(weights)} initializers"
    for name, w in zip(names, weights):
        assert tuple(state[name].shape) == w.shape, f"{name}: {tuple(state[name].shape)} vs {w.shape}"
        state[name] = torch.from_numpy(w.copy())
    module.load_state_dict(state)
    return module.eval()


def bert_reference(model, layers):
    """torch.nn's post-norm encoder with exact GELU, weights mapped from the ONNX layout."""
    w = [torch.from_numpy(numpy_helper.to_array(t).copy())
         for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT and len(t.dims)]
    emb_ln = torch.nn.LayerNorm(768, eps=1e-12)
    emb_ln.weight.data, emb_ln.bias.data = w[0], w[1]
    stack = []
    i = 2
    for _ in range(layers):
        layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, activation="gelu",
                                                 layer_norm_eps=1e-12, batch_first=True)
        qw, qb, kw, kb, vw, vb, ow, ob, l1s, l1b, f1w, f1b, f2w, f2b, l2s, l2b = w[i:i + 16]
        i += 16
        attn = layer.self_attn
        attn.in_proj_weight.data = torch.cat([qw.T, kw.T, vw.T]).contiguous()
        attn.in_proj_bias.data = torch.cat([qb, kb, vb])
        attn.out_proj.weight.data, attn.out_proj.bias.data = ow.T.contiguous(), ob
        layer.norm1.weight.data, layer.norm1.bias.data = l1s, l1b
        layer.linear1.weight.data, layer.linear1.bias.data = f1w.T.contiguous(), f1b
        layer.linear2.weight.data, layer.linear2.bias.data = f2w.T.contiguous(), f2b
        layer.norm2.weight.data, layer.norm2.bias.data = l2s, l2b
        stack.append(layer.eval())
    assert i == len(w)

    def forward(x):
        x = emb_ln(x)
        for layer in stack:
            x = layer(x)
        return x
    return forward


def torchvision_reference(name):
    tv = torchvision.models
    return {
        "resnet50": lambda: tv.resnet50(weights=None),
        "resnext50_32x4d": lambda: tv.resnext50_32x4d(weights=None),
        "inception_v3": lambda: tv.inception_v3(weights=None, aux_logits=False, init_weights=False),
        "squeezenet1_1": lambda: tv.squeezenet1_1(weights=None),
        "mobilenet_v2": lambda: tv.mobilenet_v2(weights=None),
    }.get(name)


def check(models_dir, name):
    model = onnx.load(os.path.join(models_dir, name + ".onnx"))
    gen = torch.Generator().manual_seed(0)
    feeds = {}
    for v in model.graph.input:
        shape = [d.dim_value for d in v.type.tensor_type.shape.dim]
        feeds[v.name] = torch.rand(shape, generator=gen) * 2 - 1
    with torch.no_grad():
        (ours,) = run_onnx(model, feeds)
        assert torch.isfinite(ours).all(), "non-finite output"
        factory = torchvision_reference(name)
        if factory is not None:
            reference = load_in_order(factory(), model)(*feeds.values())
        elif name.startswith("bert"):
            reference = bert_reference(model, 12 if name == "bert_base" else 1)(*feeds.values())
        else:
            reference = None
    scale = ours.abs().max().item()
    if reference is None:
        print(f"{name:16s} output {tuple(ours.shape)} finite, max |y| {scale:.3g} (no reference)")
        return True
    err = (ours - reference).abs().max().item()
    ok = tuple(ours.shape) == tuple(reference.shape) and err <= 1e-4 * max(1.0, scale)
    print(f"{name:16s} output {tuple(ours.shape)} max |y| {scale:.3g} max |diff| {err:.3g} "
          f"{'OK' if ok else 'MISMATCH'}")
    return ok


def main():
    torch.set_num_threads(2)
    models_dir = sys.argv[1]
    names = sys.argv[2:] or sorted(f[:-5] for f in os.listdir(models_dir) if f.endswith(".onnx"))
    results = [check(models_dir, n) for n in names]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
