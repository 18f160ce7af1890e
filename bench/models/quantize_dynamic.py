"""Dynamic int8 quantization of an ONNX model's matmuls, in the form ONNX Runtime's
onnxruntime.quantization.quantize_dynamic writes (QOperator format, its defaults: signed 8-bit
weights quantized symmetrically per tensor, MatMul with a constant 2-D weight only).

ONNX Runtime's Python package is not a Debian package, so the bench makes the same graph itself:
every MatMul(x, W) with a constant float W becomes

  DynamicQuantizeLinear(x) -> x_q, x_scale, x_zero_point      (one per distinct x)
  MatMulInteger(x_q, W_q, x_zero_point, W_zero_point) -> int32
  Cast(to=float);  Mul(x_scale, W_scale);  Mul(product, scale) -> the MatMul's output

with W_q = round(W / W_scale) in [-127, 127], W_scale = max |W| / 127, W_zero_point = 0. With
--conv (quantize_dynamic's op types include Conv) every Conv with constant weights likewise
becomes ConvInteger(x_q, W_q, x_zero_point, W_zero_point) with the Conv's attributes, Cast, the
scales' Mul, Mul, and an Add of its bias reshaped to [1, C, 1, ...].

  /usr/bin/python3 bench/models/quantize_dynamic.py IN.onnx OUT.onnx [--conv]
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_dynamic(model, conv=False):
    """Returns the number of MatMuls (and Convs with `conv`) quantized; `model` is changed in
    place."""
    g = model.graph
    weights = {t.name: t for t in g.initializer}
    nodes, quantizers, count = [], {}, 0
    for n in g.node:
        is_conv = conv and n.op_type == "Conv"
        w = weights.get(n.input[1]) if n.op_type == "MatMul" or is_conv else None
        if (w is None or (len(w.dims) != 2 and not is_conv) or w.data_type != TensorProto.FLOAT
                or (is_conv and len(n.input) > 2 and n.input[2] not in weights)):
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
        product = helper.make_node("ConvInteger" if is_conv else "MatMulInteger",
                                   [x_q, base + "_W_q", x_zero, base + "_W_zero_point"],
                                   [base + "_product"], name=base + "_Integer")
        if is_conv:
            product.attribute.extend(n.attribute)
        biased = is_conv and len(n.input) > 2
        out = base + "_unbiased" if biased else n.output[0]
        nodes += [
            product,
            helper.make_node("Cast", [base + "_product"], [base + "_product_float"],
                             to=TensorProto.FLOAT, name=base + "_Cast"),
            helper.make_node("Mul", [x_scale, base + "_W_scale"], [base + "_scale"],
                             name=base + "_scales_Mul"),
            helper.make_node("Mul", [base + "_product_float", base + "_scale"], [out],
                             name=base + "_output_Mul")]
        if biased:
            bias = numpy_helper.to_array(weights[n.input[2]]).astype(np.float32)
            shape = [1, bias.size] + [1] * (len(w.dims) - 2)
            g.initializer.append(numpy_helper.from_array(bias.reshape(shape), base + "_bias"))
            nodes.append(helper.make_node("Add", [out, base + "_bias"], [n.output[0]],
                                          name=base + "_bias_Add"))
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
    args = [a for a in sys.argv[1:] if a != "--conv"]
    if len(args) != 2:
        sys.exit(__doc__)
    model = onnx.load(args[0])
    count = quantize_dynamic(model, conv="--conv" in sys.argv[1:])
    onnx.checker.check_model(model)
    onnx.save(model, args[1])
    print(f"quantize_dynamic: {count} operators quantized", file=sys.stderr)


if __name__ == "__main__":
    main()
