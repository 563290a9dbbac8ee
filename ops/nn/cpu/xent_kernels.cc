// CPU kernels of the softmax cross-entropy losses:
// SoftmaxCrossEntropyWithLogits (dense labels, broadcast to a matrix) and
// SparseSoftmaxCrossEntropyWithLogits (int32/int64 class ids).
//
// Per row: m = max(logits), s = sum(exp(logits - m)), log_z = log(s);
// loss = sum_j labels_j * (log_z - (logits_j - m));
// backprop_j = exp(logits_j - m) / s - labels_j.
// Rows are split over the session's pool.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

template <typename T>
using VecMap = EigenVecMap<T>;
template <typename T>
using ConstVecMap = EigenConstVecMap<T>;

// A tensor of rank <= 2 read as a broadcast [rows, cols] matrix: element
// (r, c) is at r * row_stride + c * col_stride (a stride is 0 along a
// broadcast dim).
struct Broadcast2D {
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

// Writes softmax - labels into `row` (which holds the shifted logits
// logits - max on entry) and returns the row's loss.
template <typename T>
T XentRow(T* row, int64_t cols, const T* labels, int64_t label_stride) {
  VecMap<T> z(row, cols);
  const T sum = z.exp().sum();
  const T log_sum = std::log(sum);
  T loss = T(0);
  if (label_stride == 1) {
    ConstVecMap<T> l(labels, cols);
    loss = (l * (log_sum - z)).sum();
    z = z.exp() / sum - l;
  } else {
    // One label broadcast along the row.
    const T l = labels[0];
    loss = l * (log_sum * static_cast<T>(cols) - z.sum());
    z = z.exp() / sum - l;
  }
  return loss;
}

template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  explicit SoftmaxXentOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView logits = ctx->input(0);
    const TensorView labels = ctx->input(1);
    const std::vector<int64_t> ld = logits.dims(), bd = labels.dims();
    std::vector<int64_t> shape = ld;
    if (ld != bd) {
      OP_REQUIRES(ctx, sf::BroadcastShapes(ld, bd, &shape),
                  errors::InvalidArgument("logits and labels must be broadcastable: logits_size=",
                                          sf::ShapeString(ld), " labels_size=", sf::ShapeString(bd)));
    }
    OP_REQUIRES(ctx, shape.size() == 2,
                errors::InvalidArgument("logits and labels must be either 2-dimensional, or "
                                        "broadcasted to be 2-dimensional"));
    const int64_t rows = shape[0], cols = shape[1];
    TensorView loss, backprop;
    if (!ctx->allocate_output(0, &rows, 1, &loss).ok()) return;
    if (ld == shape) {
      if (!ctx->forward_input_or_allocate_output(0, 1, shape.data(), 2, &backprop).ok()) return;
    } else if (!ctx->allocate_output(1, shape, &backprop).ok()) {
      return;
    }
    if (rows == 0) return;
    T* lossp = loss.data<T>();
    if (cols == 0) {
      std::fill(lossp, lossp + rows, T(0));
      return;
    }
    const Broadcast2D fb = Strides(ld), lb = Strides(bd);
    const T* fp = logits.data<T>();
    const T* lp = labels.data<T>();
    T* bp = backprop.data<T>();
    ForRange(ctx, rows, rows * cols, cols * 12, [=](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        T* row = bp + r * cols;
        const T* f = fp + r * fb.row_stride;
        // Shifted logits into the backprop row (in place when it is the
        // logits' own buffer: element-wise).
        if (fb.col_stride == 1) {
          ConstVecMap<T> in(f, cols);
          const T m = in.maxCoeff();
          VecMap<T>(row, cols) = in - m;
        } else {
          std::fill(row, row + cols, T(0));  // one logit repeated: all shift to 0
        }
        lossp[r] = XentRow<T>(row, cols, lp + r * lb.row_stride, lb.col_stride);
      }
    });
  }

 private:
  // Strides of a rank <= 2 tensor broadcast to 2-D.
  static Broadcast2D Strides(const std::vector<int64_t>& d) {
    Broadcast2D s;
    const int64_t r = d.size() == 2 ? d[0] : 1;
    const int64_t c = d.empty() ? 1 : d.back();
    s.col_stride = c == 1 ? 0 : 1;
    s.row_stride = r == 1 ? 0 : c;
    return s;
  }
};

