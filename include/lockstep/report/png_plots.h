// Lockstep plots for people as PNG images (PLplot, cairo): the histogram of a study's outcome, bar
// charts of its Sobol indices and Spearman correlations, and curves over time of recorded
// quantities (`lockstep plot`).
#pragma once

#include <string>
#include <vector>

namespace lockstep {

struct OutputStats;   // study.h
struct SobolIndices;  // study_statistics.h

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

// Bar chart of the Sobol indices of one outcome: for each parameter (names[i]) its first-order
// index S_i and total index ST_i side by side, with their 95% intervals as whiskers, on [0, 1]
// (extended to show estimates outside it). Throws std::runtime_error when the image cannot be
// written or names does not match the indices.
void writeSobolPng(const std::string& path, const std::vector<std::string>& names, const SobolIndices& s,
                   const std::string& title);
// Bar chart of Spearman correlations rho[p][o] (spearmanMatrix) on [-1, 1]: for each parameter a
// group of bars, one per outcome (at most LinePlot::kMaxCurves outcomes, in the legend); NaN
// entries are left out. Throws std::runtime_error when the image cannot be written or the shapes
// do not match.
void writeSpearmanPng(const std::string& path, const std::vector<std::string>& parameters,
                      const std::vector<std::string>& outcomes, const std::vector<std::vector<double>>& rho,
                      const std::string& title);

}  // namespace lockstep
