// A value's storage format in the layout DP: its memory layout (specs::Layout) and its element
// precision. Precision is a generalized layout (seed 001's future work): a value may be stored in
// bfloat16 where the backend has kernels that read and write it, at a conversion cost like any
// layout change. Float32 is the model's own precision and the default; a Format made from a
// Layout alone is float32, so layout-only code reads as before.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "specs/layout.h"

namespace verisub::rewriter {

enum class Precision : uint8_t {
  kF32,   // the model's precision
  kBf16,  // bfloat16 storage, float32 accumulation (oneDNN's bf16 kernels)
  kNumPrecisions,
};
inline constexpr int kNumPrecisions = static_cast<int>(Precision::kNumPrecisions);

// "f32", "bf16".
std::string_view PrecisionName(Precision p);
std::optional<Precision> ParsePrecision(std::string_view name);

struct Format {
  specs::Layout layout = specs::Layout::kPlain;
  Precision precision = Precision::kF32;

  constexpr Format() = default;
  // Implicit: a layout alone is that layout in float32.
  constexpr Format(specs::Layout l, Precision p = Precision::kF32)  // NOLINT(runtime/explicit)
      : layout(l), precision(p) {}

  // Dense index in [0, kNumFormats): layouts of float32 first.
  constexpr int index() const {
    return static_cast<int>(layout) + specs::kNumLayouts * static_cast<int>(precision);
  }
  static constexpr Format FromIndex(int i) {
    return Format(static_cast<specs::Layout>(i % specs::kNumLayouts),
                  static_cast<Precision>(i / specs::kNumLayouts));
  }
  friend constexpr bool operator==(Format a, Format b) {
    return a.layout == b.layout && a.precision == b.precision;
  }
};
inline constexpr int kNumFormats = specs::kNumLayouts * kNumPrecisions;

// "nchw8c" for float32, "nchw8c:bf16" otherwise.
std::string FormatName(Format f);

}  // namespace verisub::rewriter
