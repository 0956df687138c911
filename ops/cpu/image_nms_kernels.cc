// The non-max suppressions on CPU, TensorFlow 2.21's greedy algorithm:
// candidates above score_threshold wait in a priority queue (highest
// score first, then lowest index); the top one is compared, newest first,
// with the boxes selected since it was last looked at. Hard NMS drops it
// when an overlap (IoU of the boxes in float, or the given overlaps
// matrix) exceeds the threshold; soft NMS (V5, sigma > 0) multiplies its
// score by exp(-0.5 / sigma * iou^2) per overlap and puts it back when the
// score changed but stays above the threshold. Scores and thresholds are
// in T (half rounds after each operation, image_rounded.h), IoU in float.
//   NonMaxSuppression (iou_threshold attr), V2 (+ iou_threshold input),
//   V3 (+ score_threshold), V4 (+ pad_to_max_output_size, valid_outputs),
//   V5 (+ soft_nms_sigma, selected_scores), WithOverlaps (a [n, n] matrix),
//   CombinedNonMaxSuppression (per batch and class, then the best
//   max_total_size by score, with TensorFlow's sort so equal scores keep
//   its order; boxes clipped to [0, 1] unless clip_boxes is false).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/float_convert.h"
#include "ops/cpu/image_rounded.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

// IoU of boxes a and b (each y1, x1, y2, x2 in any corner order).
float Iou(const float* a, const float* b) {
  const float ymin_a = std::min(a[0], a[2]), xmin_a = std::min(a[1], a[3]);
  const float ymax_a = std::max(a[0], a[2]), xmax_a = std::max(a[1], a[3]);
  const float ymin_b = std::min(b[0], b[2]), xmin_b = std::min(b[1], b[3]);
  const float ymax_b = std::max(b[0], b[2]), xmax_b = std::max(b[1], b[3]);
  const float area_a = (ymax_a - ymin_a) * (xmax_a - xmin_a);
  const float area_b = (ymax_b - ymin_b) * (xmax_b - xmin_b);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float iy = std::max(std::min(ymax_a, ymax_b) - std::max(ymin_a, ymin_b), 0.0f);
  const float ix = std::max(std::min(xmax_a, xmax_b) - std::max(xmin_a, xmin_b), 0.0f);
  const float inter = iy * ix;
  return inter / (area_a + area_b - inter);
}

absl::Status CheckScalarInput(const Tensor& t, const char* name) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be 0-D, got shape ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

// boxes [n, 4] and scores [n]; sets *n.
absl::Status CheckBoxesAndScores(const Tensor& boxes, const Tensor& scores,
                                 bool overlaps, int64_t* n) {
  if (boxes.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        overlaps ? "overlaps must be 2-D" : "boxes must be 2-D",
        boxes.shape().DebugString()));
  }
  *n = boxes.dim_size(0);
  if (overlaps && boxes.dim_size(1) != *n) {
    return absl::InvalidArgumentError(
        absl::StrCat("overlaps must be square", boxes.shape().DebugString()));
  }
  if (!overlaps && boxes.dim_size(1) != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "boxes must have 4 columns (Dimension must be 4 but is ",
        boxes.dim_size(1), ")"));
  }
  if (scores.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("scores must be 1-D", scores.shape().DebugString()));
  }
  if (scores.dim_size(0) != *n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scores has incompatible shape (Dimensions must be equal, but are ",
        *n, " and ", scores.dim_size(0), ")"));
  }
  return absl::OkStatus();
}

// A scalar input of float or half as T's arithmetic type R.
template <typename R>
R ScalarAs(const Tensor& t) {
  return R::Of(t.dtype() == DT_HALF ? HalfToFloat(t.data<Half>()[0])
                                    : t.data<float>()[0]);
}

struct NmsResult {
  std::vector<int32_t> indices;
  std::vector<float> scores;  // as T's values
};

