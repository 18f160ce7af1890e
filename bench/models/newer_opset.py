#!/usr/bin/python3
"""Rewrites an opset-17 model into the form newer exporters write at opset 18 to 25.

Debian 12's PyTorch exports opset 17 at most; PyTorch's dynamo exporter, ONNX Runtime's tools
and newer model zoos write 18 and up. This gives the import of newer opsets (runtime/
onnx_newer_opsets.h) real models to read, each changed operator in its newer form:
  Reduce{Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,SumSquare} (18): axes as an int64 input
  Split (18): num_outputs instead of equal explicit sizes
  the erf GELU PyTorch writes (Div or Mul, Erf, Add, Mul, Mul) (20): one Gelu node
  x * sigmoid(x) (24): one Swish node
  Resize (18, 19): the default antialias and keep_aspect_ratio_policy written out
and IR version 10. The model computes what it computed; ONNX Runtime (which reads these opsets)
checks it against its recorded output.

  /usr/bin/python3 bench/models/newer_opset.py IN.onnx OUT.onnx --opset 21
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

REDUCES = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}


def const_value(graph, name):
    for t in graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    for n in graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            for a in n.attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t)
    return None


def scalar_of(graph, name):
    v = const_value(graph, name)
    return None if v is None or v.size != 1 else float(v.reshape(-1)[0])


def rewrite(graph, opset, counts):
    consumers = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    producer = {o: n for n in graph.node for o in n.output}
    out = []
    dropped = set()
    fresh = [0]

    def name(base):
        fresh[0] += 1
        return f"{base}__v{opset}_{fresh[0]}"

    for n in graph.node:
        if id(n) in dropped:
            continue
        for a in n.attribute:  # subgraphs first
            if a.type == onnx.AttributeProto.GRAPH:
                rewrite(a.g, opset, counts)
        if n.op_type in REDUCES:
            axes = [a for a in n.attribute if a.name == "axes"]
            if axes:
                axes_name = name("axes")
                out.append(helper.make_node("Constant", [], [axes_name],
                                            value=numpy_helper.from_array(
                                                np.array(axes[0].ints, np.int64))))
                n.attribute.remove(axes[0])
                n.input.append(axes_name)
                counts[n.op_type + "-18"] = counts.get(n.op_type + "-18", 0) + 1
        elif n.op_type == "Split" and len(n.input) > 1:
            sizes = const_value(graph, n.input[1])
            if sizes is not None and len(set(sizes.tolist())) == 1:
                del n.input[1]
                n.attribute.append(helper.make_attribute("num_outputs", len(n.output)))
                counts["Split-18"] = counts.get("Split-18", 0) + 1
        elif n.op_type == "Resize":
            n.attribute.append(helper.make_attribute("antialias", 0))
            n.attribute.append(helper.make_attribute("keep_aspect_ratio_policy", "stretch"))
            counts["Resize-18"] = counts.get("Resize-18", 0) + 1
        elif n.op_type == "Erf" and opset >= 20:
            # x -> Div(x, sqrt 2) or Mul(x, 1/sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5
            pre = producer.get(n.input[0])
            if pre is None or pre.op_type not in ("Div", "Mul"):
                out.append(n)
                continue
            x = pre.input[0]
            k = scalar_of(graph, pre.input[1])
            want = np.sqrt(2.0) if pre.op_type == "Div" else 1 / np.sqrt(2.0)
            chain = []
            cur = n
            for op, check in (("Add", 1.0), ("Mul", None), ("Mul", 0.5)):
                nxt = consumers.get(cur.output[0], [])
                if len(nxt) != 1 or nxt[0].op_type != op:
                    chain = None
                    break
                other = [i for i in nxt[0].input if i != cur.output[0]]
                if len(other) != 1:
                    chain = None
                    break
                if check is None:
                    if other[0] != x:
                        chain = None
                        break
                elif scalar_of(graph, other[0]) is None or \
                        abs(scalar_of(graph, other[0]) - check) > 1e-6:
                    chain = None
                    break
                chain.append(nxt[0])
                cur = nxt[0]
            if (k is None or abs(k - want) > 1e-5 or chain is None or
                    len(consumers.get(pre.output[0], [])) != 1 or
                    len(consumers.get(n.output[0], [])) != 1 or
                    any(len(consumers.get(c.output[0], [])) != 1 for c in chain[:-1])):
                out.append(n)
                continue
            out = [o for o in out if o is not pre]
            for c in chain:
                dropped.add(id(c))
            out.append(helper.make_node("Gelu", [x], [chain[-1].output[0]], name=n.name + "_gelu"))
            counts["Gelu-20"] = counts.get("Gelu-20", 0) + 1
            continue
        elif n.op_type == "Sigmoid" and opset >= 24:
            users = consumers.get(n.output[0], [])
            if (len(users) == 1 and users[0].op_type == "Mul" and
                    sorted(users[0].input) == sorted([n.input[0], n.output[0]])):
                dropped.add(id(users[0]))
                out.append(helper.make_node("Swish", [n.input[0]], [users[0].output[0]],
                                            name=n.name + "_swish"))
                counts["Swish-24"] = counts.get("Swish-24", 0) + 1
                continue
        out.append(n)
    # A Mul dropped into a Swish may come before its Sigmoid in the list: keep out's order
    # (each new node replaces its chain's first node, whose inputs are all defined by then).
    del graph.node[:]
    graph.node.extend(out)


def upgrade(model, opset):
    """Rewrites an opset-17 `model` in place into `opset`'s forms; returns {form: count}."""
    counts = {}
    rewrite(model.graph, opset, counts)
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = opset
    model.ir_version = 10
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--opset", type=int, default=21, choices=range(18, 26))
    args = ap.parse_args()
    model = onnx.load(args.input)
    version = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if version != [17]:
        sys.exit(f"{args.input}: opset {version}, not 17")
    counts = upgrade(model, args.opset)
    tmp = args.output + ".tmp"
    with open(tmp, "wb") as f:
        f.write(model.SerializeToString())
    os.replace(tmp, args.output)
    print(f"{args.output}: opset {args.opset}, " +
          (", ".join(f"{k} x{v}" for k, v in sorted(counts.items())) or "no node changed"))


if __name__ == "__main__":
    main()
