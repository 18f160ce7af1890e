#!/usr/bin/env python3
"""Exports models of other kinds than classification (make bench-other; docs/bench-zoo.md).

Our evaluation runs real models that are not in the repository; these are the kinds a user's
first model is most likely to be besides a classifier, from Debian's torchvision and from plain
PyTorch modules: semantic segmentation (FCN, DeepLabV3 with dilated convolutions and bilinear
Resize, LR-ASPP, a UNet with transposed convolutions), video classification (3-D and (2+1)-D
convolutions), sequence models (a Conformer-like block with a depthwise 1-D convolution, GLU and
an LSTM; a two-layer bidirectional LSTM with a GRU; a dilated temporal convolutional network), a
GAN generator (transposed convolutions), a point-cloud classifier (PointNet: 1-D convolutions and a
max over points), an MLP-Mixer, speech encoders (wav2vec 2.0- and Whisper-like), a T5-like text
encoder and a LLaMA-like decoder, a diffusion UNet step, a style-transfer network, ESPCN
super-resolution, a YOLOv8-like detector without its NMS and MobileViT-like blocks, and
torchvision's detectors whole, post-processing included (SSD, SSDlite, RetinaNet, FCOS, Faster
and Mask R-CNN: NonMaxSuppression, RoiAlign, If and Loop, shapes known only at run time), and
transformers quantized dynamically to int8 as ONNX Runtime's quantize_dynamic writes them, CNNs
and a transformer quantized statically in the QDQ form quantize_static writes (calibrated on the
recorded input by verisub-run), models stored in float16, a recommender (DLRM-like: embedding
lookups by indices computed in the graph), a graph convolutional network, a raw-waveform audio
CNN, a tiny MLP whose runs take microseconds, RAFT optical flow, an ESRGAN-like super-resolution
network, a log-mel spectrogram classifier (ONNX STFT), CLIP's text encoder, BERT fed token ids, a DETR-like detector (cross-attention from
learned queries), an encoder-decoder translation model, a top-2 mixture of experts, and
classifiers and BERT served in batches.
Random seeded weights, batch 1 unless named, opset 17, eval mode, written as
export_zoo.py writes the classification zoo (NAME.onnx, NAME.input_0.pb, PyTorch's
NAME.output_0.pb, and zoo.json, which bench/zoo_bench.js reads with --zoo DIR).

  /usr/bin/python3 bench/models/export_other.py [--out DIR] [--only NAME]... [--force]
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_dev_models as dev  # noqa: E402 (shares the export of one model)
import float16  # noqa: E402
import newer_opset  # noqa: E402
import quantize_dynamic  # noqa: E402
import quantize_qdq  # noqa: E402

onnx = dev.onnx

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


class Detector(nn.Module):
    """A torchvision detector on a batch of one image, its detections as a tuple (boxes,
    scores, labels[, masks]). Score thresholds low enough that random weights still detect
    (so that the heads after the NMS run on boxes), and images resized to 320 inside."""

    def __init__(self, name, **kwargs):
        super().__init__()
        self.m = getattr(tv.detection, name)(weights=None, weights_backbone=None, **kwargs)

    def forward(self, x):
        out = self.m(list(x))[0]
        keys = ["boxes", "scores", "labels"] + (["masks"] if "masks" in out else [])
        return tuple(out[k] for k in keys)


def detector(name, **kwargs):
    return lambda: Detector(name, **kwargs)


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


class Wav2Vec2Like(nn.Module):
    """A speech encoder as wav2vec 2.0 builds it: seven 1-D convolutions over the waveform (the
    first with a group norm of one channel per group), GELU, a projection, a grouped positional
    convolution whose last frame is cut, and post-norm transformer layers with GELU."""

    def __init__(self, d=256, layers=2):
        super().__init__()
        convs = [nn.Conv1d(1, 256, 10, 5, bias=False), nn.GroupNorm(256, 256), nn.GELU()]
        for k, st in [(3, 2)] * 4 + [(2, 2)] * 2:
            convs += [nn.Conv1d(256, 256, k, st, bias=False), nn.GELU()]
        self.feat = nn.Sequential(*convs)
        self.ln = nn.LayerNorm(256)
        self.proj = nn.Linear(256, d)
        self.pos = nn.Conv1d(d, d, 32, padding=16, groups=8)
        self.enc = nn.ModuleList([nn.TransformerEncoderLayer(d, 4, 4 * d, 0.0, "gelu",
                                                             batch_first=True)
                                  for _ in range(layers)])

    def forward(self, x):
        h = self.proj(self.ln(self.feat(x.unsqueeze(1)).transpose(1, 2)))
        p = self.pos(h.transpose(1, 2))[:, :, :-1]
        h = h + nn.functional.gelu(p).transpose(1, 2)
        for layer in self.enc:
            h = layer(h)
        return h


class WhisperEncoderLike(nn.Module):
    """Whisper's audio encoder: two 1-D convolutions over log-mel frames (the second strided),
    GELU, fixed sinusoidal positions, pre-norm transformer layers, a final layer norm."""

    def __init__(self, d=256, frames=400, layers=2):
        super().__init__()
        self.c1 = nn.Conv1d(80, d, 3, padding=1)
        self.c2 = nn.Conv1d(d, d, 3, 2, padding=1)
        t = torch.arange(frames // 2).float()[:, None]
        inv = torch.exp(-torch.arange(d // 2).float() * (9.21 / (d // 2 - 1)))[None]
        self.register_buffer("pos", torch.cat([torch.sin(t * inv), torch.cos(t * inv)], 1))
        self.enc = nn.ModuleList([nn.TransformerEncoderLayer(d, 4, 4 * d, 0.0, "gelu",
                                                             batch_first=True, norm_first=True)
                                  for _ in range(layers)])
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        h = nn.functional.gelu(self.c2(nn.functional.gelu(self.c1(x)))).transpose(1, 2)
        h = h + self.pos
        for layer in self.enc:
            h = layer(h)
        return self.ln(h)


class T5BlockLike(nn.Module):
    """T5's encoder layers: RMS norm written out (pow, mean, rsqrt, mul), attention with a
    relative position bias bucketed from the shape at run time (arange, abs, log, min, where),
    no scaling, and a gated-GELU feed-forward."""

    def __init__(self, d=256, heads=4, layers=2, buckets=32, max_dist=128):
        super().__init__()
        self.h, self.dk, self.buckets, self.max_dist = heads, d // heads, buckets, max_dist
        self.rel = nn.Embedding(buckets, heads)
        self.n1 = nn.ParameterList([nn.Parameter(torch.rand(d) + 0.5) for _ in range(layers)])
        self.n2 = nn.ParameterList([nn.Parameter(torch.rand(d) + 0.5) for _ in range(layers)])
        self.qkvo = nn.ModuleList([nn.ModuleList([nn.Linear(d, d, bias=False) for _ in range(4)])
                                   for _ in range(layers)])
        self.ff = nn.ModuleList([nn.ModuleList([nn.Linear(d, 2 * d, bias=False),
                                                nn.Linear(d, 2 * d, bias=False),
                                                nn.Linear(2 * d, d, bias=False)])
                                 for _ in range(layers)])

    @staticmethod
    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def bias(self, n):
        pos = torch.arange(n)
        rel = pos[None, :] - pos[:, None]
        half = self.buckets // 2
        out = (rel > 0).long() * half
        rel = rel.abs()
        exact = half // 2
        large = exact + (torch.log(rel.float().clamp(min=1) / exact) /
                         torch.log(torch.tensor(self.max_dist / exact)) * (half - exact)).long()
        large = torch.min(large, torch.full_like(large, half - 1))
        out = out + torch.where(rel < exact, rel, large)
        return self.rel(out).permute(2, 0, 1).unsqueeze(0)

    def forward(self, x):
        b, n, d = x.shape
        bias = self.bias(n)
        for n1, n2, (q, k, v, o), (wi0, wi1, wo) in zip(self.n1, self.n2, self.qkvo, self.ff):
            h = self.rms(x, n1)
            split = lambda t: t.view(b, n, self.h, self.dk).transpose(1, 2)  # noqa: E731
            att = torch.softmax(split(q(h)) @ split(k(h)).transpose(-1, -2) + bias, -1)
            x = x + o((att @ split(v(h))).transpose(1, 2).reshape(b, n, d))
            h = self.rms(x, n2)
            x = x + wo(nn.functional.gelu(wi0(h), approximate="tanh") * wi1(h))
        return x


class DiffusionUNetLike(nn.Module):
    """A diffusion model's UNet at one resolution step: group norms of 32 groups with SiLU, a
    time embedding (sinusoids of a fixed step through an MLP, added per channel), residual blocks,
    a self-attention block over the pixels, nearest upsampling and a skip concatenation."""

    def __init__(self, c=64):
        super().__init__()
        half = 32
        freqs = torch.exp(-9.21 * torch.arange(half).float() / half)
        self.register_buffer("t", torch.cat([torch.sin(500 * freqs), torch.cos(500 * freqs)]))
        self.temb = nn.Sequential(nn.Linear(64, 4 * c), nn.SiLU(), nn.Linear(4 * c, 4 * c))
        self.inp = nn.Conv2d(4, c, 3, padding=1)
        self.res1 = self.block(c, c)
        self.tproj1 = nn.Linear(4 * c, c)
        self.down = nn.Conv2d(c, 2 * c, 3, 2, padding=1)
        self.res2 = self.block(2 * c, 2 * c)
        self.tproj2 = nn.Linear(4 * c, 2 * c)
        self.anorm = nn.GroupNorm(32, 2 * c)
        self.attn = nn.MultiheadAttention(2 * c, 4, batch_first=True)
        self.up = nn.Conv2d(2 * c, c, 3, padding=1)
        self.res3 = self.block(2 * c, c)
        self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, 4, 3, padding=1))

    @staticmethod
    def block(i, o):
        return nn.Sequential(nn.GroupNorm(32, i), nn.SiLU(), nn.Conv2d(i, o, 3, padding=1),
                             nn.GroupNorm(32, o), nn.SiLU(), nn.Conv2d(o, o, 3, padding=1))

    def forward(self, x):
        e = self.temb(self.t)
        h1 = self.inp(x)
        h1 = h1 + self.res1(h1) + self.tproj1(e)[None, :, None, None]
        h2 = self.down(h1)
        h2 = h2 + self.res2(h2) + self.tproj2(e)[None, :, None, None]
        b, c, hh, ww = h2.shape
        a = self.anorm(h2).flatten(2).transpose(1, 2)
        h2 = h2 + self.attn(a, a, a, need_weights=False)[0].transpose(1, 2).reshape(b, c, hh, ww)
        u = self.up(nn.functional.interpolate(h2, scale_factor=2.0, mode="nearest"))
        return self.out(self.res3(torch.cat([u, h1], 1)))


class FastStyle(nn.Module):
    """Johnson et al.'s style transfer network: reflection padding, instance norms with affine
    parameters, residual blocks, nearest upsampling before the last convolutions."""

    def __init__(self):
        super().__init__()

        def conv(i, o, k, s=1):
            return nn.Sequential(nn.ReflectionPad2d(k // 2), nn.Conv2d(i, o, k, s),
                                 nn.InstanceNorm2d(o, affine=True), nn.ReLU())

        self.down = nn.Sequential(conv(3, 32, 9), conv(32, 64, 3, 2), conv(64, 128, 3, 2))
        self.res = nn.ModuleList([nn.Sequential(conv(128, 128, 3), nn.ReflectionPad2d(1),
                                                nn.Conv2d(128, 128, 3),
                                                nn.InstanceNorm2d(128, affine=True))
                                  for _ in range(3)])
        self.up1, self.up2 = conv(128, 64, 3), conv(64, 32, 3)
        self.last = nn.Sequential(nn.ReflectionPad2d(4), nn.Conv2d(32, 3, 9))

    def forward(self, x):
        h = self.down(x)
        for r in self.res:
            h = h + r(h)
        h = self.up1(nn.functional.interpolate(h, scale_factor=2.0, mode="nearest"))
        h = self.up2(nn.functional.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.last(h)


class Espcn(nn.Module):
    """ESPCN super-resolution (x3): tanh convolutions and a pixel shuffle (DepthToSpace)."""

    def __init__(self, r=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.Tanh(),
                                  nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(32, r * r, 3, padding=1), nn.PixelShuffle(r))

    def forward(self, x):
        return torch.sigmoid(self.body(x))


class ConvBnSilu(nn.Sequential):
    def __init__(self, i, o, k=1, s=1):
        super().__init__(nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o), nn.SiLU())


class C2f(nn.Module):
    """YOLOv8's C2f: a 1x1 convolution, split in two, bottlenecks chained on the second half,
    every intermediate concatenated, a 1x1 convolution."""

    def __init__(self, i, o, n=1):
        super().__init__()
        self.c = o // 2
        self.cv1, self.cv2 = ConvBnSilu(i, 2 * self.c), ConvBnSilu((2 + n) * self.c, o)
        self.m = nn.ModuleList([nn.Sequential(ConvBnSilu(self.c, self.c, 3),
                                              ConvBnSilu(self.c, self.c, 3)) for _ in range(n)])

    def forward(self, x):
        y = list(self.cv1(x).split((self.c, self.c), 1))
        for m in self.m:
            y.append(y[-1] + m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class YoloLike(nn.Module):
    """A YOLOv8-style detector without its NMS: strided Conv-BN-SiLU stages with C2f blocks, an
    SPPF (three chained 5x5 max pools), a top-down path (nearest upsampling, concatenations), and
    per-level heads whose box distributions are decoded by a softmax expectation (DFL)."""

    def __init__(self, w=32, classes=80, reg=16):
        super().__init__()
        self.reg, self.classes = reg, classes
        self.s1 = nn.Sequential(ConvBnSilu(3, w, 3, 2), ConvBnSilu(w, 2 * w, 3, 2), C2f(2 * w, 2 * w))
        self.s2 = nn.Sequential(ConvBnSilu(2 * w, 4 * w, 3, 2), C2f(4 * w, 4 * w, 2))
        self.s3 = nn.Sequential(ConvBnSilu(4 * w, 8 * w, 3, 2), C2f(8 * w, 8 * w, 2))
        self.s4 = nn.Sequential(ConvBnSilu(8 * w, 8 * w, 3, 2), C2f(8 * w, 8 * w))
        self.sppf1, self.sppf2 = ConvBnSilu(8 * w, 4 * w), ConvBnSilu(16 * w, 8 * w)
        self.pool = nn.MaxPool2d(5, 1, 2)
        self.td1, self.td2 = C2f(16 * w, 8 * w), C2f(12 * w, 4 * w)
        self.heads = nn.ModuleList([nn.Sequential(ConvBnSilu(c, c, 3), nn.Conv2d(c, 4 * reg + classes, 1))
                                    for c in (4 * w, 8 * w, 8 * w)])
        self.register_buffer("proj", torch.arange(reg).float())

    def forward(self, x):
        p3 = self.s2(self.s1(x))
        p4 = self.s3(p3)
        y = [self.sppf1(self.s4(p4))]
        for _ in range(3):
            y.append(self.pool(y[-1]))
        p5 = self.sppf2(torch.cat(y, 1))
        up = nn.functional.interpolate(p5, scale_factor=2.0, mode="nearest")
        n4 = self.td1(torch.cat([up, p4], 1))
        up = nn.functional.interpolate(n4, scale_factor=2.0, mode="nearest")
        n3 = self.td2(torch.cat([up, p3], 1))
        outs = []
        for head, f in zip(self.heads, (n3, n4, p5)):
            o = head(f).flatten(2)
            box, cls = o.split((4 * self.reg, self.classes), 1)
            box = box.view(1, 4, self.reg, -1).softmax(2)
            box = (box * self.proj.view(1, 1, -1, 1)).sum(2)
            outs.append(torch.cat([box, cls.sigmoid()], 1))
        return torch.cat(outs, 2)


class LlamaLike(nn.Module):
    """A LLaMA-style decoder over embedded tokens: RMS norms, rotary position embeddings (the
    halves rotated with a negation and a concatenation), grouped-query causal attention with the
    mask a constant, a SwiGLU feed-forward."""

    def __init__(self, d=256, heads=8, kv_heads=2, layers=2, seq=64, hidden=688):
        super().__init__()
        self.h, self.kv, self.dk = heads, kv_heads, d // heads
        self.n1 = nn.ParameterList([nn.Parameter(torch.rand(d) + 0.5) for _ in range(layers)])
        self.n2 = nn.ParameterList([nn.Parameter(torch.rand(d) + 0.5) for _ in range(layers)])
        self.wq = nn.ModuleList([nn.Linear(d, d, bias=False) for _ in range(layers)])
        self.wkv = nn.ModuleList([nn.Linear(d, 2 * kv_heads * self.dk, bias=False)
                                  for _ in range(layers)])
        self.wo = nn.ModuleList([nn.Linear(d, d, bias=False) for _ in range(layers)])
        self.w13 = nn.ModuleList([nn.Linear(d, 2 * hidden, bias=False) for _ in range(layers)])
        self.w2 = nn.ModuleList([nn.Linear(hidden, d, bias=False) for _ in range(layers)])
        self.norm = nn.Parameter(torch.rand(d) + 0.5)
        inv = 1.0 / (10000 ** (torch.arange(0, self.dk, 2).float() / self.dk))
        ang = torch.arange(seq).float()[:, None] * inv[None]
        self.register_buffer("cos", torch.cat([ang.cos(), ang.cos()], -1))
        self.register_buffer("sin", torch.cat([ang.sin(), ang.sin()], -1))
        self.register_buffer("mask", torch.full((seq, seq), float("-inf")).triu(1))

    @staticmethod
    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w

    def rope(self, t):
        half = t.shape[-1] // 2
        rotated = torch.cat([-t[..., half:], t[..., :half]], -1)
        return t * self.cos + rotated * self.sin

    def forward(self, x):
        b, n, d = x.shape
        for n1, n2, wq, wkv, wo, w13, w2 in zip(self.n1, self.n2, self.wq, self.wkv, self.wo,
                                                self.w13, self.w2):
            h = self.rms(x, n1)
            q = wq(h).view(b, n, self.h, self.dk).transpose(1, 2)
            k, v = wkv(h).view(b, n, 2 * self.kv, self.dk).transpose(1, 2).chunk(2, 1)
            q, k = self.rope(q), self.rope(k)
            rep = self.h // self.kv
            k = k.repeat_interleave(rep, 1)
            v = v.repeat_interleave(rep, 1)
            att = torch.softmax(q @ k.transpose(-1, -2) / self.dk ** 0.5 + self.mask, -1)
            x = x + wo((att @ v).transpose(1, 2).reshape(b, n, d))
            gate, up = w13(self.rms(x, n2)).chunk(2, -1)
            x = x + w2(nn.functional.silu(gate) * up)
        return self.rms(x, self.norm)


class MobileVitLike(nn.Module):
    """MobileViT's blocks: inverted residuals, then local 3x3 and 1x1 convolutions, the feature
    map unfolded into 2x2 patches by reshapes and transposes, a transformer over the patches,
    folded back and fused with the input by a concatenation and a convolution."""

    def __init__(self, c=64, d=96, layers=2):
        super().__init__()

        def cbs(i, o, k=3, s=1, g=1):
            return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, groups=g, bias=False),
                                 nn.BatchNorm2d(o), nn.SiLU())

        self.stem = nn.Sequential(cbs(3, 16, 3, 2), cbs(16, 32, 1), cbs(32, 32, 3, 2, 32),
                                  nn.Conv2d(32, c, 1), nn.BatchNorm2d(c))
        self.local = nn.Sequential(cbs(c, c), nn.Conv2d(c, d, 1, bias=False))
        self.enc = nn.ModuleList([nn.TransformerEncoderLayer(d, 4, 2 * d, 0.0, "gelu",
                                                             batch_first=True, norm_first=True)
                                  for _ in range(layers)])
        self.proj = cbs(d, c, 1)
        self.fuse = cbs(2 * c, c)
        self.head = nn.Linear(c, 1000)

    def forward(self, x):
        x = self.stem(x)
        y = self.local(x)
        b, d, hh, ww = y.shape
        p = y.reshape(b, d, hh // 2, 2, ww // 2, 2).permute(0, 3, 5, 2, 4, 1)
        p = p.reshape(b * 4, (hh // 2) * (ww // 2), d)
        for layer in self.enc:
            p = layer(p)
        y = p.reshape(b, 2, 2, hh // 2, ww // 2, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, hh, ww)
        x = self.fuse(torch.cat([x, self.proj(y)], 1))
        return self.head(x.mean((2, 3)))


class BertLayerLike(nn.Module):
    """A BERT layer as Hugging Face's BertLayer is built (separate query, key and value
    projections, post-norm, erf GELU), which exports every Linear as MatMul + Add."""

    def __init__(self, d=768, heads=12, ff=3072):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x, mask_bias=None):
        b, t, d = x.shape
        def heads(y):
            return y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        if mask_bias is not None:  # -10000 on padded keys, as Hugging Face's BERT adds it
            scores = scores + mask_bias
        a = torch.softmax(scores, dim=-1) @ v
        x = self.ln1(x + self.o(a.transpose(1, 2).reshape(b, t, d)))
        return self.ln2(x + self.ff2(nn.functional.gelu(self.ff1(x))))


def bert_like(layers=12):
    """BERT-base's encoder over the embedded sequence."""
    return nn.Sequential(*(BertLayerLike() for _ in range(layers)))


