#include "lockstep/plot.h"

#include <plplot/plplot.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace lockstep {

void writeHistogramPng(const std::string& path, const OutputStats& s, const std::string& title) {
  if (s.count == 0 || s.histogram.empty())
    throw std::runtime_error("histogram '" + s.name + "': no healthy world to plot");
  { // PLplot reports an unwritable file only on stderr: check first.
    std::ofstream probe(path, std::ios::binary);
    if (!probe) throw std::runtime_error("cannot write the histogram image '" + path + "'");
  }
  const int bins = static_cast<int>(s.histogram.size());
  double lo = s.min, hi = s.max;
  if (!(hi > lo)) {  // all values equal: a unit-wide window around them
    lo -= 0.5;
    hi += 0.5;
  }
  const double width = (hi - lo) / bins;
  std::vector<PLFLT> x(bins), y(bins);
  double ymax = 0;
  for (int i = 0; i < bins; ++i) {
    x[i] = lo + i * width;
    y[i] = double(s.histogram[i]);
    ymax = std::max(ymax, y[i]);
  }
  plsstrm(0);
  plsdev("pngcairo");
  plsfnam(path.c_str());
  plspage(0, 0, 1000, 640, 0, 0);
  plscolbg(255, 255, 255);
  plscol0(1, 0, 0, 0);        // axes and labels: black
  plscol0(2, 70, 110, 180);   // bars: blue
  plscol0(3, 200, 60, 40);    // mean: red
  plscol0(4, 120, 120, 120);  // quantiles: grey
  plinit();
  pladv(0);
  plvpor(0.09, 0.97, 0.11, 0.84);
  plwind(lo - width, hi + width, 0, ymax * 1.12 + 1);
  plcol0(1);
  plbox("bcnst", 0, 0, "bcnstv", 0, 0);
  char sub[256];
  std::snprintf(sub, sizeof sub, "%lld worlds: mean %.6g (red), sd %.6g, min %.6g, max %.6g; dashed: quantiles",
                static_cast<long long>(s.count), s.mean, s.stddev, s.min, s.max);
  plmtex("t", 3.4, 0.5, 0.5, title.c_str());
  plschr(0, 0.75);
  plmtex("t", 1.6, 0.5, 0.5, sub);
  plschr(0, 1.0);
  plmtex("b", 3.0, 0.5, 0.5, s.name.c_str());
  plmtex("l", 4.0, 0.5, 0.5, "worlds");
  for (int i = 0; i < bins; ++i) {  // filled bars with outlines
    PLFLT bx[4] = {x[i], x[i], x[i] + width, x[i] + width}, by[4] = {0, y[i], y[i], 0};
    plcol0(2);
    plfill(4, bx, by);
    plcol0(1);
    plline(4, bx, by);
  }
  auto vline = [&](double at, int color, int style) {
    PLFLT lx[2] = {at, at}, ly[2] = {0, ymax * 1.12};
    plcol0(color);
    pllsty(style);
    plline(2, lx, ly);
  };
  for (double q : s.quantiles) vline(q, 4, 2);
  vline(s.mean, 3, 1);
  plend1();
}

}  // namespace lockstep
