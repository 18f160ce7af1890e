// The post-processing operators of detection models (torchvision's SSD, RetinaNet, FCOS and
// R-CNN exports): NonZero, NonMaxSuppression, RoiAlign and MaxRoiPool (Fast R-CNN's), with ONNX
// Runtime's conventions where the spec leaves a choice (strict thresholds, ties to the lower index,
// RoiAlign's max mode).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

// NonZero: the indices of the nonzero elements, one row per axis, in row-major order (a scalar
// reads as one element).
Status NonZero(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  const int64_t n = x.NumElements();
  const int64_t rank = std::max<int64_t>(1, static_cast<int64_t>(x.dims.size()));
  std::vector<int64_t> dims = x.dims.empty() ? std::vector<int64_t>{1} : x.dims;
  std::vector<int64_t> hits;
  if (IsFloatType(x.elem_type)) {
    const std::vector<double> v = x.ToDoubles();
    for (int64_t i = 0; i < n; ++i)
      if (v[i] != 0) hits.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i)
      if (x.ints[i] != 0) hits.push_back(i);
  }
  const int64_t count = static_cast<int64_t>(hits.size());
  HostTensor& y = (*out)[0];
  y.elem_type = kInt64;
  y.dims = {rank, count};
  if (rank == 1) {  // a detector's flattened scores: the flat indices are the answer
    y.ints = std::move(hits);
    return Status::Ok();
  }
  y.ints.resize(static_cast<size_t>(rank * count));
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  for (int64_t j = 0; j < count; ++j)
    for (int64_t d = 0; d < rank; ++d) y.ints[d * count + j] = hits[j] / strides[d] % dims[d];
  return Status::Ok();
}

// Boxes as corners, structure of arrays (x0 <= x1, y0 <= y1), with their areas.
struct Boxes {
  std::vector<float> x0, y0, x1, y1, area;
  void Resize(size_t n) {
    for (auto* v : {&x0, &y0, &x1, &y1, &area}) v->resize(n);
  }
  void Set(size_t i, float a0, float b0, float a1, float b1) {
    x0[i] = a0, y0[i] = b0, x1[i] = a1, y1[i] = b1, area[i] = (a1 - a0) * (b1 - b0);
  }
};

