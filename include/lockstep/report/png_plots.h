// Lockstep plots for people as PNG images (PLplot, cairo): the histogram of a study's outcome, bar
// charts of its Sobol indices and Spearman correlations, and curves over time of recorded
// quantities (`lockstep plot`).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lockstep {

// Why PLplot cannot write PNG images in this process ("" when it can): its drivers folder
// (PLPLOT_DRV_DIR, else the one it was built with) offers no pngcairo device, or PLplot failed to
// start it before. PLplot itself would end the process there (plexit); the writers below never let
// it: they throw PlotsUnavailable instead, with the same reason.
std::string pngPlotsUnavailable();
struct PlotsUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The histogram of `count` values (a study's OutputStats): equal bins over [min, max], the mean and
// the quantiles marked, the statistics in the subtitle.
struct HistogramPlot {
  std::string title;
  std::string name;  // of the values: under the x axis, and in messages
  std::int64_t count = 0;
  double mean = 0, stddev = 0, min = 0, max = 0;
  std::vector<double> quantiles;
  std::vector<std::int64_t> bins;  // values per bin
};
// Writes the histogram. Throws std::runtime_error when the image cannot be written or there is
// nothing to draw (no value or no bin).
void writeHistogramPng(const std::string& path, const HistogramPlot& plot);

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

// The Sobol indices of one outcome (a study's SobolIndices): for each parameter names[i] its
// first-order index S_i and total index ST_i, with their 95% bootstrap intervals.
struct SobolPlot {
  std::string title;
  std::vector<std::string> names;
  std::vector<double> first, total;          // S_i, ST_i
  std::vector<double> firstLow, firstHigh;   // the interval of S_i
  std::vector<double> totalLow, totalHigh;   // and of ST_i
  std::int64_t rows = 0;                     // base rows the indices are over, for the subtitle
  int resamples = 0;                         // bootstrap resamples, for the subtitle
};
// Bar chart of the indices: S_i and ST_i side by side, their intervals as whiskers, on [0, 1]
// (extended to show estimates outside it). Throws std::runtime_error when the image cannot be
// written or the names do not match the indices.
void writeSobolPng(const std::string& path, const SobolPlot& plot);
// Bar chart of Spearman correlations rho[p][o] (spearmanMatrix) on [-1, 1]: for each parameter a
// group of bars, one per outcome (at most LinePlot::kMaxCurves outcomes, in the legend); NaN
// entries are left out. Throws std::runtime_error when the image cannot be written or the shapes
// do not match.
void writeSpearmanPng(const std::string& path, const std::vector<std::string>& parameters,
                      const std::vector<std::string>& outcomes, const std::vector<std::vector<double>>& rho,
                      const std::string& title);

}  // namespace lockstep
