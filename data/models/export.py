#!/usr/bin/env python3
"""Exports small PyTorch models to ONNX (opset 17) with a recorded input and output.

For each model NAME this writes, next to this script:
  NAME.onnx           the model as torch.onnx.export writes it
  NAME.input_0.pb     the input, an ONNX TensorProto
  NAME.output_0.pb    PyTorch's output for that input, an ONNX TensorProto

They let the runtime's tests check an outside producer's ONNX against PyTorch's own numbers.
Run with Debian's interpreter, which has python3-torch, python3-torchvision and python3-onnx:
  /usr/bin/python3 data/models/export.py
"""

import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision
from onnx import numpy_helper

OPSET = 17
HERE = os.path.dirname(os.path.abspath(__file__))


class SmallResNet(nn.Module):
    """Conv/BatchNorm/ReLU stem, max pool, two residual blocks (one projected), pool, linear."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
                                  nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.block1 = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, bias=False),
                                    nn.BatchNorm2d(16), nn.ReLU(),
                                    nn.Conv2d(16, 16, 3, padding=1, bias=False),
                                    nn.BatchNorm2d(16))
        self.block2 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False),
                                    nn.BatchNorm2d(32), nn.ReLU(),
                                    nn.Conv2d(32, 32, 3, padding=1, bias=False),
                                    nn.BatchNorm2d(32))
        self.project = nn.Sequential(nn.Conv2d(16, 32, 1, stride=2, bias=False),
                                     nn.BatchNorm2d(32))
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(self.stem(x))
        x = torch.relu(x + self.block1(x))
        x = torch.relu(self.project(x) + self.block2(x))
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.head(x)


class TinyTransformerMlp(nn.Module):
    """LayerNorm, GELU MLP with a residual, softmax attention over one head, as in BERT."""

    def __init__(self, hidden=32):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.fc2 = nn.Linear(4 * hidden, hidden)
        self.hidden = hidden
        self.scale = hidden ** -0.5

    def forward(self, x):
        # split with fixed sizes exports as Split with a constant `split` input; chunk would
        # export a Shape/Gather/Div/Slice chain whose shapes ONNX 1.12 cannot infer statically.
        q, k, v = self.qkv(self.norm1(x)).split(self.hidden, dim=-1)
        attn = torch.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1)
        x = x + self.out(attn @ v)
        return x + self.fc2(nn.functional.gelu(self.fc1(self.norm2(x))))


class FlowWarp(nn.Module):
    """An optical-flow style warp: a convolution predicts a small displacement, added to a fixed
    sampling grid, and the input is resampled three ways (bilinear with zeros outside, nearest
    with the border repeated and corners aligned, bicubic reflected at the edges)."""

    def __init__(self, h=12, w=10):
        super().__init__()
        self.flow = nn.Conv2d(3, 2, 3, padding=1)
        ys, xs = torch.meshgrid(torch.linspace(-1.1, 1.1, h), torch.linspace(-1.1, 1.1, w),
                                indexing="ij")
        self.register_buffer("base", torch.stack([xs, ys], -1)[None])

    def forward(self, x):
        grid = self.base + 0.2 * torch.tanh(self.flow(x)).permute(0, 2, 3, 1)
        sample = nn.functional.grid_sample
        a = sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        b = sample(x, grid, mode="nearest", padding_mode="border", align_corners=True)
        c = sample(x, grid, mode="bicubic", padding_mode="reflection", align_corners=False)
        return torch.cat([a, b, c], 1)


def randomize_batchnorm(model):
    # Fresh BatchNorm statistics are 0/1, which would hide a wrong mean or variance input.
    gen = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=gen) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=gen) * 0.4 + 0.8)
            m.bias.data.copy_(torch.rand(m.num_features, generator=gen) * 0.2 - 0.1)


def models():
    # name -> (module factory, input shape)
    return {
        "small_resnet": (SmallResNet, (1, 3, 32, 32)),
        "tiny_transformer": (TinyTransformerMlp, (1, 8, 32)),
        "mobilenet_v2_w025": (lambda: torchvision.models.mobilenet_v2(
            weights=None, width_mult=0.25, num_classes=10),
                              (1, 3, 96, 96)),
        "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None, num_classes=10),
                          (1, 3, 64, 64)),
        "flow_warp": (FlowWarp, (1, 3, 12, 10)),
    }


def save_tensor(array, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array)).SerializeToString())


def export(name, factory, shape):
    torch.manual_seed(0)
    model = factory()
    with torch.no_grad():
        randomize_batchnorm(model)
    model.eval()
    x = torch.rand(shape, generator=torch.Generator().manual_seed(2)) * 2 - 1
    with torch.no_grad():
        y = model(x)
    path = os.path.join(HERE, name + ".onnx")
    torch.onnx.export(model, (x,), path, opset_version=OPSET, input_names=["input"],
                      output_names=["output"], do_constant_folding=True,
                      # PRESERVE keeps BatchNormalization nodes instead of folding them into the
                      # convolutions, so importers and executors see the operator.
                      training=torch.onnx.TrainingMode.PRESERVE)
    exported = onnx.load(path)
    onnx.checker.check_model(exported)
    ops = sorted({n.op_type for n in exported.graph.node})
    save_tensor(x.numpy(), os.path.join(HERE, name + ".input_0.pb"))
    save_tensor(y.numpy(), os.path.join(HERE, name + ".output_0.pb"))
    print(f"{name}: {os.path.getsize(path)} bytes, {len(exported.graph.node)} nodes, "
          f"output {tuple(y.shape)}, ops {' '.join(ops)}")


def main():
    torch.set_num_threads(1)  # deterministic reductions for the recorded outputs
    names = sys.argv[1:] or list(models())
    for name in names:
        factory, shape = models()[name]
        export(name, factory, shape)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, onnx {onnx.__version__}")


if __name__ == "__main__":
    main()
