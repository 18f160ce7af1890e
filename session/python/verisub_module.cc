// The Python extension `verisub._verisub` (pybind11): a Session behind ONNX Runtime's names and
// the optimizer as one call. The pure-Python package verisub/__init__.py wraps it (model kinds,
// the report as a dict). Every verisub error becomes verisub.Error with our message; the GIL is
// released while models load, optimize and run.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "onnx/onnx_pb.h"
#include "rewriter/report_json.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "session/optimize_model.h"
#include "session/session.h"
#include "session/shape_adaptive.h"

namespace py = pybind11;

namespace verisub::python {
namespace {

using runtime::HostTensor;

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T>
T Value(StatusOr<T> v) {
  if (!v.ok()) throw Error(v.status().message());
  return std::move(v).value();
}
void Ok(const Status& st) {
  if (!st.ok()) throw Error(st.message());
}

// A model argument as the module receives it: its path, or the bytes of a serialized ModelProto.
std::string ModelData(const py::object& model, bool is_path) {
  return is_path ? model.cast<std::string>() : std::string(model.cast<py::bytes>());
}

// Imports a model from ModelData (needs no GIL).
StatusOr<runtime::Graph> ImportModel(const std::string& data, bool is_path,
                                     const runtime::ImportOptions& opts) {
  return is_path ? runtime::ImportOnnxFile(data, opts)
                 : runtime::ImportOnnxBytes(data, "<bytes>", opts);
}

// ONNX Runtime's type strings.
std::string TypeString(int32_t t) {
  static const std::map<int32_t, std::string> names = {
      {runtime::kFloat, "float"},     {runtime::kDouble, "double"},
      {runtime::kFloat16, "float16"}, {runtime::kBfloat16, "bfloat16"},
      {runtime::kInt64, "int64"},     {runtime::kInt32, "int32"},
      {runtime::kInt16, "int16"},     {runtime::kInt8, "int8"},
      {runtime::kUint8, "uint8"},     {runtime::kUint16, "uint16"},
      {runtime::kUint32, "uint32"},   {runtime::kUint64, "uint64"},
      {runtime::kBool, "bool"}};
  auto it = names.find(t);
  return "tensor(" + (it == names.end() ? std::string("unknown") : it->second) + ")";
}

struct NodeArg {
  std::string name;
  py::list shape;  // ints, None where unknown
  std::string type;
};

NodeArg ArgOf(const runtime::Value& v) {
  NodeArg a;
  a.name = v.name;
  if (v.rank_known)
    for (int64_t d : v.dims) a.shape.append(d >= 0 ? py::object(py::int_(d)) : py::none());
  a.type = TypeString(v.elem_type);
  return a;
}

template <class T>
py::array Array(const std::vector<int64_t>& dims, const std::vector<T>& data) {
  py::array_t<T> a(std::vector<py::ssize_t>(dims.begin(), dims.end()));
  std::copy(data.begin(), data.end(), a.mutable_data());
  return a;
}

template <class T, class S>
py::array Converted(const std::vector<int64_t>& dims, const std::vector<S>& data) {
  return Array(dims, std::vector<T>(data.begin(), data.end()));
}

py::array ToNumpy(const HostTensor& t) {
  switch (t.elem_type) {
    case runtime::kFloat:
      return Array(t.dims, t.f32.Floats());
    case runtime::kDouble:
      return Array(t.dims, t.f64);
    case runtime::kFloat16:
      return Array(t.dims, t.f64).attr("astype")("float16");
    case runtime::kBfloat16:  // numpy has no bfloat16: its values in float32
      return Converted<float>(t.dims, t.f64);
    case runtime::kInt64:
      return Array(t.dims, t.ints);
    case runtime::kInt32:
      return Converted<int32_t>(t.dims, t.ints);
    case runtime::kInt16:
      return Converted<int16_t>(t.dims, t.ints);
    case runtime::kInt8:
      return Converted<int8_t>(t.dims, t.ints);
    case runtime::kUint8:
      return Converted<uint8_t>(t.dims, t.ints);
    case runtime::kUint16:
      return Converted<uint16_t>(t.dims, t.ints);
    case runtime::kUint32:
      return Converted<uint32_t>(t.dims, t.ints);
    case runtime::kUint64:
      return Converted<uint64_t>(t.dims, t.ints);
    case runtime::kBool:
      return Converted<bool>(t.dims, t.ints);
    default:
      throw Error("an output of type " + runtime::ElemTypeName(t.elem_type) + " has no numpy form");
  }
}

// A numpy array for graph input `v`, converted to its element type; the shape must match where
// the model fixes it.
HostTensor FromNumpy(const py::handle& obj, const runtime::Value& v) {
  py::array a = py::array::ensure(obj);
  if (!a) throw Error("input '" + v.name + "': expected a numpy array");
  std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
  if (!v.Accepts(dims))
    throw Error("input '" + v.name + "': expected shape " + runtime::DimsToString(v.dims) +
                ", got " + runtime::DimsToString(dims));
  HostTensor t;
  t.elem_type = v.elem_type;
  t.dims = dims;
  if (v.elem_type == runtime::kFloat) {
    auto f = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!f) throw Error("input '" + v.name + "': cannot convert to float32");
    t.f32.assign(f.data(), f.data() + f.size());
  } else if (runtime::IsFloatType(v.elem_type)) {
    auto f = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!f)
      throw Error("input '" + v.name + "': cannot convert to " +
                  runtime::ElemTypeName(v.elem_type));
    t = HostTensor::FromDoubles(v.elem_type, dims,
                                std::vector<double>(f.data(), f.data() + f.size()));
  } else if (runtime::IsIntegerType(v.elem_type)) {
    auto f = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!f)
      throw Error("input '" + v.name + "': cannot convert to " +
                  runtime::ElemTypeName(v.elem_type));
    t = HostTensor::FromInts(v.elem_type, dims,
                             std::vector<int64_t>(f.data(), f.data() + f.size()));
  } else {
    throw Error("input '" + v.name + "': type " + runtime::ElemTypeName(v.elem_type) +
                " is not supported");
  }
  return t;
}

