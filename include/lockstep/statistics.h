// The formulas of a study's statistics (OutputStats, study.h), written once for the host reduction
// (reduceValues, host/study/study.cpp) and the device one (reduceOnDevice, kernels/study_reduce.cu).
#pragma once

#include <cmath>
#include <cstdint>

#include "lockstep/config.h"

namespace lockstep {

// Sample standard deviation from the sum of squared deviations ss of count values (n - 1
// denominator; 0 for a single value).
LOCKSTEP_HD_INLINE double sampleStddev(double ss, std::int64_t count) {
  return count > 1 ? std::sqrt(ss / double(count - 1)) : 0.0;
}

// Quantile q in [0, 1] of count sorted values, by linear interpolation between the values at
// indices lo and hi: value(lo) + fraction * (value(hi) - value(lo)).
struct QuantilePoint {
  std::int64_t lo, hi;
  double fraction;
};
LOCKSTEP_HD_INLINE QuantilePoint quantilePoint(double q, std::int64_t count) {
  const double pos = q * double(count - 1);
  const std::int64_t lo = static_cast<std::int64_t>(std::floor(pos));
  const std::int64_t hi = lo + 1 < count ? lo + 1 : count - 1;
  return {lo, hi, pos - double(lo)};
}
LOCKSTEP_HD_INLINE double interpolateQuantile(const QuantilePoint& p, double valueLo, double valueHi) {
  return valueLo + p.fraction * (valueHi - valueLo);
}

// Bin of x among `bins` equal bins over [min, min + range]; the maximum goes into the last bin,
// and every value into bin 0 when all are equal (range 0).
LOCKSTEP_HD_INLINE int histogramBin(double x, double min, double range, int bins) {
  const int b = range > 0 ? static_cast<int>((x - min) / range * bins) : 0;
  return b < bins - 1 ? b : bins - 1;
}

}  // namespace lockstep
