// The ONNX structure-aware mutator, and libFuzzer's hook for it.
#include "tests/fuzz/onnx_mutator.h"

#include <cstring>
#include <random>
#include <vector>

#include "onnx/onnx_pb.h"

namespace verisub::fuzz {
namespace {

// Values that break assumptions: zero, negative, one, huge, overflowing products.
int64_t NastyInt(std::mt19937_64& rng) {
  static const int64_t kValues[] = {
      0, -1, 1, 2, 3, 7, int64_t{1} << 31, -2, 64, 1000000, int64_t{1} << 40, INT64_MAX, INT64_MIN};
  if (rng() % 3 == 0) return static_cast<int64_t>(rng() % 9) - 2;
  return kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))];
}

template <typename T>
T* PickFrom(google::protobuf::RepeatedPtrField<T>* field, std::mt19937_64& rng) {
  if (field->empty()) return nullptr;
  return field->Mutable(static_cast<int>(rng() % field->size()));
}

// Every value name of the graph (inputs, initializers, node outputs).
std::vector<std::string> ValueNames(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& i : g.input()) names.push_back(i.name());
  for (const auto& i : g.initializer()) names.push_back(i.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) names.push_back(o);
  return names;
}

void MutateShape(onnx::TypeProto* type, std::mt19937_64& rng) {
  auto* shape = type->mutable_tensor_type()->mutable_shape();
  if (shape->dim_size() == 0 || rng() % 5 == 0) {
    shape->add_dim()->set_dim_value(NastyInt(rng));
    return;
  }
  auto* dim = shape->mutable_dim(static_cast<int>(rng() % shape->dim_size()));
  if (rng() % 6 == 0) {
    dim->set_dim_param("N");
  } else {
    dim->set_dim_value(NastyInt(rng));
  }
}

void MutateAttribute(onnx::NodeProto* node, std::mt19937_64& rng) {
  static const char* const kNames[] = {"strides", "pads",  "kernel_shape", "dilations", "group",
                                       "axis",    "perm",  "blocksize",    "axes",      "keepdims",
                                       "transA",  "alpha", "epsilon",      "split",     "to"};
  onnx::AttributeProto* a = PickFrom(node->mutable_attribute(), rng);
  if (!a || rng() % 4 == 0) {
    a = node->add_attribute();
    a->set_name(kNames[rng() % (sizeof(kNames) / sizeof(kNames[0]))]);
    if (rng() % 2) {
      a->set_type(onnx::AttributeProto::INTS);
      int n = static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i) a->add_ints(NastyInt(rng));
    } else {
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(NastyInt(rng));
    }
    return;
  }
  switch (rng() % 5) {
    case 0:
      if (a->ints_size() > 0)
        a->set_ints(static_cast<int>(rng() % a->ints_size()), NastyInt(rng));
      else
        a->set_i(NastyInt(rng));
      break;
    case 1:
      a->add_ints(NastyInt(rng));
      break;
    case 2:
      a->clear_ints();
      break;
    case 3:
      a->set_f(rng() % 2 ? 0.0f : -1e30f);
      break;
    default:
      a->set_type(static_cast<onnx::AttributeProto::AttributeType>(rng() % 12));
      break;
  }
}

void MutateInitializer(onnx::GraphProto* g, std::mt19937_64& rng) {
  onnx::TensorProto* t = PickFrom(g->mutable_initializer(), rng);
  if (!t) return;
  switch (rng() % 6) {
    case 0:
      if (t->dims_size() > 0) t->set_dims(static_cast<int>(rng() % t->dims_size()), NastyInt(rng));
      break;
    case 1:
      t->set_data_type(static_cast<int32_t>(rng() % 18));
      break;
    case 2:  // truncate or extend the raw data
      if (t->has_raw_data()) t->mutable_raw_data()->resize(rng() % (t->raw_data().size() + 9));
      break;
    case 3:  // the name of a graph input: ONNX makes it the input's default
      if (g->input_size() > 0)
        t->set_name(g->input(static_cast<int>(rng() % g->input_size())).name());
      break;
    case 4:
      t->add_dims(NastyInt(rng));
      break;
    default:
      t->clear_raw_data();
      t->clear_float_data();
      break;
  }
}

