"""The Python module: ONNX Runtime's names over a verisub Session, the optimizer as one call, and
errors as verisub.Error with our messages. Runs under ctest (tests/session/CMakeLists.txt) with
Debian's python3, numpy and onnx, from the source tree (data/models)."""
import unittest

import numpy as np
import onnx
from onnx import numpy_helper

import verisub

MODELS = "data/models/"


def recorded(name):
    """(model path, recorded input, PyTorch's recorded output)."""
    inp = numpy_helper.to_array(onnx.load_tensor(MODELS + name + ".input_0.pb"))
    out = numpy_helper.to_array(onnx.load_tensor(MODELS + name + ".output_0.pb"))
    return MODELS + name + ".onnx", inp, out


def relative_error(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))


class InferenceSessionTest(unittest.TestCase):
    def test_runs_an_export_like_pytorch(self):
        for name in ("squeezenet1_1", "small_resnet", "tiny_transformer"):
            path, x, expected = recorded(name)
            sess = verisub.InferenceSession(path, cost="analytic")
            inputs = sess.get_inputs()
            self.assertEqual(len(inputs), 1)
            self.assertEqual(inputs[0].type, "tensor(float)")
            self.assertEqual(inputs[0].shape, list(x.shape))
            y, = sess.run(None, {inputs[0].name: x})
            self.assertEqual(y.dtype, np.float32)
            self.assertEqual(y.shape, expected.shape)
            self.assertLess(relative_error(y, expected), 1e-3, name)
            info = sess.info()
            self.assertEqual(info["backend"], "onednn")
            self.assertIn("cost_after_us", info["optimize_report"])

    def test_model_kinds_and_output_selection(self):
        path, x, expected = recorded("squeezenet1_1")
        proto = onnx.load(path)
        for model in (proto, proto.SerializeToString(), path):
            sess = verisub.InferenceSession(model, optimize=False, threads=1)
            out_name = sess.get_outputs()[0].name
            y, = sess.run([out_name], {"input": x.astype(np.float64)})  # converted to float32
            self.assertLess(relative_error(y, expected), 1e-3)
            self.assertEqual(sess.get_providers(), ["CPUExecutionProvider"])

    def test_runs_a_model_stored_in_float16(self):
        # A float16 export computes in float32 on oneDNN (the casts at its edges aside), its
        # interface float16 as declared.
        path, x, expected = recorded("squeezenet1_1")
        proto = onnx.load(path)
        for i, t in enumerate(list(proto.graph.initializer)):
            if t.data_type == onnx.TensorProto.FLOAT:
                proto.graph.initializer[i].CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(t).astype(np.float16), t.name))
        for v in list(proto.graph.input) + list(proto.graph.output):
            v.type.tensor_type.elem_type = onnx.TensorProto.FLOAT16
        del proto.graph.value_info[:]
        sess = verisub.InferenceSession(proto, optimize=False, threads=1)
        self.assertEqual(sess.get_inputs()[0].type, "tensor(float16)")
        y, = sess.run(None, {"input": x.astype(np.float16)})
        self.assertEqual(y.dtype, np.float16)
        self.assertLess(relative_error(y.astype(np.float32), expected), 1e-2)
        self.assertLessEqual(sess.info()["fallback_nodes"], 2)

    def test_runs_a_dynamic_axes_model_at_every_shape(self):
        # A dynamic-axes export (symbolic batch and sequence length) runs at whatever shape it
        # is given, as in ONNX Runtime. shapes="auto": on one session prepared with the
        # dimensions symbolic, and on one prepared for a shape once that shape ran 3 times;
        # "dynamic": always the first; "static": one prepared per shape at its first run.
        from onnx import helper, TensorProto
        w = np.linspace(-1, 1, 16 * 8, dtype=np.float32).reshape(16, 8)
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
            "dynamic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 16])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 8])],
            [numpy_helper.from_array(w, "w")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        shapes = [(2, 5, 16), (1, 9, 16), (2, 5, 16), (2, 5, 16), (2, 5, 16)]
        # (mode, static sessions prepared, runs on the dynamic one, whether the last run was)
        for mode, prepared, dynamic_runs, last_dynamic in (
                ("auto", 1, 3, False), ("dynamic", 0, 5, True), ("static", 2, 0, False)):
            sess = verisub.InferenceSession(model.SerializeToString(), threads=1,
                                            cost="analytic", shapes=mode)
            self.assertEqual(sess.get_inputs()[0].shape, [None, None, 16])
            self.assertEqual(sess.get_outputs()[0].shape, [None, None, 8])
            rng = np.random.default_rng(3)
            for shape in shapes:
                x = rng.standard_normal(shape).astype(np.float32)
                y, = sess.run(None, {"x": x})
                self.assertEqual(y.shape, shape[:2] + (8,))
                self.assertLess(relative_error(y, np.maximum(x @ w, 0)), 1e-5, mode)
            info = sess.info()
            self.assertEqual(info["shapes_prepared"], prepared, mode)
            self.assertEqual(info["dynamic_runs"], dynamic_runs, mode)
            self.assertEqual(info["last_run_dynamic"], last_dynamic, mode)
            with self.assertRaisesRegex(verisub.Error, "expected shape|16"):
                sess.run(None, {"x": np.zeros((2, 5, 15), np.float32)})
        with self.assertRaisesRegex(verisub.Error, "shapes 'sometimes'"):
            verisub.InferenceSession(model.SerializeToString(), shapes="sometimes")

    def test_errors_carry_our_messages(self):
        path, x, _ = recorded("squeezenet1_1")
        with self.assertRaisesRegex(verisub.Error, "no_such_model.onnx"):
            verisub.InferenceSession(MODELS + "no_such_model.onnx")
        with self.assertRaisesRegex(verisub.Error, "protobuf|parse|ModelProto"):
            verisub.InferenceSession(b"not a model")
        with self.assertRaises(TypeError):
            verisub.InferenceSession(42)
        with self.assertRaisesRegex(ValueError, "TensorrtExecutionProvider"):
            verisub.InferenceSession(path, providers=["TensorrtExecutionProvider"])
        sess = verisub.InferenceSession(path, optimize=False)
        with self.assertRaisesRegex(verisub.Error, "input 'input' missing"):
            sess.run(None, {})
        with self.assertRaisesRegex(verisub.Error, "expected shape"):
            sess.run(None, {"input": x[:, :, :10]})
        with self.assertRaisesRegex(verisub.Error, "'bogus'"):
            sess.run(None, {"input": x, "bogus": x})
        with self.assertRaisesRegex(verisub.Error, "'nope' is not a model output"):
            sess.run(["nope"], {"input": x})
        self.assertTrue(issubclass(verisub.Error, RuntimeError))

    def test_gpu_provider_runs_or_says_why_not(self):
        path, x, expected = recorded("squeezenet1_1")
        try:
            sess = verisub.InferenceSession(path, providers=["CUDAExecutionProvider"],
                                            optimize=False)
        except verisub.Error as e:
            self.assertRegex(str(e), "no CUDA device|no CUDA backend")
            return
        y, = sess.run(None, {"input": x})
        self.assertLess(relative_error(y, expected), 1e-3)


class OptimizeTest(unittest.TestCase):
    def test_gives_back_the_kind_it_was_given(self):
        path, x, expected = recorded("small_resnet")
        proto = onnx.load(path)
        optimized, report = verisub.optimize(proto, cost="analytic", device="cpu-2core")
        self.assertIsInstance(optimized, onnx.ModelProto)
        onnx.checker.check_model(optimized)
        self.assertLessEqual(report["cost_after_us"], report["cost_before_us"])
        self.assertGreater(report["nodes_before"], 0)
        data, _ = verisub.optimize(proto.SerializeToString(), cost="analytic", layout="plain")
        self.assertIsInstance(data, bytes)
        from_path, _ = verisub.optimize(path, cost="analytic")
        self.assertIsInstance(from_path, onnx.ModelProto)
        # The optimized model computes what the original does.
        y, = verisub.InferenceSession(optimized, optimize=False).run(None, {"input": x})
        self.assertLess(relative_error(y, expected), 1e-3)

    def test_writes_the_html_report(self):
        import os
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            page = os.path.join(d, "report.html")
            verisub.optimize(MODELS + "small_resnet.onnx", cost="analytic", report_html=page)
            with open(page) as f:
                html = f.read()
            self.assertTrue(html.startswith("<!DOCTYPE html>"))
            self.assertEqual(html.count("<svg"), 2)
            self.assertNotIn("<script", html)
            with self.assertRaisesRegex(verisub.Error, "no_such_dir"):
                verisub.optimize(MODELS + "small_resnet.onnx", cost="analytic",
                                 report_html=os.path.join(d, "no_such_dir", "r.html"))

    def test_bad_arguments(self):
        path = MODELS + "small_resnet.onnx"
        with self.assertRaisesRegex(verisub.Error, "missing_rules"):
            verisub.optimize(path, rules="missing_rules.pb", cost="analytic")
        with self.assertRaisesRegex(verisub.Error, "layout"):
            verisub.optimize(path, cost="analytic", layout="diagonal")


if __name__ == "__main__":
    unittest.main()
