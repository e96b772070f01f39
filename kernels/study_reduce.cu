// Reductions across worlds on the device for Monte Carlo studies (Thrust): the healthy worlds'
// values are gathered, sorted, and reduced to the statistics of OutputStats with the same formulas
// as the host computation (reduceValues in host/study/study.cpp), from statistics.h.
#include <thrust/adjacent_difference.h>
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include "lockstep/statistics.h"
#include "lockstep/study.h"

namespace lockstep {

namespace {

// Value i as a double: values[i] (+ plus[i]).
template <class T>
struct ValueAt {
  const T* values;
  const T* plus;
  __host__ __device__ double operator()(std::int64_t i) const {
    return double(values[i]) + (plus ? double(plus[i]) : 0.0);
  }
};

struct Healthy {
  __host__ __device__ bool operator()(std::int32_t s) const { return s == 0; }
};

struct SquaredDeviation {
  double mean;
  __host__ __device__ double operator()(double x) const { return (x - mean) * (x - mean); }
};

struct BinOf {
  double min, range;
  int bins;
  __host__ __device__ int operator()(double x) const { return histogramBin(x, min, range, bins); }
};

template <class T>
OutputStats reduceTyped(const std::string& name, const T* values, const T* plus, const std::int32_t* status,
                        std::int64_t n, const std::vector<double>& quantiles, int bins) {
  OutputStats s;
  s.name = name;
  s.histogram.assign(bins, 0);
  thrust::device_vector<double> v(n);
  const auto first = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), ValueAt<T>{values, plus});
  const auto end = thrust::copy_if(thrust::device, first, first + n, status, v.begin(), Healthy());
  const std::int64_t count = end - v.begin();
  s.count = count;
  if (count == 0) return s;
  v.resize(count);
  thrust::sort(v.begin(), v.end());
  s.mean = thrust::reduce(v.begin(), v.end(), 0.0) / double(count);
  const double ss = thrust::transform_reduce(v.begin(), v.end(), SquaredDeviation{s.mean}, 0.0, thrust::plus<double>());
  s.stddev = sampleStddev(ss, count);
  s.min = v.front();
  s.max = v.back();
  for (double q : quantiles) {
    const QuantilePoint p = quantilePoint(q, count);
    s.quantiles.push_back(interpolateQuantile(p, v[p.lo], v[p.hi]));
  }
  // Bin indices are non-decreasing over the sorted values: the count of bin k is the number of
  // indices <= k minus those <= k - 1.
  thrust::device_vector<int> bin(count);
  thrust::transform(v.begin(), v.end(), bin.begin(), BinOf{s.min, s.max - s.min, bins});
  thrust::device_vector<std::int64_t> upTo(bins);
  thrust::upper_bound(bin.begin(), bin.end(), thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(bins),
                      upTo.begin());
  thrust::adjacent_difference(upTo.begin(), upTo.end(), upTo.begin());
  thrust::copy(upTo.begin(), upTo.end(), s.histogram.begin());
  return s;
}

}  // namespace

OutputStats reduceOnDevice(const std::string& name, const void* values, const void* plus, bool valuesAreFloat,
                           const std::int32_t* status, std::int64_t n, const std::vector<double>& quantiles,
                           int bins) {
  if (valuesAreFloat)
    return reduceTyped(name, static_cast<const float*>(values), static_cast<const float*>(plus), status, n, quantiles,
                       bins);
  return reduceTyped(name, static_cast<const double*>(values), static_cast<const double*>(plus), status, n, quantiles,
                     bins);
}

}  // namespace lockstep
