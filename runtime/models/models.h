// Benchmark models: builders for the networks TASO, Tensat and the layout-DP work were evaluated
// on, written as ONNX (opset 17, float32, batch 1) with seeded random weights.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace verisub::runtime::models {

// The opset every builder targets (default domain); 17 is the first with LayerNormalization.
inline constexpr int64_t kOpsetVersion = 17;

struct BuildOptions {
  // Seeds every random initializer; equal options give byte-identical models.
  uint64_t seed = 20260601;
  // Height and width of a CNN's input image; 0 is the network's own (224, Inception's 299).
  // Smaller images keep every operator and the wiring, and make the reference executor fast.
  int64_t image_size = 0;
};

onnx::ModelProto BuildResNet50(const BuildOptions& options);
onnx::ModelProto BuildResNeXt50(const BuildOptions& options);  // 32x4d
onnx::ModelProto BuildInceptionV3(const BuildOptions& options);
onnx::ModelProto BuildSqueezeNet11(const BuildOptions& options);
onnx::ModelProto BuildMobileNetV2(const BuildOptions& options);
onnx::ModelProto BuildNasNetA(const BuildOptions& options);
onnx::ModelProto BuildNasRnn(const BuildOptions& options);
// Not in ListModels (yet): the layout DP's benchmark builds it directly.
onnx::ModelProto BuildDenseNet121(const BuildOptions& options);

struct BertConfig {
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t sequence = 128;
  int64_t intermediate = 3072;
};
onnx::ModelProto BuildBert(const BertConfig& config, const BuildOptions& options);

struct ModelEntry {
  std::string_view name;
  std::string_view description;
  onnx::ModelProto (*build)(const BuildOptions&);
};

// Every registered benchmark model, in a fixed order.
std::span<const ModelEntry> ListModels();

// Builds the model registered as `name`; NotFound names the known models.
StatusOr<onnx::ModelProto> BuildModel(std::string_view name, const BuildOptions& options);

}  // namespace verisub::runtime::models
