// Operator parameters: descriptors (name, type, domain) and compact values.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "specs/tensor.h"

namespace verisub::specs {

// Elementwise non-linear maps. The first four are also fused into conv2d, matmul and pools (their
// `activation` parameter); the others are operators of their own (specs/ops/<name>.h).
enum class Activation : int64_t {
  kNone = 0,
  kRelu = 1,
  kSigmoid = 2,
  kTanh = 3,
  kRelu6 = 4,        // min(max(x, 0), 6): ONNX Clip(0, 6)
  kHardSigmoid = 5,  // max(0, min(1, x/6 + 1/2)): PyTorch's, ONNX HardSigmoid(alpha=1/6)
  kHardSwish = 6,    // x * hard_sigmoid(x)
  kSilu = 7,         // x * sigmoid(x)
  kGelu = 8,         // x/2 * (1 + erf(x/sqrt(2)))
  kGeluTanh = 9,     // x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
  kExp = 10,
  kErf = 11,
  kLog = 12,    // the sub-operator log (specs/ops/log.h)
  kSqrt = 13,   // the sub-operator sqrt (specs/ops/sqrt.h)
  kRecip = 14,  // the sub-operator recip: 1/x (specs/ops/recip.h)
};
enum class Padding : int64_t { kSame = 0, kValid = 1 };
inline constexpr int64_t kDepthwiseGroup = 0;  // conv2d group=dw: one group per input channel

enum class ParamType {
  kInt,    // an integer, optionally with named special values (group=dw)
  kEnum,   // one of the named values only
  kPerm,   // a permutation, encoded in one slot (see EncodePerm)
  kShape,  // a shape: rank in this slot, dimensions in the next kMaxRank slots
  kFloat,  // a double, stored as its bit pattern
};

struct ParamDesc {
  std::string name;
  ParamType type = ParamType::kInt;
  int slot = 0;
  std::vector<std::pair<int64_t, std::string>> names;  // value <-> name
  std::vector<int64_t> domain;                         // values the generator may try, encoded
  int64_t min_value = 1;                               // kInt only
};

inline constexpr int kParamSlots = 8;

// Parameter values of one operator instance; the meaning of each slot comes from the op's
// ParamDescs. Compact and trivially copyable so the generator can hold millions.
struct Params {
  std::array<int64_t, kParamSlots> v{};
  int64_t operator[](int i) const { return v[i]; }
  int64_t& operator[](int i) { return v[i]; }
  bool operator==(const Params& o) const { return v == o.v; }
  bool operator!=(const Params& o) const { return v != o.v; }
  bool operator<(const Params& o) const { return v < o.v; }
};

int64_t EncodePerm(const std::vector<int>& perm);
std::vector<int> DecodePerm(int64_t code);
int64_t EncodeFloat(double d);
double DecodeFloat(int64_t bits);

// "1", "dw", "same", "[1,0]", "1e-05".
std::string FormatParamValue(const ParamDesc& d, const Params& p);
// Parses one value into its slot(s); the error names the parameter.
Status ParseParamValue(const ParamDesc& d, std::string_view text, Params* p);
// Checks a value is legal for its descriptor (enum name known, int >= min, valid perm).
Status CheckParamValue(const ParamDesc& d, const Params& p);

}  // namespace verisub::specs
