"""Dynamic int8 quantization of an ONNX model's matmuls, in the form ONNX Runtime's
onnxruntime.quantization.quantize_dynamic writes (QOperator format, its defaults: signed 8-bit
weights quantized symmetrically per tensor, MatMul with a constant 2-D weight only).

ONNX Runtime's Python package is not a Debian package, so the bench makes the same graph itself:
every MatMul(x, W) with a constant float W becomes

  DynamicQuantizeLinear(x) -> x_q, x_scale, x_zero_point      (one per distinct x)
  MatMulInteger(x_q, W_q, x_zero_point, W_zero_point) -> int32
  Cast(to=float);  Mul(x_scale, W_scale);  Mul(product, scale) -> the MatMul's output

with W_q = round(W / W_scale) in [-127, 127], W_scale = max |W| / 127, W_zero_point = 0.

  /usr/bin/python3 bench/models/quantize_dynamic.py IN.onnx OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_dynamic(model):
    """Returns the number of MatMuls quantized; `model` is changed in place."""
    g = model.graph
    weights = {t.name: t for t in g.initializer}
    nodes, quantizers, count = [], {}, 0
    for n in g.node:
        w = weights.get(n.input[1]) if n.op_type == "MatMul" else None
        if w is None or len(w.dims) != 2 or w.data_type != TensorProto.FLOAT:
            nodes.append(n)
            continue
        values = numpy_helper.to_array(w).astype(np.float32)
        scale = max(float(np.abs(values).max()), 1e-8) / 127.0
        base = (n.name or n.output[0]).replace("/", "_").strip("_") + "_quant"
        g.initializer.extend([
            numpy_helper.from_array(
                np.clip(np.round(values / scale), -127, 127).astype(np.int8), base + "_W_q"),
            numpy_helper.from_array(np.array(scale, np.float32), base + "_W_scale"),
            numpy_helper.from_array(np.array(0, np.int8), base + "_W_zero_point")])
        x = n.input[0]
        if x not in quantizers:
            quantizers[x] = [x + "_quantized", x + "_scale", x + "_zero_point"]
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], quantizers[x],
                                          name=x + "_QuantizeLinear"))
        x_q, x_scale, x_zero = quantizers[x]
        nodes += [
            helper.make_node("MatMulInteger", [x_q, base + "_W_q", x_zero, base + "_W_zero_point"],
                             [base + "_product"], name=base + "_MatMulInteger"),
            helper.make_node("Cast", [base + "_product"], [base + "_product_float"],
                             to=TensorProto.FLOAT, name=base + "_Cast"),
            helper.make_node("Mul", [x_scale, base + "_W_scale"], [base + "_scale"],
                             name=base + "_scales_Mul"),
            helper.make_node("Mul", [base + "_product_float", base + "_scale"], [n.output[0]],
                             name=base + "_output_Mul")]
        count += 1
    replace_nodes(g, nodes)
    return count


def replace_nodes(graph, nodes):
    """Makes `nodes` the graph's nodes and drops the initializers none of them reads."""
    del graph.node[:]
    graph.node.extend(nodes)
    used = {i for n in graph.node for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1])
    count = quantize_dynamic(model)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    print(f"quantize_dynamic: {count} MatMuls quantized", file=sys.stderr)


if __name__ == "__main__":
    main()
