"""Static int8 quantization of an ONNX model in the QDQ form onnxruntime.quantization.
quantize_static writes by default (QuantFormat.QDQ, uint8 activations with a zero point, int8
weights symmetric per tensor): a QuantizeLinear and a DequantizeLinear on every input of a Conv,
Gemm or MatMul with constant weights and of an Add of two float activations, the weights as
DequantizeLinear of int8 constants, and a Relu after a Conv or Add dropped where every reader takes
its output quantized (the output's quantization range starts at 0, as ONNX Runtime's quantizer
does it).

Calibration: ONNX Runtime's Python package is not a Debian package. With --calibrate INPUT.pb,
every activation's range is its min and max on that input (ONNX Runtime's default MinMax
calibrator on one sample), computed by verisub-run (--verisub-run PATH, default the build's) on
the model with those values as outputs; with RANGES.json, the ranges it maps value names to; else
every activation gets [-4, 4] ([0, 4] after a dropped Relu). The graph, and so the speed of an
engine on it, is the quantizer's either way.

  /usr/bin/python3 bench/models/quantize_qdq.py IN.onnx OUT.onnx [RANGES.json]
  /usr/bin/python3 bench/models/quantize_qdq.py IN.onnx OUT.onnx --calibrate INPUT.pb
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quantize_dynamic  # noqa: E402 (replace_nodes)


def quantize_qdq(model, ranges=None):
    """Rewrites `model` in place; returns the number of operators quantized."""
    g = model.graph
    ranges = dict(ranges or {})
    # Only float activations are quantized (an Add of shape values stays as it is).
    inferred = onnx.shape_inference.infer_shapes(model).graph
    float_values = {v.name for v in list(inferred.value_info) + list(inferred.input) +
                    list(inferred.output)
                    if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}
    weights = {t.name: t for t in g.initializer}
    outputs = {o.name for o in g.output}
    readers, producer = {}, {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
        for o in n.output:
            producer[o] = n
    # Relu dropped after a Conv or Add whose output only it reads, when its readers quantize.
    dropped = {}
    for n in g.node:
        src = n.input[0] if n.op_type == "Relu" else None
        if (src and src in producer and producer[src].op_type in ("Conv", "Add")
                and len(readers.get(src, [])) == 1 and n.output[0] not in outputs
                and all(r.op_type in ("Conv", "Add") for r in readers.get(n.output[0], []))):
            dropped[n.output[0]] = src
            # The quantizer keeps the Relu's range (from 0): calibrated, the Relu output's.
            hi = ranges.get(n.output[0], ranges.get(src, (0.0, 4.0)))[1]
            ranges[src] = (0.0, max(hi, 0.0))
    nodes, done, count = [], {}, 0

    def qdq(x):
        if x not in done:
            lo, hi = ranges.get(x, (-4.0, 4.0))
            lo, hi = min(lo, 0.0), max(hi, 0.0)
            scale = max(hi - lo, 1e-6) / 255.0
            zero = int(np.clip(round(-lo / scale), 0, 255))
            g.initializer.extend([numpy_helper.from_array(np.array(scale, np.float32), x + "_scale"),
                                  numpy_helper.from_array(np.array(zero, np.uint8),
                                                          x + "_zero_point")])
            nodes.append(helper.make_node("QuantizeLinear", [x, x + "_scale", x + "_zero_point"],
                                          [x + "_quantized"], name=x + "_QuantizeLinear"))
            nodes.append(helper.make_node("DequantizeLinear",
                                          [x + "_quantized", x + "_scale", x + "_zero_point"],
                                          [x + "_dequantized"], name=x + "_DequantizeLinear"))
            done[x] = x + "_dequantized"
        return done[x]

    def weight(name):
        w = numpy_helper.to_array(weights[name]).astype(np.float32)
        scale = max(float(np.abs(w).max()), 1e-8) / 127.0
        g.initializer.extend([
            numpy_helper.from_array(np.clip(np.round(w / scale), -127, 127).astype(np.int8),
                                    name + "_quantized"),
            numpy_helper.from_array(np.array(scale, np.float32), name + "_scale"),
            numpy_helper.from_array(np.array(0, np.int8), name + "_zero_point")])
        nodes.append(helper.make_node(
            "DequantizeLinear", [name + "_quantized", name + "_scale", name + "_zero_point"],
            [name + "_dequantized"], name=name + "_DequantizeLinear"))
        return name + "_dequantized"

    for n in g.node:
        if n.op_type == "Relu" and n.output[0] in dropped:
            continue
        inputs = [dropped.get(i, i) for i in n.input]
        if n.op_type in ("Conv", "Gemm", "MatMul") and len(inputs) > 1 and inputs[1] in weights:
            inputs = [qdq(inputs[0]), weight(inputs[1])] + inputs[2:]
            count += 1
        elif n.op_type == "Add" and all(i not in weights and i in float_values for i in inputs):
            inputs = [qdq(i) for i in inputs]
            count += 1
        m = helper.make_node(n.op_type, inputs, list(n.output), name=n.name, domain=n.domain)
        m.attribute.extend(n.attribute)
        nodes.append(m)
    quantize_dynamic.replace_nodes(g, nodes)
    return count


VERISUB_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                           "session", "verisub-run")


def calibrate(model, input_path, verisub_run=VERISUB_RUN):
    """{value name: (min, max)} of every float value `model` computes, on one input (a
    TensorProto file), run by verisub-run with those values as the graph's outputs."""
    inferred = onnx.shape_inference.infer_shapes(model)
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    outputs = {o.name for o in probe.graph.output}
    probe.graph.output.extend(
        v for v in inferred.graph.value_info
        if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT and v.name not in outputs
        and v.type.tensor_type.HasField("shape"))
    ranges = {}
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "probe.onnx")
        onnx.save(probe, path)
        out_dir = os.path.join(scratch, "out")
        os.mkdir(out_dir)
        subprocess.run([verisub_run, path, "--input", input_path, "--output", out_dir,
                        "--runs", "1", "--warmup", "0", "--layout", "plain"], check=True,
                       stdout=subprocess.DEVNULL)
        for file in sorted(os.listdir(out_dir)):
            t = onnx.TensorProto()
            with open(os.path.join(out_dir, file), "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
            if t.name and a.size and a.dtype == np.float32:
                ranges[t.name] = (float(a.min()), float(a.max()))
    return ranges


def main():
    args = sys.argv[1:]
    if len(args) not in (2, 3, 4) or (len(args) == 4 and args[2] != "--calibrate"):
        sys.exit(__doc__)
    model = onnx.load(args[0])
    ranges = None
    if len(args) == 4:
        ranges = calibrate(model, args[3])
    elif len(args) == 3:
        ranges = json.load(open(args[2]))
    count = quantize_qdq(model, ranges)
    onnx.checker.check_model(model)
    onnx.save(model, args[1])
    print(f"quantize_qdq: {count} operators quantized", file=sys.stderr)


if __name__ == "__main__":
    main()