// A Session behind ONNX Runtime's InferenceSession: a ShapeAdaptiveSession (shapes "auto",
// "dynamic" or "static": session/shape_adaptive.h), so that a dynamic-axes export runs at any
// shape, as in ONNX Runtime.
class PySession {
 public:
  PySession(const py::object& model, bool is_path, const SessionOptions& options,
            const std::string& shapes) {
    // The model's path or bytes, held once: by the importer, which prepares it per shape.
    auto data = std::make_shared<const std::string>(ModelData(model, is_path));
    py::gil_scoped_release release;
    runtime::DeclaredInterface declared = Value(runtime::ReadDeclaredInterface(*data, is_path));
    session_ = Value(ShapeAdaptiveSession::Create(
        [data, is_path](const runtime::ImportOptions& o) { return ImportModel(*data, is_path, o); },
        std::move(declared), options, shapes));
  }

  std::vector<NodeArg> Inputs() const { return Interface(true); }
  std::vector<NodeArg> Outputs() const { return Interface(false); }

  py::list Run(const py::object& output_names, const py::dict& feed) {
    const runtime::DeclaredInterface& d = session_->declared();
    std::shared_ptr<Session> only = session_->open_dimensions() ? nullptr : session_->current();
    std::vector<HostTensor> inputs;
    for (size_t k = 0; k < d.inputs.size(); ++k) {
      const std::string& name = d.inputs[k].name;
      if (!feed.contains(name)) throw Error("input '" + name + "' missing from input_feed");
      inputs.push_back(FromNumpy(feed[py::str(name)],
                                 only ? InputValue(*only, name) : DeclaredValue(d.inputs[k])));
    }
    for (auto item : feed) {
      const std::string name = item.first.cast<std::string>();
      bool known = false;
      for (const runtime::DeclaredInput& in : d.inputs) known |= in.name == name;
      if (!known) throw Error("input_feed names '" + name + "', which is not a model input");
    }
    std::vector<HostTensor> out;
    std::shared_ptr<Session> session;
    {
      py::gil_scoped_release release;
      out = Value(session_->Run(inputs));
      session = session_->current();
    }
    const runtime::Graph& g = session->graph();
    std::vector<int> order;
    if (output_names.is_none()) {
      for (size_t k = 0; k < out.size(); ++k) order.push_back(static_cast<int>(k));
    } else {
      for (auto name : output_names) {
        const std::string n = name.cast<std::string>();
        int found = -1;
        for (size_t k = 0; k < g.outputs().size(); ++k)
          if (g.value(g.outputs()[k]).name == n) found = static_cast<int>(k);
        if (found < 0) throw Error("output '" + n + "' is not a model output");
        order.push_back(found);
      }
    }
    py::list result;
    for (int k : order) result.append(ToNumpy(out[k]));
    return result;
  }