class BertTokens(nn.Module):
    """BERT-base as users export it: token ids in (int64), word, position and token-type
    embeddings gathered in the graph, the padding mask made from the ids (id 0) and added to
    every layer's scores, the pooled first token out."""

    def __init__(self, layers=12, vocab=30522, d=768):
        super().__init__()
        self.word, self.pos = nn.Embedding(vocab, d), nn.Embedding(512, d)
        self.segment = nn.Embedding(2, d)  # token types (nn.Module has a method `type`)
        self.ln = nn.LayerNorm(d)
        self.layers = nn.ModuleList(BertLayerLike() for _ in range(layers))
        self.pool = nn.Linear(d, d)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.ln(self.word(ids) + self.pos(torch.arange(t).unsqueeze(0)) +
                    self.segment(torch.zeros_like(ids)))
        mask_bias = (1.0 - (ids != 0).float()[:, None, None, :]) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return torch.tanh(self.pool(x[:, 0]))


def export_token_model(out_dir, name, factory, shape, vocab):
    """Exports a model over int64 token ids (random ids below `vocab`, the last eighth of the
    sequence padding, id 0), as dev.export does a float one."""
    torch.manual_seed(0)
    model = factory().eval()
    ids = torch.randint(1, vocab, shape, generator=torch.Generator().manual_seed(2))
    ids[:, shape[1] - shape[1] // 8:] = 0
    with torch.no_grad():
        y = model(ids)
    onnx_path, input_path, output_path = dev.files_of(out_dir, name)
    torch.onnx.export(model, (ids,), onnx_path + ".tmp", opset_version=dev.OPSET,
                      input_names=["input_ids"], output_names=["output"],
                      do_constant_folding=True)
    onnx.checker.check_model(onnx_path + ".tmp")
    dev.save_tensor(ids.numpy(), input_path)
    dev.save_tensor(y.numpy(), output_path)
    os.replace(onnx_path + ".tmp", onnx_path)
    print(f"{name}: token ids {tuple(shape)}, output {tuple(y.shape)}, "
          f"{dev.model_bytes(out_dir, name) / 1e6:.1f} MB", flush=True)


class TinyMlp(nn.Module):
    """A small tabular MLP at batch 1: microseconds a run, so every step's overhead shows."""

    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                               nn.Linear(256, 10))

    def forward(self, x):
        return self.f(x)


