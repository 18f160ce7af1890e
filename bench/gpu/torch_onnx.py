# Runs ONNX models on the GPU with PyTorch (a small interpreter of the operators our bench models
# use: eager kernels, cuDNN with benchmark mode) and times them side by side: per group of files
# (the original first), rounds alternate between them; medians of eager runs and of CUDA-graph
# replays (launch overhead removed), and ratios to the original.
import statistics, sys, time
import onnx
from onnx import numpy_helper
import torch
import torch.nn.functional as F

torch.backends.cudnn.benchmark = True
import os
dev = os.environ.get("DEVICE", "cuda")

def attrs(n):
    return {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}

def pads2d(p):
    p = list(p) if p else [0, 0, 0, 0]
    return p

class Model:
    def __init__(self, path):
        m = onnx.load(path)
        self.g = m.graph
        self.w = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()).to(dev) for t in self.g.initializer}
        # Shape-like operands (Reshape's shape, Split's sizes) are read on the host.
        self.host = {t.name: numpy_helper.to_array(t).tolist() for t in self.g.initializer
                     if t.data_type == onnx.TensorProto.INT64 or numpy_helper.to_array(t).size == 1}
        self.inputs = [(i.name, [d.dim_value for d in i.type.tensor_type.shape.dim])
                       for i in self.g.input if i.name not in self.w]
        self.outputs = [o.name for o in self.g.output]
        self.nodes = [(n.op_type, list(n.input), list(n.output), attrs(n)) for n in self.g.node]

    def run(self, feeds):
        v = dict(self.w)
        v.update(feeds)
        for op, ins, outs, a in self.nodes:
            x = [v[i] if i else None for i in ins]
            if op == "Conv":
                p = pads2d(a.get("pads"))
                inp = x[0]
                if p[0] != p[2] or p[1] != p[3]:
                    inp = F.pad(inp, (p[1], p[3], p[0], p[2]))
                    p = [0, 0, 0, 0]
                y = F.conv2d(inp, x[1], x[2] if len(x) > 2 else None, tuple(a.get("strides", [1, 1])),
                             (p[0], p[1]), tuple(a.get("dilations", [1, 1])), a.get("group", 1))
            elif op == "Relu": y = torch.relu(x[0])
            elif op == "Tanh": y = torch.tanh(x[0])
            elif op == "Sigmoid": y = torch.sigmoid(x[0])
            elif op == "Erf": y = torch.erf(x[0])
            elif op == "Add": y = x[0] + x[1]
            elif op == "Mul": y = x[0] * x[1]
            elif op == "Div": y = x[0] / x[1]
            elif op == "MatMul": y = torch.matmul(x[0], x[1])
            elif op == "Gemm":
                b = x[1].t() if a.get("transB", 0) else x[1]
                y = torch.addmm(x[2], x[0], b) if len(x) > 2 and x[2] is not None else x[0] @ b
            elif op == "BatchNormalization":
                y = F.batch_norm(x[0], x[3], x[4], x[1], x[2], False, 0.0, a.get("epsilon", 1e-5))
            elif op == "Concat": y = torch.cat(x, a["axis"])
            elif op == "Split":
                sizes = self.host[ins[1]] if len(ins) > 1 and ins[1] else a["split"]
                ys = torch.split(x[0], sizes, a.get("axis", 0))
                for o, t in zip(outs, ys): v[o] = t.contiguous()
                continue
            elif op == "Reshape":
                shape = [int(s) for s in self.host[ins[1]]]
                shape = [x[0].shape[i] if s == 0 else s for i, s in enumerate(shape)]
                y = x[0].reshape(shape)
            elif op == "Flatten": y = torch.flatten(x[0], a.get("axis", 1))
            elif op == "Transpose": y = x[0].permute(a["perm"]).contiguous()
            elif op == "LayerNormalization":
                ax = a.get("axis", -1) % x[0].dim()
                y = F.layer_norm(x[0], x[0].shape[ax:], x[1], x[2] if len(x) > 2 else None, a.get("epsilon", 1e-5))
            elif op == "Softmax": y = torch.softmax(x[0], a.get("axis", -1))
            elif op in ("AveragePool", "MaxPool"):
                p = pads2d(a.get("pads"))
                inp = x[0]
                if p[0] != p[2] or p[1] != p[3]:
                    inp = F.pad(inp, (p[1], p[3], p[0], p[2]), value=0.0 if op == "AveragePool" else float("-inf"))
                    p = [0, 0, 0, 0]
                k, s = a["kernel_shape"], a.get("strides", [1, 1])
                if op == "AveragePool":
                    y = F.avg_pool2d(inp, k, s, (p[0], p[1]), a.get("ceil_mode", 0) == 1,
                                     a.get("count_include_pad", 0) == 1)
                else:
                    y = F.max_pool2d(inp, k, s, (p[0], p[1]), 1, a.get("ceil_mode", 0) == 1)
            elif op == "GlobalAveragePool": y = x[0].mean((2, 3), keepdim=True)
            elif op == "Identity": y = x[0]
            elif op == "Clip":
                lo, hi = (float(self.host[n]) if n in self.host else None for n in (ins + ["", ""])[1:3])
                y = torch.clamp(x[0], lo, hi)
            else:
                raise RuntimeError("unsupported op " + op)
            v[outs[0]] = y
        return [v[o] for o in self.outputs]

def median_ms(fn, reps=30):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / reps * 1e3

print("torch", torch.__version__, torch.cuda.get_device_name(0) if dev == "cuda" else "cpu",
      "cudnn", torch.backends.cudnn.version())
torch.manual_seed(1)
for group in sys.argv[1:]:
    paths = group.split(",")
    models = [Model(p) for p in paths]
    feeds = {n: torch.randn(*s, device=dev) for n, s in models[0].inputs}
    with torch.no_grad():
        ref = models[0].run(feeds)
        for m, p in zip(models[1:], paths[1:]):
            out = m.run(feeds)
            err = max(float((a - b).abs().max() / (b.abs().max() + 1e-6)) for a, b in zip(out, ref))
            print(f"  {p.split('/')[-1]}: max relative difference to the original {err:.2e}")
        if dev != "cuda":
            continue
        graphs = []
        for m in models:
            for _ in range(5):
                m.run(feeds)
            torch.cuda.synchronize()
            gr = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                m.run(feeds)
                with torch.cuda.graph(gr):
                    m.run(feeds)
            torch.cuda.current_stream().wait_stream(s)
            graphs.append(gr)
        eager = [[] for _ in models]
        replay = [[] for _ in models]
        for _ in range(7):
            for k, m in enumerate(models):
                eager[k].append(median_ms(lambda: m.run(feeds), 10))
                replay[k].append(median_ms(graphs[k].replay, 50))
    e = [statistics.median(t) for t in eager]
    r = [statistics.median(t) for t in replay]
    names = [p.split("/")[-1] for p in paths]
    print(f"{names[0]}: eager " + ", ".join(f"{n} {t:.3f} ms" for n, t in zip(names, e)) +
          " | graph replay " + ", ".join(f"{n} {t:.3f} ms" for n, t in zip(names, r)))
    print("  speedup vs original: eager " + ", ".join(f"{n} {e[0] / t:.3f}x" for n, t in zip(names[1:], e[1:])) +
          "; replay " + ", ".join(f"{n} {r[0] / t:.3f}x" for n, t in zip(names[1:], r[1:])))