template <typename T, typename Index>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  explicit SparseSoftmaxXentOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView logits = ctx->input(0);
    const TensorView labels = ctx->input(1);
    OP_REQUIRES(ctx, logits.rank() == 2,
                errors::InvalidArgument("logits must be 2-D, but got shape ", sf::ShapeString(logits)));
    OP_REQUIRES(ctx, labels.rank() == 1,
                errors::InvalidArgument("labels must be 1-D, but got shape ", sf::ShapeString(labels)));
    OP_REQUIRES(ctx, logits.dim(0) == labels.dim(0),
                errors::InvalidArgument(
                    "logits and labels must have the same first dimension, got logits shape ",
                    sf::ShapeString(logits), " and labels shape ", sf::ShapeString(labels)));
    const int64_t rows = logits.dim(0), cols = logits.dim(1);
    OP_REQUIRES(ctx, rows == 0 || cols > 0,
                errors::InvalidArgument("Must have at least one class, but got logits shape ",
                                        sf::ShapeString(logits)));
    const Index* lp = labels.data<Index>();
    if (rows > 0) {
      const auto mm = std::minmax_element(lp, lp + rows);
      if (*mm.first < 0 || *mm.second >= cols) {
        const Index bad = *mm.first < 0 ? *mm.first : *mm.second;
        std::ostringstream values;
        for (int64_t i = 0; i < rows; ++i) values << (i ? " " : "") << lp[i];
        ctx->CtxFailure(errors::InvalidArgument("Received a label value of ", bad,
                                                " which is outside the valid range of [0, ", cols,
                                                ").  Label values: ", values.str()));
        return;
      }
    }
    TensorView loss, backprop;
    if (!ctx->allocate_output(0, &rows, 1, &loss).ok()) return;
    if (!ctx->forward_input_or_allocate_output(0, 1, logits.dims_data(), 2, &backprop).ok()) return;
    if (rows == 0) return;
    const T* fp = logits.data<T>();
    T* lossp = loss.data<T>();
    T* bp = backprop.data<T>();
    ForRange(ctx, rows, rows * cols, cols * 12, [=](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        ConstVecMap<T> in(fp + r * cols, cols);
        VecMap<T> z(bp + r * cols, cols);
        const T m = in.maxCoeff();
        z = in - m;  // in place when forwarded: element-wise
        const T sum = z.exp().sum();
        const int64_t label = static_cast<int64_t>(lp[r]);
        lossp[r] = std::log(sum) - z[label];
        z = z.exp() / sum;
        z[label] -= T(1);
      }
    });
  }
};

}  // namespace

REGISTER_KERNEL(Name("SoftmaxCrossEntropyWithLogits").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                SoftmaxXentOp<float>);
REGISTER_KERNEL(Name("SoftmaxCrossEntropyWithLogits").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                SoftmaxXentOp<double>);

#define GR_REGISTER_SPARSE_XENT(T, INDEX)                                       \
  REGISTER_KERNEL(Name("SparseSoftmaxCrossEntropyWithLogits")                  \
                      .Device(DEVICE_CPU)                                      \
                      .TypeConstraint<T>("T")                                  \
                      .TypeConstraint<INDEX>("Tlabels"),                       \
                  SparseSoftmaxXentOp<T, INDEX>)
GR_REGISTER_SPARSE_XENT(float, int32_t);
GR_REGISTER_SPARSE_XENT(float, int64_t);
GR_REGISTER_SPARSE_XENT(double, int32_t);
GR_REGISTER_SPARSE_XENT(double, int64_t);
#undef GR_REGISTER_SPARSE_XENT

}  // namespace sdk
}  // namespace graphrt