// ONNX Runtime's test: whether box j of `k` overlaps box i of `b` by more than `threshold`
// (intersection over union; boxes without area never do).
bool Suppresses(const Boxes& k, int64_t j, const Boxes& b, int64_t i, float threshold) {
  const float w = std::max(0.f, std::min(k.x1[j], b.x1[i]) - std::max(k.x0[j], b.x0[i]));
  const float h = std::max(0.f, std::min(k.y1[j], b.y1[i]) - std::max(k.y0[j], b.y0[i]));
  const float inter = w * h;
  if (inter <= 0) return false;
  const float uni = k.area[j] + b.area[i] - inter;
  if (k.area[j] <= 0 || b.area[i] <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

// The boxes kept so far, found by the grid cells they cover: two boxes that intersect share a
// cell, so a candidate is compared only with the kept boxes of its cells. A detector's batched
// NMS (torchvision offsets each class's boxes so that classes never overlap) keeps thousands of
// boxes; comparing every candidate with all of them was most of SSDlite's run. Cells are as wide
// as the widest box, so a box covers at most 2x2 of them; boxes with non-finite corners or a
// grid too large for the cell indices leave the grid off (every kept box compared).
class KeptBoxes {
 public:
  KeptBoxes(const Boxes& all, const std::vector<int64_t>& candidates) {
    float extent = 0, lo = 0, hi = 0;
    bool finite = true;
    for (int64_t i : candidates) {
      const float c[4] = {all.x0[i], all.y0[i], all.x1[i], all.y1[i]};
      for (float v : c) finite &= std::isfinite(v);
      extent = std::max({extent, c[2] - c[0], c[3] - c[1]});
      lo = std::min({lo, c[0], c[1]});
      hi = std::max({hi, c[2], c[3]});
    }
    cell_ = extent > 0 ? extent : 1.f;
    grid_ = finite && (hi - lo) / cell_ < 1e6f && candidates.size() > 64;
  }

  bool AnySuppresses(const Boxes& all, int64_t i, float threshold) const {
    if (!grid_) {
      for (int64_t j = 0; j < count_; ++j)
        if (Suppresses(kept_, j, all, i, threshold)) return true;
      return false;
    }
    bool hit = false;
    ForCells(all, i, [&](int64_t key) {
      if (hit) return;
      auto it = cells_.find(key);
      if (it == cells_.end()) return;
      for (int32_t j : it->second)
        if (Suppresses(kept_, j, all, i, threshold)) {
          hit = true;
          return;
        }
    });
    return hit;
  }

  void Keep(const Boxes& all, int64_t i) {
    kept_.Resize(count_ + 1);
    kept_.Set(count_, all.x0[i], all.y0[i], all.x1[i], all.y1[i]);
    if (grid_)
      ForCells(all, i, [&](int64_t key) { cells_[key].push_back(static_cast<int32_t>(count_)); });
    ++count_;
  }

 private:
  template <class F>
  void ForCells(const Boxes& b, int64_t i, F&& f) const {
    const int64_t cx0 = static_cast<int64_t>(std::floor(b.x0[i] / cell_));
    const int64_t cx1 = static_cast<int64_t>(std::floor(b.x1[i] / cell_));
    const int64_t cy0 = static_cast<int64_t>(std::floor(b.y0[i] / cell_));
    const int64_t cy1 = static_cast<int64_t>(std::floor(b.y1[i] / cell_));
    for (int64_t cx = cx0; cx <= cx1; ++cx)
      for (int64_t cy = cy0; cy <= cy1; ++cy) f(cx * (int64_t{1} << 32) + cy);
  }

  Boxes kept_;
  int64_t count_ = 0;
  float cell_ = 1;
  bool grid_ = false;
  std::unordered_map<int64_t, std::vector<int32_t>> cells_;
};

// NonMaxSuppression: per batch and class, boxes by decreasing score (equal scores: lower index
// first) above score_threshold, each kept unless it overlaps a kept one by more than
// iou_threshold, at most max_output_boxes_per_class; rows (batch, class, box).
Status NonMaxSuppression(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& boxes = *ctx.input(0);
  const HostTensor& scores = *ctx.input(1);
  if (boxes.dims.size() != 3 || boxes.dims[2] != 4)
    return InvalidArgument("NonMaxSuppression: boxes must be [batch, boxes, 4], not " +
                           DimsToString(boxes.dims));
  if (scores.dims.size() != 3 || scores.dims[0] != boxes.dims[0] || scores.dims[2] != boxes.dims[1])
    return InvalidArgument("NonMaxSuppression: scores " + DimsToString(scores.dims) +
                           " do not match boxes " + DimsToString(boxes.dims) +
                           " (want [batch, classes, boxes])");
  auto scalar = [&](int i, const char* what) -> StatusOr<const HostTensor*> {
    const HostTensor* t = ctx.input(i);
    if (t && t->NumElements() > 1)
      return InvalidArgument(std::string("NonMaxSuppression: ") + what + " must be a scalar");
    return t && t->NumElements() == 1 ? t : nullptr;
  };
  VERISUB_ASSIGN_OR_RETURN(const HostTensor* max_t, scalar(2, "max_output_boxes_per_class"));
  VERISUB_ASSIGN_OR_RETURN(const HostTensor* iou_t, scalar(3, "iou_threshold"));
  VERISUB_ASSIGN_OR_RETURN(const HostTensor* score_t, scalar(4, "score_threshold"));
  const int64_t max_out = max_t ? max_t->IntAt(0) : 0;
  const float iou = iou_t ? static_cast<float>(iou_t->DoubleAt(0)) : 0.f;
  if (iou < 0 || iou > 1)
    return InvalidArgument("NonMaxSuppression: iou_threshold " + std::to_string(iou) +
                           " outside [0, 1]");
  const bool center = ctx.AttrInt("center_point_box", 0) != 0;
  const int64_t batches = boxes.dims[0], n = boxes.dims[1], classes = scores.dims[1];
  const std::vector<double> bv = boxes.ToDoubles(), sv = scores.ToDoubles();
  std::vector<int64_t> rows;
  Boxes all;
  all.Resize(n);
  std::vector<int64_t> order;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      const double* c = &bv[(b * n + i) * 4];
      if (center) {
        const float xc = static_cast<float>(c[0]), yc = static_cast<float>(c[1]);
        const float hw = static_cast<float>(c[2]) / 2, hh = static_cast<float>(c[3]) / 2;
        all.Set(i, xc - hw, yc - hh, xc + hw, yc + hh);
      } else {  // [y0, x0, y1, x1], any diagonal pair
        const float ya = static_cast<float>(c[0]), xa = static_cast<float>(c[1]);
        const float yb = static_cast<float>(c[2]), xb = static_cast<float>(c[3]);
        all.Set(i, std::min(xa, xb), std::min(ya, yb), std::max(xa, xb), std::max(ya, yb));
      }
    }
    for (int64_t c = 0; c < classes && max_out > 0; ++c) {
      const double* s = &sv[(b * classes + c) * n];
      order.clear();
      for (int64_t i = 0; i < n; ++i)
        if (!score_t || static_cast<float>(s[i]) > static_cast<float>(score_t->DoubleAt(0)))
          order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b2) { return s[a] > s[b2]; });
      KeptBoxes kept(all, order);
      int64_t count = 0;
      for (int64_t i : order) {
        if (count >= max_out) break;
        if (kept.AnySuppresses(all, i, iou)) continue;
        kept.Keep(all, i);
        ++count;
        rows.insert(rows.end(), {b, c, i});
      }
    }
  }
  (*out)[0] =
      HostTensor::FromInts(kInt64, {static_cast<int64_t>(rows.size() / 3), int64_t{3}}, rows);
  return Status::Ok();
}