// The greedy selection. similarity(i, j) is a float.
template <typename T>
absl::Status Select(const Tensor& scores, int64_t n, int32_t max_output,
                    RoundedT<T> threshold, RoundedT<T> score_threshold,
                    RoundedT<T> sigma,
                    const std::function<float(int64_t, int64_t)>& similarity,
                    NmsResult* out) {
  using R = RoundedT<T>;
  if (max_output < 0) {
    return absl::InvalidArgumentError("output size must be non-negative");
  }
  struct Candidate {
    int64_t index;
    R score;
    int64_t suppress_begin;
  };
  auto lower = [](const Candidate& a, const Candidate& b) {
    return (a.score == b.score && a.index > b.index) || a.score < b.score;
  };
  std::priority_queue<Candidate, std::deque<Candidate>, decltype(lower)> queue(lower);
  const T* s = scores.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    const R v = R::Of(s[i]);
    if (v > score_threshold) queue.push({i, v, 0});
  }
  const R zero = R::Of(0.0f);
  const bool soft = sigma > zero;
  const R scale = soft ? R::Of(-0.5f) / sigma : zero;
  auto weight = [&](R sim) {
    const R w = Exp(scale * sim * sim);
    return soft || sim <= threshold ? w : zero;
  };
  std::vector<int64_t> selected;
  while (static_cast<int64_t>(selected.size()) < max_output && !queue.empty()) {
    Candidate next = queue.top();
    const R original = next.score;
    queue.pop();
    bool hard_suppressed = false;
    for (int64_t j = static_cast<int64_t>(selected.size()) - 1;
         j >= next.suppress_begin; --j) {
      const R sim = R::Of(similarity(next.index, selected[j]));
      next.score *= weight(sim);
      if (!soft && sim > threshold) {
        hard_suppressed = true;
        break;
      }
      if (next.score <= score_threshold) break;
    }
    next.suppress_begin = static_cast<int64_t>(selected.size());
    if (hard_suppressed) continue;
    if (next.score == original) {
      selected.push_back(next.index);
      out->indices.push_back(static_cast<int32_t>(next.index));
      out->scores.push_back(static_cast<float>(next.score.v));
    } else if (next.score > score_threshold) {
      queue.push(next);
    }
  }
  return absl::OkStatus();
}

// Writes indices (output 0), scores (output 1 if with_scores) padded with
// zeros to max_output if pad, and valid_outputs (the last output) if
// with_valid.
template <typename T>
absl::Status WriteOutputs(OpKernelContext* c, const NmsResult& r,
                          int32_t max_output, bool pad, bool with_scores,
                          bool with_valid) {
  const int64_t valid = static_cast<int64_t>(r.indices.size());
  const int64_t n = pad ? std::max<int64_t>(max_output, valid) : valid;
  Tensor* idx = nullptr;
  WEFT_RETURN_IF_ERROR(c->allocate_output(0, TensorShape({n}), &idx));
  int32_t* pi = idx->data<int32_t>();
  std::fill(pi, pi + n, 0);
  std::copy(r.indices.begin(), r.indices.end(), pi);
  if (with_scores) {
    Tensor* sc = nullptr;
    WEFT_RETURN_IF_ERROR(c->allocate_output(1, TensorShape({n}), &sc));
    T* ps = sc->data<T>();
    for (int64_t i = 0; i < n; ++i) {
      ps[i] = FromFloat<T>(i < valid ? r.scores[i] : 0.0f);
    }
  }
  if (with_valid) {
    Tensor* v = nullptr;
    WEFT_RETURN_IF_ERROR(
        c->allocate_output(c->num_outputs() - 1, TensorShape({}), &v));
    v->data<int32_t>()[0] = static_cast<int32_t>(valid);
  }
  return absl::OkStatus();
}

// NonMaxSuppression (version 1) to V5: which inputs and outputs it has.
struct NmsVersion {
  bool threshold_attr;   // V1: iou_threshold is an attr
  bool score_threshold;  // V3+
  bool sigma;            // V5
  bool valid_outputs;    // V4, V5
};

template <typename T>
class NmsOp : public OpKernel {
  using R = RoundedT<T>;

