#!/usr/bin/env python3
"""Exports models of other kinds than classification (make bench-other; docs/bench-zoo.md).

Our evaluation runs real models that are not in the repository; these are the kinds a user's
first model is most likely to be besides a classifier, from Debian's torchvision and from plain
PyTorch modules: semantic segmentation (FCN, DeepLabV3 with dilated convolutions and bilinear
Resize, LR-ASPP, a UNet with transposed convolutions), video classification (3-D and (2+1)-D
convolutions), sequence models (a Conformer-like block with a depthwise 1-D convolution, GLU and
an LSTM; a two-layer bidirectional LSTM with a GRU; a dilated temporal convolutional network), a
GAN generator (transposed convolutions), a point-cloud classifier (PointNet: 1-D convolutions and a
max over points) and an MLP-Mixer. Random seeded weights, batch 1, opset 17, eval mode, written as
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


def conv_block(i, o):
    return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                         nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())


class UNetLike(nn.Module):
    """Two poolings down, two transposed convolutions up, skip concatenations, a sigmoid mask."""

    def __init__(self, c=32):
        super().__init__()
        self.d1, self.d2, self.d3 = conv_block(3, c), conv_block(c, 2 * c), conv_block(2 * c, 4 * c)
        self.pool = nn.MaxPool2d(2)
        self.u2, self.c2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, 2), conv_block(4 * c, 2 * c)
        self.u1, self.c1 = nn.ConvTranspose2d(2 * c, c, 2, 2), conv_block(2 * c, c)
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(self.pool(a))
        c = self.d3(self.pool(b))
        b = self.c2(torch.cat([self.u2(c), b], 1))
        a = self.c1(torch.cat([self.u1(b), a], 1))
        return torch.sigmoid(self.out(a))


class DcganGenerator(nn.Module):
    """DCGAN's generator: transposed convolutions with batch norm and ReLU, tanh out."""

    def __init__(self):
        super().__init__()
        ch, layers = [100, 512, 256, 128, 64], []
        for i in range(4):
            layers += [nn.ConvTranspose2d(ch[i], ch[i + 1], 4, 1 if i == 0 else 2,
                                          0 if i == 0 else 1, bias=False),
                       nn.BatchNorm2d(ch[i + 1]), nn.ReLU(True)]
        self.net = nn.Sequential(*layers, nn.ConvTranspose2d(64, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Tcn(nn.Module):
    """A temporal convolutional network: residual 1-D convolutions dilated 1 to 32."""

    def __init__(self, c=64):
        super().__init__()
        self.inp = nn.Conv1d(16, c, 1)
        self.layers = nn.ModuleList(
            [nn.Conv1d(c, c, 3, padding=2 ** k, dilation=2 ** k) for k in range(6)])
        self.out = nn.Linear(c, 5)

    def forward(self, x):
        h = self.inp(x)
        for layer in self.layers:
            h = h + torch.relu(layer(h))
        return self.out(h.mean(-1))


class PointNet(nn.Module):
    """PointNet's classifier: shared 1x1 1-D convolutions over the points, a max, an MLP."""

    def __init__(self):
        super().__init__()
        self.feat = nn.Sequential(nn.Conv1d(3, 64, 1), nn.BatchNorm1d(64), nn.ReLU(),
                                  nn.Conv1d(64, 128, 1), nn.BatchNorm1d(128), nn.ReLU(),
                                  nn.Conv1d(128, 1024, 1))
        self.head = nn.Sequential(nn.Linear(1024, 256), nn.ReLU(), nn.Linear(256, 40))

    def forward(self, x):
        return self.head(torch.max(self.feat(x), 2)[0])


class Mixer(nn.Module):
    """An MLP-Mixer: token mixing through transposes, channel mixing, GELU, layer norms."""

    def __init__(self, d=256, patches=196, depth=4):
        super().__init__()
        self.stem = nn.Conv2d(3, d, 16, 16)
        self.ln1 = nn.ModuleList([nn.LayerNorm(d) for _ in range(depth)])
        self.tok = nn.ModuleList([nn.Sequential(nn.Linear(patches, 128), nn.GELU(),
                                                nn.Linear(128, patches)) for _ in range(depth)])
        self.ln2 = nn.ModuleList([nn.LayerNorm(d) for _ in range(depth)])
        self.ch = nn.ModuleList([nn.Sequential(nn.Linear(d, 1024), nn.GELU(), nn.Linear(1024, d))
                                 for _ in range(depth)])
        self.out = nn.Linear(d, 1000)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        for ln1, tok, ln2, ch in zip(self.ln1, self.tok, self.ln2, self.ch):
            x = x + tok(ln1(x).transpose(1, 2)).transpose(1, 2)
            x = x + ch(ln2(x))
        return self.out(x.mean(1))


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
    "tcn": ("Sequence", Tcn, (1, 16, 400)),
    "unet_like": ("Segmentation", UNetLike, (1, 3, 128, 128)),
    "dcgan_generator": ("Generative", DcganGenerator, (1, 100, 1, 1)),
    "pointnet": ("Point cloud", PointNet, (1, 3, 1024)),
    "mixer": ("MLP", Mixer, SEG),
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
