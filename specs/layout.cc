// Names and rank rules of the typed layouts.
#include "specs/layout.h"

namespace verisub::specs {
namespace {

constexpr std::string_view kNames[kNumLayouts] = {"plain", "nhwc", "nchw8c", "nchw16c",
                                                  "col_major"};

}  // namespace

std::string_view LayoutName(Layout l) {
  int i = static_cast<int>(l);
  return i >= 0 && i < kNumLayouts ? kNames[i] : std::string_view("invalid");
}

std::optional<Layout> ParseLayout(std::string_view name) {
  for (int i = 0; i < kNumLayouts; ++i)
    if (kNames[i] == name) return static_cast<Layout>(i);
  return std::nullopt;
}

bool LayoutFitsRank(Layout l, int rank) {
  switch (l) {
    case Layout::kPlain:
      return true;
    case Layout::kNHWC:
    case Layout::kNCHW8c:
    case Layout::kNCHW16c:
      return rank == 4;
    case Layout::kColMajor:
      return rank >= 2;
    case Layout::kNumLayouts:
      break;
  }
  return false;
}

int LayoutChannelBlock(Layout l) {
  if (l == Layout::kNCHW8c) return 8;
  if (l == Layout::kNCHW16c) return 16;
  return 1;
}

}  // namespace verisub::specs