class DlrmLike(nn.Module):
    """A DLRM-style recommender at batch 128: a bottom MLP over 13 dense features, 8 embedding
    tables looked up by categorical features (carried in the float input as [-1, 1] and
    converted to row indices in the graph: Cast then Gather), their pairwise dot products
    (a batched matmul, the upper triangle picked by Gathers) and a top MLP."""

    def __init__(self, tables=8, rows=1000, d=64):
        super().__init__()
        self.rows = rows
        self.bot = nn.Sequential(nn.Linear(13, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                                 nn.Linear(256, d), nn.ReLU())
        self.emb = nn.ModuleList(nn.Embedding(rows, d) for _ in range(tables))
        pairs = (tables + 1) * tables // 2
        self.register_buffer("upper", torch.triu_indices(tables + 1, tables + 1, 1))
        self.top = nn.Sequential(nn.Linear(d + pairs, 512), nn.ReLU(), nn.Linear(512, 256),
                                 nn.ReLU(), nn.Linear(256, 1), nn.Sigmoid())

    def forward(self, x):
        dense = self.bot(x[:, :13])
        idx = ((x[:, 13:] + 1) * (self.rows - 1) / 2).long()
        t = torch.stack([dense] + [e(idx[:, i]) for i, e in enumerate(self.emb)], 1)
        z = torch.bmm(t, t.transpose(1, 2))
        return self.top(torch.cat([dense, z[:, self.upper[0], self.upper[1]]], 1))


class GcnLike(nn.Module):
    """A three-layer graph convolutional network over 512 nodes, its normalized adjacency a
    dense constant (2% of the pairs connected, self-loops): A (X W) per layer."""

    def __init__(self, n=512, f=64):
        super().__init__()
        g = torch.Generator().manual_seed(5)
        a = (torch.rand(n, n, generator=g) < 0.02).float() + torch.eye(n)
        a = ((a + a.t()) > 0).float()
        d = a.sum(1).rsqrt()
        self.register_buffer("a", d[:, None] * a * d[None, :])
        self.layers = nn.ModuleList([nn.Linear(f, 128), nn.Linear(128, 128), nn.Linear(128, 16)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = self.a @ layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return torch.log_softmax(x, -1)


class M5(nn.Module):
    """M5, a raw-waveform audio classifier: 1-D convolutions (the first of 80 taps at stride 4)
    with batch norm, ReLU and max pools, a mean over time."""

    def __init__(self, classes=35):
        super().__init__()
        layers, c = [], 1
        for o, k, s in [(128, 80, 4), (128, 3, 1), (256, 3, 1), (512, 3, 1)]:
            layers += [nn.Conv1d(c, o, k, s), nn.BatchNorm1d(o), nn.ReLU(), nn.MaxPool1d(4)]
            c = o
        self.f = nn.Sequential(*layers)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return torch.log_softmax(self.fc(self.f(x).mean(-1)), -1)


def _stft_symbolic(g, x, n_fft, hop, win_length, window, normalized, onesided, complex_out):
    """aten::stft as ONNX STFT (opset 17), as newer PyTorch exports it: frames of n_fft every
    hop samples of the [batch, length, 1] signal, transposed to PyTorch's [batch, bins, frames,
    2]. Debian's PyTorch 1.13 has no symbolic for it."""
    from torch.onnx import symbolic_helper as sh
    n_fft, hop = sh._get_const(n_fft, "i", "n_fft"), sh._get_const(hop, "i", "hop_length")
    signal = g.op("Unsqueeze", x, g.op("Constant", value_t=torch.tensor([2])))
    step = g.op("Constant", value_t=torch.tensor(hop, dtype=torch.int64))
    length = g.op("Constant", value_t=torch.tensor(n_fft, dtype=torch.int64))
    y = g.op("STFT", signal, step, window, length, onesided_i=1)
    return g.op("Transpose", y, perm_i=[0, 2, 1, 3])


torch.onnx.register_custom_op_symbolic("aten::stft", _stft_symbolic, 17)


class LogMelCnn(nn.Module):
    """A spectrogram classifier over one second at 16 kHz: torch.stft (400-point Hann frames
    every 160 samples, reflect-padded: ONNX Pad and STFT), the power through an 80-filter mel
    bank (a MatMul), its log, then a CNN (four conv-BN-ReLU blocks, a mean, a linear layer)."""

    def __init__(self, classes=35, mels=80, n_fft=400, hop=160):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("mel", torch.rand(n_fft // 2 + 1, mels) / 10)
        layers, c = [], 1
        for o in (32, 64, 128, 128):
            layers += [nn.Conv2d(c, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                       nn.MaxPool2d(2)]
            c = o
        self.f = nn.Sequential(*layers)
        self.fc = nn.Linear(c, classes)

    def forward(self, wave):
        spec = torch.stft(wave, self.n_fft, self.hop, window=self.window, center=True,
                          pad_mode="reflect", return_complex=False)  # [batch, bins, frames, 2]
        power = (spec * spec).sum(-1).transpose(1, 2)  # [batch, frames, 201]
        logmel = torch.log(power @ self.mel + 1e-6).transpose(1, 2).unsqueeze(1)
        return self.fc(self.f(logmel).mean((2, 3)))


class RaftSmall(nn.Module):
    """torchvision's RAFT-small optical flow over two 128x128 frames (stacked as six channels),
    six refinement steps unrolled: GridSample, a correlation pyramid, ConvGRU updates."""

    def __init__(self):
        super().__init__()
        self.m = tv.optical_flow.raft_small(weights=None)

    def forward(self, x):
        return self.m(x[:, :3], x[:, 3:], num_flow_updates=6)[-1]


class DenseBlock(nn.Module):
    """ESRGAN's residual dense block: five 3x3 convolutions, each over the concatenation of the
    block's input and every earlier output, LeakyReLU, a scaled residual."""

    def __init__(self, c=32, g=16):
        super().__init__()
        self.convs = nn.ModuleList(
            nn.Conv2d(c + i * g, g if i < 4 else c, 3, padding=1) for i in range(5))

    def forward(self, x):
        feats = [x]
        for i, conv in enumerate(self.convs):
            y = conv(torch.cat(feats, 1))
            if i < 4:
                feats.append(nn.functional.leaky_relu(y, 0.2))
        return x + 0.2 * y


class EsrganLike(nn.Module):
    """A small ESRGAN-style 4x super-resolution network: six dense blocks, two nearest 2x
    upsamplings each followed by a convolution and LeakyReLU."""

    def __init__(self, c=32, blocks=6):
        super().__init__()
        self.head = nn.Conv2d(3, c, 3, padding=1)
        self.body = nn.Sequential(*(DenseBlock(c) for _ in range(blocks)))
        up = []
        for _ in range(2):
            up += [nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(c, c, 3, padding=1),
                   nn.LeakyReLU(0.2)]
        self.tail = nn.Sequential(*up, nn.Conv2d(c, 3, 3, padding=1))

    def forward(self, x):
        f = self.head(x)
        return self.tail(f + self.body(f))


class ClipTextLike(nn.Module):
    """CLIP's text encoder: 77 tokens (ids carried in the float input as [-1, 1] and converted
    in the graph), a learned position table, 12 pre-norm layers of nn.TransformerEncoder under
    a causal mask, the final norm, and the features at the end-of-text token (the largest id:
    ArgMax, then a Gather by the computed index) projected."""

    def __init__(self, vocab=49408, d=512, t=77, layers=12, heads=8):
        super().__init__()
        self.vocab = vocab
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(t, d) * 0.01)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.ln = nn.LayerNorm(d)
        self.proj = nn.Linear(d, 512, bias=False)
        self.register_buffer("mask", torch.full((t, t), float("-inf")).triu(1))

    def forward(self, x):
        ids = ((x + 1) * (self.vocab - 1) / 2).long()
        h = self.ln(self.enc(self.tok(ids) + self.pos, mask=self.mask))
        return self.proj(h[torch.arange(h.shape[0]), ids.argmax(-1)])



def sine_positions(n, d):
    """Fixed sinusoidal position features of n positions, [n, d] (Vaswani et al.)."""
    t = torch.arange(n).float()[:, None]
    inv = torch.exp(-torch.arange(d // 2).float() * (9.21 / (d // 2)))[None]
    return torch.cat([torch.sin(t * inv), torch.cos(t * inv)], 1)


class DetrLike(nn.Module):
    """DETR: a ResNet-18 trunk, its 8x8 features projected to 256 channels and flattened to 64
    tokens with fixed sine positions, nn.Transformer (two encoder and two decoder layers, post-
    norm, ReLU) over 100 learned object queries (cross-attention from the queries to the image
    tokens), a class head and a three-layer box MLP with a sigmoid, concatenated."""

    def __init__(self, d=256, queries=100, classes=92):
        super().__init__()
        trunk = tv.resnet18(weights=None)
        self.trunk = nn.Sequential(*list(trunk.children())[:-2])
        self.proj = nn.Conv2d(512, d, 1)
        self.register_buffer("pos", sine_positions(64, d)[None])
        self.queries = nn.Parameter(torch.randn(1, queries, d) * 0.1)
        self.tf = nn.Transformer(d, 8, 2, 2, 1024, 0.0, batch_first=True)
        self.cls = nn.Linear(d, classes)
        self.box = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(),
                                 nn.Linear(d, 4), nn.Sigmoid())

    def forward(self, x):
        f = self.proj(self.trunk(x)).flatten(2).transpose(1, 2) + self.pos
        h = self.tf(f, self.queries.expand(x.shape[0], -1, -1))
        return torch.cat([self.cls(h), self.box(h)], -1)


class Seq2SeqLike(nn.Module):
    """A translation model's encoder-decoder (nn.Transformer, pre-norm, GELU, three layers each):
    the source as embedded tokens in, a fixed 32-token target prefix (a learned table) decoded
    under a causal mask with cross-attention to the source, logits over a 4,000-word vocabulary."""

    def __init__(self, d=256, tgt=32, vocab=4000):
        super().__init__()
        self.tgt = nn.Parameter(torch.randn(1, tgt, d) * 0.1)
        self.register_buffer("pos", sine_positions(64, d)[None])
        self.register_buffer("mask", torch.full((tgt, tgt), float("-inf")).triu(1))
        self.tf = nn.Transformer(d, 4, 3, 3, 4 * d, 0.0, "gelu", batch_first=True,
                                 norm_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, x):
        t = self.tgt.expand(x.shape[0], -1, -1) + self.pos[:, :self.tgt.shape[1]]
        return self.out(self.tf(x + self.pos[:, :x.shape[1]], t, tgt_mask=self.mask))


class MoeLike(nn.Module):
    """Transformer layers whose feed-forward is a mixture of 8 experts with top-2 routing, as
    Switch/Mixtral-style exports compute it densely: the router's TopK, a softmax over the two
    scores scattered back into a gate per expert (ScatterElements), every expert's SwiGLU output
    weighted by its gate and summed."""

    def __init__(self, d=256, experts=8, hidden=512, layers=2):
        super().__init__()
        self.att = nn.ModuleList([nn.MultiheadAttention(d, 4, batch_first=True)
                                  for _ in range(layers)])
        self.n1 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
        self.n2 = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
        self.router = nn.ModuleList([nn.Linear(d, experts, bias=False) for _ in range(layers)])
        self.w1 = nn.ModuleList([nn.ModuleList([nn.Linear(d, hidden, bias=False)
                                                for _ in range(experts)]) for _ in range(layers)])
        self.w3 = nn.ModuleList([nn.ModuleList([nn.Linear(d, hidden, bias=False)
                                                for _ in range(experts)]) for _ in range(layers)])
        self.w2 = nn.ModuleList([nn.ModuleList([nn.Linear(hidden, d, bias=False)
                                                for _ in range(experts)]) for _ in range(layers)])

    def forward(self, x):
        for i, (att, n1, n2) in enumerate(zip(self.att, self.n1, self.n2)):
            h = n1(x)
            x = x + att(h, h, h, need_weights=False)[0]
            h = n2(x)
            logits = self.router[i](h)
            top, idx = logits.topk(2, -1)
            gates = torch.zeros_like(logits).scatter(-1, idx, top.softmax(-1))
            y = 0
            for e, (w1, w3, w2) in enumerate(zip(self.w1[i], self.w3[i], self.w2[i])):
                y = y + gates[..., e:e + 1] * w2(nn.functional.silu(w1(h)) * w3(h))
            x = x + y
        return x


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
    "wav2vec2_like": ("Speech", Wav2Vec2Like, (1, 16000)),
    "whisper_encoder_like": ("Speech", WhisperEncoderLike, (1, 80, 400)),
    "t5_encoder_like": ("Text", T5BlockLike, (1, 64, 256)),
    "diffusion_unet_like": ("Generative", DiffusionUNetLike, (1, 4, 32, 32)),
    "fast_style": ("Image to image", FastStyle, (1, 3, 224, 224)),
    "espcn": ("Image to image", Espcn, (1, 1, 128, 128)),
    "yolo_like": ("Detection", YoloLike, (1, 3, 320, 320)),
    "llama_like": ("Text", LlamaLike, (1, 64, 256)),
    "mobilevit_like": ("Classification", MobileVitLike, (1, 3, 128, 128)),
    "ssdlite320_mobilenet_v3_large": ("Detection", detector(
        "ssdlite320_mobilenet_v3_large"), (1, 3, 320, 320)),
    "ssd300_vgg16": ("Detection", detector("ssd300_vgg16", score_thresh=0.001), (1, 3, 300, 300)),
    "fasterrcnn_mobilenet_v3_large_320_fpn": ("Detection", detector(
        "fasterrcnn_mobilenet_v3_large_320_fpn", box_score_thresh=0.0), (1, 3, 320, 320)),
    "retinanet_resnet50_fpn": ("Detection", detector(
        "retinanet_resnet50_fpn", min_size=320, max_size=320), (1, 3, 320, 320)),
    "fcos_resnet50_fpn": ("Detection", detector(
        "fcos_resnet50_fpn", min_size=320, max_size=320), (1, 3, 320, 320)),
    "maskrcnn_resnet50_fpn": ("Detection", detector(
        "maskrcnn_resnet50_fpn", min_size=320, max_size=320, box_score_thresh=0.0),
        (1, 3, 320, 320)),
    "tiny_mlp": ("MLP", TinyMlp, (1, 64)),
    "dlrm_like": ("Recommender", DlrmLike, (128, 21)),
    "gcn_like": ("Graph", GcnLike, (512, 64)),
    "m5_audio": ("Speech", M5, (1, 1, 16000)),
    "log_mel_cnn": ("Speech", LogMelCnn, (1, 16000)),
    "raft_small": ("Optical flow", RaftSmall, (1, 6, 128, 128)),
    "esrgan_like": ("Image to image", EsrganLike, (1, 3, 64, 64)),
    "clip_text_like": ("Text", ClipTextLike, (1, 77)),
    "bert_tokens": ("Text", BertTokens, (1, 128)),
    "detr_like": ("Detection", DetrLike, (1, 3, 256, 256)),
    "seq2seq_like": ("Text", Seq2SeqLike, (1, 64, 256)),
    "moe_like": ("Text", MoeLike, (1, 64, 256)),
    # Served in batches, as a throughput-minded user runs them.
    "resnet50_b8": ("Batched", lambda: tv.resnet50(weights=None), (8, 3, 224, 224)),
    "mobilenet_v2_b16": ("Batched", lambda: tv.mobilenet_v2(weights=None), (16, 3, 224, 224)),
    "efficientnet_b0_b8": ("Batched", lambda: tv.efficientnet_b0(weights=None),
                           (8, 3, 224, 224)),
    "vit_b_16_b4": ("Batched", lambda: tv.vit_b_16(weights=None), (4, 3, 224, 224)),
    "bert_like_b8": ("Batched", bert_like, (8, 128, 768)),
    # Quantized dynamically as ONNX Runtime's quantize_dynamic does (quantize_dynamic.py): int8
    # matmuls of activations quantized per run, the form CPU users deploy transformers in.
    "bert_like_int8": ("Quantized", bert_like, (1, 128, 768)),
    "gpt_decoder_int8": ("Quantized", lambda: dev.gpt_decoder(12), (1, 128, 768)),
    # A CNN quantized dynamically (quantize_dynamic with Conv among its op types: ConvInteger).
    "resnet50_dynint8": ("Quantized", lambda: tv.resnet50(weights=None), SEG),
    # Quantized statically in the QDQ form (quantize_qdq.py): int8 weights, every activation a
    # QuantizeLinear / DequantizeLinear pair, the form CPU users deploy CNNs in.
    "resnet50_int8": ("Quantized", lambda: tv.resnet50(weights=None), SEG),
    "mobilenet_v2_int8": ("Quantized", lambda: tv.mobilenet_v2(weights=None), SEG),
    "bert_like_qdq": ("Quantized", bert_like, (1, 128, 768)),
    # Stored in float16 (float16.py), as GPU-minded exports are.
    # Saved by ONNX Runtime after its graph optimizations (the "extended" level, its session option
    # optimizedModelFilePath), as a user of ONNX Runtime who keeps the optimized model has it: its
    # contrib operators FusedConv, FusedMatMul, Gelu, QuickGelu, SkipLayerNormalization.
    "resnet50_ortopt": ("ORT-optimized", lambda: tv.resnet50(weights=None), SEG),
    "efficientnet_b0_ortopt": ("ORT-optimized", lambda: tv.efficientnet_b0(weights=None), SEG),
    "vit_b_16_ortopt": ("ORT-optimized", lambda: tv.vit_b_16(weights=None), SEG),
    "bert_like_ortopt": ("ORT-optimized", bert_like, (1, 128, 768)),
    "llama_like_ortopt": ("ORT-optimized", LlamaLike, (1, 64, 256)),
    # Rewritten into newer opsets' forms (newer_opset.py: Reduce axes inputs, Split's
    # num_outputs, Resize's new attributes, Gelu-20, Swish-24), as PyTorch's dynamo exporter and
    # newer tools write them (Debian's PyTorch exports opset 17 at most).
    "yolo_like_opset19": ("Newer opsets", YoloLike, (1, 3, 320, 320)),
    "seq2seq_like_opset20": ("Newer opsets", Seq2SeqLike, (1, 64, 256)),
    "llama_like_opset21": ("Newer opsets", LlamaLike, (1, 64, 256)),
    "efficientnet_b0_opset24": ("Newer opsets", lambda: tv.efficientnet_b0(weights=None), SEG),
    "resnet50_fp16": ("Half precision", lambda: tv.resnet50(weights=None), SEG),
    "bert_like_fp16": ("Half precision", bert_like, (1, 128, 768)),
}
# Fed int64 token ids (export_token_model): name -> vocabulary size.
TOKENS = {"bert_tokens": 30522}
# Exported in float32, then converted (PyTorch's float32 output stays the recorded one):
# quantized dynamically or statically, stored in float16 (its recorded input too), or optimized
# and saved by ONNX Runtime (onnxruntime-node from `make ort`).
CONVERTED = {"bert_like_int8": "int8", "gpt_decoder_int8": "int8", "resnet50_dynint8": "int8conv",
             "resnet50_int8": "qdq",
             "mobilenet_v2_int8": "qdq", "bert_like_qdq": "qdq", "resnet50_fp16": "float16",
             "bert_like_fp16": "float16", "resnet50_ortopt": "ortopt",
             "efficientnet_b0_ortopt": "ortopt", "vit_b_16_ortopt": "ortopt",
             "bert_like_ortopt": "ortopt", "llama_like_ortopt": "ortopt",
             "yolo_like_opset19": "opset19", "seq2seq_like_opset20": "opset20",
             "llama_like_opset21": "opset21", "efficientnet_b0_opset24": "opset24"}
ORT_DIR = os.path.join(dev.REPO, "build", "ort")  # make ort


def export_converted(out_dir, name, factory, shape):
    """Exports the float model into a scratch folder, then writes it converted, the .onnx last."""
    with tempfile.TemporaryDirectory(dir=out_dir) as scratch:
        dev.export(scratch, name, factory, shape)
        model = onnx.load(os.path.join(scratch, name + ".onnx"))
        onnx_path, input_path, output_path = dev.files_of(out_dir, name)
        if CONVERTED[name] in ("int8", "int8conv"):
            count = quantize_dynamic.quantize_dynamic(model, conv=CONVERTED[name] == "int8conv")
            what = f"{count} operators quantized dynamically"
        elif CONVERTED[name] == "qdq":
            # Calibrated on the recorded input (MinMax, as ONNX Runtime's default calibrator)
            # where verisub-run is built, else every activation in [-4, 4].
            ranges, how = None, "uncalibrated"
            if os.path.exists(quantize_qdq.VERISUB_RUN):
                scratch_input = os.path.join(scratch, os.path.basename(input_path))
                ranges, how = quantize_qdq.calibrate(model, scratch_input), "calibrated"
            what = (f"{quantize_qdq.quantize_qdq(model, ranges)} operators quantized in the QDQ "
                    f"form ({how})")
        elif CONVERTED[name] == "ortopt":
            saved = os.path.join(scratch, "ortopt.onnx")
            subprocess.run(["node", os.path.join(dev.REPO, "bench", "ort", "save_optimized.js"),
                            ORT_DIR, os.path.join(scratch, name + ".onnx"), saved], check=True)
            model = onnx.load(saved)
            contrib = sorted({n.op_type for n in model.graph.node if n.domain == "com.microsoft"})
            what = f"saved by ONNX Runtime optimized, contrib operators {' '.join(contrib)}"
        elif CONVERTED[name].startswith("opset"):
            counts = newer_opset.upgrade(model, int(CONVERTED[name][len("opset"):]))
            what = f"rewritten into {CONVERTED[name]}: " + (
                ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())) or "no node changed")
        else:
            what = f"{float16.to_float16(model)} weights stored in float16"
            scratch_input = os.path.join(scratch, os.path.basename(input_path))
            t = onnx.TensorProto()
            with open(scratch_input, "rb") as f:
                t.ParseFromString(f.read())
            x = onnx.numpy_helper.to_array(t).astype(dev.np.float16)
            dev.save_tensor(x, scratch_input)
        # ONNX 1.12's checker knows opset 17 and none of the operators ONNX Runtime registers
        # in the default domain (SimplifiedLayerNormalization): those models are left to the
        # engines, which check them as they load them.
        if not CONVERTED[name].startswith("opset") and CONVERTED[name] != "ortopt":
            onnx.checker.check_model(model)
        for path in (input_path, output_path):
            os.replace(os.path.join(scratch, os.path.basename(path)), path)
        onnx.save(model, onnx_path + ".tmp")
        os.replace(onnx_path + ".tmp", onnx_path)
        print(f"{name}: {what}", flush=True)


def main():
    args = dev.export_arguments(__doc__.split("\n")[0], "other", MODELS)
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
                if name in TOKENS:
                    export_token_model(args.out, name, factory, shape, TOKENS[name])
                else:
                    (export_converted if name in CONVERTED else dev.export)(args.out, name,
                                                                            factory, shape)
            entry.update(status="ok", mb=round(dev.model_bytes(args.out, name) / 1e6, 1))
        except Exception as e:  # listed with the reason; the others go on
            last = traceback.format_exception_only(type(e), e)[-1].strip()
            entry.update(status="export failed", reason=last[:300])
            print(f"{name}: export failed: {last}", file=sys.stderr, flush=True)
        manifest[name] = entry
    path = os.path.join(args.out, "zoo.json")
    old = dev.read_manifest(path)
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
