// TensorFlow's default summary histogram (lib/histogram/histogram.cc, as
// restated in tf_proto_facts.md §10): fixed bucket limits growing by 10%
// from 1e-12 to 1e20, mirrored for negatives, with 0 and ±DBL_MAX; and the
// encoding into a HistogramProto that folds runs of empty buckets.
#ifndef GRAPHRT_OPS_SUMMARY_CPU_HISTOGRAM_H_
#define GRAPHRT_OPS_SUMMARY_CPU_HISTOGRAM_H_

#include <algorithm>
#include <cfloat>
#include <cstddef>
#include <vector>

#include "graphrt/summary/summary.pb.h"

namespace graphrt {
namespace summary {

// −DBL_MAX, −9.92e19 … −1e-12, 0, 1e-12 … 9.92e19, DBL_MAX (1551 limits).
inline const std::vector<double>& DefaultBucketLimits() {
  static const std::vector<double> limits = [] {
    // Repeated multiplication, not powers of 1.1: TensorFlow's limits are
    // the products' roundings, and readers compare them exactly.
    std::vector<double> positive;
    for (double v = 1e-12; v < 1e20; v *= 1.1) positive.push_back(v);
    positive.push_back(DBL_MAX);
    std::vector<double> all;
    all.reserve(2 * positive.size() + 1);
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all.push_back(-*it);
    all.push_back(0.0);
    all.insert(all.end(), positive.begin(), positive.end());
    return all;
  }();
  return limits;
}

class Histogram {
 public:
  Histogram() : limits_(DefaultBucketLimits()), counts_(limits_.size(), 0.0) {}

  // `x` must be finite (the kernel checks): it goes to the first bucket
  // whose limit is strictly greater.
  void Add(double x) {
    const size_t b = static_cast<size_t>(std::upper_bound(limits_.begin(), limits_.end(), x) - limits_.begin());
    counts_[std::min(b, counts_.size() - 1)] += 1.0;
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
    num_ += 1.0;
    sum_ += x;
    sum_squares_ += x * x;
  }

  // Non-empty buckets as (limit, count); a run of empty ones as one
  // (limit of its last bucket, 0).
  void Encode(HistogramProto* proto) const {
    proto->set_min(min_);
    proto->set_max(max_);
    proto->set_num(num_);
    proto->set_sum(sum_);
    proto->set_sum_squares(sum_squares_);
    for (size_t i = 0; i < counts_.size();) {
      double limit = limits_[i];
      const double count = counts_[i++];
      if (count <= 0.0) {
        while (i < counts_.size() && counts_[i] <= 0.0) limit = limits_[i++];
      }
      proto->add_bucket_limit(limit);
      proto->add_bucket(count);
    }
    if (proto->bucket_size() == 0) {
      proto->add_bucket_limit(DBL_MAX);
      proto->add_bucket(0.0);
    }
  }

 private:
  const std::vector<double>& limits_;
  std::vector<double> counts_;
  double min_ = DBL_MAX;
  double max_ = -DBL_MAX;
  double num_ = 0.0;
  double sum_ = 0.0;
  double sum_squares_ = 0.0;
};

}  // namespace summary
}  // namespace graphrt

#endif  // GRAPHRT_OPS_SUMMARY_CPU_HISTOGRAM_H_
