// The embedding API (include/verisub/verisub.h) over verisub::Session.
#include <cstdio>

#include "runtime/host_tensor.h"
#include "runtime/onnx_import.h"
#include "session/session.h"
#include "session/shape_adaptive.h"
#include "verisub/verisub.h"

namespace verisub {
namespace {

runtime::HostTensor ToHost(const Tensor& t) {
  runtime::HostTensor h;
  h.elem_type = static_cast<int32_t>(t.type);
  h.dims = t.dims;
  if (t.type == ElementType::kFloat) {
    h.f32 = t.floats;
  } else if (t.type == ElementType::kDouble) {
    h = runtime::HostTensor::FromDoubles(runtime::kDouble, t.dims, t.doubles);
  } else {
    h = runtime::HostTensor::FromInts(static_cast<int32_t>(t.type), t.dims, t.ints);
  }
  return h;
}

Tensor FromHost(const runtime::HostTensor& h, const std::string& name) {
  Tensor t;
  t.name = name;
  t.dims = h.dims;
  if (h.elem_type == runtime::kFloat) {
    t.floats = h.f32;
  } else if (runtime::IsFloatType(h.elem_type)) {  // double, and 16-bit types widened
    t.type = ElementType::kDouble;
    t.doubles = h.ToDoubles();
    return t;
  } else {
    t.ints = h.ToInts();
  }
  t.type = static_cast<ElementType>(h.elem_type);
  return t;
}

bool Supported(int32_t type) {
  switch (type) {
    case runtime::kFloat:
    case runtime::kUint8:
    case runtime::kInt8:
    case runtime::kInt32:
    case runtime::kInt64:
    case runtime::kBool:
    case runtime::kDouble:
      return true;
    default:
      return false;
  }
}

std::vector<TensorInfo> Infos(const runtime::Graph& g, const std::vector<int>& ids) {
  std::vector<TensorInfo> out;
  for (int v : ids) {
    TensorInfo i;
    i.name = g.value(v).name;
    i.type = static_cast<ElementType>(g.value(v).elem_type);
    i.dims = g.value(v).dims;
    out.push_back(std::move(i));
  }
  return out;
}

std::vector<TensorInfo> Infos(const std::vector<runtime::DeclaredInput>& declared) {
  std::vector<TensorInfo> out;
  for (const runtime::DeclaredInput& d : declared) {
    TensorInfo i;
    i.name = d.name;
    i.type = static_cast<ElementType>(d.elem_type);
    i.dims = d.dims;
    out.push_back(std::move(i));
  }
  return out;
}

}  // namespace

struct InferenceSession::Impl {
  std::unique_ptr<ShapeAdaptiveSession> session;
};

InferenceSession::InferenceSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
InferenceSession::~InferenceSession() = default;

std::unique_ptr<InferenceSession> InferenceSession::Create(const std::string& model_path,
                                                           const SessionConfig& config,
                                                           std::string* error) {
  SessionOptions o;
  o.optimize = config.optimize;
  o.rules_path = config.rules_path;
  o.num_threads = config.threads;
  if (config.device == "cuda") {
    o.backend = "cuda";
  } else if (config.device != "cpu") {
    if (error) *error = "device '" + config.device + "': cpu or cuda";
    return nullptr;
  }
  o.layout = config.layout;
  o.precision = config.precision;
  o.input_shapes = config.input_shapes;
  o.fusion = config.fusion;
  auto declared = runtime::ReadDeclaredInterface(model_path, /*is_path=*/true);
  if (!declared.ok()) {
    if (error) *error = declared.status().message();
    return nullptr;
  }
  for (const runtime::DeclaredInput& in : declared->inputs)
    if (!Supported(in.elem_type)) {
      if (error)
        *error = model_path + ": input '" + in.name + "' is " +
                 runtime::ElemTypeName(in.elem_type) +
                 ", which the embedding API does not exchange";
      return nullptr;
    }
  auto s = ShapeAdaptiveSession::Create(
      [model_path](const runtime::ImportOptions& opts) {
        return runtime::ImportOnnxFile(model_path, opts);
      },
      std::move(declared).value(), o, config.shapes);
  if (!s.ok()) {
    if (error) *error = s.status().message();
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->session = std::move(s).value();
  return std::unique_ptr<InferenceSession>(new InferenceSession(std::move(impl)));
}

namespace {

// The declared inputs or outputs, in their order; with no open dimension, as the prepared model
// has them (the shapes input_shapes fixed).
std::vector<TensorInfo> InterfaceOf(const ShapeAdaptiveSession& s, bool inputs) {
  std::vector<TensorInfo> out = Infos(inputs ? s.declared().inputs : s.declared().outputs);
  if (s.open_dimensions()) return out;
  const runtime::Graph& g = s.current()->graph();
  const std::vector<TensorInfo> prepared = Infos(g, inputs ? g.inputs() : g.outputs());
  for (TensorInfo& i : out)
    for (const TensorInfo& p : prepared)
      if (p.name == i.name) i = p;
  return out;
}

}  // namespace

std::vector<TensorInfo> InferenceSession::inputs() const {
  return InterfaceOf(*impl_->session, true);
}

std::vector<TensorInfo> InferenceSession::outputs() const {
  return InterfaceOf(*impl_->session, false);
}

bool InferenceSession::Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs,
                           std::string* error) {
  const std::vector<TensorInfo> expected = this->inputs();
  if (inputs.size() != expected.size()) {
    if (error)
      *error = "expected " + std::to_string(expected.size()) + " inputs, got " +
               std::to_string(inputs.size());
    return false;
  }
  std::vector<runtime::HostTensor> in;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TensorInfo& e = expected[k];
    const Tensor& t = inputs[k];
    const size_t n = static_cast<size_t>(runtime::CountElements(t.dims));
    const size_t have = t.type == ElementType::kFloat    ? t.floats.size()
                        : t.type == ElementType::kDouble ? t.doubles.size()
                                                         : t.ints.size();
    if (t.type != e.type || have != n) {
      if (error)
        *error = "input '" + e.name + "': expected " +
                 runtime::ElemTypeName(static_cast<int32_t>(e.type)) + " " +
                 runtime::DimsToString(e.dims) + ", got " +
                 runtime::ElemTypeName(static_cast<int32_t>(t.type)) + " " +
                 runtime::DimsToString(t.dims) + " with " + std::to_string(have) + " values";
      return false;
    }
    in.push_back(ToHost(t));
  }
  auto out = impl_->session->Run(in);
  if (!out.ok()) {
    if (error) *error = out.status().message();
    return false;
  }
  const runtime::Graph& g = impl_->session->current()->graph();
  outputs->clear();
  for (size_t k = 0; k < out->size(); ++k)
    outputs->push_back(FromHost((*out)[k], g.value(g.outputs()[k]).name));
  return true;
}

std::string InferenceSession::Summary() const {
  const std::shared_ptr<Session> current = impl_->session->current();
  if (!current) return "prepared per input shape at the first run at it; no run yet";
  const Session& s = *current;
  const runtime::PrepareStats st = s.stats();
  char buf[512];
  std::snprintf(
      buf, sizeof(buf),
      "backend %s; load %.1f ms, optimize %.1f ms, prepare %.1f ms; %d steps, %d nodes "
      "fused, %d on reference kernels%s",
      s.backend_name().c_str(), s.times().load_s * 1e3, s.times().optimize_s * 1e3,
      s.times().prepare_s * 1e3, st.steps, st.fused_nodes, st.fallback_nodes,
      s.optimize_report()
          ? (", " + std::to_string(s.optimize_report()->search.rewrite_steps) + " rewrites").c_str()
          : "");
  return buf;
}

std::string Version() { return VERISUB_VERSION; }

}  // namespace verisub