// RoiAlign: each region of interest [x0, y0, x1, y1] (times spatial_scale) cut into an
// output_height x output_width grid of bins, each bin the average (or ONNX Runtime's max of
// weighted taps) of sampling_ratio^2 bilinear samples (adaptive: ceil(bin size) per axis when
// 0). Half-pixel coordinates subtract 0.5 (opset 16's default); output_half_pixel (opset 10's
// only behaviour) keeps them and makes every region at least 1x1.
Status RoiAlign(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 3));
  const HostTensor& x = *ctx.input(0);
  const HostTensor& rois = *ctx.input(1);
  const HostTensor& batch = *ctx.input(2);
  if (x.dims.size() != 4)
    return InvalidArgument("RoiAlign: input must be [N, C, H, W], not " + DimsToString(x.dims));
  if (rois.dims.size() != 2 || rois.dims[1] != 4)
    return InvalidArgument("RoiAlign: rois must be [num_rois, 4], not " + DimsToString(rois.dims));
  const int64_t num = rois.dims[0];
  if (batch.dims.size() != 1 || batch.dims[0] != num)
    return InvalidArgument("RoiAlign: batch_indices " + DimsToString(batch.dims) +
                           " does not match " + std::to_string(num) + " rois");
  const std::string mode = ctx.AttrString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return InvalidArgument("RoiAlign: mode '" + mode + "' (avg or max)");
  const std::string coords = ctx.AttrString("coordinate_transformation_mode",
                                            ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (coords != "half_pixel" && coords != "output_half_pixel")
    return InvalidArgument("RoiAlign: coordinate_transformation_mode '" + coords + "'");
  const bool half_pixel = coords == "half_pixel";
  const int64_t oh = ctx.AttrInt("output_height", 1), ow = ctx.AttrInt("output_width", 1);
  const int64_t ratio = ctx.AttrInt("sampling_ratio", 0);
  const float scale = ctx.AttrFloat("spatial_scale", 1.f);
  if (oh < 1 || ow < 1 || ratio < 0)
    return InvalidArgument("RoiAlign: output size and sampling_ratio must be positive");
  const int64_t channels = x.dims[1], height = x.dims[2], width = x.dims[3];
  std::vector<int64_t> dims = {num, channels, oh, ow};
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "RoiAlign output"));
  if (x.elem_type != kFloat) return InvalidArgument("RoiAlign: input must be float32");
  const std::vector<float>& xv = x.f32;
  const std::vector<double> rv = rois.ToDoubles();
  HostTensor& y = (*out)[0];
  y.elem_type = kFloat;
  y.dims = dims;
  y.f32.resize(static_cast<size_t>(num * channels * oh * ow));
  float* yv = y.f32.data();
  const bool avg = mode == "avg";
  const float offset = half_pixel ? 0.5f : 0.f;
  // One bilinear sample: four positions in a plane and their weights.
  struct Tap {
    int64_t pos[4];
    float w[4];
  };
  std::vector<Tap> taps;
  for (int64_t r = 0; r < num; ++r) {
    const int64_t b = batch.IntAt(r);
    if (b < 0 || b >= x.dims[0])
      return InvalidArgument("RoiAlign: batch index " + std::to_string(b) + " of roi " +
                             std::to_string(r) + " outside [0, " + std::to_string(x.dims[0]) + ")");
    const float x0 = static_cast<float>(rv[r * 4]) * scale - offset;
    const float y0 = static_cast<float>(rv[r * 4 + 1]) * scale - offset;
    float rw = static_cast<float>(rv[r * 4 + 2]) * scale - offset - x0;
    float rh = static_cast<float>(rv[r * 4 + 3]) * scale - offset - y0;
    if (!half_pixel) {
      rw = std::max(rw, 1.f);
      rh = std::max(rh, 1.f);
    }
    const float bin_h = rh / static_cast<float>(oh), bin_w = rw / static_cast<float>(ow);
    const int64_t grid_h = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / oh));
    const int64_t grid_w = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / ow));
    if (grid_h > 1024 || grid_w > 1024)
      return InvalidArgument("RoiAlign: roi " + std::to_string(r) + " needs a sampling grid of " +
                             std::to_string(grid_h) + "x" + std::to_string(grid_w));
    const float count = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));
    taps.clear();
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw)
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const float yy = y0 + static_cast<float>(ph) * bin_h +
                           (static_cast<float>(iy) + .5f) * bin_h / static_cast<float>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const float xx = x0 + static_cast<float>(pw) * bin_w +
                             (static_cast<float>(ix) + .5f) * bin_w / static_cast<float>(grid_w);
            Tap t{{0, 0, 0, 0}, {0, 0, 0, 0}};
            if (!(yy < -1.f || yy > static_cast<float>(height) || xx < -1.f ||
                  xx > static_cast<float>(width))) {
              float sy = std::max(yy, 0.f), sx = std::max(xx, 0.f);
              int64_t ylo = static_cast<int64_t>(sy), xlo = static_cast<int64_t>(sx), yhi, xhi;
              if (ylo >= height - 1) {
                yhi = ylo = height - 1;
                sy = static_cast<float>(ylo);
              } else {
                yhi = ylo + 1;
              }
              if (xlo >= width - 1) {
                xhi = xlo = width - 1;
                sx = static_cast<float>(xlo);
              } else {
                xhi = xlo + 1;
              }
              const float ly = sy - static_cast<float>(ylo), lx = sx - static_cast<float>(xlo);
              const float hy = 1.f - ly, hx = 1.f - lx;
              t = {{ylo * width + xlo, ylo * width + xhi, yhi * width + xlo, yhi * width + xhi},
                   {hy * hx, hy * lx, ly * hx, ly * lx}};
            }
            taps.push_back(t);
          }
        }
    const size_t per_bin = static_cast<size_t>(grid_h * grid_w);
    for (int64_t c = 0; c < channels; ++c) {
      const float* plane = xv.data() + (b * channels + c) * height * width;
      float* dst = yv + (r * channels + c) * oh * ow;
      for (int64_t bin = 0; bin < oh * ow; ++bin) {
        const Tap* t = taps.data() + bin * per_bin;
        if (avg) {
          float sum = 0;
          for (size_t k = 0; k < per_bin; ++k)
            sum += t[k].w[0] * plane[t[k].pos[0]] + t[k].w[1] * plane[t[k].pos[1]] +
                   t[k].w[2] * plane[t[k].pos[2]] + t[k].w[3] * plane[t[k].pos[3]];
          dst[bin] = sum / count;
        } else {
          float best = -std::numeric_limits<float>::max();
          for (size_t k = 0; k < per_bin; ++k)
            for (int q = 0; q < 4; ++q) best = std::max(best, t[k].w[q] * plane[t[k].pos[q]]);
          dst[bin] = per_bin == 0 ? 0 : best;
        }
      }
    }
  }
  return Status::Ok();
}

