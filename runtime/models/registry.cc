// The table of benchmark models by name, used by the CLI and the tests.
#include <array>
#include <string>

#include "runtime/models/models.h"

namespace verisub::runtime::models {
namespace {

onnx::ModelProto BuildBertBase(const BuildOptions& options) { return BuildBert({}, options); }

onnx::ModelProto BuildBertOneLayer(const BuildOptions& options) {
  BertConfig config;
  config.layers = 1;
  return BuildBert(config, options);
}

// A constant table (no mutable state), so it is not a global in the style guide's sense.
constexpr std::array<ModelEntry, 9> kModels = {{
    {"resnet50", "ResNet-50 (torchvision v1.5), 224x224", BuildResNet50},
    {"resnext50_32x4d", "ResNeXt-50 32x4d, grouped 3x3 convs, 224x224", BuildResNeXt50},
    {"inception_v3", "Inception-v3 (torchvision, eval), 299x299", BuildInceptionV3},
    {"squeezenet1_1", "SqueezeNet 1.1, fire modules, 224x224", BuildSqueezeNet11},
    {"mobilenet_v2", "MobileNet-v2 1.0, inverted residuals, ReLU6 as Clip, 224x224",
     BuildMobileNetV2},
    {"nasnet_a", "NasNet-A as in TASO's benchmark: 3x(5 normal + 1 reduction) cells, 224x224",
     BuildNasNetA},
    {"nasrnn", "NasRNN cell as in TASO's benchmark, hidden 512, 5 steps", BuildNasRnn},
    {"bert_base", "BERT-base encoder: 12 layers, hidden 768, 12 heads, sequence 128",
     BuildBertBase},
    {"bert_1layer", "BERT-base encoder with 1 layer (for tests)", BuildBertOneLayer},
}};

}  // namespace

std::span<const ModelEntry> ListModels() { return kModels; }

StatusOr<onnx::ModelProto> BuildModel(std::string_view name, const BuildOptions& options) {
  std::string known;
  for (const ModelEntry& m : kModels) {
    if (m.name == name) return m.build(options);
    known += known.empty() ? "" : ", ";
    known += m.name;
  }
  return NotFound("unknown model '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace verisub::runtime::models
