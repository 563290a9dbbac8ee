#ifndef GRAPHRT_CORE_TENSOR_SHAPE_H_
#define GRAPHRT_CORE_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "graphrt/core/status.h"

namespace graphrt {

namespace proto {
class TensorShapeProto;
}

// A fully known shape. Small shapes (rank <= 6) live inline: no allocation.
class TensorShape {
 public:
  static constexpr int kInlineRank = 6;
  // The most dimensions a shape may have (TensorFlow's limit). Work on a
  // shape is linear in its rank: unbounded, a few bytes per dim of input
  // would make every kernel and shape function loop over millions.
  // FromDims/FromProto and the core's allocation and forwarding apply it.
  static constexpr int kMaxRank = 254;
  TensorShape() = default;
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(const std::vector<int64_t>& dims);
  TensorShape(const int64_t* dims, int rank) { Assign(dims, rank); }
  // Copies and moves are on every tensor hand-off in the executor: inline,
  // with the heap only for rank > kInlineRank.
  TensorShape(const TensorShape& o) { Assign(o.data(), o.rank_); }
  TensorShape(TensorShape&& o) noexcept { Steal(o); }
  TensorShape& operator=(const TensorShape& o) {
    if (this != &o) {
      FreeHeap();
      Assign(o.data(), o.rank_);
    }
    return *this;
  }
  TensorShape& operator=(TensorShape&& o) noexcept {
    if (this != &o) {
      FreeHeap();
      Steal(o);
    }
    return *this;
  }
  ~TensorShape() { FreeHeap(); }

  int rank() const { return rank_; }
  int dims() const { return rank_; }
  int64_t dim_size(int i) const { return data()[i]; }
  const int64_t* data() const { return rank_ <= kInlineRank ? inline_ : heap_; }
  int64_t num_elements() const { return num_elements_; }
  std::vector<int64_t> dim_sizes() const { return std::vector<int64_t>(data(), data() + rank_); }
  void AddDim(int64_t d);
  void set_dim(int i, int64_t d);
  void RemoveDim(int i);
  bool operator==(const TensorShape& o) const;
  bool operator!=(const TensorShape& o) const { return !(*this == o); }
  std::string DebugString() const;  // "[2,3]"
  void AsProto(proto::TensorShapeProto* p) const;
  // Rejects unknown dims/rank and negative sizes.
  static Status FromProto(const proto::TensorShapeProto& p, TensorShape* out);
  static Status FromDims(const int64_t* dims, int rank, TensorShape* out);

 private:
  void Assign(const int64_t* dims, int rank) {
    rank_ = rank;
    int64_t* d = inline_;
    if (rank > kInlineRank) d = heap_ = new int64_t[rank];
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= (d[i] = dims[i]);
    num_elements_ = n;
  }
  // Leaves `o` a scalar.
  void Steal(TensorShape& o) {
    rank_ = o.rank_;
    num_elements_ = o.num_elements_;
    if (rank_ > kInlineRank) {
      heap_ = o.heap_;
    } else {
      for (int i = 0; i < rank_; ++i) inline_[i] = o.inline_[i];
    }
    o.rank_ = 0;
    o.num_elements_ = 1;
  }
  void FreeHeap() {
    if (rank_ > kInlineRank) delete[] heap_;
    rank_ = 0;
  }
  void Recount();
  int rank_ = 0;
  int64_t num_elements_ = 1;
  union {
    int64_t inline_[kInlineRank];
    int64_t* heap_;
  };
};

// A shape that may have unknown rank (rank() == -1) or unknown dims (-1).
class PartialTensorShape {
 public:
  PartialTensorShape() = default;  // unknown rank
  explicit PartialTensorShape(std::vector<int64_t> dims) : known_rank_(true), dims_(std::move(dims)) {}
  static PartialTensorShape Unknown() { return PartialTensorShape(); }
  int rank() const { return known_rank_ ? static_cast<int>(dims_.size()) : -1; }
  bool unknown_rank() const { return !known_rank_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim_size(int i) const { return dims_[i]; }
  bool IsFullyDefined() const;
  bool IsCompatibleWith(const TensorShape& s) const;
  std::string DebugString() const;  // "<unknown>", "[?,3]"
  void AsProto(proto::TensorShapeProto* p) const;
  static Status FromProto(const proto::TensorShapeProto& p, PartialTensorShape* out);
  // What both shapes say (TensorFlow's shape merge: an unknown rank or dim
  // takes the other's); InvalidArgument naming both when they disagree.
  Status MergeWith(const PartialTensorShape& other, PartialTensorShape* out) const;

 private:
  bool known_rank_ = false;
  std::vector<int64_t> dims_;
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_TENSOR_SHAPE_H_