 public:
  NmsOp(OpKernelConstruction* c, NmsVersion v) : OpKernel(c), v_(v) {
    if (v_.threshold_attr) c->SetStatus(c->GetAttr("iou_threshold", &attr_threshold_));
    if (v_.valid_outputs) c->SetStatus(c->GetAttr("pad_to_max_output_size", &pad_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& boxes = c->input(0);
    const Tensor& scores = c->input(1);
    OP_REQUIRES_OK(c, CheckScalarInput(c->input(2), "max_output_size"));
    R threshold = R::Of(attr_threshold_);
    if (!v_.threshold_attr) {
      OP_REQUIRES_OK(c, CheckScalarInput(c->input(3), "iou_threshold"));
      threshold = ScalarAs<R>(c->input(3));
    }
    OP_REQUIRES(c, threshold >= R::Of(0.0f) && threshold <= R::Of(1.0f),
                absl::InvalidArgumentError("iou_threshold must be in [0, 1]"));
    R score_threshold = R::Of(std::numeric_limits<float>::lowest());
    if constexpr (std::is_same_v<T, Half>) score_threshold = R::Of(-65504.0f);
    if (v_.score_threshold) {
      OP_REQUIRES_OK(c, CheckScalarInput(c->input(4), "score_threshold"));
      score_threshold = ScalarAs<R>(c->input(4));
    }
    R sigma = R::Of(0.0f);
    if (v_.sigma) {
      OP_REQUIRES_OK(c, CheckScalarInput(c->input(5), "soft_nms_sigma"));
      sigma = ScalarAs<R>(c->input(5));
      OP_REQUIRES(c, sigma >= R::Of(0.0f),
                  absl::InvalidArgumentError("soft_nms_sigma_val must be >= 0"));
    }
    int64_t n = 0;
    OP_REQUIRES_OK(c, CheckBoxesAndScores(boxes, scores, false, &n));
    std::vector<float> box(n * 4);
    for (int64_t i = 0; i < n * 4; ++i) box[i] = ToFloat(boxes.data<T>()[i]);
    const int32_t max_output = c->input(2).data<int32_t>()[0];
    NmsResult r;
    OP_REQUIRES_OK(c, Select<T>(scores, n, max_output, threshold, score_threshold, sigma,
                                [&](int64_t i, int64_t j) {
                                  return Iou(&box[4 * i], &box[4 * j]);
                                },
                                &r));
    OP_REQUIRES_OK(c, WriteOutputs<T>(c, r, max_output, pad_, v_.sigma, v_.valid_outputs));
  }

 private:
  NmsVersion v_;
  float attr_threshold_ = 0.5f;
  bool pad_ = false;
};

template <typename T, bool kAttr, bool kScore, bool kSigma, bool kValid>
class NmsVersionOp : public NmsOp<T> {
 public:
  explicit NmsVersionOp(OpKernelConstruction* c)
      : NmsOp<T>(c, NmsVersion{kAttr, kScore, kSigma, kValid}) {}
};

class NmsWithOverlapsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& overlaps = c->input(0);
    OP_REQUIRES_OK(c, CheckScalarInput(c->input(2), "max_output_size"));
    OP_REQUIRES_OK(c, CheckScalarInput(c->input(3), "overlap_threshold"));
    OP_REQUIRES_OK(c, CheckScalarInput(c->input(4), "score_threshold"));
    int64_t n = 0;
    OP_REQUIRES_OK(c, CheckBoxesAndScores(overlaps, c->input(1), true, &n));
    const float* m = overlaps.data<float>();
    const int32_t max_output = c->input(2).data<int32_t>()[0];
    NmsResult r;
    OP_REQUIRES_OK(c, Select<float>(c->input(1), n, max_output,
                                    Plain<float>{c->input(3).data<float>()[0]},
                                    Plain<float>{c->input(4).data<float>()[0]},
                                    Plain<float>{0.0f},
                                    [&](int64_t i, int64_t j) { return m[i * n + j]; },
                                    &r));
    OP_REQUIRES_OK(c, WriteOutputs<float>(c, r, max_output, false, false, false));
  }
};

// ---- CombinedNonMaxSuppression.

struct Detection {
  int box_index;
  float score;
  int class_idx;
  float box[4];
};