  // What the session did: backend, stage times, prepare statistics, the optimizer's report.
  py::dict Info() const {
    std::shared_ptr<Session> s = session_->current();
    if (!s) throw Error("no run yet: the model is prepared per input shape at its runs");
    py::dict d;
    d["backend"] = s->backend_name();
    d["load_s"] = s->times().load_s;
    d["optimize_s"] = s->times().optimize_s;
    d["prepare_s"] = s->times().prepare_s;
    const runtime::PrepareStats st = s->stats();
    d["steps"] = st.steps;
    d["fused_nodes"] = st.fused_nodes;
    d["fallback_nodes"] = st.fallback_nodes;
    d["activation_bytes"] = st.activation_bytes;
    d["weight_bytes"] = st.weight_bytes;
    d["shared_weight_bytes"] = st.shared_weight_bytes;
    if (const OptimizeReport* r = s->optimize_report())
      d["optimize_report"] = rewriter::ReportToJson(*r, "", "");
    if (const auto& t = s->rewrite_timing()) d["kept_rewritten_graph"] = !t->kept_original;
    d["shapes_prepared"] = session_->shapes_prepared();
    d["dynamic_shapes"] = session_->has_dynamic();
    d["last_run_dynamic"] = session_->last_run_dynamic();
    d["dynamic_runs"] = session_->dynamic_runs();
    if (!session_->dynamic_error().empty()) d["dynamic_shapes_error"] = session_->dynamic_error();
    return d;
  }

 private:
  static const runtime::Value& InputValue(const Session& s, const std::string& name) {
    const runtime::Graph& g = s.graph();
    for (int v : g.inputs())
      if (g.value(v).name == name) return g.value(v);
    throw Error("input '" + name + "' is not an input of the prepared model");
  }
  static runtime::Value DeclaredValue(const runtime::DeclaredInput& in) {
    runtime::Value v;
    v.name = in.name;
    v.elem_type = in.elem_type;
    v.dims = in.dims;
    v.rank_known = in.ranked;
    return v;
  }

  std::vector<NodeArg> Interface(bool inputs) const {
    std::vector<NodeArg> out;
    if (!session_->open_dimensions()) {
      const runtime::Graph& g = session_->current()->graph();
      for (int v : inputs ? g.inputs() : g.outputs()) out.push_back(ArgOf(g.value(v)));
      return out;
    }
    const runtime::DeclaredInterface& d = session_->declared();
    for (const runtime::DeclaredInput& in : inputs ? d.inputs : d.outputs) {
      NodeArg a;
      a.name = in.name;
      a.type = TypeString(in.elem_type);
      for (int64_t dim : in.dims) a.shape.append(dim >= 0 ? py::object(py::int_(dim)) : py::none());
      out.push_back(std::move(a));
    }
    return out;
  }

  std::unique_ptr<ShapeAdaptiveSession> session_;
};