// MaxRoiPool (Fast R-CNN's RoI pooling): each region [batch, x0, y0, x1, y1] (times
// spatial_scale, rounded to whole pixels, at least one pixel) cut into pooled_shape bins, each
// the maximum of the pixels it covers (0 for a bin that covers none), in float as ONNX Runtime.
Status MaxRoiPool(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor &x = *ctx.input(0), &rois = *ctx.input(1);
  if (x.dims.size() != 4)
    return InvalidArgument("MaxRoiPool: input must be [N, C, H, W], not " + DimsToString(x.dims));
  if (rois.dims.size() != 2 || rois.dims[1] != 5)
    return InvalidArgument("MaxRoiPool: rois must be [num_rois, 5], not " +
                           DimsToString(rois.dims));
  const std::vector<int64_t> pooled = ctx.AttrInts("pooled_shape");
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1)
    return InvalidArgument("MaxRoiPool: pooled_shape must be two positive sizes");
  const float scale = ctx.AttrFloat("spatial_scale", 1.f);
  const int64_t num = rois.dims[0], channels = x.dims[1], height = x.dims[2], width = x.dims[3];
  const int64_t ph_n = pooled[0], pw_n = pooled[1];
  const std::vector<int64_t> dims = {num, channels, ph_n, pw_n};
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "MaxRoiPool output"));
  const std::vector<double> xv = x.ToDoubles(), rv = rois.ToDoubles();
  std::vector<double> y(static_cast<size_t>(CountElements(dims)));
  // A roi coordinate in pixels, clamped far from int64's range (a corrupt roi stays an empty or
  // whole-image bin rather than overflowing).
  auto pixel = [&](double v) {
    const float p = std::round(static_cast<float>(v) * scale);
    return static_cast<int64_t>(std::clamp(std::isnan(p) ? 0.f : p, -1e9f, 1e9f));
  };
  for (int64_t r = 0; r < num; ++r) {
    const double* roi = rv.data() + r * 5;
    if (!(roi[0] >= 0 && roi[0] < static_cast<double>(x.dims[0])))
      return InvalidArgument("MaxRoiPool: batch index " + std::to_string(roi[0]) + " of roi " +
                             std::to_string(r) + " outside [0, " + std::to_string(x.dims[0]) + ")");
    const int64_t b = static_cast<int64_t>(roi[0]);
    const int64_t x0 = pixel(roi[1]), y0 = pixel(roi[2]), x1 = pixel(roi[3]), y1 = pixel(roi[4]);
    const float bin_h = static_cast<float>(std::max<int64_t>(y1 - y0 + 1, 1)) / ph_n;
    const float bin_w = static_cast<float>(std::max<int64_t>(x1 - x0 + 1, 1)) / pw_n;
    for (int64_t c = 0; c < channels; ++c) {
      const double* plane = xv.data() + (b * channels + c) * height * width;
      double* dst = y.data() + (r * channels + c) * ph_n * pw_n;
      for (int64_t ph = 0; ph < ph_n; ++ph) {
        const int64_t h0 = std::clamp<int64_t>(
            static_cast<int64_t>(std::floor(static_cast<float>(ph) * bin_h)) + y0, 0, height);
        const int64_t h1 = std::clamp<int64_t>(
            static_cast<int64_t>(std::ceil(static_cast<float>(ph + 1) * bin_h)) + y0, 0, height);
        for (int64_t pw = 0; pw < pw_n; ++pw) {
          const int64_t w0 = std::clamp<int64_t>(
              static_cast<int64_t>(std::floor(static_cast<float>(pw) * bin_w)) + x0, 0, width);
          const int64_t w1 = std::clamp<int64_t>(
              static_cast<int64_t>(std::ceil(static_cast<float>(pw + 1) * bin_w)) + x0, 0, width);
          double best = 0;
          if (h1 > h0 && w1 > w0) {
            best = -std::numeric_limits<double>::infinity();
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) best = std::max(best, plane[h * width + w]);
          }
          dst[ph * pw_n + pw] = best;
        }
      }
    }
  }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, y);
  return Status::Ok();
}

}  // namespace

void AddDetectionKernels(KernelTable* t) {
  KernelTable& k = *t;
  k["NonZero"] = NonZero;
  k["NonMaxSuppression"] = NonMaxSuppression;
  k["RoiAlign"] = RoiAlign;
  k["MaxRoiPool"] = MaxRoiPool;
}

}  // namespace verisub::runtime