// Hard NMS of one class of one image; writes its picks, best first, to
// out[0..size_per_class).
void ClassNms(const float* boxes, const float* scores, int num_boxes, int q,
              int num_classes, int class_idx, int size_per_class,
              float score_threshold, float iou_threshold, Detection* out) {
  struct Candidate {
    int index;
    float score;
  };
  auto lower = [](const Candidate& a, const Candidate& b) { return a.score < b.score; };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lower)> queue(lower);
  for (int i = 0; i < num_boxes; ++i) {
    const float s = scores[i * num_classes + class_idx];
    if (s > score_threshold) queue.push({i, s});
  }
  const int box_class = q > 1 ? class_idx : 0;
  std::vector<int> selected;
  while (static_cast<int>(selected.size()) < size_per_class && !queue.empty()) {
    const Candidate next = queue.top();
    queue.pop();
    const float* nb = boxes + (next.index * q + box_class) * 4;
    bool keep = true;
    for (int j = static_cast<int>(selected.size()) - 1; j >= 0; --j) {
      if (Iou(nb, boxes + (selected[j] * q + box_class) * 4) > iou_threshold) {
        keep = false;
        break;
      }
    }
    if (!keep) continue;
    out[selected.size()] = {next.index, next.score, class_idx, {nb[0], nb[1], nb[2], nb[3]}};
    selected.push_back(next.index);
  }
}

class CombinedNmsOp : public OpKernel {
 public:
  explicit CombinedNmsOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("pad_per_class", &pad_per_class_));
    c->SetStatus(c->GetAttr("clip_boxes", &clip_boxes_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& boxes = c->input(0);
    const Tensor& scores = c->input(1);
    OP_REQUIRES(c, boxes.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "boxes must be 4-D [batch, num_boxes, q, 4], got shape ",
                    boxes.shape().DebugString())));
    OP_REQUIRES(c, scores.dims() == 3,
                absl::InvalidArgumentError(absl::StrCat(
                    "scores must be 3-D [batch, num_boxes, num_classes], got shape ",
                    scores.shape().DebugString())));
    const int64_t num_boxes = boxes.dim_size(1);
    const int64_t num_classes = scores.dim_size(2);
    const int64_t q = boxes.dim_size(2);
    OP_REQUIRES(c, q == 1 || q == num_classes,
                absl::InvalidArgumentError(
                    "third dimension of boxes must be either 1 or num classes"));
    OP_REQUIRES(c, boxes.dim_size(3) == 4,
                absl::InvalidArgumentError("boxes must have 4 columns"));
    OP_REQUIRES(c, scores.dim_size(1) == num_boxes,
                absl::InvalidArgumentError("scores has incompatible shape"));
    OP_REQUIRES(c, boxes.dim_size(0) == scores.dim_size(0),
                absl::InvalidArgumentError("boxes and scores must have same batch size"));
    const char* names[] = {"max_size_per_class", "max_total_size", "iou_threshold",
                           "score_threshold"};
    for (int i = 0; i < 4; ++i) OP_REQUIRES_OK(c, CheckScalarInput(c->input(2 + i), names[i]));
    const int max_per_class = c->input(2).data<int32_t>()[0];
    OP_REQUIRES(c, max_per_class > 0,
                absl::InvalidArgumentError("max_size_per_class must be positive"));
    const int max_total = c->input(3).data<int32_t>()[0];
    OP_REQUIRES(c, max_total > 0, absl::InvalidArgumentError("max_total_size must be > 0"));
    const float iou = c->input(4).data<float>()[0];
    const float score_threshold = c->input(5).data<float>()[0];
    OP_REQUIRES(c, iou >= 0 && iou <= 1,
                absl::InvalidArgumentError("iou_threshold must be in [0, 1]"));
    OP_REQUIRES(c, num_boxes <= std::numeric_limits<int>::max() &&
                       num_classes <= std::numeric_limits<int>::max(),
                absl::InvalidArgumentError("boxes and scores are too large"));
    const int64_t batch = boxes.dim_size(0);
    const int64_t size_per_class = std::min<int64_t>(max_per_class, num_boxes);
    const int64_t candidates = size_per_class * num_classes;
    OP_REQUIRES(c, candidates <= std::numeric_limits<int>::max(),
                absl::InvalidArgumentError("size_per_class * num_classes causes overflow"));
    const int64_t max_total_size =
        std::min<int64_t>(std::numeric_limits<int>::max(), int64_t{max_per_class} * num_classes);
    const int64_t per_batch = pad_per_class_ ? std::min<int64_t>(max_total, max_total_size)
                                             : max_total;
    Tensor *out_boxes, *out_scores, *out_classes, *out_valid;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({batch, per_batch, 4}), &out_boxes));
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({batch, per_batch}), &out_scores));
    OP_REQUIRES_OK(c, c->allocate_output(2, TensorShape({batch, per_batch}), &out_classes));
    OP_REQUIRES_OK(c, c->allocate_output(3, TensorShape({batch}), &out_valid));
    std::fill_n(out_boxes->data<float>(), out_boxes->NumElements(), 0.0f);
    std::fill_n(out_scores->data<float>(), out_scores->NumElements(), 0.0f);
    std::fill_n(out_classes->data<float>(), out_classes->NumElements(), 0.0f);
    const float* bd = boxes.data<float>();
    const float* sd = scores.data<float>();
    ParallelRange(c, batch, num_boxes * num_classes * 20, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        std::vector<Detection> found(
            candidates, Detection{-1, -std::numeric_limits<float>::infinity(), -1, {0, 0, 0, 0}});
        for (int64_t k = 0; k < num_classes; ++k) {
          ClassNms(bd + b * num_boxes * q * 4, sd + b * num_boxes * num_classes,
                   static_cast<int>(num_boxes), static_cast<int>(q),
                   static_cast<int>(num_classes), static_cast<int>(k),
                   static_cast<int>(size_per_class), score_threshold, iou,
                   found.data() + k * size_per_class);
        }
        // TensorFlow's (unstable) sort, so that ties land where its do.
        std::sort(found.begin(), found.end(),
                  [](const Detection& a, const Detection& d) { return d.score < a.score; });
        const int64_t real = std::count_if(found.begin(), found.end(),
                                           [](const Detection& d) { return d.box_index > -1; });
        const int64_t keep = std::min<int64_t>(real, per_batch);
        out_valid->data<int32_t>()[b] = static_cast<int32_t>(keep);
        for (int64_t i = 0; i < keep; ++i) {
          const Detection& d = found[i];
          float* ob = out_boxes->data<float>() + (b * per_batch + i) * 4;
          for (int k = 0; k < 4; ++k) {
            ob[k] = clip_boxes_ ? std::max(std::min(d.box[k], 1.0f), 0.0f) : d.box[k];
          }
          out_scores->data<float>()[b * per_batch + i] = d.score;
          out_classes->data<float>()[b * per_batch + i] = static_cast<float>(d.class_idx);
        }
      }
    });
  }

 private:
  bool pad_per_class_ = false;
  bool clip_boxes_ = true;
};

