"""A float32 ONNX model stored in float16, as GPU-minded exports are (model.half() before
torch.onnx.export, or onnxconverter-common's float16 conversion with its defaults): every float
initializer, Constant and declared float value becomes float16, inputs and outputs included.

  /usr/bin/python3 bench/models/float16.py IN.onnx OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def to_float16(model):
    """Converts `model` in place; returns the number of initializers converted."""
    g, count = model.graph, 0
    for i, t in enumerate(list(g.initializer)):
        if t.data_type == TensorProto.FLOAT:
            g.initializer[i].CopyFrom(
                numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
            count += 1
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    return count


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1])
    to_float16(model)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])


if __name__ == "__main__":
    main()