// Returns (optimized model bytes, report JSON).
py::tuple Optimize(const py::object& model, bool is_path, const ModelOptimizeOptions& options,
                   const runtime::ImportOptions& import, const std::string& html_path) {
  const std::string data = ModelData(model, is_path);
  const std::string source = is_path ? data : "<bytes>";
  std::string json;
  py::object bytes;  // the result's bytes object, written in place by the export
  {
    py::gil_scoped_release release;
    ModelOptimizeOptions o = options;
    o.for_html_report = !html_path.empty();
    if (o.for_html_report) Ok(base::CheckOutputPath(html_path));
    // Imported while the rules load beside it (OptimizeModel).
    ModelOptimizeResult r =
        Value(OptimizeModel([&]() { return ImportModel(data, is_path, import); }, o, source));
    if (o.for_html_report) Ok(base::WriteFileAtomically(html_path, r.html));
    Ok(runtime::ExportOnnxToBuffer(r.graph, [&](uint64_t size) -> StatusOr<char*> {
      py::gil_scoped_acquire gil;
      PyObject* b = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
      if (!b) {
        PyErr_Clear();
        return InternalError("no memory for the optimized model's " + std::to_string(size) +
                             " bytes");
      }
      bytes = py::reinterpret_steal<py::object>(b);
      return PyBytes_AS_STRING(b);
    }));
    json = rewriter::ReportToJson(r.report, source, "");
  }
  return py::make_tuple(bytes, json);
}

}  // namespace
}  // namespace verisub::python

PYBIND11_MODULE(_verisub, m) {
  using namespace verisub;          // NOLINT
  using namespace verisub::python;  // NOLINT
  m.doc() = "verisub's runtime: proved graph rewrites and a Session with ONNX Runtime's names";
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);

  py::class_<NodeArg>(m, "NodeArg")
      .def_readonly("name", &NodeArg::name)
      .def_readonly("shape", &NodeArg::shape)
      .def_readonly("type", &NodeArg::type)
      .def("__repr__", [](const NodeArg& a) {
        return "NodeArg(name='" + a.name + "', type='" + a.type +
               "', shape=" + py::repr(a.shape).cast<std::string>() + ")";
      });

  py::class_<PySession>(m, "_Session")
      .def(py::init([](const py::object& model, bool is_path, bool optimize,
                       const std::string& rules, int threads, const std::string& backend,
                       const std::string& layout, const std::string& precision,
                       double precision_budget, const std::string& cost,
                       const std::map<std::string, std::vector<int64_t>>& input_shapes,
                       const std::string& fusion, const std::string& shapes) {
             SessionOptions o;
             o.optimize = optimize;
             o.rules_path = rules;
             o.num_threads = threads;
             o.backend = backend;
             o.layout = layout;
             o.precision = precision;
             o.precision_budget = precision_budget;
             o.cost.cost = cost;
             o.input_shapes = input_shapes;
             o.fusion = fusion;
             return std::make_unique<PySession>(model, is_path, o, shapes);
           }),
           py::arg("model"), py::arg("is_path"), py::arg("optimize"), py::arg("rules"),
           py::arg("threads"), py::arg("backend"), py::arg("layout"), py::arg("precision"),
           py::arg("precision_budget"), py::arg("cost"), py::arg("input_shapes"), py::arg("fusion"),
           py::arg("shapes"))
      .def("get_inputs", &PySession::Inputs)
      .def("get_outputs", &PySession::Outputs)
      .def("run", &PySession::Run, py::arg("output_names"), py::arg("input_feed"))
      .def("info", &PySession::Info);

  m.def(
      "_optimize",
      [](const py::object& model, bool is_path, const std::string& rules, bool allow_unproved,
         const std::string& cost, const std::string& device, const std::string& cost_table,
         const std::string& layout, double time_limit, int64_t budget,
         const std::map<std::string, std::vector<int64_t>>& input_shapes,
         const std::string& report_html) {
        ModelOptimizeOptions o;
        o.rules_path = rules;
        o.allow_unproved = allow_unproved;
        o.cost.cost = cost;
        if (!device.empty()) o.cost.device = device;
        o.cost.table_path = cost_table;
        o.layout = layout;
        if (time_limit > 0) o.optimize.search.time_limit_s = time_limit;
        if (budget > 0) o.optimize.search.budget = static_cast<int>(budget);
        runtime::ImportOptions import;
        import.input_shapes = input_shapes;
        o.optimize.import = import;
        return Optimize(model, is_path, o, import, report_html);
      },
      py::arg("model"), py::arg("is_path"), py::arg("rules"), py::arg("allow_unproved"),
      py::arg("cost"), py::arg("device"), py::arg("cost_table"), py::arg("layout"),
      py::arg("time_limit"), py::arg("budget"), py::arg("input_shapes"), py::arg("report_html"));
}
