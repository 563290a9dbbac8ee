#include "graphrt/core/tensor_shape.h"

#include <graphrt/shape_limits.h>

#include "graphrt/proto/tensor_shape.pb.h"

namespace graphrt {
namespace {

// "[2,3]". Appends piecewise: GCC 12 warns (-Wrestrict, a false positive)
// on `"," + std::to_string(d)`.
std::string DimsString(const int64_t* dims, int rank) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

Status RankTooLarge(int64_t rank) {
  return errors::InvalidArgument("shape has rank ", rank, ", more than the ", TensorShape::kMaxRank,
                                 " dimensions a tensor may have");
}

}  // namespace

TensorShape::TensorShape(std::initializer_list<int64_t> dims) { Assign(dims.begin(), static_cast<int>(dims.size())); }
TensorShape::TensorShape(const std::vector<int64_t>& dims) { Assign(dims.data(), static_cast<int>(dims.size())); }
void TensorShape::Recount() {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= data()[i];
  num_elements_ = n;
}

void TensorShape::AddDim(int64_t d) {
  std::vector<int64_t> v = dim_sizes();
  v.push_back(d);
  *this = TensorShape(v);
}

void TensorShape::set_dim(int i, int64_t d) {
  const_cast<int64_t*>(data())[i] = d;
  Recount();
}

void TensorShape::RemoveDim(int i) {
  std::vector<int64_t> v = dim_sizes();
  v.erase(v.begin() + i);
  *this = TensorShape(v);
}

bool TensorShape::operator==(const TensorShape& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (data()[i] != o.data()[i]) return false;
  return true;
}

std::string TensorShape::DebugString() const { return DimsString(data(), rank_); }

void TensorShape::AsProto(proto::TensorShapeProto* p) const {
  p->Clear();
  for (int i = 0; i < rank_; ++i) p->add_dim()->set_size(data()[i]);
}

Status TensorShape::FromDims(const int64_t* dims, int rank, TensorShape* out) {
  int64_t n;
  if (rank > kMaxRank) return RankTooLarge(rank);
  if (gr_shape_num_elements(dims, rank, &n) != GR_OK) {
    if (rank < 0) return errors::InvalidArgument("shape has unknown rank");
    const std::string s = DimsString(dims, rank);
    for (int i = 0; i < rank; ++i)
      if (dims[i] < 0) return errors::InvalidArgument("shape ", s, " has an unknown or negative dimension");
    return errors::InvalidArgument("shape ", s, " has more than 2^58 elements");
  }
  *out = TensorShape(dims, rank);
  return Status::OK();
}

Status TensorShape::FromProto(const proto::TensorShapeProto& p, TensorShape* out) {
  if (p.unknown_rank()) return errors::InvalidArgument("shape has unknown rank");
  if (p.dim_size() > TensorShape::kMaxRank) return RankTooLarge(p.dim_size());
  std::vector<int64_t> d;
  for (const auto& dim : p.dim()) d.push_back(dim.size());
  return FromDims(d.data(), static_cast<int>(d.size()), out);
}

bool PartialTensorShape::IsFullyDefined() const {
  if (!known_rank_) return false;
  for (int64_t d : dims_)
    if (d < 0) return false;
  return true;
}

bool PartialTensorShape::IsCompatibleWith(const TensorShape& s) const {
  if (!known_rank_) return true;
  if (static_cast<int>(dims_.size()) != s.rank()) return false;
  for (int i = 0; i < s.rank(); ++i)
    if (dims_[i] >= 0 && dims_[i] != s.dim_size(i)) return false;
  return true;
}

std::string PartialTensorShape::DebugString() const {
  if (!known_rank_) return "<unknown>";
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += dims_[i] < 0 ? "?" : std::to_string(dims_[i]);
  }
  return s + "]";
}

Status PartialTensorShape::MergeWith(const PartialTensorShape& other, PartialTensorShape* out) const {
  if (!known_rank_) {
    *out = other;
    return Status::OK();
  }
  if (!other.known_rank_) {
    *out = *this;
    return Status::OK();
  }
  if (dims_.size() != other.dims_.size())
    return errors::InvalidArgument("Shapes must be equal rank, but are ", dims_.size(), " and ", other.dims_.size(),
                                   ". Shapes are ", DebugString(), " and ", other.DebugString(), ".");
  std::vector<int64_t> merged(dims_.size());
  for (size_t i = 0; i < dims_.size(); ++i) {
    const int64_t a = dims_[i], b = other.dims_[i];
    if (a >= 0 && b >= 0 && a != b)
      return errors::InvalidArgument("Dimension ", i, " in both shapes must be equal, but are ", a, " and ", b,
                                     ". Shapes are ", DebugString(), " and ", other.DebugString(), ".");
    merged[i] = a >= 0 ? a : b;
  }
  *out = PartialTensorShape(std::move(merged));
  return Status::OK();
}

void PartialTensorShape::AsProto(proto::TensorShapeProto* p) const {
  p->Clear();
  if (!known_rank_) {
    p->set_unknown_rank(true);
    return;
  }
  for (int64_t d : dims_) p->add_dim()->set_size(d < 0 ? -1 : d);
}

Status PartialTensorShape::FromProto(const proto::TensorShapeProto& p, PartialTensorShape* out) {
  if (p.unknown_rank()) {
    if (p.dim_size() > 0) return errors::InvalidArgument("shape has unknown rank and dims");
    *out = PartialTensorShape();
    return Status::OK();
  }
  if (p.dim_size() > TensorShape::kMaxRank) return RankTooLarge(p.dim_size());
  std::vector<int64_t> d;
  for (const auto& dim : p.dim()) {
    if (dim.size() < -1) return errors::InvalidArgument("shape has invalid dimension ", dim.size());
    d.push_back(dim.size());
  }
  *out = PartialTensorShape(std::move(d));
  return Status::OK();
}

}  // namespace graphrt
