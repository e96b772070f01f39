// Lockstep plots for people as PNG images (PLplot, cairo): the histogram of a study's outcome, and
// curves over time of recorded quantities (`lockstep plot`).
#pragma once

#include <string>
#include <vector>

#include "lockstep/study.h"

namespace lockstep {

// Writes the histogram of s (its bins over [min, max]) with the mean and the quantiles marked,
// titled with title. Throws std::runtime_error when the image cannot be written.
void writeHistogramPng(const std::string& path, const OutputStats& s, const std::string& title);

// Curves y(x) sharing one x axis, each named in the legend (at most kMaxCurves).
struct LinePlot {
  static constexpr int kMaxCurves = 12;
  std::string title, subtitle, xLabel, yLabel;
  std::vector<double> x;
  struct Curve {
    std::string label;
    std::vector<double> y;  // [x.size()]; non-finite values are left out of the line
  };
  std::vector<Curve> curves;
};
// Writes the curves with labelled axes, title and legend. Throws std::runtime_error when the image
// cannot be written or the plot has no curve, too many curves or curves of the wrong length.
void writeLinePlotPng(const std::string& path, const LinePlot& plot);

}  // namespace lockstep