template <typename T>
void RegisterNmsVersions(KernelRegistry* r) {
  auto def = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DataTypeToEnum<T>::value);
  };
  r->Register(def("NonMaxSuppressionV2"), MakeKernel<NmsVersionOp<T, false, false, false, false>>);
  r->Register(def("NonMaxSuppressionV3"), MakeKernel<NmsVersionOp<T, false, true, false, false>>);
  r->Register(def("NonMaxSuppressionV4"), MakeKernel<NmsVersionOp<T, false, true, false, true>>);
  r->Register(def("NonMaxSuppressionV5"), MakeKernel<NmsVersionOp<T, false, true, true, true>>);
}

}  // namespace

void RegisterImageNmsKernels(KernelRegistry* r) {
  r->Register(KernelDef("NonMaxSuppression", kDeviceTypeCpu),
              MakeKernel<NmsVersionOp<float, true, false, false, false>>);
  RegisterNmsVersions<float>(r);
  RegisterNmsVersions<Half>(r);
  r->Register(KernelDef("NonMaxSuppressionWithOverlaps", kDeviceTypeCpu),
              MakeKernel<NmsWithOverlapsOp>);
  r->Register(KernelDef("CombinedNonMaxSuppression", kDeviceTypeCpu),
              MakeKernel<CombinedNmsOp>);
}

}  // namespace weft
