"""verisub: proved graph rewrites for ONNX models, and a runtime with ONNX Runtime's interface.

    import verisub
    sess = verisub.InferenceSession("model.onnx")        # optimized with the shipped rules
    y, = sess.run(None, {sess.get_inputs()[0].name: x})   # numpy in, numpy out
    model, report = verisub.optimize(onnx_model)          # ModelProto, bytes or a path

Errors are verisub.Error (a RuntimeError) carrying verisub's message, which names the file,
node or rule at fault.
"""
import json as _json
import os as _os

from ._verisub import Error, NodeArg, _Session, _optimize

__all__ = ["Error", "InferenceSession", "NodeArg", "SessionOptions", "optimize",
           "get_available_providers"]

_PROVIDERS = {"CPUExecutionProvider": "onednn", "CUDAExecutionProvider": "cuda"}


def _model_arg(model):
    """(bytes or path, is_path, kind) for an onnx.ModelProto, bytes or a path."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), False, "bytes"
    if isinstance(model, (str, _os.PathLike)):
        return _os.fspath(model), True, "path"
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString(), False, "proto"
    raise TypeError("model: an onnx.ModelProto, bytes or a path, not " + type(model).__name__)


def get_available_providers():
    """The execution providers this build can run on, in ONNX Runtime's names."""
    return list(_PROVIDERS)


class SessionOptions:
    """ONNX Runtime's SessionOptions, for the fields verisub uses (intra_op_num_threads)."""

    def __init__(self):
        self.intra_op_num_threads = 0


class InferenceSession:
    """A model loaded, optionally optimized with the proved rules, laid out and prepared once.

    model: an onnx.ModelProto, its bytes, or a path. sess_options and providers as in ONNX
    Runtime ("CUDAExecutionProvider" first runs on the GPU). verisub's own options:
    optimize (default True: the shipped rules, costs measured on this machine and cached),
    rules (a rules file), threads (0: one per core), layout ("auto", "backend", "dp",
    "joint", "plain"), precision ("f32"; "bf16" on the CPU; "fp16" or "bf16" on the GPU),
    precision_budget (relative output error allowed to reduced precision), cost ("auto",
    "analytic", "cpu-measured", "gpu-measured"), input_shapes ({name: [dims]} fixing
    symbolic dimensions), shapes (how a model with symbolic dimensions left runs at any
    shape: "auto", the default, prepares it once with them symbolic and runs every shape on
    that, and prepares it again for a shape once that shape has run 3 times, for its faster
    kernels, at most 8 times in all; "dynamic" only the first; "static" prepares it per shape at
    the first run at that shape, the last 8 shapes kept), fusion ("library"; "subop": chains of memory-bound operators as
    kernels generated with Halide, cached on disk; "auto": each generated kernel timed
    against the library's steps for its nodes, the faster kept; "none": nothing fused).
    """

    def __init__(self, model, sess_options=None, providers=None, *, optimize=True, rules=None,
                 threads=None, layout="auto", precision="f32", precision_budget=1e-2,
                 cost="auto", input_shapes=None, fusion="library", shapes="auto"):
        data, is_path, _ = _model_arg(model)
        backend = "onednn"
        for p in providers or []:
            name = p[0] if isinstance(p, tuple) else p
            if name not in _PROVIDERS:
                raise ValueError("provider '%s': verisub runs on %s" % (name, ", ".join(_PROVIDERS)))
            backend = _PROVIDERS[name]
            break
        if threads is None:
            threads = getattr(sess_options, "intra_op_num_threads", 0) or 0
        self._backend = backend
        self._session = _Session(data, is_path, bool(optimize), rules or "", int(threads), backend,
                                 layout, precision, float(precision_budget), cost,
                                 dict(input_shapes or {}), fusion, shapes)

    def get_inputs(self):
        return self._session.get_inputs()

    def get_outputs(self):
        return self._session.get_outputs()

    def get_providers(self):
        return [k for k, v in _PROVIDERS.items() if v == self._backend]

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model on input_feed ({name: numpy array}); returns the outputs named in
        output_names (None: all), as numpy arrays."""
        return self._session.run(output_names, input_feed)

    def info(self):
        """What the session did: backend, stage times, prepare statistics, and the optimizer's
        report (a dict) when it optimized."""
        d = self._session.info()
        if "optimize_report" in d:
            d["optimize_report"] = _json.loads(d["optimize_report"])
        return d


def optimize(model, rules=None, cost="auto", layout="dp", *, allow_unproved=False, device=None,
             cost_table=None, time_limit=None, budget=None, input_shapes=None, report_html=None):
    """Optimizes a model with the proved rules; returns (optimized model, report dict).

    model: an onnx.ModelProto (a ModelProto comes back), bytes (bytes come back) or a path (a
    ModelProto comes back). cost: "auto" (kernels timed on this CPU, cached), "analytic"
    (device "v100", "cpu-2core" or "h100"), "cpu-measured", "gpu-measured"; layout: "dp" (the
    search prices graphs by their layout-DP cost) or "plain". report_html: also write the
    report as one self-contained HTML page there (graphs before and after, rewrites and proofs).
    """
    data, is_path, kind = _model_arg(model)
    out, report = _optimize(data, is_path, rules or "", bool(allow_unproved), cost, device or "",
                            cost_table or "", layout, float(time_limit or 0), int(budget or 0),
                            dict(input_shapes or {}), _os.fspath(report_html or ""))
    report = _json.loads(report)
    if kind == "bytes":
        return out, report
    import onnx
    return onnx.load_from_string(out), report