void MutateWiring(onnx::GraphProto* g, std::mt19937_64& rng) {
  static const char* const kOps[] = {
      "Conv",   "MaxPool", "AveragePool", "Relu",         "Add",       "MatMul",
      "Gemm",   "Concat",  "Split",       "Reshape",      "Transpose", "Slice",
      "Gather", "Softmax", "If",          "SpaceToDepth", "Identity",  "BatchNormalization",
      "Unknown"};
  std::vector<std::string> names = ValueNames(*g);
  onnx::NodeProto* n = PickFrom(g->mutable_node(), rng);
  if (!n) return;
  switch (rng() % 6) {
    case 0:
      if (n->input_size() > 0 && !names.empty())
        n->set_input(static_cast<int>(rng() % n->input_size()), names[rng() % names.size()]);
      break;
    case 1:
      n->set_op_type(kOps[rng() % (sizeof(kOps) / sizeof(kOps[0]))]);
      break;
    case 2:
      if (!names.empty()) n->add_input(rng() % 4 ? names[rng() % names.size()] : "");
      break;
    case 3:  // swap two nodes (breaks topological order)
      if (g->node_size() > 1)
        g->mutable_node()->SwapElements(static_cast<int>(rng() % g->node_size()),
                                        static_cast<int>(rng() % g->node_size()));
      break;
    case 4:  // an output that is also computed elsewhere, or a missing one
      if (n->output_size() > 0 && !names.empty())
        n->set_output(0, rng() % 2 ? names[rng() % names.size()] : "nowhere");
      break;
    default:
      if (g->node_size() > 0) g->mutable_node()->RemoveLast();
      break;
  }
}

}  // namespace

std::string MutateOnnxModel(const std::string& bytes, uint64_t seed) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes) || !model.has_graph()) return "";
  std::mt19937_64 rng(seed);
  onnx::GraphProto* g = model.mutable_graph();
  const int rounds = 1 + static_cast<int>(rng() % 3);
  for (int r = 0; r < rounds; ++r) {
    switch (rng() % 8) {
      case 0:
      case 1:
        if (onnx::ValueInfoProto* v = PickFrom(g->mutable_input(), rng))
          MutateShape(v->mutable_type(), rng);
        break;
      case 2:
        if (onnx::ValueInfoProto* v = PickFrom(g->mutable_output(), rng))
          MutateShape(v->mutable_type(), rng);
        break;
      case 3:
      case 4:
        if (onnx::NodeProto* n = PickFrom(g->mutable_node(), rng)) MutateAttribute(n, rng);
        break;
      case 5:
        MutateInitializer(g, rng);
        break;
      case 6:
        MutateWiring(g, rng);
        break;
      default:
        if (onnx::OperatorSetIdProto* o = PickFrom(model.mutable_opset_import(), rng))
          o->set_version(static_cast<int64_t>(rng() % 20));
        break;
    }
  }
  std::string out;
  if (!model.SerializeToString(&out)) return "";
  return out;
}

}  // namespace verisub::fuzz

#ifdef VERISUB_LIBFUZZER
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// libFuzzer's hook: a structure-aware mutation most of the time, a byte mutation otherwise (and
// whenever the input is not a model), so both the parser and the importer are explored.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  if (seed % 4 != 0) {
    std::string in(reinterpret_cast<const char*>(data), size);
    std::string out = verisub::fuzz::MutateOnnxModel(in, seed);
    if (!out.empty() && out.size() <= max_size) {
      std::memcpy(data, out.data(), out.size());
      return out.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif
