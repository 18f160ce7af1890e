#!/usr/bin/env python3
"""Exports models of other kinds than classification (make bench-other; docs/bench-zoo.md).

Our evaluation runs real models that are not in the repository; these are the kinds a user's
first model is most likely to be besides a classifier, from Debian's torchvision and from plain
PyTorch modules: semantic segmentation (FCN, DeepLabV3 with dilated convolutions and bilinear
Resize, LR-ASPP), video classification (3-D and (2+1)-D convolutions), and speech-style sequence
models (a Conformer-like block with a depthwise 1-D convolution, GLU and an LSTM; a two-layer
bidirectional LSTM with a GRU). Random seeded weights, batch 1, opset 17, eval mode, written as
export_zoo.py writes the classification zoo (NAME.onnx, NAME.input_0.pb, PyTorch's
NAME.output_0.pb, and zoo.json, which bench/zoo_bench.js reads with --zoo DIR).

  /usr/bin/python3 bench/models/export_other.py [--out DIR] [--only NAME]... [--force]
"""

import argparse
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_dev_models as dev  # noqa: E402 (shares the export of one model)

torch = dev.torch
nn = torch.nn
tv = dev.torchvision.models


class OutOnly(nn.Module):
    """A segmentation model's "out" tensor (torchvision returns a dict)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


class ConformerLike(nn.Module):
    """Convolutional subsampling, a feed-forward half step, a convolution module (pointwise,
    GLU, depthwise 1-D, batch norm, SiLU, pointwise), an LSTM and a log-softmax head."""

    def __init__(self, d=144, k=31):
        super().__init__()
        self.sub = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU())
        self.proj = nn.Linear(d * 19, d)
        self.ff = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ln = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)
        self.lstm = nn.LSTM(d, d, batch_first=True)
        self.out = nn.Linear(d, 32)

    def forward(self, x):  # [B, T, 80] filterbank frames
        x = self.sub(x.unsqueeze(1))
        b, c, t, f = x.size()
        x = self.proj(x.permute(0, 2, 1, 3).reshape(b, t, c * f))
        x = x + 0.5 * self.ff(x)
        y = self.ln(x).transpose(1, 2)
        y = nn.functional.glu(self.pw1(y), dim=1)
        y = self.pw2(nn.functional.silu(self.bn(self.dw(y))))
        x, _ = self.lstm(x + y.transpose(1, 2))
        return nn.functional.log_softmax(self.out(x), dim=-1)


class BiLstmGru(nn.Module):
    """A tagger: projection, two bidirectional LSTM layers, a GRU, a linear head."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(40, 128)
        self.lstm = nn.LSTM(128, 128, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(256, 96, batch_first=True)
        self.out = nn.Linear(96, 10)

    def forward(self, x):
        y, _ = self.lstm(self.emb(x))
        z, _ = self.gru(y)
        return self.out(z)


SEG = (1, 3, 224, 224)
CLIP = (1, 3, 8, 112, 112)
# name: (family, factory, input shape)
MODELS = {
    "fcn_resnet50": ("Segmentation", lambda: OutOnly(tv.segmentation.fcn_resnet50(
        weights=None, weights_backbone=None, aux_loss=False)), SEG),
    "deeplabv3_resnet50": ("Segmentation", lambda: OutOnly(tv.segmentation.deeplabv3_resnet50(
        weights=None, weights_backbone=None, aux_loss=False)), SEG),
    "deeplabv3_mobilenet_v3_large": ("Segmentation", lambda: OutOnly(
        tv.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                     aux_loss=False)), SEG),
    "lraspp_mobilenet_v3_large": ("Segmentation", lambda: OutOnly(
        tv.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)), SEG),
    "r3d_18": ("Video", lambda: tv.video.r3d_18(weights=None), CLIP),
    "mc3_18": ("Video", lambda: tv.video.mc3_18(weights=None), CLIP),
    "r2plus1d_18": ("Video", lambda: tv.video.r2plus1d_18(weights=None), CLIP),
    "conformer_like": ("Sequence", ConformerLike, (1, 160, 80)),
    "bilstm_gru": ("Sequence", BiLstmGru, (1, 100, 40)),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(dev.REPO, "build", "other"),
                        help="output folder (default: build/other of the repository)")
    parser.add_argument("--only", action="append", metavar="NAME", choices=sorted(MODELS),
                        help="export only this model (repeatable)")
    parser.add_argument("--force", action="store_true", help="re-export models already present")
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    manifest = {}
    start = time.monotonic()
    wanted = args.only or sorted(MODELS)
    for i, name in enumerate(wanted):
        family, factory, shape = MODELS[name]
        entry = {"family": family, "quick": True}
        files = dev.files_of(args.out, name)
        try:
            if args.force or not all(os.path.exists(p) for p in files):
                print(f"[{i + 1}/{len(wanted)}] {name} ({time.monotonic() - start:.0f} s)",
                      file=sys.stderr, flush=True)
                dev.export(args.out, name, factory, shape)
            entry.update(status="ok", mb=round(dev.model_bytes(args.out, name) / 1e6, 1))
        except Exception as e:  # listed with the reason; the others go on
            last = traceback.format_exception_only(type(e), e)[-1].strip()
            entry.update(status="export failed", reason=last[:300])
            print(f"{name}: export failed: {last}", file=sys.stderr, flush=True)
        manifest[name] = entry
    path = os.path.join(args.out, "zoo.json")
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f).get("models", {})
    old.update(manifest)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"torch": torch.__version__, "torchvision": dev.torchvision.__version__,
                   "opset": dev.OPSET, "models": old}, f, indent=1, sort_keys=True)
    os.replace(tmp, path)
    ok = sum(1 for n in wanted if manifest[n]["status"] == "ok")
    print(f"export_other: {ok} of {len(wanted)} models exported in "
          f"{time.monotonic() - start:.0f} s into {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
